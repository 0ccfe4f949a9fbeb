#!/usr/bin/env bash
# reference_setup.sh SCRIPT DEST_DIR TEXT_FILE...
#
# Writes the cases of a tokenizer reference test into DEST_DIR: SCRIPT
# (reference/gpt2_reference.py for GPT2Reference.*, reference/llama_reference.py
# for LlamaReference.*) run by the project's Python environment, which
# scripts/python-env.sh makes the first time (from PyPI, pinned and hashed by
# requirements/) and reuses after. The script writes GPT-2's or Llama's files
# and the token ids of the references (tiktoken, Hugging Face's tokenizers,
# sentencepiece) for the texts it makes and the lines of each TEXT_FILE into
# DEST_DIR.partial, which replaces DEST_DIR only once it succeeds, so that a
# failed run leaves no half-written cases for the tests to read.
set -euo pipefail
if (($# < 2)); then
  echo "usage: reference_setup.sh SCRIPT DEST_DIR TEXT_FILE..." >&2
  exit 2
fi
script=$1
dest=${2%/}
shift 2
root=$(cd "$(dirname "$0")/../.." && pwd)
python=$(bash "$root/scripts/python-env.sh")
rm -rf "$dest.partial"
# -B: no __pycache__ beside the scripts in the source tree.
"$python" -B "$script" "$dest.partial" "$@"
rm -rf "$dest"
mv "$dest.partial" "$dest"
