#!/bin/bash
# cpo calc and cpo accuracy on the copy-loop program (DCPI's Figure 2):
# profiled under cpod with axp's exact counts and per-instruction truth,
# the estimator's culprits must name the true cause of at least 90% of the
# dynamic stall cycles with under 8.6% of the samples unexplained; calc must
# show the stores stalled on the write buffer and the loads the FP adds wait
# on, the copy loop as Figure 2 draws it and its cycles as Figure 4 tallies
# them; bad inputs get clear errors.  Exit 77 when the programs are not built.
set -u
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
CPO=$BUILD/bin/cpo
PROG=$BUILD/programs/copyloop-static
[ -x "$PROG" ] || { echo "programs not built (make programs)"; exit 77; }

. tests/integration/lib/cpod.sh
"$BUILD/bin/cpod" --db "$DB" --flush 1h || { echo "FAIL cpod did not start"; exit 1; }
# cycles:200 gives the copy about 5000 samples.  At cycles:2000 its 500 put
# a cause's share only within a few points and the copy loop's count within
# 20%, and which way fell to the sampling phase, which the size of the
# guest's environment moves: a test passed in one checkout and not another.
"$BUILD/bin/axp" run --pmu cycles:200 --collector "$DB" --exact "$T/x.exact" --truth "$T/x.truth" \
  -- "$PROG" >/dev/null
"$CPO" flush --db "$DB" >/dev/null

acc=$("$CPO" accuracy --db "$DB" --exact "$T/x.exact" --truth "$T/x.truth" --image "$PROG" --json)
check "cpo accuracy --truth runs" [ $? -eq 0 ]
covered=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["culprits"]["covered"])' <<<"$acc")
unexpl=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["culprits"]["unexplained"])' <<<"$acc")
echo "     true cause among the culprits: $covered; unexplained: $unexpl of the samples"
check "the culprits name the true cause of 90% of the dynamic stall" \
  python3 -c "import sys; sys.exit(0 if $covered >= 0.90 else 1)"
check "under 8.6% of the samples unexplained" python3 -c "import sys; sys.exit(0 if $unexpl < 0.086 else 1)"

# Several --exact files are the counts of several runs, summed: the same
# run twice weighs its edges twice.
w1=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["edges"]["weight"])' <<<"$acc")
acc2=$("$CPO" accuracy --db "$DB" --exact "$T/x.exact" --exact "$T/x.exact" --image "$PROG" --json)
w2=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["edges"]["weight"])' <<<"$acc2")
named=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["branches"]["named"])' <<<"$acc")
check "the estimate names the hotter side of the loops' branches ($named of the weight)" \
  python3 -c "import sys; sys.exit(0 if $named >= 0.95 else 1)"
check "two --exact files are summed ($w1 executions, then $w2)" \
  python3 -c "import sys; sys.exit(0 if $w1 > 0 and abs($w2 - 2 * $w1) <= 1 else 1)"

calc=$("$CPO" calc main --db "$DB" --image "$PROG")
check "cpo calc runs" [ $? -eq 0 ]
check "a store stalls on the write buffer" grep -qE ' st[qlts]	.*dynamic stall [0-9.]+: .*write_buffer' <<<"$calc"
check "an instruction waits on a load that missed, named" grep -qE 'dynamic stall [0-9.]+: .*dcache.* on [0-9a-f]+' <<<"$calc"
check "static dependency stalls name the instruction waited on" grep -qE 'static dependency stall [0-9]+ on [0-9a-f]+' <<<"$calc"
# The copy loop as DCPI's Figure 2: a store of the copy waits on a load
# that missed (named), its bubbles a line per half cycle labelled d and w;
# adjacent stores cannot pair (a slotting bubble between them); source lines.
fig2=$("$CPO" calc copy --db "$DB" --image "$PROG")
check "calc copy runs" [ $? -eq 0 ]
check "Figure 2: a store waits on a load of the copy, bubbles a line per half cycle" python3 -c '
import re, sys
lines = sys.stdin.read().split("\n")
ins = {}
for l in lines:
    m = re.match(r"  ([0-9a-f]+)  (\S+)", l)
    if m: ins[m.group(1)] = m.group(2)
ok = False
for k, l in enumerate(lines):
    m = re.match(r"  [0-9a-f]+  st[tq]\t.*dynamic stall ([0-9.]+): \S*dcache\S*write_buffer\S* on ([0-9a-f]+)", l)
    if not m or not ins.get(m.group(2), "").startswith("ld"): continue
    want = round(2 * float(m.group(1)))
    j, shown, total = k - 1, 0, None
    while j >= 0 and re.match(r" {14}\S", lines[j]):
        t = re.match(r" {14}(\S+)(?:  \.\.\. ([0-9]+) lines in all)?$", lines[j])
        if t and "d" in t.group(1) and "w" in t.group(1):
            shown += 1
            total = int(t.group(2)) if t.group(2) else total
        j -= 1
    shown = total if total is not None else shown
    ok |= abs(shown - want) <= 1
sys.exit(0 if ok else 1)' <<<"$fig2"
check "Figure 2: a slotting bubble between adjacent stores" python3 -c '
import re, sys
lines = [l for l in sys.stdin.read().split("\n") if not re.match(r"\S", l)]
ok = any(re.match(r"  [0-9a-f]+  st", lines[k]) and lines[k + 1] == " " * 14 + "s" and
         re.match(r"  [0-9a-f]+  st", lines[k + 2]) for k in range(len(lines) - 2))
