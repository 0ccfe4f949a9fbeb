# The demo's corpus: `bible -f gen1:1-rev22:21` prints one verse a line after
# its reference ("Ge1:1 In the beginning ..."). This writes one JSON line a
# chapter, {"text":"..."}, its verses without their references and a line
# each, so that `strata data prepare` sees 1189 documents and the validation
# split holds out whole chapters.
{
  split($1, reference, ":")
  verse = substr($0, length($1) + 2)
  gsub(/\\/, "\\\\", verse)
  gsub(/"/, "\\\"", verse)
  if (reference[1] != chapter) {
    if (NR > 1) print "\"}"
    printf "{\"text\":\"%s", verse
    chapter = reference[1]
  } else {
    printf "\\n%s", verse
  }
}
END { if (NR > 0) print "\"}" }
