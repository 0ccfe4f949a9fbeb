#!/usr/bin/env bash
# Installs the Debian packages Strata needs to build, test and benchmark, and
# the project's Python environment of pinned PyPI packages
# (scripts/python-env.sh), whose torch's LibTorch Strata builds against.
# Idempotent: it asks apt only for what is missing and runs `apt-get update`
# only when something is. Uses sudo when not root.
set -euo pipefail

# What building the library and the `strata` command needs: `--build-only`
# installs just these (the build stage of deploy/Containerfile).
packages=(
  build-essential cmake ninja-build ccache git pkg-config
  # LibTorch itself comes from PyPI's torch wheel in the project's .venv
  # (scripts/python-env.sh, cmake/select_torch.cmake), which ships no Gloo
  # headers: Debian's serve (Gloo's API has not changed between them).
  libgloo-dev python3-venv
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
  # The demo's English text: the King James Bible (public domain), read out by `bible`.
  bible-kjv
  # The etcd rendezvous tests (EtcdStore.*, LaunchEtcd.*) start a real etcd server.
  etcd-server
  # DeepSpeed, a peer of bench_peers, compiles its CPU communication op at first use.
  python3-dev
)
case "${1:-}" in
  --build-only) ;;
  # The benchmarks' peers (PyTorch's own Python stack) are among the tests' packages.
  "" | --bench) packages+=("${test_packages[@]}") ;;
  *) echo "setup: unknown option '$1' (known: --build-only, --bench)" >&2; exit 2 ;;
esac

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
# LibTorch, and the tests' references from PyPI (tiktoken, tokenizers,
# sentencepiece, transformers, kubernetes-validate) and the tokenizer files
# the demo reads.
bash "$(dirname "$0")/python-env.sh" >/dev/null
