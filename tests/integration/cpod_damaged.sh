#!/bin/bash
# A damaged value profile (KEY.values) or ProfileMe profile (KEY.pm) in the
# current epoch does not stop the daemon: like a damaged .prof or .stk it
# is set aside as NAME.corrupt-TIME with a log line naming it, and the
# merge goes on (the generation's stacks, values and ProfileMe records are
# stored, later runs of other programs are merged, a new epoch starts).
# One that cannot be read at all (a directory in its place) fails the
# merge; a daemon quitting then says which of the generation's stacks,
# value lists and ProfileMe entries it drops (the pending file holds PC
# profiles only), in the reply and, loudly, in its log.
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
AXP=$BUILD/bin/axp CPO=$BUILD/bin/cpo CPOD=$BUILD/bin/cpod P=$BUILD/programs
for f in $AXP $CPO $CPOD; do
  [ -x "$f" ] || { echo "$f not built (make all builds it)"; exit 77; }
done
[ -x "$P/bytecode-dyn" ] && [ -x "$P/intloop-dyn" ] || { echo "$P not built (make programs)"; exit 77; }
. tests/integration/lib/cpod.sh
pass=0 fail=0
check() {   # what, command...
  local what=$1; shift
  if "$@"; then echo "ok   $what"; pass=$((pass + 1)); else echo "FAIL $what"; fail=$((fail + 1)); fi
}
LOG=$T/log
cycles() { "$CPO" prof --db "$DB" -i 2>/dev/null | sed -n 's/^Total samples for event type cycles = //p'; }
stacks() { "$CPO" prof --db "$DB" --folded -e cycles 2>/dev/null | awk '{ s += $NF } END { print s + 0 }'; }
flushed() { sed -n "s/^stacks \([0-9]*\) flushed.*/\1/p" "$1"; }
bytecode() {
  timeout -k 5 60 "$AXP" run --pmu cycles:1000,values:10000,profileme:2000 --stacks --collector "$DB" \
    -- "$P/bytecode-dyn" 2000 >/dev/null
}
exists() { ls "$@" >/dev/null 2>&1; }
damage() { printf '\xff' | dd of="$1" bs=1 seek=50 conv=notrunc status=none; }

timeout -k 5 60 "$CPOD" --db "$DB" --flush 1h --log "$LOG" || { echo "FAIL cpod did not start"; exit 1; }
bytecode
timeout -k 5 60 "$CPO" flush --db "$DB" >/dev/null
vals=$(ls "$DB"/*/*/*.values 2>/dev/null | head -1)
pm=${vals%.values}.pm
check "a first run stores a value and a ProfileMe profile" [ -f "$vals" -a -f "$pm" ]
damage "$vals"
damage "$pm"
c0=$(cycles) s0=$(stacks)
bytecode
timeout -k 5 60 "$CPO" flush --db "$DB" >"$T/f2" 2>&1
rc=$?
check "a flush over a damaged .values and .pm succeeds (exit $rc)" [ $rc = 0 ]
check "the damaged .values is set aside as .values.corrupt-TIME" exists "$vals".corrupt-*
check "the damaged .pm is set aside as .pm.corrupt-TIME" exists "$pm".corrupt-*
check "the log names both" \
  bash -c 'grep -q "set aside as $1.corrupt-" "$3" && grep -q "set aside as $2.corrupt-" "$3"' _ "$vals" "$pm" "$LOG"
check "a new .values and .pm take the generation's records" [ -f "$vals" -a -f "$pm" ]
c1=$(cycles) s1=$(stacks) n=$(flushed "$T/f2")
check "the generation's stacks are stored ($((s1 - s0)) of ${n:-?})" [ "${n:-0}" -gt 0 -a $((s1 - s0)) = "${n:-0}" ]
check "and its samples ($((c1 - c0)))" [ "$c1" -gt "$c0" ]
timeout -k 5 60 "$AXP" run --pmu cycles:1000 --collector "$DB" -- "$P/intloop-dyn" >/dev/null
timeout -k 5 60 "$CPO" flush --db "$DB" >/dev/null 2>&1
c2=$(cycles)
check "a later run of another program is merged ($((c2 - c1)) samples)" [ "$c2" -gt "$c1" ]
timeout -k 5 60 "$CPO" epoch --db "$DB" >"$T/e" 2>&1
rc=$?
check "a new epoch starts (exit $rc)" [ $rc = 0 ]

# A directory where the new epoch's .values would go: not damaged bytes but
# a file nobody can read, so the merge fails; quitting loses the stacks,
# value lists and ProfileMe entries of that generation, and says so.
cur=$(cat "$DB/current")
dir=$DB/$cur/$(basename "$(dirname "$vals")")/$(basename "$vals")
mkdir -p "$dir"
bytecode
timeout -k 5 60 "$CPO" quit --db "$DB" >"$T/q" 2>&1
rc=$?
check "quitting with the merge failing exits 1 ($rc)" [ $rc = 1 ]
check "its reply says what it drops" grep -q "stacks, .* value lists .* ProfileMe entries .* lost as cpod exits" "$T/q"
check "its log says so loudly" grep -q "exiting with merge generation .* unfinished: .* stacks, .* are LOST" "$LOG"
check "and does not set the directory aside" [ -d "$dir" ]
# cpo quit returns once the daemon has let go of the database, even after a
# failed merge: a new daemon starts at once.
rmdir "$dir"
timeout -k 5 60 "$CPOD" --db "$DB" --flush 1h --log "$LOG.2" 2>"$T/start"
rc=$?
check "a new daemon starts right after (exit $rc: $(head -1 "$T/start"))" [ $rc = 0 ]
timeout -k 5 60 "$CPO" quit --db "$DB" >/dev/null 2>&1
echo "$pass passed, $fail failed"
[ $fail = 0 ]
