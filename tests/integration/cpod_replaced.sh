#!/bin/bash
# A database removed under a running daemon (rm -rf DB, then a new cpod on
# a new DB at the same path): the old daemon notices, says so in its log,
# stops draining and exits without touching the new daemon's socket; the
# new daemon's machines are drained only by the new daemon (its regions
# live in a directory of its own), and nothing is lost from them.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
CPOD=$BUILD/bin/cpod CPO=$BUILD/bin/cpo AXP=$BUILD/bin/axp
PROG=$BUILD/programs/intloop-dyn
for f in "$CPOD" "$CPO" "$AXP"; do [ -x "$f" ] || { echo "$f not built (make)"; exit 77; }; done
[ -f "$PROG" ] || { echo "$PROG missing (make programs)"; exit 77; }
. tests/integration/lib/cpod.sh
oldlog=$T/old.log newlog=$T/new.log

"$CPOD" --db "$DB" --flush 1h --log "$oldlog" || { echo "FAIL cpod did not start"; exit 1; }
oldpid=$(cat "$DB"/.cpod/*/lock)
oldregions=$(readlink "$DB"/.cpod/*/regions)
rm -rf "$DB"
"$CPOD" --db "$DB" --flush 1h --log "$newlog" || { echo "FAIL the new cpod did not start"; exit 1; }
newregions=$(readlink "$DB"/.cpod/*/regions)
check "the new database has regions of its own" [ -n "$newregions" -a "$newregions" != "$oldregions" ]
for i in $(seq 50); do kill -0 "$oldpid" 2>/dev/null || break; sleep 0.2; done
check "the old daemon stopped" bash -c "! kill -0 $oldpid 2>/dev/null"
check "... saying why" grep -q "was removed\|was replaced" "$oldlog"
check "the new daemon's socket is still there" [ -S "$(ls -d "$DB"/.cpod/*)/control" ]
"$AXP" run --pmu cycles:1000 --collector "$DB" -- "$PROG" > /dev/null 2>&1
out=$("$CPO" flush --db "$DB" 2>&1)
n=$(sed -n 's/^flushed \([0-9]*\) samples.*/\1/p' <<< "$out")
check "the new daemon drains a new machine: ${n:-no} samples" [ "${n:-0}" -gt 0 ]
[ -n "$oldregions" ] && rm -rf "$oldregions"
exit $status
