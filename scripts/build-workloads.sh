#!/bin/bash
# build-workloads.sh OUT
#
# Builds the Alpha workloads from Debian source packages into OUT (the
# Makefile passes build/workloads):
#   OUT/bin/lua        OUT/bin/lua-static         (lua5.4)
#   OUT/bin/zstd       OUT/bin/zstd-static        (libzstd)
#   OUT/bin/speedtest1 OUT/bin/speedtest1-static  (sqlite3)
#   OUT/bin/dash       OUT/bin/dash-static        (dash)
#   OUT/host/datagen   zstd's test-data generator, for the host
# Source packages are downloaded once into ${CPO_CACHE:-$HOME/.cache/cpo}/sources
# (kept across `make clean`) and unpacked into OUT/src; objects go to OUT/obj,
# build logs to OUT/logs.  A workload whose binaries are newer than its
# inputs (cached source package, unpacked tree, build recipe) is skipped.
#
# Environment: CPO_CACHE, CPO_JOBS (parallel jobs, default 2), ALPHA_CC
# (default alpha-linux-gnu-gcc), HOST_CC (default cc), CPO_WORKLOADS (the
# workloads to build, default "lua zstd speedtest1 dash").
# Flags are fixed: -O2 -g, linked with -Wl,--emit-relocs; see docs/workloads.md.
set -eu

die() { echo "build-workloads: $*" >&2; exit 1; }
log() { echo "workloads: $*"; }

