#!/bin/bash
# Stacks through cpod into the database (axp run --stacks --collector DB):
# a static and a dynamic threaded program and a deep recursion run on a
# 2-CPU axp, each flushed into an epoch of its own.  Conservation: the
# stacks stored in each epoch (the counts of `cpo prof --folded`) equal
# the samples the machine produced, and the daemon reports none lost; the
# two epochs add up under --all-epochs.  The views: recursion's callers of
# hof_f are hof_f, hof_m and main; main's callees include hof_f; folded
# lines are "frames COUNT" with the start code at the root; truncated
# stacks are rooted at their reason.  The machines' stack files go with
# their regions.  A daemon killed after taking stacks, before merging
# them: the next one replays them from its journal.
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
AXP=$BUILD/bin/axp CPO=$BUILD/bin/cpo CPOD=$BUILD/bin/cpod P=$BUILD/programs
for f in $AXP $CPO $CPOD; do
  [ -x "$f" ] || { echo "$f not built (make all builds it)"; exit 77; }
done
[ -x "$P/threads-static" ] || { echo "$P not built (make programs)"; exit 77; }
command -v python3 >/dev/null || { echo "python3 missing"; exit 77; }
. tests/integration/lib/cpod.sh
samples() {   # STATS: every event's samples
  python3 -c 'import json, sys; print(sum(json.load(open(sys.argv[1]))["samples"].values()))' "$1"
}
folded_sum() {   # cpo prof options...: the stacks' total
  "$CPO" prof --db "$DB" "$@" --folded 2>/dev/null | awk '{ s += $NF } END { print s + 0 }'
}

"$CPOD" --db "$DB" --flush 1h || { echo "FAIL cpod did not start"; exit 1; }
epochs=()
want_all=0
for run in "threads-static" "threads-dyn" "recursion-static --stacks=16"; do
  set -- $run
  prog=$1; shift
  opts=${1:---stacks}
  "$AXP" run --cpus 2 --pmu cycles:4000,imiss $opts --collector "$DB" --stats="$T/$prog.json" \
    "$P/$prog" > "$T/$prog.out" 2> "$T/$prog.err"
  rc=$?
  check "$prog ran with $opts under --collector (exit $rc)" [ $rc = 0 ]
  out=$("$CPO" epoch --db "$DB")
  echo "$out" | sed 's/^/     /'
  check "$prog: the daemon lost no stack" grep -q "^stacks .* [0-9]* taken, 0 lost" <<< "$out"
  E=$(sed -n 's/^flushed .* in epoch \([^ ]*\) .*/\1/p' <<< "$out")
  epochs+=("$E")
  want=$(samples "$T/$prog.json")
  got=$(folded_sum --epoch "$E")
  check "$prog: stacks stored $got = samples produced $want" [ "$want" -gt 0 -a "$got" = "$want" ]
  got=$(folded_sum --epoch "$E" -e imiss)
  want=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["samples"]["imiss"])' "$T/$prog.json")
  check "$prog: imiss stacks stored $got = imiss samples $want" [ "$got" = "$want" ]
  want_all=$((want_all + $(samples "$T/$prog.json")))
done
got=$(folded_sum --all-epochs)
check "all epochs: stacks add up over the epochs ($got = $want_all)" [ "$got" = "$want_all" ]

E=${epochs[2]}
"$CPO" prof --db "$DB" --epoch "$E" -e cycles --callers hof_f > "$T/callers" 2>&1
sed 's/^/     /' "$T/callers"
check "recursion: hof_f is called by hof_m and by main" \
  bash -c "grep -q ' hof_m\$' '$T/callers' && grep -q ' main\$' '$T/callers'"
"$CPO" prof --db "$DB" --epoch "$E" -e cycles --callees main > "$T/callees" 2>&1
sed 's/^/     /' "$T/callees"
check "recursion: main calls hof_f" grep -q ' hof_f$' "$T/callees"
"$CPO" prof --db "$DB" --epoch "$E" -e cycles --folded > "$T/folded"
check "recursion: deep stacks are cut at 16 frames and rooted at their reason" \
  grep -q '^\[truncated:depth\];depth;' "$T/folded"
check "recursion: complete stacks start at the start code" grep -q '^_start;__libc_start' "$T/folded"
check "every folded line is FRAMES COUNT" \
  bash -c "! grep -vqE '^[^ ]+ [0-9]+\$' '$T/folded'"
"$CPO" prof --db "$DB" --epoch "$E" --callers no_such_procedure > /dev/null 2> "$T/err"
check "an absent procedure is an error that says so" grep -q "no stack holds procedure 'no_such_procedure'" "$T/err"
"$CPO" prof --db "$DB" --folded --callers x > /dev/null 2>&1
check "--folded with --callers is a usage error" [ $? = 2 ]
left=$(ls "$DB"/.cpod/*/regions/ 2>/dev/null | grep -c stacks)
check "the machines' stack files are gone with their regions ($left left)" [ "$left" = 0 ]

# A daemon killed with the stacks taken and journalled, not merged: the
# next one replays them from the journal, none lost and none twice.
"$CPO" quit --db "$DB" >/dev/null 2>&1
K=$T/killed
start_k() {
  for t in $(seq 100); do
    "$CPOD" --db "$K" --drain 100ms --flush 1h --log "$T/klog" 2>"$T/kerr" && break
    grep -q "already served" "$T/kerr" || break
    sleep 0.02
  done
}
start_k
"$AXP" run --pmu cycles:2000 --stacks --collector "$K" --stats="$T/k.stats" -- "$P/threads-static" >/dev/null
sleep 0.5
kill -9 "$(cat "$K"/.cpod/*/lock)"
start_k
"$CPO" quit --db "$K" >/dev/null 2>&1
want=$(samples "$T/k.stats")
got=$("$CPO" prof --db "$K" --all-epochs --folded 2>/dev/null | awk '{ s += $NF } END { print s + 0 }')
check "cpod killed after taking the stacks: the next one stores them all ($got of $want)" [ "$got" = "$want" ]
for l in "$K"/.cpod/*/regions; do
  r=$(readlink "$l") && case "$r" in /dev/shm/cpod-*) rm -rf "$r";; esac
done
exit $status
