#!/bin/bash
# Overhead of instrumented binaries (docs/instrument.md): lua, original
# and `optimize-image --instrument paths` (counts and cycles per path),
# `--instrument cct` (the calling context tree, calls and cycles per
# context) and `--instrument paths,cct` (both), side by side on axp
# (simulated cycles and instructions from the EV5 model, exact) and under
# qemu-alpha (host seconds, best of RUNS).  The profile is written to a
# temporary file in every instrumented run.
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
modes=(paths cct paths,cct)
for m in "${modes[@]}"; do
  "$OPT" "$LUA" --instrument "$m" -o "$tmp/lua.$m" >"$tmp/log" || { cat "$tmp/log"; exit 1; }
  echo "$m: $(grep '^instrumented' "$tmp/log")"
done

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
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 > 0) printf "%.2f", a / b; else printf "n/a" }'; }

axp_rows="" insn_rows="" qemu_rows=""
for s in fib closures sort; do
  script=$PWD/tests/workloads/lua/$s.lua
  [ -f "$script" ] || continue
  "$AXP" run --timing --stats="$tmp/o.json" "$LUA" "$script" >/dev/null 2>&1 </dev/null
  co=$(stat cycles "$tmp/o.json") io=$(stat instructions "$tmp/o.json")
  qo=n/a
  command -v qemu-alpha >/dev/null && qo=$(best qemu-alpha -L "$ROOT" "$LUA" "$script")
  a=$(printf '%-14s %14s' "$s.lua" "$co") i=$(printf '%-14s %14s' "$s.lua" "$io")
  q=$(printf '%-14s %8s' "$s.lua" "$qo")
  for m in "${modes[@]}"; do
    rm -f "$tmp/prof"*
    CPO_PROFILE_OUT="$tmp/prof" "$AXP" run --timing --stats="$tmp/i.json" "$tmp/lua.$m" "$script" \
      >/dev/null 2>&1 </dev/null
    ci=$(stat cycles "$tmp/i.json") ii=$(stat instructions "$tmp/i.json")
    a+=$(printf ' %14s %6s' "$ci" "$(ratio "$ci" "$co")")
    i+=$(printf ' %14s %6s' "$ii" "$(ratio "$ii" "$io")")
    qi=n/a
    command -v qemu-alpha >/dev/null && qi=$(best qemu-alpha -L "$ROOT" "$tmp/lua.$m" "$script")
    q+=$(printf ' %8s %6s' "$qi" "$(ratio "$qi" "$qo")")
  done
  axp_rows+="$a"$'\n' insn_rows+="$i"$'\n' qemu_rows+="$q"$'\n'
done
hdr() { printf "%-14s %14s" lua "$1"; for m in "${modes[@]}"; do printf " %14s %6s" "$m" ratio; done; echo; }
echo "axp cycles (EV5 model):"
hdr original; printf '%s' "$axp_rows"
echo "axp instructions:"
hdr original; printf '%s' "$insn_rows"
echo "qemu-alpha seconds (host wall, best of $RUNS, on a shared machine):"
printf "%-14s %8s" lua original; for m in "${modes[@]}"; do printf " %8s %6s" "$m" ratio; done; echo
printf '%s' "$qemu_rows"
