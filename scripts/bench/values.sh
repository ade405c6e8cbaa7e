#!/bin/bash
# Value sampling (docs/machine.md "Value sampling"): what it costs and how
# right its hot lists are.
#
# Overhead: lua-static running scripts/bench/lua/objects.lua with plain
# cycle sampling (--pmu cycles), then with value sampling beside it at
# three run lengths (--values-length 8, 32, 128) and three values periods
# (62000, 250000, 1000000 cycles); prints the slowdown in simulated cycles
# over plain cycle sampling (the guest's own time, what the paper's
# overhead tables measure) and the host's wall-time ratio.
#
# Accuracy: the bytecode and function-pointer test programs, lua, zstd and
# speedtest1 with --pmu cycles,values:VALUES_BENCH_PERIOD (default 20000)
# --values-length 32, against --exact of the same run: for every JMP and
# JSR executed at least 1000 times, whether the hot list's top target (the
# hot list built from the run's records, as cpod builds it) is the true
# most frequent one (a tie counts either way), weighted by executions
# (target: 95%), and the largest gap between hot-list and true shares over
# the top three targets (target:
# within 5 points, among jumps with at least 200 value samples: fewer
# make a share a coarse estimate whatever the method; the worst of all is
# printed too); and every load's latency bins (D-cache, S-cache, B-cache,
# memory: the level that answered) against the model's own per-load truth
# (--truth's load.* columns), for loads with at least 200 value samples
# (target: within 5 points per bin).  VALUES_BENCH_OVERHEAD=0 skips the
# overhead part.
set -eu
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
AXP=$BUILD/bin/axp P=$BUILD/programs W=$BUILD/workloads/bin
HOT=$BUILD/tests/profdb/hotlist_feed
[ -x "$AXP" ] || { echo "axp not built (make)"; exit 0; }
[ -x "$W/lua-static" ] || { echo "lua-static not built (make workloads)"; exit 0; }
[ -x "$HOT" ] || { echo "$HOT not built (make test)"; exit 0; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
LUA_SCRIPT=scripts/bench/lua/objects.lua

cycles() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["cycles"])' "$1"; }
timed() {   # name axp-options...: runs lua on the script; prints "wall"
  local name=$1
  shift
  /usr/bin/time -f "%e" -o "$tmp/$name.time" "$AXP" run --stats="$tmp/$name.json" "$@" \
    "$W/lua-static" "$LUA_SCRIPT" > /dev/null 2> "$tmp/$name.err" < /dev/null ||
    { echo "$name: axp failed:"; cat "$tmp/$name.err"; exit 1; }
  cat "$tmp/$name.time"
}

if [ "${VALUES_BENCH_OVERHEAD:-1}" != 0 ]; then
echo "overhead: lua-static $LUA_SCRIPT, slowdown in simulated cycles over --pmu cycles (host wall ratio)"
base_wall=$(timed plain --pmu cycles)
base=$(cycles "$tmp/plain.json")
printf "  plain cycle sampling: %s cycles, %s s\n" "$base" "$base_wall"
printf "  %-10s" "length"
for period in 62000 250000 1000000; do printf "  %-22s" "values:$period"; done
echo
for len in 8 32 128; do
  printf "  %-10s" "$len"
  for period in 62000 250000 1000000; do
    wall=$(timed "v$len.$period" --pmu "cycles,values:$period" --values-length "$len")
    c=$(cycles "$tmp/v$len.$period.json")
    printf "  %-22s" "$(python3 -c 'import sys; c, b, w, bw = map(float, sys.argv[1:]); print("%+.2f%% (x%.2f)" % (100 * (c / b - 1), w / bw))' "$c" "$base" "$wall" "$base_wall")"
  done
  echo
done
echo
fi