[ $# -eq 1 ] || die "usage: build-workloads.sh OUT_DIR"
mkdir -p "$1" || die "cannot create $1"
OUT=$(cd "$1" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
W=$HERE/workloads
CACHE=${CPO_CACHE:-${HOME:?HOME is not set; set CPO_CACHE}/.cache/cpo}/sources
JOBS=${CPO_JOBS:-2}
ALPHA_CC=${ALPHA_CC:-alpha-linux-gnu-gcc}
HOST_CC=${HOST_CC:-cc}
WORKLOADS=${CPO_WORKLOADS:-lua zstd speedtest1 dash}
export ALPHA_CC HOST_CC

# Settings meant for cpo's own Makefile (command-line variables travel in
# MAKEFLAGS) or for the host compiler must not leak into the workload builds.
unset MAKEFLAGS MFLAGS MAKEOVERRIDES MAKELEVEL CC CFLAGS CPPFLAGS LDFLAGS LIBS || true

command -v "$ALPHA_CC" >/dev/null 2>&1 || die "$ALPHA_CC not found (Debian package gcc-alpha-linux-gnu; run scripts/setup.sh)"
command -v "$HOST_CC" >/dev/null 2>&1 || die "host compiler $HOST_CC not found (run scripts/setup.sh)"
command -v make >/dev/null 2>&1 || die "make not found"
command -v dpkg-source >/dev/null 2>&1 || die "dpkg-source not found (Debian package dpkg-dev)"

mkdir -p "$OUT/bin" "$OUT/src" "$OUT/obj" "$OUT/logs" "$OUT/host"

# newest .dsc of a source package in the cache ("" if none)
cached_dsc() {
  ls "$CACHE/$1"_*.dsc 2>/dev/null | sort -V | tail -n 1
}

# uptodate OUTPUT... -- INPUT...: every output exists and is newer than
# every input that exists.
uptodate() {
  outs=""
  while [ $# -gt 0 ] && [ "$1" != -- ]; do outs="$outs $1"; shift; done
  [ $# -gt 0 ] && shift
  for o in $outs; do
    [ -e "$o" ] || return 1
    for i in "$@"; do
      [ -z "$i" ] && continue
      [ -e "$i" ] || continue
      [ "$i" -nt "$o" ] && return 1
    done
  done
  return 0
}

# Fetch (if needed) and unpack source package $1; sets SRC (the unpacked tree),
# BASE (package_version) and STAMP.  $2 is a function run on the fresh tree
# before it is used (or "").
unpack() {
  dsc=$("$W/fetch-source.sh" "$CACHE" "$1") || die "could not get the source package $1"
  BASE=$(basename "$dsc" .dsc)
  SRC=$OUT/src/$BASE
  STAMP=$SRC/.cpo-unpacked
  if [ -f "$STAMP" ] && [ ! "$dsc" -nt "$STAMP" ]; then
    return 0
  fi
  log "unpacking $BASE"
  rm -rf "$SRC" "$SRC.tmp"
  dpkg-source --no-copy -x "$dsc" "$SRC.tmp" >"$OUT/logs/unpack-$1.log" 2>&1 ||
    { tail -20 "$OUT/logs/unpack-$1.log" >&2; die "dpkg-source -x $dsc failed"; }
  if [ -n "$2" ]; then "$2" "$SRC.tmp"; fi
  touch "$SRC.tmp/.cpo-unpacked"
  mv "$SRC.tmp" "$SRC"
}

# run_logged LOG CMD...: output to LOG; on failure show its tail and fail.
run_logged() {
  logf=$1; shift
  if ! "$@" >>"$logf" 2>&1; then
    tail -30 "$logf" >&2
    die "failed: $* (full log: $logf)"
  fi
}

# static_link LOG NAME CMD...: a static build that fails is reported, not fatal.
static_link() {
  logf=$1; name=$2; shift 2
  if ! "$@" >>"$logf" 2>&1; then
    echo "build-workloads: warning: the static $name did not link (see $logf)" >&2
  fi
}

# make_workload NAME MK [VAR=VALUE...]: the dynamic and static builds from MK.
make_workload() {
  name=$1; mk=$2; shift 2
  logf=$OUT/logs/$name.log
  run_logged "$logf" make -f "$W/$mk" -j"$JOBS" SRC="$SRC" OBJ="$OUT/obj/$BASE" BIN="$OUT/bin" "$@" dynamic
  static_link "$logf" "$name" make -f "$W/$mk" -j"$JOBS" SRC="$SRC" OBJ="$OUT/obj/$BASE" BIN="$OUT/bin" "$@" static
}

# ---- lua5.4 ----------------------------------------------------------------
build_lua() {
  unpack lua5.4 ""
  make_workload lua lua.mk
}

# ---- zstd (source package libzstd) ------------------------------------------
build_zstd() {
  unpack libzstd ""
  make_workload zstd zstd.mk HOSTBIN="$OUT/host"
  run_logged "$OUT/logs/zstd.log" make -f "$W/zstd.mk" SRC="$SRC" OBJ="$OUT/obj/$BASE" \
    BIN="$OUT/bin" HOSTBIN="$OUT/host" HOST_CC="$HOST_CC" host-datagen
}

# ---- sqlite3: speedtest1 ----------------------------------------------------
build_speedtest1() {
  command -v tclsh >/dev/null 2>&1 || die "tclsh not found: generating sqlite3.c needs it (Debian package tcl)"
  unpack sqlite3 ""
  host=$OUT/obj/$BASE/host
  logf=$OUT/logs/speedtest1.log
  mkdir -p "$host"
  if [ ! -f "$host/Makefile" ] || [ "$STAMP" -nt "$host/Makefile" ]; then
    log "configuring sqlite3 for the host (to generate sqlite3.c)"
    (cd "$host" && run_logged "$logf" "$SRC/configure" CC="$HOST_CC" \
        --disable-tcl --disable-readline --disable-load-extension --disable-math)
  fi
  log "generating sqlite3.c"
  run_logged "$logf" make -C "$host" -j"$JOBS" sqlite3.c
  make_workload speedtest1 speedtest1.mk AMALG="$host"
}

# ---- dash -------------------------------------------------------------------
# Debian's patches add src/priv.c to src/Makefile.am and touch configure.ac;
# Debian regenerates the build system with autoreconf.  We do without
# autotools: the shipped generated files are marked newer than their inputs
# (so make does not try to run automake) and priv.c is added to the shipped
# src/Makefile.in by hand.
prepare_dash() {
  d=$1
  touch "$d/aclocal.m4"
  touch "$d/configure" "$d/config.h.in"
  touch "$d/Makefile.in" "$d/src/Makefile.in"
  if grep -q 'priv\.c' "$d/src/Makefile.am" && ! grep -q 'priv\.c' "$d/src/Makefile.in"; then
    sed -i -e 's/parser\.\$(OBJEXT) redir\.\$(OBJEXT)/parser.$(OBJEXT) priv.$(OBJEXT) redir.$(OBJEXT)/' \
           -e 's/parser\.c redir\.c/parser.c priv.c redir.c/' "$d/src/Makefile.in"
    [ "$(grep -c 'priv\.' "$d/src/Makefile.in")" -ge 2 ] ||
      die "could not add priv.c to dash's src/Makefile.in (layout changed?)"
  fi
}

build_dash() {
  unpack dash prepare_dash
  obj=$OUT/obj/$BASE
  logf=$OUT/logs/dash.log
  mkdir -p "$obj"
  if [ ! -f "$obj/config.status" ] || [ "$STAMP" -nt "$obj/config.status" ]; then
    log "configuring dash --host=alpha-linux-gnu"
    # Debian's configure options (debian/rules).
    (cd "$obj" && run_logged "$logf" "$SRC/configure" --host=alpha-linux-gnu \
        --disable-dependency-tracking --disable-fnmatch --disable-lineno --disable-glob \
        CC="$ALPHA_CC" CC_FOR_BUILD="$HOST_CC" CFLAGS="-O2 -g" LDFLAGS="-Wl,--emit-relocs")
  fi
  run_logged "$logf" make -C "$obj" -j"$JOBS"
  cp -f "$obj/src/dash" "$OUT/bin/dash.tmp" && mv -f "$OUT/bin/dash.tmp" "$OUT/bin/dash"
  # The same objects linked with -static: automake names the program
  # dash$(EXEEXT), so EXEEXT=-static makes the target dash-static.
  rm -f "$obj/src/dash-static"
  static_link "$logf" dash make -C "$obj/src" EXEEXT=-static \
    LDFLAGS="-Wl,--emit-relocs -static" dash-static
  if [ -f "$obj/src/dash-static" ]; then
    cp -f "$obj/src/dash-static" "$OUT/bin/dash-static.tmp" &&
      mv -f "$OUT/bin/dash-static.tmp" "$OUT/bin/dash-static"
  fi
}

# ---- driver -----------------------------------------------------------------
# pkg_of NAME: the Debian source package of a workload
pkg_of() {
  case $1 in
    lua) echo lua5.4 ;;
    zstd) echo libzstd ;;
    speedtest1) echo sqlite3 ;;
    dash) echo dash ;;
    *) die "unknown workload $1 (known: lua zstd speedtest1 dash)" ;;
  esac
}

