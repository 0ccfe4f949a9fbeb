#!/usr/bin/env bash
# A long chaos soak (tests/cluster/chaos_soak.h): an elastic job on three
# rehearsed nodes through FAULTS faults drawn from SEED; BACKEND etcd runs
# etcd on a fourth node, and node 0 may then be killed or cut off too.
# Needs root.
#   bash scripts/chaos-soak.sh [BUILD] [FAULTS] [SEED] [BACKEND: c10d|etcd]
set -euo pipefail
build=${1:-build}
faults=${2:-12}
seed=${3:-1}
backend=${4:-c10d}
cmake --build "$build" --target strata chaos_soak
"$build/tests/cluster/chaos_soak" --strata "$build/strata" --faults "$faults" --seed "$seed" \
  --rdzv-backend "$backend"
