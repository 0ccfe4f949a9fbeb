#!/usr/bin/env bash
# python-env.sh: the project's Python virtual environment, .venv at the top of
# the source tree (STRATA_VENV names another), made with Debian's python3 and
# filled from PyPI with the pinned, hashed files of requirements/:
#  - python.txt: PyTorch 2.11.0 (CUDA 13.0), whose LibTorch Strata builds
#    against and whose Python is the benchmarks' peer, with its CUDA wheels,
#    and the tests' references (tiktoken, tokenizers, sentencepiece,
#    transformers, safetensors, kubernetes-validate), resolved together;
#  - files.txt: packages taken for the files they carry (Llama 3's and
#    GPT-2's tiktoken ranks, Mistral's SentencePiece model), without their
#    dependencies.
# Parallel callers take turns (a lock beside it). Does nothing when the
# environment already holds exactly these files (a stamp of the requirements'
# contents). Prints the environment's python.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv=${STRATA_VENV:-$root/.venv}
base=${STRATA_BASE_PYTHON:-/usr/bin/python3}
requirements=("$root/requirements/python.txt" "$root/requirements/files.txt")
stamp=$venv/.strata-requirements
# One install at a time: tests that start together wait for the first.
exec 9>"$venv.lock"
flock 9
want=$(cat "${requirements[@]}" | sha256sum | cut -d' ' -f1)

if [[ -x $venv/bin/python && -f $stamp && $(<"$stamp") == "$want" ]]; then
  echo "$venv/bin/python"
  exit 0
fi
[[ -x $base ]] || { echo "python-env: $base not found (scripts/setup.sh installs python3-venv)" >&2; exit 1; }
if [[ ! -x $venv/bin/python ]]; then
  echo "python-env: creating $venv" >&2
  "$base" -m venv "$venv" ||
    { echo "python-env: '$base -m venv $venv' failed (is python3-venv installed?)" >&2; exit 1; }
fi
rm -f "$stamp"
pip=("$venv/bin/pip" install --quiet --disable-pip-version-check --no-input --require-hashes --no-deps)
for file in "${requirements[@]}"; do
  echo "python-env: installing requirements/${file##*/} into $venv" >&2
  "${pip[@]}" -r "$file" >&2
done
echo "$want" >"$stamp"
echo "$venv/bin/python"
