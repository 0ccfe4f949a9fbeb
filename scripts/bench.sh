#!/usr/bin/env bash
# Runs every benchmark in BUILD/bench/ and collects their JSON lines into
# BUILD/bench-results.jsonl. Each benchmark prints its own progress on stderr.
set -euo pipefail
build=${1:-build}
results="$build/bench-results.jsonl"
: > "$results"
status=0
for bench in "$build"/bench/bench_*; do
  [[ -x "$bench" ]] || continue
  echo "== $(basename "$bench")" >&2
  if ! "$bench" | tee /dev/stderr | grep '^{"bench"' >> "$results"; then
    echo "bench: $(basename "$bench") failed" >&2
    status=1
  fi
done
echo "bench: $(wc -l < "$results") results in $results" >&2
exit $status