PERIOD=${VALUES_BENCH_PERIOD:-20000}
echo "accuracy: --pmu cycles,values:$PERIOD --values-length 32 against --exact; JMP/JSR executed >= 1000 times"
accuracy() {   # name program args...
  local name=$1
  shift
  [ -x "$1" ] || { echo "  $name: $1 not built"; return; }
  "$AXP" run --pmu "cycles,values:$PERIOD" --values-length 32 --values-log "$tmp/$name.v" --exact "$tmp/$name.x" \
    --truth "$tmp/$name.t" "$@" > /dev/null 2> "$tmp/$name.err" < /dev/null || true
  # the hot lists of the run's targets, one per jump, as cpod keeps them
  awk '!/^#/ && $11 != "-" { print $6, $11 }' "$tmp/$name.v" | "$HOT" > "$tmp/$name.hot"
  python3 - "$name" "$tmp/$name.hot" "$tmp/$name.x" "$tmp/$name.v" "$tmp/$name.t" <<'EOF'
import sys
from collections import Counter
name, hot, exact = sys.argv[1:4]
lists = {}
for line in open(hot):
    f = line.split()
    pc, samples = int(f[0], 16), int(f[1])
    lists[pc] = (samples, [(int(v, 16), float(s)) for v, s in zip(f[2::2], f[3::2])])
import math
def within(k, q, d):
    """P(|X/k - q| <= d), X binomial(k, q): normal approximation, continuity corrected."""
    sd = (k * q * (1 - q)) ** 0.5
    return 1.0 if sd == 0 else math.erf((d * k + 0.5) / sd / 2 ** 0.5)
n = w = right = 0
jumps_ok = jumps_k = 0
jumps_expect = 0.0
worst = worst_any = 0.0
worst_at = worst_any_at = None
missing = 0
for line in open(exact):
    f = line.split()
    if not f or f[0] != "jump" or f[3] not in ("jmp", "jsr") or int(f[4]) < 1000:
        continue
    pc, total = int(f[2], 16), int(f[4])
    true = Counter()
    for t in f[5:]:
        true[int(t.split(":")[1].split("=")[0], 16)] += int(float(t.split("=")[1]))
    n += 1
    w += total
    if pc not in lists:
        missing += total
        continue
    samples, vals = lists[pc]
    got = dict(vals)
    # a tie for the top is right either way
    if vals and true[vals[0][0]] == true.most_common(1)[0][1]:
        right += total
    # every top-3 share within 5 points, and how likely that is for an
    # unbiased sampler of as many samples (the shares taken as independent)
    jumps_k += 1
    jumps_ok += all(abs(got.get(t, 0.0) - c / total) <= 0.05 for t, c in true.most_common(3))
    jumps_expect += math.prod(within(samples, c / total, 0.05) for t, c in true.most_common(3))
    for t, c in true.most_common(3):
        gap = abs(got.get(t, 0.0) - c / total)
        if samples >= 200 and gap > worst:
            worst, worst_at = gap, (pc, samples, total)
        if gap > worst_any:
            worst_any, worst_any_at = gap, (pc, samples, total)
if not n:
    print(f"  {name}: no JMP/JSR executed 1000 times")
else:
    print(f"  {name}: {n} jumps, top target right for {100 * right / w:.1f}% of executions"
          f" ({100 * missing / w:.1f}% in jumps without value samples)")
    print(f"    top-3 shares all within 5 points: {jumps_ok} of {jumps_k} sampled jumps"
          f" (an unbiased sampler of as many samples: {jumps_expect:.1f})")
    for what, gap, at in (("with >= 200 value samples", worst, worst_at), ("any", worst_any, worst_any_at)):
        if at:
            print(f"    worst top-3 share gap, {what}: {100 * gap:.1f} points"
                  f" (0x{at[0]:x}: {at[1]} value samples of {at[2]} executions)")
# load latencies binned by level against the model's own per-load truth
from collections import defaultdict
rec = defaultdict(Counter)
for line in open(sys.argv[4]):
    f = line.split()
    if not line.startswith("#") and f[9] != "-":
        rec[int(f[5], 16)][f[9]] += 1
cols, truth = None, {}
for line in open(sys.argv[5]):
    f = line.split()
    if line.startswith("#"):
        cols = f[1:]
        continue
    d = dict(zip(cols, f))
    lv = [int(d["load." + k]) for k in ("dcache", "scache", "bcache", "memory")]
    if sum(lv):
        truth[int(d["pc"], 16)] = lv
loads = worst = mixed = loads_ok = 0
loads_expect = 0.0
for pc, c in rec.items():
    k = sum(c.values())
    t = truth.get(pc)
    if k < 200 or not t:
        continue
    loads += 1
    want = [x / sum(t) for x in t]
    mixed += max(want) < 0.95
    gap = max(abs(c[l] / k - w) for l, w in zip("dsbm", want))
    worst = max(worst, gap)
    loads_ok += gap <= 0.05
    loads_expect += math.prod(within(k, w, 0.05) for w in want)
print(f"    load latency bins: {loads} loads with >= 200 value samples ({mixed} not all one level),"
      f" worst bin {100 * worst:.1f} points from the model's truth; every bin within 5 points for"
      f" {loads_ok} (an unbiased sampler of as many samples: {loads_expect:.1f})")
EOF
}
accuracy bytecode "$P/bytecode-static"
accuracy funcptr "$P/funcptr-static"
accuracy indjump "$P/indjump-static"
accuracy lua "$W/lua-static" "$LUA_SCRIPT"
seq 1 200000 > "$tmp/zin"
accuracy zstd "$W/zstd-static" -q -f -3 "$tmp/zin" -o "$tmp/zin.zst"
accuracy speedtest1 "$W/speedtest1-static" --size 1
