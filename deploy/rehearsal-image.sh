#!/usr/bin/env bash
# rehearsal-image.sh BUILD_DIR IMAGE_NAME [EXTRA_BINARY...]
#
# Makes a container image from a build tree, with no registry and no
# download: BUILD_DIR/strata and each EXTRA_BINARY (a test worker, say) with
# the shared libraries they load, collected by collect-runtime.sh into a root
# filesystem that `podman import` turns into IMAGE_NAME. The binaries are on
# the PATH (/usr/local/bin); the working directory is /workspace. The image
# holds the same files as the runtime stage of deploy/Containerfile, built
# from this machine's libraries instead of a fresh Debian 12.
#
# Needs podman; uses deploy/podman.conf unless CONTAINERS_CONF names another
# containers.conf. Prints the image's size in bytes last.
set -euo pipefail

[[ $# -ge 2 ]] || { echo "usage: rehearsal-image.sh BUILD_DIR IMAGE_NAME [EXTRA_BINARY...]" >&2; exit 2; }
build_dir=$1
image=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
export CONTAINERS_CONF=${CONTAINERS_CONF:-$here/podman.conf}
command -v podman >/dev/null || { echo "rehearsal-image: needs podman (scripts/setup.sh installs it)" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/strata-rehearsal.XXXXXX")
trap 'rm -rf "$work"' EXIT
# The SentencePiece plugin goes next to strata, where it looks first.
"$here/collect-runtime.sh" "$work/root" "$build_dir/strata" "$build_dir/libstrata_sentencepiece.so" "$@"
mkdir -p "$work/root/workspace"
tar -C "$work/root" --numeric-owner -cf "$work/rootfs.tar" .
podman import --quiet --change 'WORKDIR /workspace' --change 'CMD ["strata", "--help"]' \
  --change 'ENV PATH=/usr/local/bin:/usr/bin' "$work/rootfs.tar" "$image" >/dev/null
podman image inspect --format '{{.Size}}' "$image"
