#!/bin/bash
# Value profiles end to end: `axp run --pmu cycles,values --collector DB`
# runs the bytecode interpreter, cpod takes the value records from the
# region's rings into hot lists and merges them into the image's value
# profile, and `cpo values` reports them.
# - every record the machine posted reaches cpod (cpo flush counts them),
#   none unmapped, none lost;
# - the dispatch jump's hot list names the true top target (--exact of the
#   same run) with the top three shares within 5 points, and its JSON is
#   the documented shape, most frequent first, link-time addresses;
# - a second run merges into the same profile: the samples add up;
# - cpod killed after taking a machine's value records, before merging
#   them: its successor merges them all (journal replay), none twice;
# - load latencies come binned by level, shares adding up to at most 1;
# - PROC restricts to a procedure; bad --kind and unknown --image are
#   refused with a message.
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
AXP=$BUILD/bin/axp CPO=$BUILD/bin/cpo CPOD=$BUILD/bin/cpod P=$BUILD/programs
for f in $AXP $CPO $CPOD; do
  [ -x "$f" ] || { echo "$f not built (make all builds it)"; exit 77; }
done
[ -f "$P/bytecode-static" ] || { echo "$P/bytecode-static not built (make programs builds it)"; exit 77; }

. tests/integration/lib/cpod.sh
"$CPOD" --db "$DB" --flush 1h || { echo "FAIL cpod did not start"; exit 1; }

run() {   # tag
  "$AXP" run --pmu cycles,values:10000 --values-length 32 --collector "$DB" --stats="$T/$1.json" \
    --exact "$T/$1.x" "$P/bytecode-static" > /dev/null 2> "$T/$1.err"
  [ $? -eq 47 ] || { echo "FAIL axp run $1: $(cat "$T/$1.err")"; status=1; }
  "$CPO" flush --db "$DB" > "$T/$1.flush"
}
posted() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["driver"]["values_posted"])' "$1"; }

run a
sed 's/^/     /' "$T/a.flush"
n=$(posted "$T/a.json")
check "cpod took every value record the machine posted ($n)" \
  grep -q "^values $n records into [0-9]* hot lists of 1 images (0 unmapped, 0 lost)" "$T/a.flush"

"$CPO" values --db "$DB" --kind target --json > "$T/a.jsonout"
python3 - "$T/a.jsonout" "$T/a.x" <<'EOF' || status=1
import json, sys
from collections import Counter
rows = json.load(open(sys.argv[1]))
site = None
for line in open(sys.argv[2]):
    f = line.split()
    if f[0] == "jump" and f[3] == "jmp" and (site is None or int(f[4]) > site[1]):
        site = (int(f[2], 16), int(f[4]),
                Counter({int(t.split(":")[1].split("=")[0], 16): int(t.split("=")[1]) for t in f[5:]}))
pc, total, true = site
shape = all(set(r) == {"address", "kind", "samples", "values"} and r["kind"] == "target" and
            r["address"].startswith("0x") and isinstance(r["samples"], int) and
            all(set(v) == {"value", "share"} and v["value"].startswith("0x") for v in r["values"]) and
            [v["share"] for v in r["values"]] == sorted((v["share"] for v in r["values"]), reverse=True)
            for r in rows)
print(("ok   " if shape else "FAIL ") + f"--json: {len(rows)} objects of the documented shape, most frequent first")
row = [r for r in rows if int(r["address"], 16) == pc]
if not row:
    print(f"FAIL the dispatch jump 0x{pc:x} has a hot list"); sys.exit(1)
got = {int(v["value"], 16): v["share"] for v in row[0]["values"]}
top = [t for t, _ in true.most_common(3)]
first = int(row[0]["values"][0]["value"], 16) == top[0]
diffs = [abs(got.get(t, 0) - true[t] / total) for t in top]
print(("ok   " if first else "FAIL ") + f"dispatch jump 0x{pc:x}: top target from {row[0]['samples']} value samples is the true one")
print(("ok   " if max(diffs) <= 0.05 else "FAIL ") + "top three shares within 5 points: " +
      ", ".join(f"0x{t:x} {got.get(t, 0):.3f} vs {true[t] / total:.3f}" for t in top))
