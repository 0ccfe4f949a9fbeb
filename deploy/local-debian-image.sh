#!/usr/bin/env bash
# Makes a local `debian:12` image from the Debian archive, for machines that
# reach a Debian mirror but no container registry (deploy/Containerfile starts
# FROM debian:12). Needs root, debootstrap and podman (see deploy/podman.conf).
#
#   deploy/local-debian-image.sh [MIRROR]    default http://deb.debian.org/debian
#
# The image is a minbase bookworm with apt sources for bookworm, its updates
# and security, as the official image has.
set -euo pipefail

mirror=${1:-http://deb.debian.org/debian}
here=$(cd "$(dirname "$0")" && pwd)
export CONTAINERS_CONF=${CONTAINERS_CONF:-$here/podman.conf}

[[ $(id -u) -eq 0 ]] || { echo "local-debian-image: needs root (debootstrap)" >&2; exit 1; }
command -v debootstrap >/dev/null || { echo "local-debian-image: needs debootstrap" >&2; exit 1; }

work=$(mktemp -d /var/tmp/debian12.XXXXXX)
trap 'rm -rf "$work"' EXIT
debootstrap --variant=minbase bookworm "$work/root" "$mirror"
cat >"$work/root/etc/apt/sources.list" <<SOURCES
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
SOURCES
rm -rf "$work/root/var/lib/apt/lists/"* "$work/root/var/cache/apt/archives/"*.deb
tar -C "$work/root" --numeric-owner -cf "$work/rootfs.tar" .
podman import --change 'CMD ["/bin/bash"]' "$work/rootfs.tar" docker.io/library/debian:12
