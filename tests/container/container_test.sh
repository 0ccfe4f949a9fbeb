#!/usr/bin/env bash
# container_test.sh SOURCE_DIR BUILD_DIR WORKER
#
# Builds the rehearsal image of BUILD_DIR (strata and the launcher's test
# WORKER) with deploy/rehearsal-image.sh, then runs in containers, with no
# network but loopback: `strata --version`; `strata launch` of 2 test workers
# that all-reduce; `strata launch` of a 2-replica `strata train` of a tiny GPT.
# Exits 77 (CTest's skip) naming what is missing when not root or without
# podman or runc; removes its image in any case.
set -euo pipefail
source_dir=$1
build_dir=$2
worker=$3

skip() {
  echo "SKIPPED: $*"
  exit 77
}
[[ $(id -u) -eq 0 ]] || skip "needs root: podman runs the rehearsal image rootful"
command -v podman >/dev/null || skip "needs podman (scripts/setup.sh installs podman and runc)"
command -v runc >/dev/null || skip "needs runc (scripts/setup.sh installs podman and runc)"

export CONTAINERS_CONF=${CONTAINERS_CONF:-$source_dir/deploy/podman.conf}
image=localhost/strata-rehearsal-test:$$
trap 'podman rmi -f "$image" >/dev/null 2>&1 || true' EXIT

# Runs COMMAND... in a fresh container; its output goes to stdout.
in_container() {
  podman run --rm --network none "$image" "$@" 2>&1
}

# Fails with OUTPUT unless it contains TEXT.
expect_in() {
  local text=$1 output=$2
  grep -qF -- "$text" <<<"$output" || { echo "expected '$text' in:"; echo "$output"; exit 1; }
}

size=$("$source_dir/deploy/rehearsal-image.sh" "$build_dir" "$image" "$worker" | tail -1)
echo "rehearsal image: $size bytes"

output=$(in_container strata --version)
expect_in "strata " "$output"

output=$(in_container strata launch --nproc-per-node 2 -- "$(basename "$worker")" ok)
expect_in "[rank 0] sum 2" "$output"
expect_in "[rank 1] sum 2" "$output"

output=$(in_container strata launch --nproc-per-node 2 -- strata train --dp 2 --steps 2 \
  --warmup-steps 1 --layers 2 --hidden 32 --heads 2 --ffn 64 --context 32 --seq-len 32 \
  --global-batch 4 --micro-batch 2 --corpus-bytes 20000 --log-every 1 --eval-every 0 \
  --out-dir /tmp/run)
echo "$output" | tail -5
expect_in "[rank 0] step 2/2" "$output"
# Both workers share the container's /dev/shm: their dp group takes the shared-memory transport.
expect_in "[rank 0] strata train: rank 0's groups: pp alone, dp 2 ranks over gloo+shm, tp alone" "$output"
expect_in '"loss_end":' "$output"
echo "the rehearsal image ran strata, the test worker and a 2-replica strata train"
