#!/usr/bin/env bash
# The main job: a GPT trained by 4 workers as pp 2 x tp 2 (configs/demo.toml),
# under the launcher. Prints the run's summary as its last line:
# {"demo":"gpt","layout":...,"steps":...,"loss_start":...,"loss_end":...,...}
set -euo pipefail
build=${1:-build}
out=runs/demo
mkdir -p "$out"
"$build/strata" launch --nproc-per-node 4 -- "$build/strata" train --config configs/demo.toml \
  | tee "$out/demo.log"
summary=$(grep -o '{"train":"gpt".*}' "$out/demo.log" | tail -n 1)
echo "demo: report in $out/report.html, pictures in $out/loss.svg and $out/timeline.svg, metrics in $out/metrics.jsonl" >&2
echo "${summary/\{\"train\":/\{\"demo\":}"
