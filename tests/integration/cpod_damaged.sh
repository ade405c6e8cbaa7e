#!/bin/bash
# A damaged value profile (KEY.values) or ProfileMe profile (KEY.pm) in the
# current epoch does not stop the daemon: like a damaged .prof or .stk it
# is set aside as NAME.corrupt-TIME with a log line naming it, and the
# merge goes on (the generation's stacks, values and ProfileMe records are
# stored, later runs of other programs are merged, a new epoch starts).
# One that cannot be read at all (a directory in place of a .values or a
# .pm, a stack file of a newer format) fails the merge part way.  A daemon
# stopped then (cpo quit, SIGTERM, or SIGKILL while the merge is refused)
# leaves what the merge did not store in its pending file and says where;
# once the obstacle is gone the next daemon stores it, and the epoch holds
# exactly the samples, value records, ProfileMe records and stacks the run
# made: none lost, none twice.  A damaged pending file is set aside, logged.
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

# Rounds: in a fresh epoch, something unreadable where one of the files
# of bytecode's run goes (a directory for a .values or .pm; profdb sets a
# directory at a stack file aside, but not a stack file of a newer format),
# the run, the daemon stopped while the merge fails on it, the obstacle
# removed, a new daemon.  The epoch must then hold exactly what the run
# made.
H=$(basename "$(dirname "$vals")")
for f in "$DB"/*/"$H"/*.exits.prof; do
  [ -f "${f%.exits.prof}.values" ] && prog=$(basename "$f" .exits.prof)
done
# the largest stack file: bytecode with all its libraries mapped (a group
# of stacks taken before libc was mapped comes or not, by timing)
stk=$(basename "$(ls -S "$(dirname "$vals")"/stacks-*.stk | head -1)")
made() {   # axp's stats: cycle samples, value records, ProfileMe records, stacks
  python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))
print(d["samples"]["cycles"], d["driver"]["values_posted"], d["profileme"]["records"], d["stacks"]["samples"])' "$1"
}
sum_json() {   # "samples" summed over cpo's JSON rows (none: 0)
  python3 -c 'import json, sys
try: print(sum(r["samples"] for r in json.load(sys.stdin)))
except ValueError: print(0)'
}
in_epoch() {   # the same four figures, as stored in epoch $1
  local c v p s
  c=$("$CPO" prof --db "$DB" --epoch "$1" -i 2>/dev/null | sed -n 's/^Total samples for event type cycles = //p')
  v=$("$CPO" values --db "$DB" --epoch "$1" --json 2>/dev/null | sum_json)
  p=$("$CPO" profileme --db "$DB" --epoch "$1" --json 2>/dev/null | sum_json)
  s=$("$CPO" prof --db "$DB" --epoch "$1" --folded -e cycles 2>/dev/null | awk '{ s += $NF } END { print s + 0 }')
  echo "${c:-0} $v $p $s"
}
gone() {   # waits for pid $1 to exit
  for _ in $(seq 200); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.05; done
  return 1
}
obstacle() {   # path: unreadable for a merge
  mkdir -p "$(dirname "$1")"
  case $1 in
  *.stk) printf 'CPOSTAK\n\002\000' >"$1";;
  *) mkdir "$1";;
  esac
}
round() {   # name (values|profileme|stacks), the obstacle's name in the epoch's host directory, quit|term|kill
  local name=$1 how=$3 e ob pid rc want before after kind
  case $name in values) kind=1;; profileme) kind=2;; *) kind=3;; esac
  timeout -k 5 60 "$CPO" epoch --db "$DB" >/dev/null 2>&1
  e=$(cat "$DB/current")
  ob=$DB/$e/$H/$2
  obstacle "$ob"
  timeout -k 5 60 "$AXP" run --pmu cycles:1000,values:10000,profileme:2000 --stacks --collector "$DB" \
    --stats="$T/$name.json" -- "$P/bytecode-dyn" 2000 >/dev/null
  pid=$(cat "$DB"/.cpod/*/lock)
  : >"$LOG"
  case $how in
  quit)
    timeout -k 5 60 "$CPO" quit --db "$DB" >"$T/$name.out" 2>&1
    rc=$?
    check "$name: cpo quit exits 1 ($rc)" [ $rc = 1 ]
    check "$name: its reply says what is kept, and where" \
      grep -q "failed: .* (what it has not stored yet, .* is kept in .*/pending-[0-9]*; the next cpod to start stores it)" \
      "$T/$name.out";;
  term)
    kill -TERM "$pid"
    gone "$pid"
    rc=$?
    check "$name: SIGTERM: the daemon exits" [ $rc = 0 ];;
  kill)   # refused, then killed while it waits to retry
    timeout -k 5 60 "$CPO" flush --db "$DB" >"$T/$name.out" 2>&1
    rc=$?
    check "$name: the flush fails ($rc)" [ $rc = 1 ]
    kill -9 "$pid"
    gone "$pid";;
  esac
  [ $how = kill ] || check "$name: the log says what is kept, and where" \
    grep -q "exiting with the merge of generation [0-9]* failed: .* is kept in .*/pending-" "$LOG"
  rm -r "$ob"
  want=$(made "$T/$name.json") before=$(in_epoch "$e")
  # the profiles and the kinds merged before it got in; of the kind that
  # failed, some images' files but not all (stacks: not all)
  check "$name: the failing merge stored part of the generation ($before of $want)" \
    python3 -c 'import sys; b, w, k = sys.argv[1].split(), sys.argv[2].split(), int(sys.argv[3])
