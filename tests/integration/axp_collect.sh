#!/bin/bash
# The machine profiling into a database: cpod serves a fresh database;
# speedtest1 (dynamic, --size 2) and then a lua script run on a 4-CPU axp
# with `--pmu cycles,imiss --collector DB`, with a `cpo epoch` between them
# so each run has an epoch of its own.  Each epoch must hold exactly the
# samples its machine reported in --stats, per event; the daemon must report
# nothing lost and under 0.1% unknown samples; speedtest1's own image must
# hold most of its cycle samples, and (where `cpo prof` exists) the hottest
# procedures must be sqlite's for speedtest1 and the lua interpreter's for
# lua.  The machines' regions must be gone once merged.
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
AXP=$BUILD/bin/axp CPO=$BUILD/bin/cpo CPOD=$BUILD/bin/cpod W=$BUILD/workloads/bin
for f in $AXP $CPO $CPOD; do
  [ -x "$f" ] || { echo "$f not built (make all builds it)"; exit 77; }
done
for f in $W/speedtest1 $W/lua; do
  [ -x "$f" ] || { echo "$f not built (make workloads builds it)"; exit 77; }
done
LUA_SCRIPT=tests/workloads/lua/closures.lua

. tests/integration/lib/cpod.sh
# samples EVENT STATS: the machine's count of EVENT samples
samples() {
  python3 -c 'import json, sys; print(json.load(open(sys.argv[2]))["samples"].get(sys.argv[1], 0))' "$1" "$2"
}
# stored EPOCH EVENT: samples of EVENT in every profile of the epoch
stored() {
  local f n=0 s
  for f in "$DB/$1"/*/*."$2".prof; do
    [ -f "$f" ] || continue
    s=$("$CPO" cat --header "$f" | sed -n 's/^samples: *//p')
    n=$((n + s))
  done
  echo $n
}
# image_samples EPOCH EVENT NAME: samples of EVENT in the profiles of images named NAME
image_samples() {
  local f n=0 h
  for f in "$DB/$1"/*/*."$2".prof; do
    [ -f "$f" ] || continue
    h=$("$CPO" cat --header "$f")
    if grep -q "^image: .*/$3\$" <<< "$h"; then
      n=$((n + $(sed -n 's/^samples: *//p' <<< "$h")))
    fi
  done
  echo $n
}
# flush_ok WHAT OUTPUT: the daemon's report of a flush
flush_ok() {
  local out=$2 n u
  echo "$out" | sed 's/^/     /'
  check "$1: nothing lost" grep -q "^lost 0 samples, 0 notices" <<< "$out"
  n=$(sed -n 's/^flushed \([0-9]*\) samples.*/\1/p' <<< "$out")
  u=$(sed -n 's/^unknown \([0-9]*\) samples.*/\1/p' <<< "$out")
  n=${n:-0} u=${u:-0}
  check "$1: unknown $u of $n samples, under 0.1%" [ "$n" -gt 0 -a $((u * 1000)) -lt "$n" ]
}

"$CPOD" --db "$DB" --flush 1h || { echo "FAIL cpod did not start"; exit 1; }

# speedtest1: one process, so three of the CPUs idle (and answer flushes)
"$AXP" run --cpus 4 --pmu cycles,imiss --collector "$DB" --stats="$T/st.json" \
  "$W/speedtest1" --size 2 > "$T/st.out" 2> "$T/st.err"
rc=$?
check "speedtest1 --size 2 ran under --collector (exit $rc)" [ $rc -eq 0 ]
[ -s "$T/st.err" ] && sed 's/^/     /' "$T/st.err"
out=$("$CPO" epoch --db "$DB")
check "cpo epoch succeeds" [ $? -eq 0 ]
flush_ok "speedtest1" "$out"
E1=$(sed -n 's/^flushed .* in epoch \([^ ]*\) .*/\1/p' <<< "$out")

"$AXP" run --cpus 4 --pmu cycles,imiss --collector "$DB" --stats="$T/lua.json" \
  "$W/lua" "$LUA_SCRIPT" > "$T/lua.out" 2> "$T/lua.err"
rc=$?
check "lua $(basename $LUA_SCRIPT) ran under --collector (exit $rc)" [ $rc -eq 0 ]
check "... with the right output" cmp -s "$T/lua.out" "${LUA_SCRIPT%.lua}.expected"
out=$("$CPO" flush --db "$DB")
check "cpo flush succeeds" [ $? -eq 0 ]
flush_ok "lua" "$out"
E2=$(sed -n 's/^flushed .* in epoch \([^ ]*\) .*/\1/p' <<< "$out")
check "two epochs ($E1, $E2)" [ -n "$E1" -a -n "$E2" -a "$E1" != "$E2" ]

for run in "st $E1 speedtest1" "lua $E2 lua"; do
  set -- $run
  for ev in cycles imiss; do
    want=$(samples $ev "$T/$1.json") got=$(stored "$2" $ev)
    check "$3: $ev samples stored $got = produced $want" [ "${want:-0}" -gt 0 -a "$got" = "$want" ]
  done
  lost=$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))["driver"]; print(d["dropped"] + d["notices_lost"] + d["rejected"])' "$T/$1.json")
  check "$3: the driver dropped nothing ($lost)" [ "$lost" = 0 ]
done

own=$(image_samples "$E1" cycles speedtest1) all=$(samples cycles "$T/st.json")
check "speedtest1's image holds most of its cycle samples ($own of $all)" [ $((own * 2)) -gt "$all" ]
own=$(image_samples "$E2" cycles lua) all=$(samples cycles "$T/lua.json")
check "lua's image holds most of its cycle samples ($own of $all)" [ $((own * 2)) -gt "$all" ]

if "$CPO" --help 2>&1 | grep -q '^ *cpo prof '; then
  # the hottest procedure of each image, from the per-procedure listing
  # (last two columns: procedure, image)
  hot() {   # epoch image-name
    "$CPO" prof --db "$DB" --epoch "$1" --limit 50 |
      awk -v img="/$2" '{ n = length(img) } NF >= 3 && substr($NF, length($NF) - n + 1) == img { print $(NF - 1); exit }'
  }
  h=$(hot "$E1" speedtest1)
  check "cpo prof: speedtest1's hottest procedure is sqlite's ($h)" grep -q '^sqlite3' <<< "$h"
  h=$(hot "$E2" lua)
  check "cpo prof: lua's hottest procedure is the interpreter's ($h)" grep -q '^lua' <<< "$h"
else
  echo "skip cpo prof checks: no cpo prof in this build"
fi

# Every machine above ran while cpod attached to it: none was "gone".
gone=$(cat "$DB"/.cpod/*/log 2>/dev/null | grep -c "its machine is gone")
attached=$(cat "$DB"/.cpod/*/log 2>/dev/null | grep -c " attached: ")
check "the log never calls a running machine gone ($gone of $attached attaches)" [ "$attached" -gt 0 -a "$gone" -eq 0 ]
left=$(ls "$DB"/.cpod/*/regions/ 2>/dev/null | grep -c '\.drv$')
check "no region left once merged ($left)" [ "$left" -eq 0 ]
exit $status
