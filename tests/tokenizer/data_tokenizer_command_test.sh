#!/usr/bin/env bash
# data_tokenizer_command_test.sh STRATA
#
# `strata data tokenizer` as a user runs it: trains a SentencePiece model on a
# generated text, encodes a text with it (and with the byte tokenizer),
# decodes the ids back to the same bytes, and refuses bad input with exit
# code 2 and a message naming the file.
set -euo pipefail
strata=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

words=(the model trains on many devices pipeline parallel data tokens café 東京 42 "don't")
for ((i = 0; i < 3000; ++i)); do
  echo "${words[i % 14]} ${words[(i * 7) % 14]} ${words[(i * 3 + 1) % 14]} ${words[(i / 5) % 14]}"
done >"$work/train.txt"

"$strata" data tokenizer --train --vocab-size 40 --input "$work/train.txt" --output "$work/tok" \
  >"$work/train.out"
grep -q "wrote $work/tok.model and $work/tok.vocab" "$work/train.out" || fail "train output: $(cat "$work/train.out")"
[[ -s $work/tok.model && -s $work/tok.vocab ]] || fail "no model or vocab written"

printf 'the model trains on 東京 café' >"$work/text.txt"
"$strata" data tokenizer --tokenizer "$work/tok.model" --encode "$work/text.txt" >"$work/ids.txt"
[[ $(wc -w <"$work/ids.txt") -gt 0 ]] || fail "no ids"
"$strata" data tokenizer --tokenizer "$work/tok.model" --decode "$work/ids.txt" >"$work/back.txt"
cmp "$work/text.txt" "$work/back.txt" || fail "decoded text differs: $(cat "$work/back.txt")"
if command -v spm_encode >/dev/null; then
  spm_encode --model="$work/tok.model" --output_format=id <"$work/text.txt" >"$work/spm.txt"
  diff "$work/spm.txt" "$work/ids.txt" || fail "ids differ from spm_encode's"
fi
"$strata" data tokenizer --tokenizer "$work/tok.model" | grep -q "vocabulary size 40" ||
  fail "no vocabulary size"

[[ $("$strata" data tokenizer --tokenizer byte --encode - <<<"hé") == "104 195 169 10" ]] ||
  fail "byte ids"

# Bad input: exit code 2 and the file named.
expect_error() {
  local pattern=$1
  shift
  local rc=0
  "$strata" "$@" >"$work/out" 2>"$work/err" || rc=$?
  [[ $rc -eq 2 ]] || fail "'$*' exited $rc, expected 2: $(cat "$work/err")"
  grep -qF -e "$pattern" "$work/err" || fail "'$*' said: $(cat "$work/err"), expected '$pattern'"
}
expect_error "$work/train.txt: not a SentencePiece model" data tokenizer --tokenizer "$work/train.txt"
expect_error "$work/missing.txt: cannot open" \
  data tokenizer --train --vocab-size 60 --input "$work/missing.txt" --output "$work/x"
expect_error "$work/encoder.json: not found" data tokenizer --tokenizer "$work"
expect_error "--train needs --input" data tokenizer --train --output "$work/x"
expect_error "--vocab-size needs --train" data tokenizer --tokenizer byte --vocab-size 5
printf 'bad \xff' >"$work/bad.txt"
expect_error "$work/bad.txt: text is not UTF-8: byte offset 4" \
  data tokenizer --tokenizer "$work/tok.model" --encode "$work/bad.txt"
echo "strata data tokenizer: trained, encoded, decoded, refused bad input"
