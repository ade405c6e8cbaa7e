#!/bin/bash
# cpo disasm must agree with alpha-linux-gnu-objdump -d on at least 99.9% of
# the instructions of every workload and test program, and every text word
# must re-encode to itself.
set -eu
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
images=()
for f in "$BUILD"/workloads/bin/* "$BUILD"/programs/*-dyn "$BUILD"/programs/*-static; do
  [ -f "$f" ] && images+=("$f")
done
[ ${#images[@]} -gt 0 ] || { echo "no programs or workloads built"; exit 77; }
python3 tests/tools/compare_disasm.py "$BUILD/bin/cpo" 99.9 "${images[@]}"
