#!/bin/bash
# cpod's life: a second daemon on the same database is refused; machines
# come and go (one crashes mid-run: its region is salvaged, nothing lost)
# and their regions are removed once merged; `cpo epoch` splits the
# samples into two disjoint epochs; SIGHUP reopens the log; SIGTERM flushes
# what a live machine has sampled so far and exits, and the next daemon
# takes the rest.
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
PROD=$BUILD/tests/cpod/cpod_producer DUMP=$BUILD/tests/cpod/cpod_dump
for f in $BUILD/bin/cpod $BUILD/bin/cpo $PROD $DUMP; do
  [ -x "$f" ] || { echo "$f not built (make test builds it)"; exit 77; }
done
P=$BUILD/programs
IMAGES=($P/intloop-dyn $P/forkexec-dyn $P/malloc-dyn $P/alu-dyn)
for f in "${IMAGES[@]}"; do [ -f "$f" ] || { echo "need the test programs (make programs)"; exit 77; }; done

. tests/integration/lib/cpod.sh
same() {   # expected-file dump-args...
  local exp=$1; shift
  sort "$exp" > "$T/e.sorted"
  "$DUMP" "$DB" "$@" | sort > "$T/g.sorted"
  cmp -s "$T/e.sorted" "$T/g.sorted"
}
sum() { cat "$@" | awk '{ k = $1 " " $2 " " $3; c[k] += $4 } END { for (k in c) print k, c[k] }'; }

"$BUILD/bin/cpod" --db "$DB" --flush 1h || exit 1
LOG=$(ls "$DB"/.cpod/*/log)
pid=$(cat "$DB"/.cpod/*/lock)
"$BUILD/bin/cpod" --db "$DB" 2> "$T/second"
rc=$?
check "a second cpod on the same database is refused (exit $rc)" [ $rc -eq 1 ]
check "... naming the running one: $(cat "$T/second")" grep -q "already served by cpod pid $pid" "$T/second"
"$BUILD/bin/cpo" flush --db "$DB" > /dev/null
check "... and the first one still serves" [ $? -eq 0 ]

# Machines come and go; one of them crashes without a word.
"$PROD" "$DB" "$T/a" --seed 11 --samples 50000 --quiet "${IMAGES[@]}" || status=1
"$PROD" "$DB" "$T/b" --seed 12 --samples 80000 --stop-after 61234 --quiet "${IMAGES[@]}"
rc=$?
check "the crashing machine crashed after 61234 samples (exit $rc)" [ $rc -eq 3 ]
"$PROD" "$DB" "$T/c" --seed 13 --samples 50000 --pid-base 3000 --quiet "${IMAGES[@]}" || status=1
out=$("$BUILD/bin/cpo" epoch --db "$DB")
check "cpo epoch succeeds" [ $? -eq 0 ]
E1=$(sed -n 's/^flushed .* in epoch \([^ ]*\) .*/\1/p' <<< "$out")
E2=$(sed -n 's/^new epoch //p' <<< "$out")
check "cpo epoch names the old epoch ($E1) and the new one ($E2)" [ -n "$E1" -a -n "$E2" -a "$E1" != "$E2" ]
sum "$T/a" "$T/b" "$T/c" > "$T/abc"
check "epoch $E1 holds exactly the three machines' samples, the crashed one's included" same "$T/abc" --epoch "$E1"
regions=$(readlink "$DB"/.cpod/*/regions)
check "their regions are gone from $regions" bash -c "! ls '$regions' | grep -q ."

"$PROD" "$DB" "$T/d" --seed 14 --samples 70000 --quiet "${IMAGES[@]}" || status=1
"$BUILD/bin/cpo" flush --db "$DB" > /dev/null
check "epoch $E2 holds exactly the samples taken after cpo epoch" same "$T/d" --epoch "$E2"
check "the two epochs are disjoint: together they hold every sample" same <(sum "$T/abc" "$T/d")

mv "$LOG" "$LOG.1"
kill -HUP "$pid"
for i in $(seq 100); do [ -s "$LOG" ] && break; sleep 0.02; done
check "SIGHUP reopens the log" grep -q "log reopened" "$LOG"

# SIGTERM with a machine still sampling: what it sampled so far is merged
# before the daemon exits; the next daemon takes the rest.
"$PROD" "$DB" "$T/e" --seed 15 --samples 200000 --rate 100000 --quiet "${IMAGES[@]}" &
prod=$!
sleep 0.6
before=$("$DUMP" "$DB" --totals)
kill -TERM "$pid"
for i in $(seq 500); do kill -0 "$pid" 2>/dev/null || break; sleep 0.02; done
after=$("$DUMP" "$DB" --totals)
check "SIGTERM: the daemon flushed $((after - before)) samples of the live machine and exited" \
  [ "$after" -gt "$before" ]
check "SIGTERM: logged" grep -q "Terminated: flushing, then exiting" "$LOG"
"$BUILD/bin/cpod" --db "$DB" --flush 1h || status=1
wait $prod || status=1
"$BUILD/bin/cpo" flush --db "$DB" > /dev/null
check "the next daemon took the rest: every sample of the last machine is in" \
  same <(sum "$T/abc" "$T/d" "$T/e")
check "the log has no errors" bash -c "! grep -Ei 'cannot|damaged|failed|out of memory' '$LOG' '$LOG.1'"
exit $status
