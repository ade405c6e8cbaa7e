#!/bin/bash
# ProfileMe end to end (docs/machine.md "ProfileMe", docs/profile-tools.md):
# - the same run with and without profileme takes the same cycles and the
#   same cycle samples, in the same order;
# - through cpod, every record the machine made (single and paired) is
#   in the database, none unmapped or lost, also from 4 CPUs;
# - the samples' estimated executions add up to the instructions run
#   (within sampling noise), and the counted block frequencies of the
#   bytecode interpreter are within 10% of --exact for 90% of the samples;
# - cpod killed after taking a machine's records, before merging them:
#   its successor merges them all (journal replay), none twice;
# - cpo profileme, cpo list --profileme and --paths and cpo accuracy
#   --profileme answer; bad options are refused with a message.
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
AXP=$BUILD/bin/axp CPO=$BUILD/bin/cpo CPOD=$BUILD/bin/cpod P=$BUILD/programs
for f in $AXP $CPO $CPOD; do
  [ -x "$f" ] || { echo "$f not built (make all builds it)"; exit 77; }
done
for p in bytecode-static threads-static; do
  [ -f "$P/$p" ] || { echo "$P/$p not built (make programs builds it)"; exit 77; }
done
export AXP_EPOCH=1700000000

. tests/integration/lib/cpod.sh
"$CPOD" --db "$DB" --flush 1h || { echo "FAIL cpod did not start"; exit 1; }
json() {   # file, python expression of d
  python3 -c "import json, sys; d = json.load(open(sys.argv[1])); print($2)" "$1"
}

"$AXP" run --pmu cycles:5000 --stats="$T/0.json" --sample-log "$T/0.log" "$P/bytecode-static" > /dev/null
"$AXP" run --pmu cycles:5000,profileme:500 --profileme-window 32 --collector "$DB" --stats="$T/1.json" \
  --sample-log "$T/1.log" --exact "$T/1.x" "$P/bytecode-static" > /dev/null 2> "$T/1.err"
check "the same cycles with and without ProfileMe" \
  test "$(json "$T/0.json" 'd["cycles"]')" = "$(json "$T/1.json" 'd["cycles"]')"
check "the same cycle samples in the same order" cmp -s "$T/0.log" "$T/1.log"
"$CPO" flush --db "$DB" > "$T/1.flush"
made=$(json "$T/1.json" 'd["profileme"]["records"]')
pairs=$(json "$T/1.json" 'd["profileme"]["pairs"]')
check "records come in pairs ($pairs pairs, $made records)" test "$made" -eq $((2 * pairs))
check "cpod took every record ($made)" \
  grep -q "^profileme $made records into [0-9]* instructions of 1 images (0 unmapped, 0 malformed, 0 lost); since start $made records, 0 unmapped, 0 malformed, 0 lost" \
  "$T/1.flush"

"$CPO" profileme --db "$DB" --json --histories 2 > "$T/pm.json"
python3 - "$T/pm.json" "$made" "$(json "$T/1.json" 'd["instructions"]')" <<'EOF' || status=1
import json, sys
rows, made, insns = json.load(open(sys.argv[1])), int(sys.argv[2]), int(sys.argv[3])
samples = sum(r["samples"] for r in rows)
execs = sum(r["executions"] for r in rows)
ok = samples == made and abs(execs - insns) / insns < 0.03
print(("ok   " if ok else "FAIL ") + f"{samples} samples stand for {execs:.0f} executions, {insns} instructions ran")
sane = all(r["dmiss"] <= r["loads"] and r["taken"] <= r["cbranch"] and r["useful"] <= r["paired"] and
           sum(r["histograms"]["head"]) == r["samples"] for r in rows)
print(("ok   " if sane else "FAIL ") + "every entry's events within its samples, histograms adding up")
sys.exit(0 if ok and sane else 1)
EOF

"$CPO" accuracy --db "$DB" --exact "$T/1.x" --image "$P/bytecode-static" --profileme --json > "$T/acc.json" \
  2> "$T/acc.err"
check "counted block frequencies within 10% for 90% of the samples" \
  python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(d["profileme"]["blocks"]["within10"] < 0.9)' \
  "$T/acc.json"
"$CPO" list run --db "$DB" --profileme > "$T/list" 2>&1
check "cpo list --profileme shows the ProfileMe columns" grep -q "dmiss%.*wasted" "$T/list"
"$CPO" list run --db "$DB" --paths > "$T/paths" 2>&1
# (the ten best of an interpreter's many paths: not all of the samples)
check "cpo list --paths: ten scored paths to the hottest instruction, best first, adding up to at most 100%" \
  python3 -c '
import re, sys
t = open(sys.argv[1]).read()
s = [float(x) for x in re.findall(r"^ +([0-9.]+)%  0x", t, re.M)]
sys.exit(not ("Paths to 0x" in t and len(s) == 10 and s == sorted(s, reverse=True) and 0 < sum(s) <= 100.5))' "$T/paths"

# 4 CPUs: nothing lost
"$AXP" run --cpus 4 --pmu profileme:200 --profileme-window 16 --collector "$DB" --stats="$T/4.json" \
  "$P/threads-static" > /dev/null 2>&1
"$CPO" flush --db "$DB" > "$T/4.flush"
made=$(json "$T/4.json" 'd["profileme"]["records"]')
before=$(json "$T/1.json" 'd["profileme"]["records"]')
check "4 CPUs: cpod took every record ($made)" \
  grep -q "^profileme $made records into [0-9]* instructions of 1 images (0 unmapped, 0 malformed, 0 lost); since start $((made + before)) records, 0 unmapped" \
  "$T/4.flush"

# killed after taking the records, before merging them
"$AXP" run --pmu cycles:5000,profileme:500 --collector "$DB" --stats="$T/k.json" "$P/bytecode-static" \
  > /dev/null 2>&1
made=$(json "$T/k.json" 'd["profileme"]["records"]')
sleep 1   # the daemon salvages the gone machine's region meanwhile
kill -9 "$(cat "$DB"/.cpod/*/lock)" 2>/dev/null
sleep 0.2
"$CPOD" --db "$DB" --flush 1h || { echo "FAIL cpod did not restart"; status=1; }
"$CPO" flush --db "$DB" > "$T/k.flush"
check "killed daemon: its successor merges all $made records, from the journal or the region" \
  grep -q "^profileme $made records into .*since start $made records, 0 unmapped, 0 malformed, 0 lost" "$T/k.flush"

refused() {   # what, args...
  local what=$1; shift
  "$AXP" run "$@" "$P/bytecode-static" > /dev/null 2> "$T/bad.err"
  local rc=$?
  check "refused: $what ($(head -c 90 "$T/bad.err"))" test $rc -eq 2 -a -s "$T/bad.err"
}
refused "window without --pmu" --profileme-window 8
refused "window too big" --pmu profileme --profileme-window 99999
refused "profileme twice" --pmu profileme,profileme:100
"$AXP" run --pmu profileme:100 --profileme-window 64 "$P/bytecode-static" > /dev/null 2> "$T/bad.err"
check "a window not below the shortest interval is refused ($(head -c 80 "$T/bad.err"))" \
  grep -q "profileme-window" "$T/bad.err"
exit $status
