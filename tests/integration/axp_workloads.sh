#!/bin/bash
# The Alpha workloads (build/workloads/bin), dynamic and static builds, under
# axp, against the same expected output as under qemu-alpha:
#   lua         each tests/workloads/lua/NAME.lua against NAME.expected
#   zstd        tests/workloads/zstd/roundtrip.sh, then zstd's own
#               tests/playTests.sh with the zstd it runs being axp's
#   speedtest1  --size 5 --verify, timings filtered out, against size5.expected
#   dash        tests/workloads/dash/script.sh against script.expected (status 3);
#               its external commands are the host's, as under qemu
# One line per check; a mismatch prints the diff.  Exit 77 when nothing is
# built.  CPO_QUICK=1 leaves out playTests.sh and the static builds.
set -eu
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
BIN=$BUILD/workloads/bin
AXP=$BUILD/bin/axp
T=$ROOT/tests/workloads
export LC_ALL=C

[ -x "$AXP" ] || { echo "$AXP missing: run make"; exit 77; }
present=""
for w in lua zstd speedtest1 dash; do
  [ -x "$BIN/$w" ] && present="$present $w"
done
[ -n "$present" ] || { echo "no workloads in $BIN (make workloads builds them)"; exit 77; }
kinds="dyn static"
[ "${CPO_QUICK:-0}" = 1 ] && kinds=dyn

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cpo-axp-workloads.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export TMPDIR=$tmp
passed=0 failed=0
FILTER=""

# a wrapper so scripts can run "axp run -- PROGRAM" as one command
cat >"$tmp/axp-run" <<EOF
#!/bin/sh
exec "$AXP" run -- "\$@"
EOF
chmod +x "$tmp/axp-run"

# check NAME EXPECTED_FILE EXPECTED_STATUS TIMEOUT_SECONDS CMD...
check() {
  local name=$1 exp=$2 want=$3 secs=$4
  shift 4
  local base start rc
  base=$tmp/$(echo "$name" | tr '/ ' '__')
  start=$(date +%s)
  set +e
  (cd "$tmp" && timeout -k 5 "$secs" "$@" </dev/null >"$base.raw" 2>"$base.err")
  rc=$?
  set -e
  local used=$(( $(date +%s) - start ))
  if [ -n "$FILTER" ]; then $FILTER <"$base.raw" >"$base.out"; else cp "$base.raw" "$base.out"; fi
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    echo "FAIL $name: timed out after ${secs}s"; tail -n 20 "$base.err"; failed=$((failed + 1))
  elif [ $rc -ne "$want" ]; then
    echo "FAIL $name: exit status $rc, expected $want"; tail -n 20 "$base.err"; failed=$((failed + 1))
  elif [ "$exp" != - ] && ! diff -u "$exp" "$base.out" >"$base.diff"; then
    echo "FAIL $name: stdout differs from ${exp#"$ROOT"/}"; head -n 60 "$base.diff"; failed=$((failed + 1))
  else
    echo "ok   $name (${used}s)"; passed=$((passed + 1))
  fi
}

src_of() {
  local d
  d=$(ls -d "$BUILD/workloads/src/$1"_*/ 2>/dev/null | sort -V | tail -n 1)
  echo "${d%/}"
}

for w in $present; do
  for kind in $kinds; do
    prog=$BIN/$w
    [ $kind = static ] && prog=$BIN/$w-static
    if [ ! -x "$prog" ]; then
      echo "FAIL $w-$kind: $prog missing"; failed=$((failed + 1)); continue
    fi
    case $w in
    lua)
      for script in "$T"/lua/*.lua; do
        name=$(basename "$script" .lua)
        check "lua-$kind $name" "$T/lua/$name.expected" 0 300 "$AXP" run "$prog" "$script"
      done
      ;;
    zstd)
      datagen=$BUILD/workloads/host/datagen
      if [ ! -x "$datagen" ]; then
        echo "FAIL zstd: $datagen missing (make workloads builds it)"; failed=$((failed + 1)); continue
      fi
      mkdir -p "$tmp/roundtrip-$kind"
      check "zstd-$kind round trip" "$T/zstd/roundtrip.expected" 0 900 \
        sh "$T/zstd/roundtrip.sh" "$datagen" "$tmp/roundtrip-$kind" "$AXP" run "$prog"
      [ "${CPO_QUICK:-0}" = 1 ] && { echo "skip zstd playTests.sh (CPO_QUICK=1)"; continue; }
      [ $kind = static ] && continue
      src=$(src_of libzstd)
      if [ -z "$src" ] || [ ! -f "$src/tests/playTests.sh" ]; then
        echo "FAIL zstd playTests.sh: no unpacked libzstd source under $BUILD/workloads/src"
        failed=$((failed + 1)); continue
      fi
      mkdir -p "$tmp/play"
      check "zstd-$kind playTests.sh" - 0 3600 \
        env EXEC_PREFIX="$tmp/axp-run" EXE_PREFIX="$tmp/axp-run" ZSTD_BIN="$prog" DATAGEN_BIN="$datagen" \
        bash "$src/tests/playTests.sh"
      ;;
    speedtest1)
      FILTER="sed -E s/[[:space:]]+[0-9]+\.[0-9]+s\$//"
      check "speedtest1-$kind --size 5" "$T/speedtest1/size5.expected" 0 900 \
        "$AXP" run "$prog" --size 5 --verify
      FILTER=""
      ;;
    dash)
      check "dash-$kind script.sh" "$T/dash/script.expected" 3 300 "$AXP" run "$prog" "$T/dash/script.sh"
      ;;
    esac
  done
done

echo "workloads under axp: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