sys.exit(0 if ok else 1)' <<<"$fig2"
check "calc shows the source lines" grep -q 'copyloop.c:[0-9]*:  .*dst\[i' <<<"$fig2"
# Figure 4: the cycles tally to 100%, and each dynamic cause's true cost
# (axp's truth, same run) lies within the range the analysis gives it,
# give or take a point and two binomial deviations of that share.
fig4=$("$CPO" calc copy --summary --truth "$T/x.truth" --db "$DB" --image "$PROG")
check "calc --summary runs" [ $? -eq 0 ]
check "Figure 4: the cycles tally to 100%" grep -qE '^  total tallied +100\.0%$' <<<"$fig4"
check "Figure 4: every true dynamic stall within its range" python3 -c '
import re, sys
text = sys.stdin.read()
rows = [m.groups() for m in re.finditer(r"^  (\w+) +([0-9.]+)% +([0-9.]+)% +([0-9.]+)%$", text, re.M)]
big = [r for r in rows if float(r[3]) >= 1]
n = int(re.search(r"\): ([0-9]+) cycle samples", text).group(1))
def slack(t):   # a point, plus two binomial deviations of a share of n samples
    p = float(t) / 100
    return 1 + 200 * (p * (1 - p) / n) ** 0.5
bad = [r for r in rows if not float(r[1]) - slack(r[3]) <= float(r[3]) <= float(r[2]) + slack(r[3])]
for r in bad: print("     %s: true %s%% outside %s-%s%%" % (r[0], r[3], r[1], r[2]))
sys.exit(0 if len(rows) >= 9 and big and not bad else 1)' <<<"$fig4"
err=$("$CPO" calc copy --truth "$T/x.truth" --db "$DB" --image "$PROG" 2>&1)
check "--truth without --summary is refused" grep -q 'goes with --summary' <<<"$err"
json=$("$CPO" calc --all --json --db "$DB" --image "$PROG")
check "calc --all --json is JSON with culprits" python3 -c '
import json, sys
d = json.load(sys.stdin)
ins = [i for p in d["procedures"] for i in p["instructions"]]
sys.exit(0 if any("write_buffer" in i["culprits"] for i in ins) else 1)' <<<"$json"

# A rewritten copy, profiled, analysed on its own CFG and carried back to
# the original through its address map: the copy loop's count at the
# original's address is the copy's own estimate of it, and near the truth
# (copyloop.c: 32768 runs of the body; within 10%: over six guest
# environments it was 1.3% under to 4.8% over), a wrong original refused.
"$BUILD/bin/optimize-image" "$PROG" --exact "$T/x.exact" -o "$T/copy" >/dev/null 2>&1
check "optimize-image makes a copy" [ -x "$T/copy" ]
"$BUILD/bin/axp" run --pmu cycles:200 --collector "$DB" -- "$T/copy" >/dev/null
"$CPO" flush --db "$DB" >/dev/null
"$CPO" calc --all --json --db "$DB" --image "$T/copy" >"$T/own.json"
orig=$("$CPO" calc --all --json --db "$DB" --image "$T/copy" --original "$PROG")
check "calc --original runs" [ $? -eq 0 ]
check "calc --original: the copy loop's own estimate, at the original's address" python3 -c '
import json, sys
def loop(d):
    p = [x for x in d["procedures"] if x["name"] == "copy"][0]
    return p, max(p["blocks"], key=lambda b: b["count"])
p, best = loop(json.load(sys.stdin))
_, own = loop(json.load(open(sys.argv[2])))
lo, hi = int(p["address"], 16), int(best["start"], 16)
print("     loop: %.0f carried, %.0f on the copy, 32768 true" % (best["count"], own["count"]))
sys.exit(0 if p["address"] != "" and lo <= hi < lo + 256 and abs(best["count"] - own["count"]) <= 0.01 * own["count"]
         and abs(best["count"] - 32768) <= 0.10 * 32768 else 1)' "$PROG" "$T/own.json" <<<"$orig"
check "calc --original names the original image" python3 -c '
import json, sys
sys.exit(0 if json.load(sys.stdin)["image"] == sys.argv[1] else 1)' "$PROG" <<<"$orig"
err=$("$CPO" calc copy --db "$DB" --image "$T/copy" --original "$BUILD/programs/alu-static" 2>&1)
check "calc --original with another program is refused" grep -q 'was not rewritten from' <<<"$err"

# bad input
err=$("$CPO" calc nosuchproc --db "$DB" --image "$PROG" 2>&1)
check "an unknown procedure is named" grep -q "no procedure named 'nosuchproc'" <<<"$err"
err=$("$CPO" calc main --db "$DB" --image /nonexistent 2>&1)
check "a missing image is named" grep -q '/nonexistent' <<<"$err"
head -c 300 "$T/x.truth" >"$T/short.truth"
err=$("$CPO" accuracy --db "$DB" --exact "$T/x.exact" --truth "$T/short.truth" --image "$PROG" 2>&1)
check "a truncated truth file is an error naming its line" grep -qE 'short.truth:[0-9]+:' <<<"$err"
head -c 2000 "$T/x.exact" >"$T/short.exact"
err=$("$CPO" accuracy --db "$DB" --exact "$T/short.exact" --image "$PROG" 2>&1)
check "a truncated exact file is an error" [ -n "$err" ]
exit $status
