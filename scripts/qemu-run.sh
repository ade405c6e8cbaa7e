#!/bin/sh
# qemu-run.sh PROGRAM ARGS...
#
# Runs an Alpha Linux program under qemu-alpha (Debian's qemu-user) with the
# Alpha cross sysroot as its root for the dynamic loader and libraries.
# stdin, stdout, stderr and the exit status are the program's own.
#
# Environment:
#   CPO_ALPHA_SYSROOT  sysroot passed to qemu -L (default /usr/alpha-linux-gnu)
#   CPO_QEMU           the qemu binary (default qemu-alpha)
#   CPO_QEMU_STATIC=1  run a statically linked program anyway
#
# qemu-alpha 7.2 crashes at start-up in statically linked glibc programs, so
# those are refused with a message unless CPO_QEMU_STATIC=1.
set -eu

die() { echo "qemu-run: $*" >&2; exit 125; }

[ $# -ge 1 ] || die "usage: qemu-run.sh PROGRAM ARGS..."
prog=$1
sysroot=${CPO_ALPHA_SYSROOT:-/usr/alpha-linux-gnu}
qemu=${CPO_QEMU:-qemu-alpha}

command -v "$qemu" >/dev/null 2>&1 || die "$qemu not found (Debian package qemu-user)"
[ -d "$sysroot" ] || die "Alpha sysroot $sysroot not found (Debian package libc6.1-dev-alpha-cross)"
[ -e "$prog" ] || die "$prog: no such file"
[ -f "$prog" ] && [ -r "$prog" ] || die "$prog: not a readable file"

# An ELF file starts with \177ELF; byte 18-19 is e_machine, 0x9026 for Alpha
# (little-endian).  A dynamic program names its loader in PT_INTERP, whose
# path appears near the start of the file.
magic=$(od -An -tx1 -N20 "$prog" | tr -d ' \n')
case $magic in
  7f454c46*) ;;
  *) die "$prog: not an ELF file" ;;
esac
case $magic in
  *2690) ;;
  *) die "$prog: not an Alpha program (e_machine 0x$(echo "$magic" | cut -c39-40)$(echo "$magic" | cut -c37-38))" ;;
esac
if [ "${CPO_QEMU_STATIC:-0}" != 1 ] &&
   ! head -c 4096 "$prog" | grep -q -a 'ld-linux.so'; then
  die "$prog: statically linked; qemu-alpha crashes at start-up in static glibc programs (set CPO_QEMU_STATIC=1 to try anyway)"
fi

exec "$qemu" -L "$sysroot" "$@"
