#!/bin/bash
# make week: a compressed week of production under cpo serve (docs/service.md).
#
# Three programs (lua running scripts, speedtest1 running queries, zstd
# compressing files; the dynamic builds, so qemu-alpha can check them too)
# do the same day's work every day on a 4-CPU axp, profiled by cpod; each day
# is an epoch.  cpo serve looks after all three, unattended.  Before day 4 a
# new build of lua is dropped at its original's path (lua.c recompiled with
# another setting, relinked: every address moves); the fault hook makes
# speedtest1's second candidate from a random layout, which judging must roll
# back.  The week ends with a report per program (WEEK/report/NAME/), one line
# per program "NAME: cycles per unit of work BEFORE -> AFTER (-X.X%)" and
# "deployed N, rolled back N, lost samples N".  Exits 1 when a program did
# not end faster, the bad candidate was not rolled back, the new build was
# not optimized, or a sample was lost.
#
# Environment: WEEK_DIR (default build/week), WEEK_DAYS (default 7).
set -u
cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
B=$BUILD/bin
WL=$BUILD/workloads
S=$ROOT/tests/workloads/lua
OUT=${WEEK_DIR:-$BUILD/week}
DAYS=${WEEK_DAYS:-7}
for f in "$WL/bin/lua" "$WL/bin/speedtest1" "$WL/bin/zstd" "$WL/bin/dash" "$WL/host/datagen"; do
  [ -x "$f" ] || { echo "week: $f is not built (make workloads)"; exit 2; }
done
command -v qemu-alpha >/dev/null || { echo "week: qemu-alpha is not installed (scripts/setup.sh)"; exit 2; }

rm -rf "$OUT"
mkdir -p "$OUT/bin" "$OUT/builds" "$OUT/input" "$OUT/report"
DB=$OUT/db
for p in lua speedtest1 zstd; do cp "$WL/bin/$p" "$OUT/builds/$p"; done
"$WL/host/datagen" -g400K -P40 -s7 >"$OUT/input/text.dat"
"$WL/host/datagen" -g400K -P70 -s3 >"$OUT/input/mixed.dat"
"$WL/host/datagen" -g100K -P50 -s11 >"$OUT/input/check.dat"
cat >"$OUT/serve.conf" <<EOF
# cpo serve for make week
db = $DB
state = $OUT/state
poll = 0.5

[program lua]
original = $OUT/builds/lua
deploy = $OUT/bin/lua
test = \$RUN \$EXE $S/sieve.lua

[program speedtest1]
original = $OUT/builds/speedtest1
deploy = $OUT/bin/speedtest1
test = \$RUN \$EXE --size 1 --testset orm --verify 2>&1 | sed 's/ *[0-9.]*s\$//'

[program zstd]
original = $OUT/builds/zstd
deploy = $OUT/bin/zstd
test = \$RUN \$EXE -3 -c $OUT/input/check.dat | cksum
EOF

"$B/cpod" --db "$DB" --flush 1h || { echo "week: cpod did not start"; exit 1; }
CPO_SERVE_FAULT=random-plan:speedtest1:2 "$B/cpo" serve --config "$OUT/serve.conf" 2>"$OUT/serve.err" &
SERVE=$!
cleanup() {
  kill "$SERVE" 2>/dev/null
  wait "$SERVE" 2>/dev/null
  "$B/cpo" quit --db "$DB" >/dev/null 2>&1
}
trap cleanup EXIT

# The service is idle when its log has not grown for two seconds.
settle() {
  local last=-1 now i
  for i in $(seq 600); do
    now=$(stat -c %s "$OUT/state/serve.log" 2>/dev/null || echo 0)
    [ "$now" = "$last" ] && [ "$i" -gt 4 ] && return 0
    last=$now
    sleep 1
  done
}

# A new build of lua: lua.c with another input-line limit, relinked with
# the library's objects.
rebuild_lua() {
  local src obj tmp
  src=$(ls -d "$WL"/src/lua5.4_* | head -1)
  obj=$(ls -d "$WL"/obj/lua5.4_* | head -1)
  tmp=$OUT/rebuild
  mkdir -p "$tmp"
  cp -a "$obj" "$tmp/obj"
  rm -f "$tmp/obj/src/lua.o"
  make -s -f scripts/workloads/lua.mk SRC="$src" OBJ="$tmp/obj" BIN="$tmp/bin" \
    ALPHA_CC="alpha-linux-gnu-gcc -DLUA_MAXINPUT=1024" dynamic >"$tmp/build.log" 2>&1 ||
    { echo "week: the lua rebuild failed (see $tmp/build.log)"; exit 1; }
  cp "$tmp/bin/lua" "$OUT/builds/lua.new" && mv "$OUT/builds/lua.new" "$OUT/builds/lua"
  echo "      a new build of lua dropped at $OUT/builds/lua"
}

