#!/usr/bin/env bash
# The main job: a small GPT-2 (configs/demo.toml) trained by 4 workers as
# pp 2 x tp 2, under the launcher, on real English text: the King James Bible
# of Debian's `bible-kjv-text` package (the 1611 translation, public domain;
# /usr/share/doc/bible-kjv-text/copyright), read out verse by verse with the
# package `bible-kjv`'s `bible` command and written one chapter a document by
# scripts/kjv-chapters.awk, tokenized with GPT-2's BPE (OpenAI's ranks in
# tiktoken's format, gpt2.tiktoken, from the PyPI package openai-whisper,
# pinned with its hash in requirements/files.txt). Then three samples from the
# checkpoint, and the model exported as a Hugging Face GPT-2 (runs/demo/hf).
# Prints the run's summary as its last line: {"demo":"gpt","layout":...,"steps":...,"loss_end":...,...}
set -euo pipefail
build=${1:-build}
out=runs/demo
command -v bible >/dev/null || { echo "demo: the bible command (package bible-kjv) is missing: run scripts/setup.sh (make demo does)" >&2; exit 1; }

tokenizer=$(bash scripts/reference-files.sh gpt2)

mkdir -p "$out/data"
# Genesis 1:1 to Revelation 22:21: all 31102 verses, 4.4 MB.
bible -f gen1:1-rev22:21 | awk -f scripts/kjv-chapters.awk >"$out/data/kjv.jsonl"
"$build/strata" data prepare --tokenizer "$tokenizer" --input "$out/data/kjv.jsonl" \
  --output "$out/data/kjv"
rm -rf "$out/checkpoints"
# bf16 matrix products where the CPU has them natively (AMX or AVX512-BF16):
# 1.3 and 1.5 times the tokens/s of float32 in two one-process runs here;
# elsewhere bf16 would be emulated and slower, and strata train refuses it.
precision=fp32
grep -qwE 'amx_bf16|avx512_bf16' /proc/cpuinfo && precision=bf16
"$build/strata" launch --nproc-per-node 4 -- "$build/strata" train --config configs/demo.toml \
  --precision "$precision" --tokenizer "$tokenizer" --data-prepared "$out/data/kjv" \
  --checkpoint-dir "$out/checkpoints" | tee "$out/demo.log"
summary=$(grep -o '{"train":.*}' "$out/demo.log" | tail -n 1)

for prompt in "And the LORD said" "In the beginning" "Blessed are"; do
  echo "--- sample: $prompt"
  "$build/strata" generate --checkpoint "$out/checkpoints" --prompt "$prompt" --tokens 48 \
    --temperature 0.8 --top-k 40 --seed 1
done | tee "$out/samples.txt"
"$build/strata" export --checkpoint "$out/checkpoints" --format safetensors \
  --out "$out/hf/model.safetensors"
echo "demo: report in $out/report.html, pictures in $out/loss.svg and $out/timeline.svg, metrics in $out/metrics.jsonl, samples in $out/samples.txt, the model for Hugging Face in $out/hf" >&2
echo "${summary/\{\"train\":/\{\"demo\":}"
