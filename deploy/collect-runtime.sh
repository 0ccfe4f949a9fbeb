#!/usr/bin/env bash
# collect-runtime.sh DEST BINARY...
#
# Makes DEST a root filesystem that runs each BINARY and nothing more: the
# binaries go to DEST/usr/local/bin, and every shared library they load, as
# `ldd` resolves it on this machine (the dynamic loader included), is copied
# (symbolic links followed) to the same path under DEST. Besides those, only
# what a program running as root in a container reads: /etc/passwd and
# /etc/group naming root, /etc/nsswitch.conf (glibc 2.36 has its files and dns
# modules built in, so no libnss_* library is needed), /root and /tmp.
#
# DEST has Debian's merged /usr (/bin, /sbin, /lib and /lib64 are links into
# /usr), so a library is found under its /lib and its /usr/lib name alike, in
# the loader's default directories. Strata reads no data files of its own at
# run time (the run report's page is compiled in). Fails, naming the binary
# and the library, when ldd finds a library missing, except those named in
# HOST_LIBRARIES (space-separated sonames, e.g. "libcuda.so.1"): libraries
# the container runtime mounts from the host, such as the NVIDIA driver's.
set -euo pipefail

usage() {
  echo "usage: collect-runtime.sh DEST BINARY..." >&2
  exit 2
}

# The libraries `ldd BINARY` resolves, one path a line: "name => /path (addr)"
# lines and the loader's "/path (addr)"; the vDSO has no file.
libraries_of() {
  local binary=$1 listing
  listing=$(ldd "$binary") || { echo "collect-runtime: ldd $binary failed" >&2; exit 1; }
  local missing name
  missing=$(awk '$2 == "=>" && $3 == "not" { print $1 }' <<<"$listing")
  for name in $missing; do
    [[ " ${HOST_LIBRARIES:-} " == *" $name "* ]] && continue
    echo "collect-runtime: $binary needs $name, which ldd cannot find" >&2
    exit 1
  done
  awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' <<<"$listing"
}

make_skeleton() {
  local dest=$1 dir
  mkdir -p "$dest/usr/bin" "$dest/usr/sbin" "$dest/usr/lib" "$dest/usr/lib64" \
    "$dest/usr/local/bin" "$dest/etc" "$dest/root" "$dest/tmp"
  for dir in bin sbin lib lib64; do
    [[ -e $dest/$dir ]] || ln -s "usr/$dir" "$dest/$dir"
  done
  chmod 1777 "$dest/tmp"
  chmod 700 "$dest/root"
  echo "root:x:0:0:root:/root:/usr/sbin/nologin" >"$dest/etc/passwd"
  echo "root:x:0:" >"$dest/etc/group"
  printf 'passwd: files\ngroup: files\nhosts: files dns\n' >"$dest/etc/nsswitch.conf"
}

copy_library() {
  local dest=$1 library=$2
  [[ -e $dest$library ]] && return 0
  mkdir -p "$dest$(dirname "$library")"
  cp -L "$library" "$dest$library"
}

main() {
  [[ $# -ge 2 ]] || usage
  local dest=$1 binary libraries library
  shift
  make_skeleton "$dest"
  for binary in "$@"; do
    [[ -x $binary && -f $binary ]] || { echo "collect-runtime: $binary is no executable" >&2; exit 1; }
    cp -L "$binary" "$dest/usr/local/bin/"
    libraries=$(libraries_of "$binary")
    for library in $libraries; do
      copy_library "$dest" "$library"
    done
  done
}

main "$@"
