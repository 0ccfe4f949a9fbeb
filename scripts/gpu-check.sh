#!/usr/bin/env bash
# Run THERE, from the repository root of the GPU machine (python3 with a CUDA
# PyTorch 2.x, nvcc, cmake, ninja; no network), after scripts/gpu-deps.sh ran
# here and .gpu-deps travelled with the tree:
#
#   bash scripts/gpu-check.sh
#
# 1. prints the machine: nvidia-smi, torch, CUDA, NCCL, compilers;
# 2. configures against python3's LibTorch (-DSTRATA_TORCH=python) in build-gpu/;
# 3. builds the CUDA tests and bench_gpu with every core, -k 0 so that one run
#    shows every compile error; stops there on a failure, after building the
#    rest of the tree for its errors too;
# 4. runs the CUDA tests (ctest -L cuda), then bench_gpu (JSON lines);
# 5. with time left, builds the rest of the tree, to show its errors (not
#    finishing in time is no failure: a rerun on the same machine goes on).
#
# Logs go to $OUT when it is set (the device tool brings them back), else to
# build-gpu/logs. The whole run stays inside DEADLINE_S seconds (default 450);
# each phase gets what is left. STRATA_PYTHON names another interpreter than
# python3. Exit status: 0 when everything built and passed.
set -uo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
deadline=$((start + ${DEADLINE_S:-450}))
build=build-gpu
logs=${OUT:-$build/logs}
mkdir -p "$logs" "$build"
deps=$PWD/.gpu-deps
jobs=$(nproc)
status=0

left() { echo $((deadline - $(date +%s))); }
say() { echo "== gpu-check [$(($(date +%s) - start))s] $*"; }
# Runs "$@" for at most $1 seconds (the first argument), logging to $2.
bounded() {
  local seconds=$1 log=$2
  shift 2
  if ((seconds <= 5)); then
    say "no time left for: $*"
    return 124
  fi
  timeout --kill-after=10 "$seconds" "$@" >"$log" 2>&1
}
# The first compile errors of a build log, so the summary shows them.
errors() { grep -E -A3 'error:|Error [0-9]+|undefined reference|FAILED:' "$1" | head -n "${2:-80}"; }

say "machine"
{
  nvidia-smi || echo "nvidia-smi failed"
  python3 - <<'PY'
import torch
print("torch", torch.__version__, "cuda", torch.version.cuda,
      "available", torch.cuda.is_available(),
      "nccl", torch.cuda.nccl.version() if torch.cuda.is_available() else None,
      "cxx11abi", torch.compiled_with_cxx11_abi())
print("cmake_prefix_path", torch.utils.cmake_prefix_path)
if torch.cuda.is_available():
    print("device", torch.cuda.get_device_name(0), torch.cuda.get_device_capability(0))
PY
  nvcc=$(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null || true)
  echo "nvcc ${nvcc:-missing}"
  [[ -n $nvcc ]] && "$nvcc" --version | tail -n 2
  cmake --version | head -n 1
  ninja --version
  c++ --version | head -n 1
  echo "cores $jobs"
} 2>&1 | tee "$logs/machine.log"

if [[ ! -d $deps/cmake ]]; then
  say "FAILED: .gpu-deps is missing: run scripts/gpu-deps.sh on the Debian machine and carry .gpu-deps"
  exit 2
fi

# OpenSSL: the machine's own when it has headers, else Debian's headers from
# .gpu-deps with the machine's libcrypto.so.3 (the same 3.x ABI).
openssl=()
if [[ ! -e /usr/include/openssl/evp.h ]]; then
  crypto=$(ldconfig -p | awk '/libcrypto\.so\.3 /{print $NF; exit}')
  [[ -z $crypto ]] && crypto=$(ls /usr/lib/x86_64-linux-gnu/libcrypto.so.3 2>/dev/null)
  openssl=(-DOPENSSL_INCLUDE_DIR="$deps/openssl/include" -DOPENSSL_CRYPTO_LIBRARY="$crypto")
fi
nvcc=$(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null || true)
cuda=()
[[ -n $nvcc ]] && cuda=(-DCMAKE_CUDA_COMPILER="$nvcc" -DCMAKE_CUDA_ARCHITECTURES=90)
export TORCH_CUDA_ARCH_LIST=9.0

say "configure (STRATA_TORCH=python)"
if ! bounded "$(left)" "$logs/configure.log" cmake -S . -B "$build" -G Ninja \
  -DSTRATA_TORCH=python -DSTRATA_PYTHON="${STRATA_PYTHON:-python3}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER_LAUNCHER= \
  -DSTRATA_BUILD_EXAMPLES=OFF -DSTRATA_INSTALL=OFF \
  -Dnlohmann_json_DIR="$deps/cmake" -Dtomlplusplus_DIR="$deps/cmake" -DCLI11_DIR="$deps/cmake" \
  -Dyaml-cpp_DIR="$deps/cmake" -DGTest_DIR="$deps/cmake" \
  -DSTRATA_GLOO_INCLUDE_DIR="$deps/gloo/include" "${openssl[@]}" "${cuda[@]}"; then
  tail -n 60 "$logs/configure.log"
  say "FAILED: configure (log: $logs/configure.log)"
  exit 1
fi
grep -E 'LibTorch|CUDA|NCCL|Gloo|WARNING' "$logs/configure.log" | head -n 30

# The binaries this check runs, then the library's own objects.
first=(cuda_tests bench_gpu)
say "build ${first[*]} (-j $jobs, -k 0)"
bounded $(($(left) - 150)) "$logs/build.log" cmake --build "$build" -j "$jobs" \
  --target "${first[@]}" -- -k 0
built=$?
if ((built == 124 || built == 137)); then
  tail -n 5 "$logs/build.log"
  say "FAILED: building ${first[*]} did not finish in time (log: $logs/build.log)"
  exit 1
elif ((built != 0)); then
  errors "$logs/build.log"
  say "FAILED: building ${first[*]}; building the rest of the tree for its errors"
  bounded $(($(left) - 5)) "$logs/build-rest.log" cmake --build "$build" -j "$jobs" -- -k 0 ||
    errors "$logs/build-rest.log" 40
  say "FAILED: build (logs: $logs/build.log, $logs/build-rest.log)"
  exit 1
fi

say "CUDA tests (ctest -L cuda)"
if ! bounded $(($(left) - 150)) "$logs/ctest.log" ctest --test-dir "$build" -L cuda \
  --output-on-failure --timeout 120; then
  status=1
fi
grep -E 'Passed|Failed|Skipped|tests passed|Not Run|\*\*\*' "$logs/ctest.log" | tail -n 40

say "bench_gpu"
if ! bounded $(($(left) - 20)) "$logs/bench.log" "$build/bench/bench_gpu"; then
  status=1
  tail -n 30 "$logs/bench.log"
fi
grep '^{' "$logs/bench.log" | tee "$logs/results.jsonl"

say "the rest of the tree (-k 0, for compile errors only)"
bounded $(($(left) - 5)) "$logs/build-rest.log" cmake --build "$build" -j "$jobs" -- -k 0
rest=$?
if ((rest == 124 || rest == 137)); then
  say "the rest of the tree was still building at the deadline (a rerun goes on from there)"
elif ((rest != 0)); then
  errors "$logs/build-rest.log" 40
  say "FAILED: the rest of the tree has errors (log: $logs/build-rest.log)"
  status=1
fi

say "done, status $status (logs in $logs)"
exit $status
