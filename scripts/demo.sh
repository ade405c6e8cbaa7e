#!/bin/bash
# The main job, on the embedded defaults: what cpo can do today, shown on
# the lua 5.4 workload built for Alpha.  Each later capability (profiling on
# axp, optimize-image, diff reports) extends this script.
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
CPO=$BUILD/bin/cpo
IMG=$BUILD/workloads/bin/lua
[ -f "$IMG" ] || IMG=$BUILD/programs/bytecode-dyn

step() { printf '\n==== %s\n' "$*"; }

step "The image: $IMG"
"$CPO" info "$IMG" | sed -n '1,9p'

step "Its 15 largest procedures (bytes, instructions)"
"$CPO" syms "$IMG" | awk '$4 == "FUNC" && $3 > 0 && $8 != "UND" { print $3, $3 / 4, $9 }' |
  sort -k1,1nr | head -15 | awk '{ printf "  %8d %7d  %s\n", $1, $2, $3 }'
total=$("$CPO" syms "$IMG" | awk '$4 == "FUNC" && $3 > 0 && $8 != "UND"' | wc -l)
echo "  ($total procedures with code)"

step "Disassembly of main (first 25 instructions), checked against objdump's syntax"
"$CPO" disasm --proc main "$IMG" | grep -E '^[0-9a-f]+: ' | head -25

step "Every text word decodes and re-encodes to itself"
"$CPO" disasm --verify "$IMG" 2>&1 >/dev/null | sed 's/^cpo: /  /'

script=$(ls tests/workloads/lua/*.lua 2>/dev/null | head -1 || true)
if [ "$(basename "$IMG")" = lua ] && [ -n "$script" ]; then
  step "lua running $script under qemu-alpha (the reference executor)"
  scripts/qemu-run.sh "$IMG" "$script" | head -8
fi
