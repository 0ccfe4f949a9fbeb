#!/usr/bin/env bash
# Installs the Debian packages Strata needs to build, test and benchmark, and
# (for the tests and benchmarks) the project's Python environment of pinned
# PyPI packages (scripts/python-env.sh). Idempotent: it asks apt only for what
# is missing and runs `apt-get update` only when something is. Uses sudo when
# not root.
set -euo pipefail

# What building the library and the `strata` command needs: `--build-only`
# installs just these (the build stage of deploy/Containerfile).
packages=(
  build-essential cmake ninja-build ccache git pkg-config
  # Debian's LibTorch 1.13 (CPU), what `make test` builds against until the
  # launcher serves PyTorch 2.x workers a fresh store each round; the 2.11
  # build takes the .venv's (cmake/select_torch.cmake). Gloo's headers serve
  # both (PyPI's wheel ships none).
  libtorch-dev libgloo-dev libopenblas0-pthread
  libtomlplusplus-dev libcli11-dev nlohmann-json3-dev libssl-dev zlib1g-dev
  # Tokenizers: ICU's Unicode categories for GPT-2's BPE, and SentencePiece.
  libicu-dev libsentencepiece-dev
  # `strata k8s` prints YAML with yaml-cpp (the CLI only, not the library).
  libyaml-cpp-dev
  # `--rdzv-backend etcd` talks to etcd's HTTP/JSON gateway through libcurl.
  libcurl4-openssl-dev
)
# What the tests need besides.
test_packages=(
  libgtest-dev libgmock-dev
  iproute2 procps
  # The run report's test opens report.html in a headless browser.
  chromium fonts-dejavu-core
  # The container test runs the rehearsal image (runc: crun fails on hybrid cgroups).
  podman runc
  # A job started by mpirun instead of strata launch (SchedulerEnvironment.*).
  openmpi-bin
  # spm_encode, against which the SentencePiece tests check Strata's ids.
  sentencepiece
  # The project's virtual environment (scripts/python-env.sh): the tests'
  # references from PyPI (tiktoken, tokenizers, sentencepiece,
  # kubernetes-validate) and the tokenizer files the demo reads.
  python3-venv
  # The demo's English text: the King James Bible (public domain), read out by `bible`.
  bible-kjv
  # A plain PyTorch job under strata launch (LaunchPyTorch.*: torch 2.11's
  # Python does not meet again after a restart under it yet).
  python3-torch
  # The etcd rendezvous tests (EtcdStore.*, LaunchEtcd.*) start a real etcd server.
  etcd-server
)
case "${1:-}" in
  --build-only) ;;
  # The benchmarks' peers (PyTorch's own Python stack) are among the tests' packages.
  "" | --bench) packages+=("${test_packages[@]}") ;;
  *) echo "setup: unknown option '$1' (known: --build-only, --bench)" >&2; exit 2 ;;
esac

python_env=false
[[ ${1:-} != --build-only ]] && python_env=true

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [[ ${#missing[@]} -gt 0 ]]; then
  sudo=""
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || { echo "setup: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    sudo="sudo"
  fi
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
if $python_env; then
  bash "$(dirname "$0")/python-env.sh" >/dev/null
fi
