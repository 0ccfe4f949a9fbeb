#!/usr/bin/env bash
# reference-files.sh NAME: the path of a tokenizer file that a pinned PyPI
# package carries, in the project's Python environment (scripts/python-env.sh
# makes it when missing):
#   gpt2    GPT-2's ranks in tiktoken's format (openai-whisper's gpt2.tiktoken)
#   llama3  Meta's Llama 3 tokenizer.model, tiktoken's format (llama-models)
#   mistral a SentencePiece model of Llama 2's kind (mistral-common's
#           tokenizer.model.v1)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
case ${1:-} in
  gpt2) file=whisper/assets/gpt2.tiktoken ;;
  llama3) file=llama_models/llama3/tokenizer.model ;;
  mistral) file=mistral_common/data/tokenizer.model.v1 ;;
  *) echo "reference-files: expected gpt2, llama3 or mistral, got '${1:-}'" >&2; exit 2 ;;
esac
python=$(bash "$here/python-env.sh")
site=$("$python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
[[ -f $site/$file ]] || { echo "reference-files: $site/$file is missing (requirements/files.txt installs it)" >&2; exit 1; }
echo "$site/$file"
