#!/bin/bash
# Determinism: the pthreads program on 4 simulated CPUs (and the fork/exec
# one) must print the right answer and give the same output, exit status,
# total instruction count and per-process counts in every run.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
AXP=$BUILD/bin/axp
OUT=$BUILD/programs
SRC=$PWD/tests/programs
RUNS=${RUNS:-4}

[ -x "$AXP" ] || { echo "$AXP missing: run make"; exit 77; }
[ -x "$OUT/threads-dyn" ] || { echo "$OUT/threads-dyn missing: run make programs"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# the counts that must not move: everything but host time and rates
counts() { grep -v -e host_seconds -e instructions_per_second "$1"; }

for prog in threads-dyn threads-static forkexec-dyn; do
  name=${prog%-*}
  first=""
  for i in $(seq "$RUNS"); do
    d=$tmp/$prog.$i
    mkdir "$d"
    (cd "$d" && timeout 120 "$AXP" run --cpus 4 --stats="$d/stats.json" "$OUT/$prog" \
        </dev/null >"$d/out" 2>"$d/err")
    rc=$?
    if [ $rc -ne 0 ] || ! cmp -s "$d/out" "$SRC/$name.expected"; then
      echo "FAIL $prog run $i: status $rc, output:"; diff "$d/out" "$SRC/$name.expected" | head; head "$d/err"
      fail=1
      continue
    fi
    counts "$d/stats.json" >"$d/counts"
    if [ -z "$first" ]; then
      first=$d
      echo "ok   $prog run 1: $(grep '"instructions"' "$d/stats.json" | head -1 | tr -d ' ,')"
    elif ! cmp -s "$first/counts" "$d/counts"; then
      echo "FAIL $prog run $i: counts differ from run 1"
      diff "$first/counts" "$d/counts" | head
      fail=1
    else
      echo "ok   $prog run $i: same output and counts"
    fi
  done
done
[ $fail -eq 0 ]
