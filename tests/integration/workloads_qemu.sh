#!/bin/bash
# Runs every Alpha workload present in build/workloads/bin under qemu-alpha
# (scripts/qemu-run.sh) and compares its stdout and exit status with the
# expected ones in tests/workloads/:
#   lua         each tests/workloads/lua/NAME.lua against NAME.expected
#   zstd        tests/workloads/zstd/roundtrip.sh against roundtrip.expected,
#               then zstd's own tests/playTests.sh with the Alpha zstd
#   speedtest1  --size 5 --verify, timings filtered out, against size5.expected
#   dash        tests/workloads/dash/script.sh against script.expected (status 3)
# Static builds are not run: qemu-alpha crashes in static glibc programs.
# One line per check; a mismatch prints the diff.  Exit 77 when no workload
# is built.  CPO_QUICK=1 leaves out playTests.sh (about 2 minutes).
set -eu
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
BIN=$BUILD/workloads/bin
QEMU=$ROOT/scripts/qemu-run.sh
T=$ROOT/tests/workloads
export LC_ALL=C

present=""
for w in lua zstd speedtest1 dash; do
  [ -x "$BIN/$w" ] && present="$present $w"
done
if [ -z "$present" ]; then
  echo "no workloads in $BIN (make workloads builds them)"
  exit 77
fi
if ! command -v qemu-alpha >/dev/null 2>&1; then
  echo "qemu-alpha not installed (Debian package qemu-user)"
  exit 77
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cpo-workloads.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export TMPDIR=$tmp
passed=0 failed=0

# FILTER, when set, is a command the program's stdout is piped through
# before it is compared.
FILTER=""

# check NAME EXPECTED_FILE EXPECTED_STATUS TIMEOUT_SECONDS CMD...
# EXPECTED_FILE "-" compares the exit status only.
check() {
  local name=$1 exp=$2 want=$3 secs=$4
  shift 4
  local base
  base=$tmp/$(echo "$name" | tr '/ ' '__')
  local start rc
  start=$(date +%s)
  set +e
  (cd "$tmp" && timeout -k 5 "$secs" "$@" </dev/null >"$base.raw" 2>"$base.err")
  rc=$?
  set -e
  local secs_used=$(( $(date +%s) - start ))
  if [ -n "$FILTER" ]; then
    $FILTER <"$base.raw" >"$base.out"
  else
    cp "$base.raw" "$base.out"
  fi
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    echo "FAIL $name: timed out after ${secs}s"
    tail -n 20 "$base.err" "$base.raw"
    failed=$((failed + 1))
  elif [ $rc -ne "$want" ]; then
    echo "FAIL $name: exit status $rc, expected $want"
    tail -n 20 "$base.err"
    failed=$((failed + 1))
  elif [ "$exp" != - ] && ! diff -u "$exp" "$base.out" >"$base.diff"; then
    echo "FAIL $name: stdout differs from ${exp#"$ROOT"/}"
    head -n 60 "$base.diff"
    failed=$((failed + 1))
  else
    echo "ok   $name (${secs_used}s)"
    passed=$((passed + 1))
  fi
}

# newest unpacked source tree of a Debian source package
src_of() {
  local d
  d=$(ls -d "$BUILD/workloads/src/$1"_*/ 2>/dev/null | sort -V | tail -n 1)
  echo "${d%/}"
}

for w in $present; do
  case $w in
  lua)
    for script in "$T"/lua/*.lua; do
      name=$(basename "$script" .lua)
      check "lua $name" "$T/lua/$name.expected" 0 60 "$QEMU" "$BIN/lua" "$script"
    done
    ;;
  zstd)
    datagen=$BUILD/workloads/host/datagen
    if [ ! -x "$datagen" ]; then
      echo "FAIL zstd: $datagen missing (make workloads builds it)"
      failed=$((failed + 1))
      continue
    fi
    mkdir -p "$tmp/roundtrip"
    check "zstd round trip" "$T/zstd/roundtrip.expected" 0 300 \
      sh "$T/zstd/roundtrip.sh" "$datagen" "$tmp/roundtrip" "$QEMU" "$BIN/zstd"
    if [ "${CPO_QUICK:-0}" = 1 ]; then
      echo "skip zstd playTests.sh (CPO_QUICK=1)"
      continue
    fi
    src=$(src_of libzstd)
    if [ -z "$src" ] || [ ! -f "$src/tests/playTests.sh" ]; then
      echo "FAIL zstd playTests.sh: no unpacked libzstd source under $BUILD/workloads/src"
      failed=$((failed + 1))
      continue
    fi
    # playTests.sh runs zstd as "$EXEC_PREFIX" "$ZSTD_BIN" ..., and its
    # symlink tests as $EXE_PREFIX ./zstdcat; it works in the current
    # directory (check runs it in the scratch directory).
    check "zstd playTests.sh" - 0 900 \
      env EXEC_PREFIX="$QEMU" EXE_PREFIX="$QEMU" ZSTD_BIN="$BIN/zstd" DATAGEN_BIN="$datagen" \
      bash "$src/tests/playTests.sh"
    ;;
  speedtest1)
    FILTER="sed -E s/[[:space:]]+[0-9]+\.[0-9]+s\$//"
    check "speedtest1 --size 5" "$T/speedtest1/size5.expected" 0 300 \
      "$QEMU" "$BIN/speedtest1" --size 5 --verify
    FILTER=""
    ;;
  dash)
    check "dash script.sh" "$T/dash/script.expected" 3 60 "$QEMU" "$BIN/dash" "$T/dash/script.sh"
    ;;
  esac
done

echo "workloads under qemu: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
