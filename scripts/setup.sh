#!/bin/sh
# Installs everything cpo needs on Debian 12 (run as root).  Safe to re-run.
set -e
PKGS="build-essential make pkg-config git ca-certificates dpkg-dev
      libelf-dev binutils-dev binutils-multiarch-dev libzstd-dev zlib1g-dev
      libcriterion-dev clang libclang-rt-14-dev
      gcc-alpha-linux-gnu binutils-alpha-linux-gnu libc6.1-dev-alpha-cross
      qemu-user tcl python3 chromium golang-go golang-github-google-pprof-dev"
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update
  # shellcheck disable=SC2086
  apt-get install -y --no-install-recommends $missing
fi