# One day's work: the same jobs every day, four at a time.
day_jobs="$OUT/bin/lua $S/closures.lua >/dev/null &
$OUT/bin/lua $S/sieve.lua >/dev/null &
$OUT/bin/speedtest1 --size 1 --testset main >/dev/null &
$OUT/bin/speedtest1 --size 1 --testset orm >/dev/null &
wait
$OUT/bin/zstd -q -3 -c $OUT/input/text.dat >/dev/null &
$OUT/bin/zstd -q -9 -c $OUT/input/mixed.dat >/dev/null &
$OUT/bin/lua $S/closures.lua >/dev/null &
$OUT/bin/zstd -q -1 -c $OUT/input/mixed.dat >/dev/null &
wait"

start=$(date +%s)
settle
for day in $(seq "$DAYS"); do
  [ "$day" -eq 4 ] && rebuild_lua
  # A seed of its own each day: axp is deterministic, and the same seed
  # would take the very same samples of the same jobs every day.
  "$B/axp" run --cpus 4 --pmu cycles:4000,imiss:64 --pmu-seed "$day" --collector "$DB" -- "$WL/bin/dash" -c "$day_jobs" ||
    { echo "week: day $day's work failed"; exit 1; }
  flushed=$("$B/cpo" epoch --db "$DB")
  settle
  echo "day $day: $(sed -n 's/^flushed \([0-9]*\) samples.*/\1 samples/p' <<<"$flushed"), $(( $(date +%s) - start )) s in"
  "$B/cpo" status --config "$OUT/serve.conf" | awk '/^[a-z0-9]*: version/ {print "      " $0}'
done
kill "$SERVE"
wait "$SERVE"
quit=$("$B/cpo" quit --db "$DB")
trap - EXIT
lost=$(sed -n 's/^lost \([0-9]*\) samples.*/\1/p' <<<"$quit")

echo
echo "history:"
for p in lua speedtest1 zstd; do
  sed -n "s/^history /  $p: /p" "$OUT/state/$p/state"
done
fail=0
summary=()
for p in lua speedtest1 zstd; do
  # the version that did the last work: the deployed one, or the one it is
  # being judged against when it was deployed too late to run
  v=$(sed -n 's/^deployed //p' "$OUT/state/$p/state")
  runs=$("$B/cpo" report "$OUT/state/$p/versions/0/exe" "$OUT/state/$p/versions/$v/exe" --db "$DB" \
         -o "$OUT/report/$p" 2>/dev/null | awk '/^after/ {getline; print $7}')
  [ "${runs:-0}" -gt 0 ] || v=$(sed -n 's/^previous //p' "$OUT/state/$p/state")
  "$B/cpo" report "$OUT/state/$p/versions/0/exe" "$OUT/state/$p/versions/$v/exe" --db "$DB" \
    -o "$OUT/report/$p" >/dev/null 2>"$OUT/report/$p.err" || { echo "week: no report for $p"; fail=1; }
  line=$(sed -n 's/^cycles per run: \([0-9]*\) -> \([0-9]*\) (\(.*\))$/\1 -> \2 (\3)/p' "$OUT/report/$p/report.txt")
  summary+=("$p: cycles per unit of work ${line:-unknown}")
  case $line in *"(-"*) ;; *) fail=1; echo "week: $p did not end faster";; esac
done
deployed=$(cat "$OUT"/state/*/state | grep -c '^history .* deployed: from')
rolled=$(cat "$OUT"/state/*/state | grep -c '^history .* rolled back:')
grep -q '^history .* 2 rolled back:' "$OUT/state/speedtest1/state" ||
  { echo "week: the bad candidate (speedtest1 version 2) was not rolled back"; fail=1; }
base=$(sed -n 's/^base //p' "$OUT/state/lua/state")
grep -q "^history .* deployed: from" <(sed -n "/ $base new build:/,\$p" "$OUT/state/lua/state") ||
  { echo "week: the new build of lua was not optimized"; fail=1; }
[ "${lost:-1}" -eq 0 ] || { echo "week: samples were lost"; fail=1; }
echo
echo "reports: $OUT/report/*/index.html; took $(( $(date +%s) - start )) s"
for l in "${summary[@]}"; do echo "$l"; done
echo "deployed $deployed, rolled back $rolled, lost samples ${lost:-unknown}"
exit $fail