sys.exit(not (b[:k] == w[:k] and (k == 3 or 0 < int(b[k])) and int(b[k]) < int(w[k]) and
              b[k + 1:] == ["0"] * (3 - k)))' "$before" "$want" "$kind"
  timeout -k 5 60 "$CPOD" --db "$DB" --flush 1h --log "$LOG" 2>"$T/start"
  rc=$?
  check "$name: a new daemon starts (exit $rc)" [ $rc = 0 ]
  check "$name: and finishes the generation" \
    grep -q "finished the merge of generation [0-9]* left by a stopped daemon: .* found already merged" "$LOG"
  after=$(in_epoch "$e")
  check "$name: the epoch holds all the run made, once ($after of $want)" [ "$after" = "$want" ]
}
round values "$prog.values" quit
round profileme "$prog.pm" term
round stacks "$stk" kill

# A damaged pending file: logged, set aside, and the daemon starts and serves.
timeout -k 5 60 "$CPO" epoch --db "$DB" >/dev/null 2>&1
ob=$DB/$(cat "$DB/current")/$H/$prog.values
mkdir -p "$ob"
bytecode
timeout -k 5 60 "$CPO" quit --db "$DB" >/dev/null 2>&1
pend=$(ls "$DB"/.cpod/*/pending-* | head -1)
# cut into its last section under a good checksum: the reader's bounds,
# not the checksum, must catch it
python3 -c 'import sys
d = open(sys.argv[1], "rb").read()[:-48]
h = 0xcbf29ce484222325
for b in d:
    h = ((h ^ b) * 0x100000001b3) & (2**64 - 1)
open(sys.argv[1], "wb").write(d + h.to_bytes(8, "little"))' "$pend"
rmdir "$ob"
timeout -k 5 60 "$CPOD" --db "$DB" --flush 1h --log "$LOG" 2>"$T/start"
rc=$?
check "a damaged pending file: the daemon starts (exit $rc)" [ $rc = 0 ]
check "the log names it damaged and set aside" grep -q "$pend: damaged: .*; set aside as $pend.damaged" "$LOG"
timeout -k 5 60 "$CPO" flush --db "$DB" >/dev/null 2>&1
rc=$?
check "and the next flush works (exit $rc)" [ $rc = 0 ]
timeout -k 5 60 "$CPO" quit --db "$DB" >/dev/null 2>&1
echo "$pass passed, $fail failed"
[ $fail = 0 ]
