#!/bin/bash
# cpod throughput, end to end: machine stand-ins (tests/cpod/cpod_producer,
# 4 CPUs each, stall mode, so nothing is dropped) sample flat out into their
# driver regions while cpod takes the buffers, maps every entry to an image
# and offset, journals it, and merges into a database on disk (TMPDIR) at
# the end (`cpo flush`).  Reported per run: samples per second of wall time
# from the first sample to the flush's reply, the daemon's CPU time per
# sample and per driver entry, and the final merge's time.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
PROD=$BUILD/tests/cpod/cpod_producer
for f in $BUILD/bin/cpod $BUILD/bin/cpo $PROD; do
  [ -x "$f" ] || { echo "$f not built (make bench builds it)"; exit 1; }
done
P=$BUILD/programs W=$BUILD/workloads/bin
IMAGES=()
for f in $P/intloop-dyn $P/forkexec-dyn $P/malloc-dyn $W/lua $W/zstd $W/speedtest1; do
  [ -f "$f" ] && IMAGES+=("$f")
done
[ ${#IMAGES[@]} -ge 3 ] || { echo "need the test programs (make programs)"; exit 0; }
T=$(mktemp -d)
cleanup() {
  "$BUILD/bin/cpo" quit --db "$T/db" >/dev/null 2>&1
  for l in "$T"/db/.cpod/*/regions; do
    r=$(readlink "$l") && case "$r" in /dev/shm/cpod-*) rm -rf "$r";; esac
  done
  rm -rf "$T"
}
trap cleanup EXIT
# CPU time in ns of every thread of a process (the main loop and the merge thread).
cpu_ns() { cat /proc/"$1"/task/*/schedstat | awk '{ s += $1 } END { printf "%.0f", s }'; }

printf '%-34s %9s %10s %8s %8s %11s %11s %8s\n' run samples "samples/s" entries "smp/ent" "take ns/ent" "all ns/smp" "merge s"
run() {   # name, machines, samples per machine, producer options...
  local name=$1 nm=$2 ns=$3; shift 3
  rm -rf "$T/db"
  "$BUILD/bin/cpod" --db "$T/db" --drain 1s --flush 1h || return 1
  local pid=$(cat "$T"/db/.cpod/*/lock) c0 t0 t1 c1 cm
  c0=$(cpu_ns "$pid")
  t0=$(date +%s.%N)
  local pids=()
  for m in $(seq "$nm"); do
    "$PROD" "$T/db" /dev/null --no-expect --quiet --seed "$m" --pid-base $((m * 10000)) --samples "$ns" "$@" "${IMAGES[@]}" &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
  cm=$(cpu_ns "$pid")
  local out
  out=$("$BUILD/bin/cpo" flush --db "$T/db") || { echo "$name: flush failed"; return 1; }
  t1=$(date +%s.%N)
  c1=$(cpu_ns "$pid")
  local log=$(ls "$T"/db/.cpod/*/log)
  local entries=$(sed -n 's/.* samples taken, \([0-9]*\) entries,.*/\1/p' "$log" | awk '{ s += $1 } END { print s }')
  local merge=$(sed -n 's/^flushed .*(\([0-9.]*\) s)$/\1/p' <<< "$out")
  local total=$((nm * ns))
  "$BUILD/bin/cpo" quit --db "$T/db" >/dev/null
  awk -v n="$name" -v s="$total" -v t0="$t0" -v t1="$t1" -v c="$((c1 - c0))" -v cm="$((cm - c0))" \
      -v e="$entries" -v m="$merge" 'BEGIN {
    w = t1 - t0
    printf "%-34s %9d %10.0f %8d %8.1f %11.1f %11.1f %8s\n", n, s, s / w, e, s / e, cm / e, c / s, m }'
}
run "1 machine, DCPI driver sizes"    1 4000000 --table 16384 --buffer 8192
run "2 machines, DCPI driver sizes"   2 2000000 --table 16384 --buffer 8192
run "1 machine, small tables (1K/512)" 1 4000000 --table 1024 --buffer 512
echo "samples/s: wall clock, first sample to the flush's reply (the producers are single"
echo "threads and often the limit).  entries: what reached the daemon (evictions and"
echo "flushes); smp/ent: the driver's aggregation.  take ns/ent: the daemon's CPU time (all"
echo "threads) while the machines ran, per entry taken (journal, map, profile).  all ns/smp:"
echo "its CPU time for the whole run, final merge (zstd, fsync) included, per sample."
