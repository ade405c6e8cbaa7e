#!/bin/bash
# Rewriter throughput: optimize-image on each workload with the identity plan
# and a random plan (seed 1), best wall time of 3 runs, and megabytes of code
# rewritten per second (code moved, as optimize-image reports it).  The
# acceptance figure: speedtest1 in under 2 s.
set -u
BUILD=${BUILD:-build}
OPT=$BUILD/bin/optimize-image
[ -x "$OPT" ] || { echo "optimize-image not built (make)"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cpo-bench-rewrite.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
printf '%-20s %-9s %10s %8s %10s\n' image plan "code KB" "best s" "MB/s"
for w in lua zstd speedtest1 lua-static zstd-static speedtest1-static; do
  f=$BUILD/workloads/bin/$w
  [ -f "$f" ] || { echo "$w: not built (make workloads)"; continue; }
  for plan in identity random; do
    args=(--plan "$plan"); [ "$plan" = random ] && args+=(--seed 1)
    best=""
    for _ in 1 2 3; do
      t0=$(date +%s%N)
      "$OPT" "$f" "${args[@]}" -o "$tmp/out" >"$tmp/log" 2>&1 || { cat "$tmp/log"; exit 1; }
      t=$(( $(date +%s%N) - t0 ))
      [ -z "$best" ] || [ "$t" -lt "$best" ] && best=$t
    done
    bytes=$(sed -n 's/^code: \([0-9]*\) bytes moved.*/\1/p' "$tmp/log")
    awk -v w="$w" -v p="$plan" -v b="$bytes" -v t="$best" \
      'BEGIN { printf "%-20s %-9s %10.0f %8.3f %10.2f\n", w, p, b / 1024, t / 1e9, b / 1048576 / (t / 1e9) }'
  done
done
