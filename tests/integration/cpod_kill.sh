#!/bin/bash
# cpod killed with SIGKILL during flushes, 20 times, while a machine
# stand-in keeps sampling (stall mode: it waits while no daemon drains).
# Each kill is followed by a check that every profile in the database reads
# back whole and that the database never holds more than was produced, and
# by a restart.  At the end, after a last flush, the database must hold
# exactly what was produced: the journal and the pending-merge record let
# the restarted daemon take over what the killed one held unmerged.  The
# samples lost that way are counted and printed (they must be 0), and so
# are those counted twice.
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
PROD=$BUILD/tests/cpod/cpod_producer DUMP=$BUILD/tests/cpod/cpod_dump
for f in $BUILD/bin/cpod $BUILD/bin/cpo $PROD $DUMP; do
  [ -x "$f" ] || { echo "$f not built (make test builds it)"; exit 77; }
done
P=$BUILD/programs W=$BUILD/workloads/bin
IMAGES=()
for f in $P/*-dyn $W/lua $W/zstd $W/speedtest1 $W/dash; do
  [ -f "$f" ] && IMAGES+=("$f")
done
[ ${#IMAGES[@]} -ge 3 ] || { echo "need the test programs (make programs)"; exit 77; }
KILLS=${KILLS:-20}

T=$(mktemp -d)
cleanup() {
  [ -n "$prod" ] && kill "$prod" 2>/dev/null
  "$BUILD/bin/cpo" quit --db "$T/db" >/dev/null 2>&1
  [ -f "$T/pid" ] && kill -9 "$(cat "$T/pid")" 2>/dev/null
  for l in "$T"/db/.cpod/*/regions; do
    r=$(readlink "$l") && case "$r" in /dev/shm/cpod-*) rm -rf "$r";; esac
  done
  rm -rf "$T"
}
trap cleanup EXIT
status=0
start() {
  # A killed daemon's lock goes with its last descriptor, before the
  # process is reaped; retry briefly rather than wait for the reaping.
  for t in $(seq 100); do
    "$BUILD/bin/cpod" --db "$T/db" --drain 100ms --flush 1h --log "$T/log" 2>"$T/start.err" && break
    grep -q "already served" "$T/start.err" || break
    sleep 0.02
  done
  [ -s "$T/start.err" ] && { echo "FAIL cpod did not start: $(cat "$T/start.err")"; exit 1; }
  cat "$T"/db/.cpod/*/lock > "$T/pid"
}
start
SAMPLES=${SAMPLES:-1500000}
"$PROD" "$T/db" "$T/expected" --seed 7 --samples "$SAMPLES" --rate 120000 --quiet "${IMAGES[@]}" &
prod=$!
prev=0
RANDOM=42
for i in $(seq 1 "$KILLS"); do
  sleep 0.$((RANDOM % 3 + 1))
  "$BUILD/bin/cpo" flush --db "$T/db" > /dev/null 2>&1 &
  fl=$!
  # A flush drains, then merges about 30 profiles, each fsync'ed: the
  # moment of the kill falls anywhere in it.
  sleep 0.0$((RANDOM % 9))$((RANDOM % 10))
  pid=$(cat "$T/pid")
  kill -9 "$pid"
  wait $fl 2>/dev/null
  now=$("$DUMP" "$T/db" --totals 2>"$T/err")
  if [ $? -ne 0 ]; then
    echo "FAIL kill $i: database unreadable: $(cat "$T/err")"
    status=1
  elif [ "$now" -lt "$prev" ]; then
    echo "FAIL kill $i: the database went back from $prev to $now samples"
    status=1
  fi
  prev=${now:-$prev}
  echo "     kill $i: database consistent, $now samples"
  start
done
wait $prod
prc=$?
prod=
[ $prc -eq 0 ] || { echo "FAIL producer exit $prc"; status=1; }
out=$("$BUILD/bin/cpo" flush --db "$T/db") || { echo "FAIL final flush: $out"; status=1; }
echo "$out" | sed 's/^/     /'
sort "$T/expected" > "$T/exp"
"$DUMP" "$T/db" | sort > "$T/got"
produced=$(awk '{ s += $4 } END { print s }' "$T/exp")
stored=$(awk '{ s += $4 } END { print s }' "$T/got")
# Per offset: what is missing, and what is there twice.
join -a1 -a2 -e 0 -o 0,1.2,2.2 <(awk '{ print $1 "/" $2 "/" $3, $4 }' "$T/exp" | sort) \
                            <(awk '{ print $1 "/" $2 "/" $3, $4 }' "$T/got" | sort) |
  awk '{ if ($2 > $3) lost += $2 - $3; else extra += $3 - $2 } END { print lost + 0, extra + 0 }' > "$T/diff"
read lost extra < "$T/diff"
echo "     produced $produced samples, stored $stored: $lost lost to the kills, $extra counted twice"
if [ "$lost" -eq 0 ] && [ "$extra" -eq 0 ] && cmp -s "$T/exp" "$T/got"; then
  echo "ok   after $KILLS kills the database holds exactly the samples produced"
else
  echo "FAIL after $KILLS kills the database differs from what was produced"
  status=1
fi
grep -c "finished the merge of generation" "$T/log" | sed 's/^/     merges finished by a restarted daemon: /'
grep -c "journal replayed" "$T/log" | sed 's/^/     journals replayed: /'
exit $status
