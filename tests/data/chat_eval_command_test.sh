#!/usr/bin/env bash
# chat_eval_command_test.sh STRATA TOKENIZER_DIR PYTHON_ENV REFERENCE
#
# `strata eval --chat` as a user runs it, against transformers: a small
# Llama trained a few steps on conversations with the chat_reference
# fixture's Llama 3 folder (its tokenizer.json and chat template), its
# checkpoint scored by Strata and its Hugging Face export by
# reference/chat_eval_reference.py (transformers' greedy decoding and
# cross-entropy): the same exact answers and the same answer loss. Bad
# options are refused by name, with exit code 2.
set -euo pipefail
strata=$1
tokenizer=$2
python=$(bash "$3")
reference=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$(dirname "$0")/command_expectations.sh"

for ((i = 0; i < 80; ++i)); do
  echo "{\"messages\": [{\"role\": \"user\", \"content\": \"Say $((i % 4)).\"}, {\"role\": \"assistant\", \"content\": \"$((i % 4))\"}]}"
done >"$work/chats.jsonl"
head -n 8 "$work/chats.jsonl" >"$work/heldout.jsonl"
"$strata" data prepare --chat --tokenizer "$tokenizer" --chat-date 2026-01-01 --input "$work/chats.jsonl" \
  --output "$work/sft" 2>"$work/prepare.err" || fail "prepare: $(cat "$work/prepare.err")"
"$strata" train --architecture llama --tokenizer "$tokenizer" --data-prepared "$work/sft" --vocab 128256 \
  --layers 1 --hidden 16 --heads 2 --ffn 32 --seq-len 32 --context 32 --global-batch 4 --micro-batch 4 \
  --steps 30 --warmup-steps 1 --lr 0.03 --val-fraction 0.2 --pack --checkpoint-dir "$work/ckpt" \
  --out-dir "$work/run" >"$work/train.out" 2>&1 || fail "train: $(cat "$work/train.out")"
"$strata" eval --checkpoint "$work/ckpt" --chat "$work/heldout.jsonl" --chat-date 2026-01-01 \
  >"$work/strata.json" 2>"$work/eval.err" || fail "eval: $(cat "$work/eval.err")"
grep -q "strata eval: exact answers [0-9]* of 8 " "$work/eval.err" || fail "summary: $(cat "$work/eval.err")"
"$strata" export --checkpoint "$work/ckpt" --format safetensors --out "$work/hf/model.safetensors" \
  >"$work/export.out" 2>&1 || fail "export: $(cat "$work/export.out")"
"$python" "$reference" "$work/hf" "$tokenizer" "$work/heldout.jsonl" >"$work/reference.json" ||
  fail "reference"
"$python" - "$work/strata.json" "$work/reference.json" <<'PY' || fail "strata $(cat "$work/strata.json"), transformers $(cat "$work/reference.json")"
import json, sys
strata, reference = (json.load(open(path)) for path in sys.argv[1:3])
assert strata["conversations"] == reference["conversations"] == 8
assert strata["answer_tokens"] == reference["answer_tokens"]
assert strata["exact_matches"] == reference["exact_matches"]
assert abs(strata["answer_loss"] - reference["answer_loss"]) <= 1e-4 * reference["answer_loss"]
PY

expect_refusal "--chat evaluates conversations; give it without --data-files" \
  "$strata" eval --checkpoint "$work/ckpt" --chat "$work/heldout.jsonl" --data-files "$work/chats.jsonl"
expect_refusal "cannot read the conversations file '$work/missing.jsonl'" \
  "$strata" eval --checkpoint "$work/ckpt" --chat "$work/missing.jsonl"
printf '%s\n' '{"messages": [{"role": "user", "content": "hi"}]}' >"$work/bad.jsonl"
expect_refusal "$work/bad.jsonl:1" "$strata" eval --checkpoint "$work/ckpt" --chat "$work/bad.jsonl"
echo "{\"messages\": [{\"role\": \"user\", \"content\": \"$(printf 'word %.0s' {1..40})\"}, {\"role\": \"assistant\", \"content\": \"ok\"}]}" >"$work/long.jsonl"
expect_refusal "beyond the model's context of 32" "$strata" eval --checkpoint "$work/ckpt" --chat "$work/long.jsonl"
echo "ok $(cat "$work/strata.json")"