# build_one NAME: builds a workload in a subshell with set -e (so that a
# failure stops that workload only) and reports how long it took.  Must be
# called with set +e, and not from an && / || list: bash ignores set -e
# inside those, even in a subshell that sets it again.
build_one() {
  local start rc
  log "building $1"
  start=$(date +%s)
  rm -f "$OUT/logs/$1.log"
  ( set -e; "build_$1" )
  rc=$?
  [ $rc -ne 0 ] || log "$1 done in $(( $(date +%s) - start ))s"
  return $rc
}

total_start=$(date +%s)
todo=""
for w in $WORKLOADS; do
  pkg=$(pkg_of "$w")
  outs="$OUT/bin/$w $OUT/bin/$w-static"
  [ "$w" = zstd ] && outs="$outs $OUT/host/datagen"
  # The unpacked tree the binaries were built from: that of the newest cached
  # source package, or, with an empty cache, the newest one unpacked.
  dsc=$(cached_dsc "$pkg")
  if [ -n "$dsc" ]; then
    stamp=$OUT/src/$(basename "$dsc" .dsc)/.cpo-unpacked
  else
    stamp=$(ls -d "$OUT/src/$pkg"_*/.cpo-unpacked 2>/dev/null | sort -V | tail -n 1)
  fi
  # shellcheck disable=SC2086
  if [ -n "$stamp" ] && [ -e "$stamp" ] &&
     uptodate $outs -- "$dsc" "$stamp" "$HERE/build-workloads.sh" "$W/common.mk" "$W/$w.mk"; then
    log "$w is up to date"
  else
    todo="$todo $w"
  fi
done

# Downloads first, one after the other (apt must not run twice at once).
for w in $todo; do
  "$W/fetch-source.sh" "$CACHE" "$(pkg_of "$w")" >/dev/null ||
    die "could not get the source package $(pkg_of "$w") for $w"
done

# Compiling sqlite3.c is one long single-threaded job: speedtest1 builds in
# the background while the other workloads use make -j$JOBS.
failed=""
bg_pid=""
set +e
case " $todo " in
  *" speedtest1 "*)
    build_one speedtest1 &
    bg_pid=$!
    ;;
esac
for w in $todo; do
  [ "$w" = speedtest1 ] && continue
  build_one "$w"
  [ $? -eq 0 ] || failed="$failed $w"
done
if [ -n "$bg_pid" ]; then
  wait "$bg_pid"
  [ $? -eq 0 ] || failed="$failed speedtest1"
fi
set -e

[ -z "$failed" ] || die "failed to build:$failed"
log "all done in $(( $(date +%s) - total_start ))s: $(cd "$OUT/bin" && ls | tr '\n' ' ')"
