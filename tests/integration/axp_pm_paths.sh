#!/bin/bash
# ProfileMe path reconstruction against the true paths (docs/machine.md
# "ProfileMe", docs/estimator.md "ProfileMe"):
# - axp --profileme-truth changes nothing: the same --stats (but the
#   host's time) and the same samples in the same order;
# - its records add up to the ProfileMe records made;
# - on branchalt, whose loop alternates between two sides, every
#   history allows one path and it is the true one: for the instructions
#   with at least 50 samples, the true path agrees with the history, is
#   its history's top and among the reconstructed paths for 99% of the
#   samples, and the scores are within 5% of the true paths' shares;
# - bad truth files and options are refused with a message.
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
AXP=$BUILD/bin/axp CPO=$BUILD/bin/cpo CPOD=$BUILD/bin/cpod P=$BUILD/programs
for f in $AXP $CPO $CPOD; do
  [ -x "$f" ] || { echo "$f not built (make all builds it)"; exit 77; }
done
[ -f "$P/branchalt-static" ] || { echo "$P/branchalt-static not built (make programs builds it)"; exit 77; }
export AXP_EPOCH=1700000000

. tests/integration/lib/cpod.sh
json() {   # file, python expression of d
  python3 -c "import json, sys; d = json.load(open(sys.argv[1])); print($2)" "$1"
}
PMU=cycles:2000,profileme:64
"$AXP" run --pmu $PMU --stats="$T/0.json" --sample-log "$T/0.log" "$P/branchalt-static" > /dev/null
"$AXP" run --pmu $PMU --stats="$T/1.json" --sample-log "$T/1.log" --profileme-truth "$T/1.t" \
  "$P/branchalt-static" > /dev/null
nohost() { grep -v -e '"host_seconds"' -e '"instructions_per_second"' "$1"; }
check "the same --stats with and without --profileme-truth" cmp -s <(nohost "$T/0.json") <(nohost "$T/1.json")
check "the same samples in the same order" cmp -s "$T/0.log" "$T/1.log"
made=$(json "$T/1.json" 'd["profileme"]["records"]')
check "the truth counts every record ($made)" \
  test "$(awk 'NR > 1 { s += $1 } END { print s }' "$T/1.t")" = "$made"

"$CPOD" --db "$DB" --flush 1h || { echo "FAIL cpod did not start"; exit 1; }
"$AXP" run --pmu $PMU --collector "$DB" --exact "$T/2.x" --profileme-truth "$T/2.t" "$P/branchalt-static" \
  > /dev/null
"$CPO" flush --db "$DB" > /dev/null
"$CPO" accuracy --db "$DB" --exact "$T/2.x" --image "$P/branchalt-static" --pm-paths "$T/2.t" --pm-min 50 \
  --json > "$T/acc.json" 2> "$T/acc.err"
python3 - "$T/acc.json" <<'PY' || status=1
import json, sys
r = json.load(open(sys.argv[1]))["pm_paths"]
ok = (r["instructions"] >= 8 and r["unknown"] == 0 and r["consistent"] >= 0.99 and r["own_top"] >= 0.99
      and r["in_set"] >= 0.99 and r["distance"] <= 0.05)
print(("ok   " if ok else "FAIL ") + "branchalt: %d instructions, %d samples: true path agrees with the history %.3f, "
      "is its top %.3f, among the reconstructed %.3f; scores to true shares %.3f"
      % (r["instructions"], r["samples"], r["consistent"], r["own_top"], r["in_set"], r["distance"]))
sys.exit(0 if ok else 1)
PY

# bad input
printf '# profileme-truth 1: count pid pc history_length history runs\n3 1000 120000698 17 0 120000690-12000069c\n' \
  > "$T/bad.t"
"$CPO" accuracy --db "$DB" --exact "$T/2.x" --image "$P/branchalt-static" --pm-paths "$T/bad.t" > /dev/null \
  2> "$T/bad.err"
check "a bad truth file is refused, naming its line" grep -q "bad.t:2: bad pc or history length" "$T/bad.err"
"$CPO" accuracy --db "$DB" --exact "$T/2.x" --image "$P/branchalt-static" --pm-paths "$T/2.x" > /dev/null \
  2> "$T/bad.err"
check "a file of another kind is refused" grep -q "not an axp --profileme-truth file" "$T/bad.err"
"$AXP" run --pmu cycles:2000 --profileme-truth "$T/3.t" "$P/branchalt-static" > /dev/null 2> "$T/3.err"
check "--profileme-truth without profileme is refused" grep -q "needs profileme among the --pmu events" "$T/3.err"
"$CPO" accuracy --db "$DB" --exact "$T/2.x" --image "$P/branchalt-static" --pm-paths "$T/2.t" --pm-min 0 \
  > /dev/null 2> "$T/bad.err"
check "--pm-min 0 is refused" grep -q "is not a count of at least 1" "$T/bad.err"
exit $status