sys.exit(0 if shape and first and max(diffs) <= 0.05 else 1)
EOF

samples_at() {   # address
  "$CPO" values --db "$DB" --kind target --json |
    python3 -c 'import json, sys; print(sum(r["samples"] for r in json.load(sys.stdin) if r["address"] == sys.argv[1]))' "$1"
}
disp=$(python3 -c 'import json, sys; r = max(json.load(open(sys.argv[1])), key=lambda r: r["samples"]); print(r["address"])' "$T/a.jsonout")
before=$(samples_at "$disp")
run b
after=$(samples_at "$disp")
check "a second run merges into the profile ($before, then $after value samples at $disp)" \
  [ "$after" -gt "$before" -a "$after" -le $((2 * before + before / 4)) ]

# cpod killed after taking a machine's value records and before merging
# them: its successor replays them from the journal, none lost, none twice
"$AXP" run --pmu cycles,values:10000 --values-length 32 --collector "$DB" --stats="$T/c.json" \
  "$P/bytecode-static" > /dev/null 2> "$T/c.err"
n=$(posted "$T/c.json")
sleep 1   # the daemon salvages the gone machine's region meanwhile
kill -9 "$(cat "$DB"/.cpod/*/lock)" 2>/dev/null
sleep 0.2
"$CPOD" --db "$DB" --flush 1h || { echo "FAIL cpod did not restart"; status=1; }
"$CPO" flush --db "$DB" > "$T/c.flush"
sed 's/^/     /' "$T/c.flush"
check "killed daemon: its successor merges all $n value records, from the journal or the region" \
  grep -q "^values $n records into" "$T/c.flush"

"$CPO" values --db "$DB" --kind latency --json > "$T/lat.json"
check "latencies binned by level, shares adding up to at most 1" python3 -c '
import json, sys
rows = json.load(open(sys.argv[1]))
ok = rows and all(set(r["levels"]) == {"dcache", "scache", "bcache", "memory"} and
                  sum(r["levels"].values()) <= 1.0001 and all("level" in v for v in r["values"]) for r in rows)
sys.exit(0 if ok else 1)' "$T/lat.json"
# run is the interpreter's loop (tests/programs/bytecode.c), the dispatch jump in it
"$CPO" values run --db "$DB" --json > "$T/run.json"
read -r start size < <("$CPO" syms "$P/bytecode-static" | awk '$NF == "run" && $4 == "FUNC" { print $2, $3 }')
check "PROC restricts to the procedure (run at 0x$start, $size bytes)" python3 -c '
import json, sys
rows = json.load(open(sys.argv[1]))
lo = int(sys.argv[2], 16); hi = lo + int(sys.argv[3])
sys.exit(0 if rows and all(lo <= int(r["address"], 16) < hi for r in rows) and
         any(r["kind"] == "target" for r in rows) else 1)' "$T/run.json" "$start" "$size"
"$CPO" values nosuchproc --db "$DB" > "$T/none.txt"
check "an unknown PROC: no value samples" grep -q "no value samples in nosuchproc" "$T/none.txt"
"$CPO" values --db "$DB" --kind colour > /dev/null 2> "$T/kind.err"
rc=$?
check "a bad --kind is a usage error (exit $rc)" grep -q "expected result, address" "$T/kind.err"
[ $rc -eq 2 ] || { echo "FAIL --kind colour exits $rc, not 2"; status=1; }
"$CPO" values --db "$DB" --image nosuchimage > /dev/null 2> "$T/img.err"
rc=$?
check "an unknown --image is an error (exit $rc)" grep -q "no image nosuchimage" "$T/img.err"
[ $rc -eq 1 ] || { echo "FAIL --image nosuchimage exits $rc, not 1"; status=1; }
exit $status
