#!/bin/bash
# The calling context tree of sampled stacks against axp's exact one, from
# the same run (axp run --pmu cycles:200 --stacks --collector DB --cct
# FILE): on calls through pointers and on two threads, every one of the
# top 10 contexts by exact cycles is found in the sampled tree and holds
# its share of samples within 2 points of its share of cycles (cpo cct
# --against); the sampled tree prints as text, JSON and folded stacks
# whose counts add up to the samples; --from with --db is refused.  Stacks
# taken on a rewritten binary (a random layout) are carried back through
# its address map: with --image ORIGINAL every one of the top 10 contexts
# of the original's exact tree is found in theirs (their shares differ by
# what the new layout changed, under 5 points).  The guest gets a fixed
# environment: the host's would move its stack, and so its cycles and
# which of them the samples hit.  At one sample per 200 cycles the
# largest difference over ten environments of different sizes was 1.14
# points; at 500 it reached 2.14.
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
AXP=$BUILD/bin/axp CPO=$BUILD/bin/cpo CPOD=$BUILD/bin/cpod P=$BUILD/programs
for f in $AXP $CPO $CPOD; do
  [ -x "$f" ] || { echo "$f not built (make all builds it)"; exit 77; }
done
[ -x "$P/recursion-static" ] || { echo "$P not built (make programs)"; exit 77; }
command -v python3 >/dev/null || { echo "python3 missing"; exit 77; }
. tests/integration/lib/cpod.sh

for p in funcptr-static threads-static; do
  rm -rf "$DB"
  "$CPOD" --db "$DB" --flush 1h || { echo "FAIL cpod did not start"; exit 1; }
  env -i PATH=/usr/bin:/bin "$AXP" run --cpus 2 --pmu cycles:200 --stacks --collector "$DB" --cct "$T/$p.cct" --stats="$T/$p.stats" \
    -- "$P/$p" >/dev/null 2>"$T/err" || { echo "FAIL $p: axp: $(tail -1 "$T/err")"; status=1; continue; }
  "$CPO" quit --db "$DB" >/dev/null
  "$CPO" cct --db "$DB" --against "$T/$p.cct" --top 10 >"$T/$p.cmp" 2>"$T/err"
  last=$(tail -1 "$T/$p.cmp")
  check "$p: $last" grep -q '^10 contexts: 10 within 2 points,.* 0 not in this tree$' "$T/$p.cmp" ||
    cat "$T/$p.cmp" "$T/err"
done

p=threads-static
samples=$(python3 -c 'import json, sys; print(sum(json.load(open(sys.argv[1]))["samples"].values()))' "$T/$p.stats")
folded=$("$CPO" cct --db "$DB" --folded | awk '{ s += $NF } END { print s + 0 }')
check "folded stacks of the sampled tree add up to the $samples samples ($folded)" [ "$folded" = "$samples" ]
check "the sampled tree as text names main" sh -c "'$CPO' cct --db '$DB' | grep -q ' main '"
check "the sampled tree as JSON" sh -c "'$CPO' cct --db '$DB' --json | python3 -c 'import json, sys; json.load(sys.stdin)'"
p=funcptr-static
"$BUILD/bin/optimize-image" "$P/$p" --plan random --seed 7 -o "$T/$p.new" >/dev/null 2>"$T/err" ||
  { echo "FAIL optimize-image: $(tail -1 "$T/err")"; status=1; }
rm -rf "$DB"
"$CPOD" --db "$DB" --flush 1h || { echo "FAIL cpod did not start"; exit 1; }
env -i PATH=/usr/bin:/bin "$AXP" run --pmu cycles:200 --stacks --collector "$DB" -- "$T/$p.new" >/dev/null 2>"$T/err"
"$CPO" quit --db "$DB" >/dev/null
"$CPO" cct --db "$DB" --image "$P/$p" --against "$T/$p.cct" --top 10 >"$T/rw.cmp" 2>"$T/err"
check "rewritten $p, carried back: $(tail -1 "$T/rw.cmp")" \
  awk '/^10 contexts:.* 0 not in this tree$/ { ok = $(NF - 6) + 0 < 5 } END { exit !ok }' "$T/rw.cmp" ||
  cat "$T/rw.cmp" "$T/err"
check "--from and --db together are refused" sh -c "! '$CPO' cct --db '$DB' --from '$T/$p.cct' 2>/dev/null"
exit $status
