#!/bin/bash
# Decoder and printer throughput: cpo disasm over each workload beside
# alpha-linux-gnu-objdump -d on the same file, wall time and ratio.
set -eu
BUILD=${BUILD:-build}
printf '%-28s %10s %12s %12s %8s\n' image instructions "cpo s" "objdump s" ratio
for f in "$BUILD"/workloads/bin/lua "$BUILD"/workloads/bin/zstd "$BUILD"/workloads/bin/speedtest1; do
  [ -f "$f" ] || { echo "$(basename "$f"): not built (make workloads)"; continue; }
  t0=$(date +%s.%N); n=$("$BUILD"/bin/cpo disasm "$f" | grep -c '^[0-9a-f]*: '); t1=$(date +%s.%N)
  alpha-linux-gnu-objdump -d "$f" >/dev/null; t2=$(date +%s.%N)
  awk -v f="$(basename "$f")" -v n="$n" -v a="$t0" -v b="$t1" -v c="$t2" \
    'BEGIN { printf "%-28s %10d %12.3f %12.3f %8.2f\n", f, n, b-a, c-b, (b-a)/(c-b) }'
done
