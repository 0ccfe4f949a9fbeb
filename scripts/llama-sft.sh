#!/usr/bin/env bash
# Fine-tuning with LoRA (configs/llama-sft.toml): the small Llama of
# scripts/llama-tiny.sh (run first when runs/llama-tiny/hf is not there)
# learns to answer which word comes next in a verse of the demo's text. The
# conversations (scripts/kjv-next-word.awk): 29858 to train on, every 25th
# verse (1244) held out, in a chat format of plain text
# (configs/plain-chat.jinja). The held-out questions are asked before and
# after, `strata eval --chat` counting the answers that are exact (the word
# and the end of the line, as greedy decoding would write them). The adapter
# is exported in PEFT's format (runs/llama-sft/adapter). Prints the two
# scores last, one JSON line each.
set -euo pipefail
build=${1:-build}
out=runs/llama-sft
base=runs/llama-tiny/hf
template=configs/plain-chat.jinja
command -v bible >/dev/null || { echo "llama-sft: the bible command (package bible-kjv) is missing: run scripts/setup.sh" >&2; exit 1; }
[ -f "$base/config.json" ] || bash scripts/llama-tiny.sh "$build"

mkdir -p "$out/data"
bible -f gen1:1-rev22:21 |
  awk -v train="$out/data/train.jsonl" -v heldout="$out/data/heldout.jsonl" -f scripts/kjv-next-word.awk
"$build/strata" data prepare --chat --tokenizer "$base" --chat-template "$template" \
  --input "$out/data/train.jsonl" --output "$out/data/train"
ask() {
  "$build/strata" eval --weights "$base" "$@" --chat "$out/data/heldout.jsonl" --chat-template "$template"
}
ask >"$out/before.json"
rm -rf "$out/checkpoints"
"$build/strata" launch --nproc-per-node 4 -- "$build/strata" train --config configs/llama-sft.toml \
  --data-prepared "$out/data/train" --checkpoint-dir "$out/checkpoints" | tee "$out/train.log"
"$build/strata" export --checkpoint "$out/checkpoints" --format peft --out "$out/adapter"
ask --adapter "$out/adapter" >"$out/after.json"
echo "llama-sft: before fine-tuning:" >&2
cat "$out/before.json"
echo "llama-sft: after:" >&2
cat "$out/after.json"
