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

# ---- profiling on axp, DCPI's way ----------------------------------------
AXP=$BUILD/bin/axp
CPOD=$BUILD/bin/cpod
if [ "$(basename "$IMG")" = lua ] && [ -n "$script" ] && [ -x "$AXP" ] && [ -x "$CPOD" ]; then
  tmp=$(mktemp -d)
  # the daemon's regions live on /dev/shm, outside the database: remove them too
  demo_cleanup() {
    "$CPO" quit --db "$tmp/db" >/dev/null 2>&1 || true
    for l in "$tmp"/db/.cpod/*/regions; do
      r=$(readlink "$l") && case "$r" in /dev/shm/cpod-*) rm -rf "$r";; esac
    done
    rm -rf "$tmp"
  }
  trap demo_cleanup EXIT

  step "The same lua on axp's EV5 cycle model"
  "$AXP" run --timing --stats="$tmp/t.json" "$IMG" "$script" >/dev/null
  python3 - "$tmp/t.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print("  %d instructions, %d cycles, CPI %.2f" % (d["instructions"], d["cycles"], d["cpi"]))
print("  I-cache misses %d, D-cache misses %d, branch mispredicts %d, jump mispredicts %d"
      % (d["icache_misses"], d["dcache_misses"], d["branch_mispredicts"], d["jump_mispredicts"]))
st = sorted(d["stalls"].items(), key=lambda kv: -kv[1])[:5]
print("  stall cycles: " + ", ".join("%s %d" % kv for kv in st))
PY

  step "Profiling it: cpod, axp --pmu cycles,imiss --collector, cpo flush"
  "$CPOD" --db "$tmp/db" >"$tmp/cpod.out" 2>&1 &
  for _ in $(seq 50); do [ -e "$tmp/db/.cpod" ] && "$CPO" flush --db "$tmp/db" >/dev/null 2>&1 && break; sleep 0.2; done
  "$AXP" run --cpus 2 --pmu cycles:4000,imiss:64 --collector "$tmp/db" --stats="$tmp/p.json" \
    "$IMG" "$script" >/dev/null
  "$CPO" flush --db "$tmp/db" | sed 's/^/  /'
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("  samples produced:", d["samples"])' "$tmp/p.json"

  step "cpo prof: where the cycles went"
  "$CPO" prof --db "$tmp/db" --limit 12

  top=$("$CPO" prof --db "$tmp/db" --json --limit 1 | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["procedure"])')
  step "cpo list $top: its hottest instructions"
  "$CPO" list "$top" --db "$tmp/db" | sort -k2,2nr 2>/dev/null | head -12
  "$CPO" quit --db "$tmp/db" >/dev/null 2>&1 || true
  wait
fi

# ---- the whole loop: profile, optimize, redeploy, report -------------------
if [ -x "$BUILD/workloads/bin/lua" ] && [ -x "$BUILD/workloads/bin/speedtest1" ] &&
   [ -x "$BUILD/workloads/bin/zstd" ] && command -v qemu-alpha >/dev/null; then
  step "The whole loop: a week of production under cpo serve (make week)"
  echo "  lua, speedtest1 and zstd profiled by cpod day after day; cpo serve optimizes,"
  echo "  checks on axp and qemu-alpha, deploys, judges and rolls back, unattended"
  scripts/week.sh | sed 's/^/  /'
fi
