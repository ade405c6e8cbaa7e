#!/bin/bash
# The optimizer on held-out inputs, in EV5 cycles from axp --timing (exact
# and deterministic).  lua is trained on its six test scripts
# (tests/workloads/lua, exact counts) and measured on the five scripts of
# scripts/bench/lua, which the profile never saw.  Side by side per script:
# the -O2 build and optimize-image from the training counts (exact), also
# without cache-line colouring (--no-colour) and with --split-warm (warm); cycles, I-cache misses, taken-branch stall cycles, branch
# and jump mispredicts, and the share of the layout-addressable stall cycles
# (I-cache, taken branch, mispredicts) removed.  Every output is compared
# with the -O2 build's.  Then optimize-image's own time and memory.
# speedtest1 is trained on --size 1 (main test set) and measured on --size 2
# and on the orm and cte test sets; zstd is trained on compressing one
# datagen file at -3 and measured on another file at -1, -9 and -19 and on
# decompressing it.  OPT_SCRIPTS limits the held-out lua scripts (e.g.
# "trees words"); OPT_WORKLOADS the workloads (default "lua speedtest1 zstd").
set -u
# A fixed guest clock: lua seeds its string hashes from the time, which
# otherwise moves a run's cycles by a few per cent.
export AXP_EPOCH=${AXP_EPOCH:-1700000000}
BUILD=${BUILD:-build}
AXP=$BUILD/bin/axp
OPT=$BUILD/bin/optimize-image
LUA=$BUILD/workloads/bin/lua
[ -x "$OPT" ] && [ -x "$AXP" ] || { echo "optimize-image or axp not built (make)"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cpo-bench-opt.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
TRAIN="closures fib nbody sieve sort strings"
WORKLOADS=${OPT_WORKLOADS:-"lua speedtest1 zstd"}
HELD=${OPT_SCRIPTS:-"trees mandel words objects queens"}

# stats FILE KEY...: numbers from axp's --stats JSON
stat() { python3 -c 'import json,sys
d=json.load(open(sys.argv[1])); s=d["stalls"]
v={"cycles":d["cycles"],"imiss":d["icache_misses"],"taken":s["taken_branch"],
   "misp":s["branch_mispredict"]+s["jump_mispredict"],"icache":s["icache"]}
v["layout"]=v["icache"]+v["taken"]+v["misp"]
print(" ".join(str(v[k]) for k in sys.argv[2:]))' "$@"; }

# row NAME BUILD: one line of the table from $tmp/NAME.BUILD.json against
# $tmp/NAME.O2.json
row() {
  read -r c m t p l <<<"$(stat "$tmp/$1.$2.json" cycles imiss taken misp layout)"
  read -r c0 l0 <<<"$(stat "$tmp/$1.O2.json" cycles layout)"
  awk -v s="$1" -v b="$2" -v c="$c" -v c0="$c0" -v m="$m" -v t="$t" -v p="$p" -v l="$l" -v l0="$l0" \
    'BEGIN { printf "%-8s %-6s %12.0f %8.4f %10.0f %10.0f %10.0f %10.0f %7.1f%%\n", s, b, c, c / c0, m, t, p, l, 100 * (l0 - l) / l0 }'
}
header() { printf '%-8s %-6s %12s %8s %10s %10s %10s %8s %8s\n' input build cycles ratio imiss taken-st mispred-st layout-st removed; }
geomean() {
  awk '$2 != "O2" && $2 != "build" { n[$2]++; g[$2] += log($4); mi[$2] += $5 }
       $2 == "O2" { m0 += $5 }
       END { for (b in n) printf "geomean %-6s cycles ratio %.4f, I-cache misses %.1f%% fewer\n", b, exp(g[b] / n[b]), 100 * (m0 - mi[b]) / m0 }' "$1"
}
# optimize NAME IMAGE --exact FILE...: optimize-image from exact counts, timed
optimize() {
  local name=$1 img=$2
  shift 2
  /usr/bin/time -f "%e %M" -o "$tmp/time" "$OPT" "$img" "$@" --report "$tmp/$name.report" \
    -o "$tmp/$name.exact" >"$tmp/log" || { cat "$tmp/log"; exit 1; }
  read -r secs kb <"$tmp/time"
  echo "optimize-image $name: $secs s, $((kb / 1024)) MB peak"
  "$OPT" "$img" "$@" --no-colour -o "$tmp/$name.nocol" >/dev/null || { echo "--no-colour failed"; exit 1; }
  sed -n 2,6p "$tmp/$name.report"
}

for w in $WORKLOADS; do case $w in
speedtest1)
  ST=$BUILD/workloads/bin/speedtest1
  [ -f "$ST" ] || { echo "speedtest1: not built"; continue; }
  echo; echo "speedtest1: training on --size 1 (exact counts)"
  rm -f "$tmp/st.db"
  "$AXP" run --exact "$tmp/st.train" -- "$ST" --size 1 "$tmp/st.db" >/dev/null || { echo "training failed"; exit 1; }
  optimize speedtest1 "$ST" --exact "$tmp/st.train"
  header
  for t in "size2:--size 2" "orm:--testset orm --size 1" "cte:--testset cte --size 1"; do
    n=${t%%:*}; args=${t#*:}
    for b in O2 exact nocol; do
      img=$ST; [ $b != O2 ] && img=$tmp/speedtest1.$b
      rm -f "$tmp/st.db"
      # shellcheck disable=SC2086
      "$AXP" run --timing --stats="$tmp/$n.$b.json" -- "$img" $args --verify "$tmp/st.db" 2>&1 |
        sed -E 's/[[:space:]]+[0-9]+\.[0-9]+s$//' >"$tmp/$n.$b.out"
      cmp -s "$tmp/$n.O2.out" "$tmp/$n.$b.out" || echo "FAIL speedtest1 $n: $b output differs from -O2"
      row "$n" "$b"
    done
  done | tee "$tmp/st.table"
  geomean "$tmp/st.table"
  ;;
zstd)
  Z=$BUILD/workloads/bin/zstd DG=$BUILD/workloads/host/datagen
  [ -f "$Z" ] && [ -x "$DG" ] || { echo "zstd: not built"; continue; }
  echo; echo "zstd: training on compressing datagen -g1M -P40 -s7 at -3 (exact counts)"
  "$DG" -g1M -P40 -s7 >"$tmp/z.train.in"; "$DG" -g1M -P60 -s3 >"$tmp/z.in"
  "$AXP" run --exact "$tmp/z.train" -- "$Z" -q -3 -c "$tmp/z.train.in" >/dev/null || { echo "training failed"; exit 1; }
  optimize zstd "$Z" --exact "$tmp/z.train"
  "$Z" -q -3 -c "$tmp/z.in" >"$tmp/z.in.zst" 2>/dev/null || "$AXP" run -- "$Z" -q -3 -c "$tmp/z.in" >"$tmp/z.in.zst"
  header
  for t in "c1:-1 -c" "c9:-9 -c" "c19:-19 -c" "d:-d -c"; do
    n=${t%%:*}; args=${t#*:}; in=$tmp/z.in; [ $n = d ] && in=$tmp/z.in.zst
    for b in O2 exact nocol; do
      img=$Z; [ $b != O2 ] && img=$tmp/zstd.$b
      # shellcheck disable=SC2086
      "$AXP" run --timing --stats="$tmp/$n.$b.json" -- "$img" -q $args "$in" | md5sum >"$tmp/$n.$b.out"
      cmp -s "$tmp/$n.O2.out" "$tmp/$n.$b.out" || echo "FAIL zstd $n: $b output differs from -O2"
      row "$n" "$b"
    done
  done | tee "$tmp/z.table"
  geomean "$tmp/z.table"
  ;;
lua)
  [ -f "$LUA" ] || { echo "lua: not built"; continue; }
  echo; echo "lua: training on $TRAIN (exact counts)"
  for s in $TRAIN; do
    "$AXP" run --exact "$tmp/$s.exact" -- "$LUA" "tests/workloads/lua/$s.lua" >/dev/null ||
      { echo "training run $s failed"; exit 1; }
  done
  ex=(); for s in $TRAIN; do ex+=(--exact "$tmp/$s.exact"); done
  optimize lua "$LUA" "${ex[@]}"
  "$OPT" "$LUA" "${ex[@]}" --split-warm -o "$tmp/lua.warm" >/dev/null ||
    { echo "optimize-image --split-warm failed"; exit 1; }
  header
  for s in $HELD; do
    f=scripts/bench/lua/$s.lua
    for b in O2 exact nocol warm; do
      img=$LUA; [ $b != O2 ] && img=$tmp/lua.$b
      "$AXP" run --timing --stats="$tmp/$s.$b.json" -- "$img" "$f" >"$tmp/$s.$b.out"
      echo $? >>"$tmp/$s.$b.out"
      cmp -s "$tmp/$s.O2.out" "$tmp/$s.$b.out" || echo "FAIL lua $s: $b output differs from -O2"
      row "$s" "$b"
    done
  done | tee "$tmp/lua.table"
  geomean "$tmp/lua.table"
  ;;
*) echo "unknown workload $w"; exit 1 ;;
esac; done
