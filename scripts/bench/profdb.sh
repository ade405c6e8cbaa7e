#!/bin/bash
# Profile database: the size of a realistic profile (30,000 sampled offsets
# in lua's text) beside the image, beside plain (offset, count) pairs and
# beside our encoding before zstd; then merge throughput into a scratch
# database (set TMPDIR to measure another disk).
set -eu
BUILD=${BUILD:-build}
B=$BUILD/tests/profdb/profdb-bench
[ -x "$B" ] || { echo "$B not built (make bench builds it)"; exit 1; }
img=$BUILD/workloads/bin/lua
[ -f "$img" ] || { echo "lua: not built (make workloads)"; exit 0; }
"$B" "$img"
