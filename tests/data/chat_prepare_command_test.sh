#!/usr/bin/env bash
# chat_prepare_command_test.sh STRATA TOKENIZER_DIR
#
# Fine-tuning data as a user prepares and trains on it: `strata data prepare
# --chat` over conversations with a tokenizer folder's chat template (the
# chat_reference fixture's SmolLM 2 folder), its summary and PREFIX.mask;
# bad flags and lines refused with exit code 2 naming them; then two steps
# of `strata train` on it, the conversations packed, which says the loss
# counts the assistant's tokens and the documents are packed; --pack on raw
# text files is refused by name.
set -euo pipefail
strata=$1
tokenizer=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$(dirname "$0")/command_expectations.sh"

for ((i = 0; i < 60; ++i)); do
  echo "{\"messages\": [{\"role\": \"user\", \"content\": \"What is $i plus $i?\"}, {\"role\": \"assistant\", \"content\": \"$((2 * i))\"}]}"
  echo "{\"prompt\": \"Say $i.\", \"completion\": \"$i\"}"
done >"$work/chats.jsonl"

"$strata" data prepare --chat --tokenizer "$tokenizer" --input "$work/chats.jsonl" --output "$work/sft" \
  --max-tokens 39 --too-long truncate 2>"$work/prepare.err"
grep -q "^conversations: 120, [0-9]* of [0-9]* tokens the assistant's ($work/sft.mask)" "$work/prepare.err" ||
  fail "summary: $(cat "$work/prepare.err")"
grep -q "longer than 39 tokens: 60 truncated, 0 dropped" "$work/prepare.err" ||
  fail "long conversations: $(cat "$work/prepare.err")"
[[ -s $work/sft.bin && -s $work/sft.idx && -s $work/sft.mask ]] || fail "files missing"

expect_refusal "--too-long must be drop or truncate, not 'cut'" \
  "$strata" data prepare --chat --tokenizer "$tokenizer" --input "$work/chats.jsonl" --output "$work/x" --too-long cut
expect_refusal "the chat date '26-07-2024' is not YYYY-MM-DD" \
  "$strata" data prepare --chat --tokenizer "$tokenizer" --input "$work/chats.jsonl" --output "$work/x" --chat-date 26-07-2024
expect_refusal "apply to conversations (--chat) only" \
  "$strata" data prepare --tokenizer "$tokenizer" --input "$work/chats.jsonl" --output "$work/x" --max-tokens 9
printf '%s\n' '{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]}' \
  '{"messages": [{"role": "narrator", "content": "once"}, {"role": "assistant", "content": "yo"}]}' >"$work/bad.jsonl"
expect_refusal "$work/bad.jsonl:2 (byte offset " \
  "$strata" data prepare --chat --tokenizer "$tokenizer" --input "$work/bad.jsonl" --output "$work/x"
grep -qF "has the role 'narrator'" "$work/out" || fail "role: $(cat "$work/out")"
[[ ! -e $work/x.idx ]] || fail "a refused preparation wrote $work/x.idx"

"$strata" train --tokenizer "$tokenizer" --data-prepared "$work/sft" --vocab 128264 --layers 1 --hidden 16 \
  --heads 2 --ffn 32 --seq-len 32 --context 32 --global-batch 4 --micro-batch 2 --steps 2 --warmup-steps 1 \
  --val-fraction 0.2 --pack --out-dir "$work/out-run" >"$work/train.out" 2>&1 || fail "train: $(cat "$work/train.out")"
grep -qF "the loss counts the assistant's tokens only ($work/sft.mask; data.loss_on = auto)" "$work/train.out" ||
  fail "train output: $(cat "$work/train.out")"
grep -qF "documents packed (data.pack): each sees only itself" "$work/train.out" || fail "pack: $(cat "$work/train.out")"
grep -qF "training documents in whole-document windows" "$work/train.out" || fail "whole documents: $(cat "$work/train.out")"
printf 'plain text\n' >"$work/plain.txt"
status=0
"$strata" train --data-files "$work/plain.txt" --pack --steps 1 --out-dir "$work/out-plain" >"$work/out" 2>&1 || status=$?
[[ $status == 2 ]] || fail "--pack on text files: exit $status: $(cat "$work/out")"
grep -qF "data.pack needs data.prepared" "$work/out" || fail "--pack on text: $(cat "$work/out")"
echo "ok"
