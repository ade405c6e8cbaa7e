#!/bin/bash
# cpod for a while, as it would run for days: machines come and go (each
# with its processes forking, execing and exiting), an epoch every round,
# periodic drains and flushes and a small journal limit.  The daemon's
# memory must not grow with the number of machines or epochs, every
# region, description and journal must be gone once merged, and the
# database must hold every sample.
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
PROD=$BUILD/tests/cpod/cpod_producer DUMP=$BUILD/tests/cpod/cpod_dump
for f in $BUILD/bin/cpod $BUILD/bin/cpo $PROD $DUMP; do
  [ -x "$f" ] || { echo "$f not built (make test builds it)"; exit 77; }
done
P=$BUILD/programs
IMAGES=($P/intloop-dyn $P/forkexec-dyn $P/malloc-dyn $P/alu-dyn $P/stdio-dyn)
for f in "${IMAGES[@]}"; do [ -f "$f" ] || { echo "need the test programs (make programs)"; exit 77; }; done
ROUNDS=${ROUNDS:-60}

. tests/integration/lib/cpod.sh
rss() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status"; }

"$BUILD/bin/cpod" --db "$DB" --drain 100ms --flush 300ms --journal-limit 256k || exit 1
pid=$(cat "$DB"/.cpod/*/lock)
regions=$(readlink "$DB"/.cpod/*/regions)
: > "$T/all"
for r in $(seq "$ROUNDS"); do
  "$PROD" "$DB" "$T/e$r" --seed "$r" --pid-base $((r * 100)) --samples 40000 --quiet "${IMAGES[@]}" &
  "$PROD" "$DB" "$T/f$r" --seed $((r + 1000)) --pid-base $((r * 100 + 50)) --samples 30000 --quiet "${IMAGES[@]}"
  wait
  "$BUILD/bin/cpo" epoch --db "$DB" > /dev/null || { echo "FAIL epoch in round $r"; status=1; }
  cat "$T/e$r" "$T/f$r" >> "$T/all"
  rm -f "$T/e$r" "$T/f$r"
  [ "$r" -eq 10 ] && warm=$(rss "$pid")
done
end=$(rss "$pid")
epochs=$(ls -d "$DB"/2* | wc -l)
echo "     $ROUNDS rounds, $((2 * ROUNDS)) machines, $epochs epochs; daemon RSS ${warm} kB after 10 rounds, ${end} kB after $ROUNDS"
check "memory does not grow with machines and epochs (+$((end - warm)) kB)" [ $((end - warm)) -lt 2048 ]
check "no region, description or journal left in $regions" bash -c "[ -z \"\$(ls -A '$regions')\" ]"
awk '{ k = $1 " " $2 " " $3; c[k] += $4 } END { for (k in c) print k, c[k] }' "$T/all" | sort > "$T/exp"
"$DUMP" "$DB" | sort > "$T/got"
check "the database holds every sample of every round ($(awk '{ s += $4 } END { print s }' "$T/exp"))" cmp -s "$T/exp" "$T/got"
log=$(ls "$DB"/.cpod/*/log)
check "early merges were triggered by the journal limit" grep -q "merging early" "$log"
check "the log has no errors" bash -c "! grep -Ei 'cannot|damaged|failed|out of memory' '$log'"
exit $status
