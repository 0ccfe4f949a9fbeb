# The fine-tuning example's conversations (scripts/llama-sft.sh): from
# `bible -f gen1:1-rev22:21` (one verse a line after its reference,
# "Ge1:3 And God said, ..."), one JSON line a verse asking for the word
# that follows its first few words (2 to 7, by the verse's place; fewer in
# a short verse), answered with that word without its punctuation:
#   {"messages":[{"role":"user","content":"Which word comes next in the
#   verse: \"And God said,\""},{"role":"assistant","content":"Let"}]}
# Every 25th verse goes to the file `heldout`, the rest to `train`, so the
# held-out questions come from every book and none is trained on.
BEGIN {
  if (train == "" || heldout == "") {
    print "kjv-next-word: give -v train=FILE -v heldout=FILE" > "/dev/stderr"
    exit 2
  }
}
NF >= 3 {
  words = NF - 1
  shown = 2 + NR % 6
  if (shown > words - 1) shown = words - 1
  text = $2
  for (i = 3; i <= shown + 1; ++i) text = text " " $i
  answer = $(shown + 2)
  gsub(/[^A-Za-z']/, "", answer)
  if (answer == "") next
  gsub(/\\/, "\\\\", text)
  gsub(/"/, "\\\"", text)
  print "{\"messages\":[{\"role\":\"user\",\"content\":\"Which word comes next in the verse: \\\"" \
        text "\\\"\"},{\"role\":\"assistant\",\"content\":\"" answer "\"}]}" \
        > (NR % 25 == 0 ? heldout : train)
}
