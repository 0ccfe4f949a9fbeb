#!/usr/bin/env bash
# Run HERE (Debian 12 with Strata's build dependencies installed), before a run
# on the GPU machine: copies what Strata's CMake needs besides LibTorch into
# .gpu-deps/ (git-ignored), since that machine has python's LibTorch but none
# of Debian's -dev packages and cannot download them.
#
#   bash scripts/gpu-deps.sh      then carry .gpu-deps in the device run
#
# .gpu-deps/cmake holds a <Name>Config.cmake per package (scripts/gpu-deps/);
# scripts/gpu-check.sh points CMake at them. OpenSSL's headers come along;
# its libcrypto.so.3 is the GPU machine's own.
set -euo pipefail
cd "$(dirname "$0")/.."
out=.gpu-deps

need() {
  for path in "$@"; do
    [[ -e $path ]] || {
      echo "gpu-deps: $path is missing; run scripts/setup.sh first" >&2
      exit 1
    }
  done
}
need /usr/include/nlohmann /usr/include/toml++ /usr/include/CLI /usr/include/yaml-cpp \
  /usr/lib/x86_64-linux-gnu/libyaml-cpp.a /usr/src/googletest /usr/include/gloo \
  /usr/include/openssl /usr/include/x86_64-linux-gnu/openssl

rm -rf "$out"
mkdir -p "$out"/{include,lib,cmake,openssl/include,gloo/include}
cp -r /usr/include/nlohmann /usr/include/toml++ /usr/include/CLI /usr/include/yaml-cpp \
  "$out"/include/
cp /usr/lib/x86_64-linux-gnu/libyaml-cpp.a "$out"/lib/
cp -r /usr/src/googletest "$out"/googletest
# Gloo's headers, used only where LibTorch ships none (cmake/torch.cmake).
cp -r /usr/include/gloo "$out"/gloo/include/
# OpenSSL's headers with Debian's per-architecture configuration.h merged in.
cp -r /usr/include/openssl "$out"/openssl/include/
cp /usr/include/x86_64-linux-gnu/openssl/* "$out"/openssl/include/openssl/
cp scripts/gpu-deps/*.cmake "$out"/cmake/
dpkg-query -W nlohmann-json3-dev libtomlplusplus-dev libcli11-dev libyaml-cpp-dev googletest \
  libgloo-dev libssl-dev >"$out"/VERSIONS

echo "gpu-deps: $(du -sh "$out" | cut -f1) in $out"
