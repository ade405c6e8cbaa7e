#!/bin/bash
# pgo.sh WORKLOADS NAME OUT -- TRAIN...
#
# A gcc profile-guided build of workload NAME (lua, zstd or speedtest1), the
# comparison point of the optimizer's benchmark: the objects are compiled
# with -fprofile-generate into OUT/obj and linked into OUT/gen/NAME; TRAIN
# runs with PGO_BIN naming that binary (under qemu-alpha: the .gcda files
# are written beside the objects); then the same objects are compiled again
# with -fprofile-use into OUT/bin/NAME (dynamic, -O2 -g like the workload).
# WORKLOADS is the workloads' build directory (build/workloads), whose
# unpacked sources are used.  Only the dynamic build is made.
set -eu
die() { echo "pgo: $*" >&2; exit 1; }
[ $# -ge 5 ] && [ "$4" = -- ] || die "usage: pgo.sh WORKLOADS NAME OUT -- TRAIN..."
WL=$1 NAME=$2 OUT=$3
shift 4
HERE=$(cd "$(dirname "$0")" && pwd)
unset MAKEFLAGS MFLAGS MAKEOVERRIDES MAKELEVEL CC CFLAGS CPPFLAGS LDFLAGS LIBS || true
newest() { ls -d "$WL"/src/"$1"_* 2>/dev/null | sort -V | tail -n 1; }
extra=()
case $NAME in
  lua) SRC=$(newest lua5.4) ;;
  zstd) SRC=$(newest libzstd) ;;
  speedtest1) SRC=$(newest sqlite3)
    [ -n "$SRC" ] && extra=(AMALG="$WL/obj/$(basename "$SRC")/host") ;;
  *) die "no PGO recipe for $NAME (lua, zstd, speedtest1)" ;;
esac
[ -n "$SRC" ] && [ -d "$SRC" ] || die "$NAME: no unpacked source in $WL/src (make workloads)"
mkdir -p "$OUT" || die "cannot create $OUT"
OUT=$(cd "$OUT" && pwd)
log=$OUT/$NAME.log
rm -rf "${OUT:?}/obj" "$OUT/gen" "$OUT/bin"
build() {   # BIN FLAGS
  make -f "$HERE/$NAME.mk" -j"${CPO_JOBS:-2}" SRC="$SRC" OBJ="$OUT/obj" BIN="$1" \
    EXTRA_CFLAGS="$2" "${extra[@]}" dynamic >>"$log" 2>&1 || die "$NAME: build failed (see $log)"
}
build "$OUT/gen" "-fprofile-generate -fprofile-update=single"
PGO_BIN=$OUT/gen/$NAME "$@" >>"$log" 2>&1 || die "$NAME: the training run failed (see $log)"
n=$(find "$OUT/obj" -name '*.gcda' | wc -l)
[ "$n" -gt 0 ] || die "$NAME: the training run wrote no profile (.gcda) under $OUT/obj"
find "$OUT/obj" -name '*.o' -delete
build "$OUT/bin" "-fprofile-use -fprofile-correction -Wno-missing-profile"
echo "pgo: $OUT/bin/$NAME from $n profiles"
