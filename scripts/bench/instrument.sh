#!/bin/bash
# Overhead of instrumented binaries (docs/instrument.md): lua, original
# and `optimize-image --instrument paths` (counts and cycles per path),
# side by side on axp (simulated cycles and instructions from the EV5
# model, exact) and under qemu-alpha (host seconds, best of RUNS).  The
# profile is written to a temporary file in every instrumented run.
# Calling-context instrumentation (`--instrument cct`) does not exist yet.
set -eu
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
AXP=$BUILD/bin/axp
OPT=$BUILD/bin/optimize-image
LUA=$BUILD/workloads/bin/lua
ROOT=${CPO_ALPHA_SYSROOT:-/usr/alpha-linux-gnu}
RUNS=${RUNS:-3}
[ -x "$AXP" ] && [ -x "$OPT" ] || { echo "axp or optimize-image not built (make)"; exit 0; }
[ -x "$LUA" ] || { echo "lua not built (make workloads)"; exit 0; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$OPT" "$LUA" --instrument paths -o "$tmp/lua.paths" >"$tmp/log" || { cat "$tmp/log"; exit 1; }
grep '^instrumented' "$tmp/log"

stat() {    # stat KEY FILE: a top-level number of axp's --stats JSON
  sed -n "s/^ *\"$1\": \([0-9]*\),/\1/p" "$2" | head -1
}
best() {    # best seconds of RUNS runs of a command
  local b=999999
  for _ in $(seq "$RUNS"); do
    rm -f "$tmp/prof"*
    /usr/bin/time -f "%e" -o "$tmp/t" env CPO_PROFILE_OUT="$tmp/prof" "$@" >/dev/null 2>&1 </dev/null || true
    b=$(awk -v a="$(cat "$tmp/t")" -v b="$b" 'BEGIN { print (a < b ? a : b) }')
  done
  echo "$b"
}

printf '%-18s %13s %13s %7s %12s %12s %7s %8s %8s %7s\n' workload "axp cycles" "(paths)" ratio \
  "insns" "(paths)" ratio "qemu s" "(paths)" ratio
for s in fib closures sort; do
  script=$PWD/tests/workloads/lua/$s.lua
  [ -f "$script" ] || continue
  rm -f "$tmp/prof"*
  "$AXP" run --timing --stats="$tmp/o.json" "$LUA" "$script" >/dev/null 2>&1 </dev/null
  CPO_PROFILE_OUT="$tmp/prof" "$AXP" run --timing --stats="$tmp/i.json" "$tmp/lua.paths" "$script" \
    >/dev/null 2>&1 </dev/null
  qo=n/a qi=n/a
  if command -v qemu-alpha >/dev/null; then
    qo=$(best qemu-alpha -L "$ROOT" "$LUA" "$script")
    qi=$(best qemu-alpha -L "$ROOT" "$tmp/lua.paths" "$script")
  fi
  awk -v n="lua $s.lua" -v co="$(stat cycles "$tmp/o.json")" -v ci="$(stat cycles "$tmp/i.json")" \
      -v io="$(stat instructions "$tmp/o.json")" -v ii="$(stat instructions "$tmp/i.json")" \
      -v qo="$qo" -v qi="$qi" 'BEGIN {
    q = (qo + 0 > 0) ? sprintf("%7.2f", qi / qo) : "    n/a"
    printf "%-18s %13.0f %13.0f %7.2f %12.0f %12.0f %7.2f %8s %8s %s\n", n, co, ci, ci / co, io, ii, ii / io, qo, qi, q }'
done
echo "(qemu columns: host wall seconds, best of $RUNS, on a shared machine)"
