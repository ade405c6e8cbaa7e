#!/bin/bash
# make bench: every scripts/bench/*.sh in turn.  Each prints figures and
# ratios measured side by side in one run; nothing here passes or fails on
# speed (the machines are shared and noisy).  A benchmark that cannot run
# (missing workload) says so and the others still run.
set -u
cd "$(dirname "$0")/.."
export BUILD=${BUILD:-build}
status=0
for b in scripts/bench/*.sh; do
  [ -f "$b" ] || continue
  echo "=== $(basename "$b" .sh)"
  bash "$b" || { echo "benchmark $(basename "$b") failed"; status=1; }
  echo
done
exit $status
