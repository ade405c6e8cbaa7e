#!/bin/bash
# Seed 004's hot-path table for our workloads, from exact path profiles
# (axp --paths): for D-cache and I-cache misses (and cycles), how many hot
# paths (each at least 1% of the run's misses) there are and what share
# they cover, split into dense (misses per instruction above the run's
# average) and sparse; and what following paths costs axp, side by side
# with a timed run of the same workload (host CPU seconds).  Workloads:
# PATHS_WORKLOADS (default: lua on closures.lua and sort.lua, speedtest1
# --size 1, zstd -3 on 2 MB).
set -u
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
AXP=$BUILD/bin/axp CPO=$BUILD/bin/cpo WL=$BUILD/workloads
[ -x "$AXP" ] && [ -x "$CPO" ] || { echo "tools not built (make)"; exit 0; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ -x "$WL/host/datagen" ] && "$WL/host/datagen" -g2M -P40 -s7 >"$tmp/z.dat" 2>/dev/null
WORKLOADS=${PATHS_WORKLOADS:-"lua-closures lua-sort speedtest1 zstd"}
cmd_of() {
  case $1 in
    lua-*) echo "$WL/bin/lua tests/workloads/lua/${1#lua-}.lua" ;;
    speedtest1) echo "$WL/bin/speedtest1 --size 1" ;;
    zstd) echo "$WL/bin/zstd -3 -c $tmp/z.dat" ;;
  esac
}
cpu() { awk '{ printf "%.2f", $1 + $2 }' "$1"; }

echo "hot: paths with at least 1% of the metric each, and their share; dense/sparse: above/below the run's metric per instruction"
printf '%-13s %-7s %10s %7s %12s %12s %12s\n' workload metric total "paths" hot dense sparse
for w in $WORKLOADS; do
  cmd=$(cmd_of "$w")
  prog=${cmd%% *}
  [ -x "$prog" ] || { echo "$w: not built (make workloads)"; continue; }
  # shellcheck disable=SC2086
  /usr/bin/time -f "%U %S" -o "$tmp/$w.t0" "$AXP" run --timing $cmd >/dev/null 2>&1 </dev/null
  # shellcheck disable=SC2086
  if ! /usr/bin/time -f "%U %S" -o "$tmp/$w.t1" "$AXP" run --paths "$tmp/$w.paths" --cct "$tmp/$w.cct" \
         $cmd >/dev/null 2>"$tmp/$w.err" </dev/null; then
    echo "$w: axp --paths failed: $(tail -1 "$tmp/$w.err")"; continue
  fi
  # the same run again with exact counts: the paths through every block of
  # every image add up to its count
  # shellcheck disable=SC2086
  "$AXP" run --paths "$tmp/$w.xpaths" --exact "$tmp/$w.exact" $cmd >/dev/null 2>&1 </dev/null
  awk '$1 == "image" { print $3 }' "$tmp/$w.xpaths" | while read -r im; do
    host=$im
    [ -f "$host" ] || host=/usr/alpha-linux-gnu$im
    "$CPO" paths "$host" --from "$tmp/$w.xpaths" --exact "$tmp/$w.exact" 2>&1 | tail -1
  done | awk -v w="$w" '{ p += $1; b += $3; d += $5 } END { printf "%s: exact check over every image: %d procedures, %d blocks, %d differ\n", w, p, b, d }' 
  for m in dmiss imiss cycles; do
    "$CPO" paths "$prog" --from "$tmp/$w.paths" --metric "$m" --top 1 2>/dev/null | head -2 >"$tmp/h" || true
    # "METRIC: T in all, R per instruction; N paths ran" / "hot paths ...: H with S%; dense D with S%; sparse P with S%"
    awk -v w="$w" -v m="$m" 'NR == 1 { total = $2; paths = $(NF - 2) }
      NR == 2 { hot = $7 " " $9; dense = $11 " " $13; sparse = $15 " " $17; gsub(/;/, "", hot); gsub(/;/, "", dense) }
      END { printf "%-13s %-7s %10s %7s %12s %12s %12s\n", w, m, total, paths, hot, dense, sparse }' "$tmp/h"
  done
  echo "$w: --timing $(cpu "$tmp/$w.t0") s, --paths --cct $(cpu "$tmp/$w.t1") s of host CPU" \
       "($(awk -v a="$(cpu "$tmp/$w.t1")" -v b="$(cpu "$tmp/$w.t0")" 'BEGIN { printf "%.1f", a / b }')x);" \
       "$(grep -c '^node' "$tmp/$w.cct") contexts"
done
