#!/usr/bin/env bash
# A small Llama-family model (configs/llama-tiny.toml) trained by 4 workers
# as pp 2 x tp 2 on the demo's text (the King James Bible, as scripts/demo.sh
# reads it), tokenized with Meta's own Llama 3 tokenizer.model (tiktoken's
# format, from the PyPI package llama-models, pinned with its hash in
# requirements/files.txt). Then a sample from the checkpoint, starting from the
# tokenizer's <|begin_of_text|>, and the model exported as a Hugging Face
# LlamaForCausalLM (runs/llama-tiny/hf). Prints the run's summary last:
# strata train's summary line ({"train":...}).
set -euo pipefail
build=${1:-build}
out=runs/llama-tiny
command -v bible >/dev/null || { echo "llama-tiny: the bible command (package bible-kjv) is missing: run scripts/setup.sh" >&2; exit 1; }

tokenizer=$(bash scripts/reference-files.sh llama3)

mkdir -p "$out/data"
bible -f gen1:1-rev22:21 | awk -f scripts/kjv-chapters.awk >"$out/data/kjv.jsonl"
"$build/strata" data prepare --tokenizer "$tokenizer" --input "$out/data/kjv.jsonl" \
  --output "$out/data/kjv"
rm -rf "$out/checkpoints"
"$build/strata" launch --nproc-per-node 4 -- "$build/strata" train --config configs/llama-tiny.toml \
  --tokenizer "$tokenizer" --data-prepared "$out/data/kjv" --checkpoint-dir "$out/checkpoints" |
  tee "$out/train.log"
"$build/strata" generate --checkpoint "$out/checkpoints" --prompt "And the LORD said" --tokens 40 \
  --temperature 0.8 --top-k 40 --seed 1 | tee "$out/sample.txt"
"$build/strata" export --checkpoint "$out/checkpoints" --format safetensors \
  --out "$out/hf/model.safetensors"
grep -o '{"train":.*}' "$out/train.log" | tail -n 1
