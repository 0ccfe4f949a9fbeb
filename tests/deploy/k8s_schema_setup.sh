#!/usr/bin/env bash
# k8s_schema_setup.sh SOURCE_DIR DEST_DIR
#
# Installs the pinned Kubernetes schema validator of the K8sSchema.* tests
# (package.json, package-lock.json and validate.js from SOURCE_DIR) into
# DEST_DIR with `npm ci`, from the npm registry or npm's cache; does nothing
# when that lock is installed there already. Fails naming what is missing
# when node or npm is not installed (scripts/setup.sh installs both).
set -euo pipefail
src=$1
dest=$2
for tool in node npm; do
  command -v "$tool" >/dev/null ||
    { echo "the Kubernetes schema tests need $tool: run scripts/setup.sh (make test does)" >&2; exit 1; }
done
major=$(node -p 'process.versions.node.split(".")[0]')
if ((major < 18)); then
  echo "the Kubernetes schema tests need Node.js 18 or later, found $(node --version)" >&2
  exit 1
fi
mkdir -p "$dest"
cp "$src/package.json" "$src/package-lock.json" "$src/validate.js" "$dest/"
stamp=$dest/node_modules/.strata-installed-lock
if [[ -f $stamp ]] && cmp -s "$stamp" "$dest/package-lock.json"; then
  exit 0
fi
(cd "$dest" && npm ci --no-audit --no-fund --loglevel=error)
cp "$dest/package-lock.json" "$stamp"
