#!/usr/bin/env bash
# A long chaos soak (tests/cluster/chaos_soak.h): an elastic job on three
# rehearsed nodes through FAULTS faults drawn from SEED. Needs root.
#   bash scripts/chaos-soak.sh [BUILD] [FAULTS] [SEED]
set -euo pipefail
build=${1:-build}
faults=${2:-12}
seed=${3:-1}
cmake --build "$build" --target strata chaos_soak
"$build/tests/cluster/chaos_soak" --strata "$build/strata" --faults "$faults" --seed "$seed"
