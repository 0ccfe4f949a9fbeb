#!/usr/bin/env bash
# consumer_test.sh BUILD_DIR SOURCE_DIR
#
# Installs the build into a fresh prefix and uses it the two ways a consumer
# would: examples/ as a separate CMake project (find_package(Strata)), and a
# one-file program compiled with `pkg-config --cflags --libs strata`. Fails on
# the first step that does not work, saying which.
set -euo pipefail
build=$1
source=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
step() { echo "== $*"; }

step "install into $prefix"
cmake --install "$build" --prefix "$prefix" >"$work/install.log"
test -f "$prefix/include/strata/version.h"
test -f "$prefix/include/strata/train/trainer.h"
test -x "$prefix/bin/strata"
"$prefix/bin/strata" --version
# Private headers (src/) stay private.
if find "$prefix/include" -name 'shm_*.h' | grep -q .; then
  echo "private headers were installed" >&2
  exit 1
fi

step "examples/ against the installed package"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S "$source/examples" -B "$work/examples" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" "${launcher[@]}" >"$work/configure.log" ||
  { cat "$work/configure.log"; exit 1; }
cmake --build "$work/examples" -j "${JOBS:-2}"
"$work/examples/two_stage"

step "a program built with pkg-config"
pc_dir=$(dirname "$(find "$prefix" -name strata.pc)")
export PKG_CONFIG_PATH=$pc_dir
test "$(pkg-config --modversion strata)" = "$("$prefix/bin/strata" --version | awk 'NR==1 {print $2}')"
# shellcheck disable=SC2046 # the flags are meant to split
g++ -o "$work/pkg_config_consumer" "$source/tests/install/pkg_config_consumer.cpp" \
  $(pkg-config --cflags --libs strata)
"$work/pkg_config_consumer"
