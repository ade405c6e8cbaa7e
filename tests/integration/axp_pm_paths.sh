#!/bin/bash
# The true paths behind ProfileMe's branch histories (docs/machine.md
# "ProfileMe"):
# - axp --profileme-truth changes nothing: the same --stats (but the
#   host's time) and the same samples in the same order;
# - its records add up to the ProfileMe records made;
# - without profileme among the events it is refused with a message.
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
AXP=$BUILD/bin/axp CPO=$BUILD/bin/cpo P=$BUILD/programs
for f in $AXP $CPO; do
  [ -x "$f" ] || { echo "$f not built (make all builds it)"; exit 77; }
done
[ -f "$P/branchalt-static" ] || { echo "$P/branchalt-static not built (make programs builds it)"; exit 77; }
export AXP_EPOCH=1700000000

. tests/integration/lib/cpod.sh   # (T, check, status)
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

"$AXP" run --pmu cycles:2000 --profileme-truth "$T/3.t" "$P/branchalt-static" > /dev/null 2> "$T/3.err"
check "--profileme-truth without profileme is refused" grep -q "needs profileme among the --pmu events" "$T/3.err"
exit $status
