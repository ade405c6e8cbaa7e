#!/bin/bash
# cpod end to end: two machine stand-ins (tests/cpod/cpod_producer, 4 CPUs
# each, real images, fork/exec/exit, unannounced processes, PCs outside
# every mapping) feed one daemon at the same time; after `cpo flush` the
# database must hold exactly the samples produced, per image, event and
# offset, per-process profiles included; `cpo flush` must report the
# unknown samples exactly and nothing lost.
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
PROD=$BUILD/tests/cpod/cpod_producer DUMP=$BUILD/tests/cpod/cpod_dump
for f in $BUILD/bin/cpod $BUILD/bin/cpo $PROD $DUMP; do
  [ -x "$f" ] || { echo "$f not built (make test builds it)"; exit 77; }
done
P=$BUILD/programs W=$BUILD/workloads/bin
IMAGES=()
for f in $P/intloop-dyn $P/forkexec-dyn $P/malloc-dyn $W/lua $W/zstd $W/speedtest1; do
  [ -f "$f" ] && IMAGES+=("$f")
done
[ ${#IMAGES[@]} -ge 3 ] || { echo "need the test programs (make programs)"; exit 77; }
PP=$(basename "${IMAGES[1]}")

. tests/integration/lib/cpod.sh

"$BUILD/bin/cpod" --db "$T/db" --per-process "$PP" --drain 200ms --flush 1h || exit 1
"$PROD" "$T/db" "$T/exp1" --seed 1 --pid-base 1000 --samples 300000 --per-process "$PP" --quiet "${IMAGES[@]}" &
p1=$!
"$PROD" "$T/db" "$T/exp2" --seed 2 --pid-base 5000 --samples 200000 --per-process "$PP" --quiet "${IMAGES[@]}" &
p2=$!
wait $p1; r1=$?
wait $p2; r2=$?
check "two producers ran (exit $r1, $r2; nonzero means the driver dropped something)" [ $r1 -eq 0 -a $r2 -eq 0 ]
out=$("$BUILD/bin/cpo" flush --db "$T/db")
rc=$?
echo "$out" | sed 's/^/     /'
check "cpo flush succeeds" [ $rc -eq 0 ]

# The expectation is the two producers' added up, per line.
cat "$T/exp1" "$T/exp2" | awk '{ k = $1 " " $2 " " $3; c[k] += $4 } END { for (k in c) print k, c[k] }' |
  sort > "$T/expected"
"$DUMP" "$T/db" | sort > "$T/got"
check "database readable" [ ${PIPESTATUS[0]} -eq 0 ]
n=$(wc -l < "$T/expected")
if diff -q "$T/expected" "$T/got" >/dev/null; then
  echo "ok   database holds exactly the samples produced ($n image/event/offset lines)"
else
  echo "FAIL database differs from what was produced:"
  diff "$T/expected" "$T/got" | head -20
  status=1
fi
pp=$(grep -c '@pid-' "$T/got")
check "per-process profiles of $PP present ($pp lines)" [ "$pp" -gt 0 ]
total=$(awk '$2 !~ /@pid-/ { s += $4 } END { print s }' "$T/expected")
unknown=$(awk '$1 == "unknown" { s += $4 } END { print s }' "$T/expected")
check "reported flushed $total samples" grep -q "^flushed $total samples" <<< "$out"
check "reported unknown exactly $unknown samples" grep -q "^unknown $unknown samples" <<< "$out"
check "reported lost 0" grep -q "^lost 0 samples, 0 notices" <<< "$out"
check "both machines salvaged and gone" grep -q "^machines 0 attached, 2 gone" <<< "$out"
# A flush with nothing new adds nothing.
"$BUILD/bin/cpo" flush --db "$T/db" > "$T/out2"
check "a second flush merges nothing new" grep -q "^flushed 0 samples" "$T/out2"
"$DUMP" "$T/db" | sort | cmp -s - "$T/got"
check "database unchanged by it" [ $? -eq 0 ]
log=$(ls "$T"/db/.cpod/*/log)
check "the log reports the unknown fraction" grep -q "unknown ([0-9.]*%)" "$log"
check "the log has no errors" bash -c "! grep -Ei 'cannot|damaged|failed|out of memory' '$log'"
"$BUILD/bin/cpo" quit --db "$T/db" >/dev/null
check "cpo quit stops the daemon" bash -c "! '$BUILD/bin/cpo' flush --db '$T/db' 2>/dev/null"
exit $status
