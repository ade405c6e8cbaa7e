#!/bin/bash
# The optimizer on held-out inputs, in EV5 cycles from axp --timing (exact
# and deterministic).  lua is trained on its six test scripts
# (tests/workloads/lua, exact counts) and measured on the five scripts of
# scripts/bench/lua, which the profile never saw.  Side by side per script:
# the -O2 build and optimize-image from the training counts (exact), also
# with cache-line colouring (--colour) and with --split-warm (warm); cycles, I-cache misses, taken-branch stall cycles, branch
# and jump mispredicts, and the share of the layout-addressable stall cycles
# (I-cache, taken branch, mispredicts) removed.  Every output is compared
# with the -O2 build's.  Then optimize-image's own time and memory.
# OPT_SCRIPTS limits the held-out scripts (e.g. "trees words").
set -u
BUILD=${BUILD:-build}
AXP=$BUILD/bin/axp
OPT=$BUILD/bin/optimize-image
LUA=$BUILD/workloads/bin/lua
[ -x "$OPT" ] && [ -x "$AXP" ] || { echo "optimize-image or axp not built (make)"; exit 1; }
[ -f "$LUA" ] || { echo "lua: not built (make workloads)"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cpo-bench-opt.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
TRAIN="closures fib nbody sieve sort strings"
HELD=${OPT_SCRIPTS:-"trees mandel words objects queens"}

echo "lua: training on $TRAIN (exact counts)"
for s in $TRAIN; do
  "$AXP" run --exact "$tmp/$s.exact" -- "$LUA" "tests/workloads/lua/$s.lua" >/dev/null ||
    { echo "training run $s failed"; exit 1; }
done
cat "$tmp"/*.exact >"$tmp/train.exact"
/usr/bin/time -f "%e %M" -o "$tmp/time" "$OPT" "$LUA" --exact "$tmp/train.exact" \
  --report "$tmp/report" -o "$tmp/lua.exact" >"$tmp/log" || { cat "$tmp/log"; exit 1; }
read -r secs kb <"$tmp/time"
echo "optimize-image lua --exact: $secs s, $((kb / 1024)) MB peak"
"$OPT" "$LUA" --exact "$tmp/train.exact" --split-warm -o "$tmp/lua.warm" >/dev/null ||
  { echo "optimize-image --split-warm failed"; exit 1; }
"$OPT" "$LUA" --exact "$tmp/train.exact" --colour -o "$tmp/lua.colour" >/dev/null ||
  { echo "optimize-image --colour failed"; exit 1; }
sed -n 2,5p "$tmp/report"

# stats FILE KEY...: numbers from axp's --stats JSON
stat() { python3 -c 'import json,sys
d=json.load(open(sys.argv[1])); s=d["stalls"]
v={"cycles":d["cycles"],"imiss":d["icache_misses"],"taken":s["taken_branch"],
   "misp":s["branch_mispredict"]+s["jump_mispredict"],"icache":s["icache"]}
v["layout"]=v["icache"]+v["taken"]+v["misp"]
print(" ".join(str(v[k]) for k in sys.argv[2:]))' "$@"; }

printf '%-8s %-6s %12s %8s %10s %10s %10s %8s %8s\n' script build cycles ratio imiss taken-st mispred-st layout-st removed
for s in $HELD; do
  f=scripts/bench/lua/$s.lua
  for b in O2 exact colour warm; do
    img=$LUA; [ $b != O2 ] && img=$tmp/lua.$b
    "$AXP" run --timing --stats="$tmp/$s.$b.json" -- "$img" "$f" >"$tmp/$s.$b.out"
    echo $? >>"$tmp/$s.$b.out"
    cmp -s "$tmp/$s.O2.out" "$tmp/$s.$b.out" || echo "FAIL $s: $b output differs from -O2"
    read -r c m t p l <<<"$(stat "$tmp/$s.$b.json" cycles imiss taken misp layout)"
    read -r c0 l0 <<<"$(stat "$tmp/$s.O2.json" cycles layout)"
    awk -v s="$s" -v b="$b" -v c="$c" -v c0="$c0" -v m="$m" -v t="$t" -v p="$p" -v l="$l" -v l0="$l0" \
      'BEGIN { printf "%-8s %-6s %12d %8.4f %10d %10d %10d %8d %7.1f%%\n", s, b, c, c / c0, m, t, p, l, 100 * (l0 - l) / l0 }'
  done
done | tee "$tmp/table"
awk '$2 != "O2" && $2 != "build" { n[$2]++; g[$2] += log($4); mi[$2] += $5 }
     $2 == "O2" { m0 += $5 }
     END { for (b in n) printf "geomean %-6s cycles ratio %.4f, I-cache misses %.1f%% fewer\n", b, exp(g[b] / n[b]), 100 * (m0 - mi[b]) / m0 }' "$tmp/table"
