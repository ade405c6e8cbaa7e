#!/bin/bash
# axp against qemu-alpha: the same speedtest1 run (--size 5, dynamic build)
# under each, one after the other, best of RUNS.  Prints wall and CPU time
# of both, the ratio axp/qemu (target: under 10) and axp's guest
# instructions per second of wall time.  The lua fib script is a second,
# smaller comparison.
set -eu
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
AXP=$BUILD/bin/axp
BIN=$BUILD/workloads/bin
ROOT=${CPO_ALPHA_SYSROOT:-/usr/alpha-linux-gnu}
RUNS=${RUNS:-3}
[ -x "$AXP" ] || { echo "axp not built (make)"; exit 0; }
command -v qemu-alpha >/dev/null || { echo "qemu-alpha not installed"; exit 0; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# best ROUNDS wall and user seconds of a command: "wall user"
best() {
  local bw=999999 bu=0
  for _ in $(seq "$RUNS"); do
    /usr/bin/time -f "%e %U" -o "$tmp/t" "$@" >/dev/null 2>"$tmp/err" </dev/null || true
    read -r w u <"$tmp/t"
    if awk -v a="$w" -v b="$bw" 'BEGIN { exit !(a < b) }'; then bw=$w bu=$u; fi
  done
  echo "$bw $bu"
}

printf '%-22s %9s %9s %9s %9s %8s %14s\n' workload "qemu s" "(cpu)" "axp s" "(cpu)" ratio "axp insns/s"
bench() {
  local name=$1
  shift
  [ -x "$1" ] || { echo "$name: $1 not built (make workloads)"; return; }
  read -r qw qu < <(best qemu-alpha -L "$ROOT" "$@")
  read -r aw au < <(best "$AXP" run "$@")
  "$AXP" run --stats="$tmp/stats.json" "$@" >/dev/null 2>&1 </dev/null || true
  local insns
  insns=$(sed -n 's/^ *"instructions": \([0-9]*\),/\1/p' "$tmp/stats.json" | head -1)
  awk -v n="$name" -v qw="$qw" -v qu="$qu" -v aw="$aw" -v au="$au" -v i="$insns" 'BEGIN {
    printf "%-22s %9.2f %9.2f %9.2f %9.2f %8.2f %14.0f\n", n, qw, qu, aw, au, aw / qw, i / aw }'
}
bench "speedtest1 --size 5" "$BIN/speedtest1" --size 5
(cd tests/workloads/lua 2>/dev/null && bench "lua fib.lua" "$BIN/lua" fib.lua) || true
echo "(the machines are shared: wall times vary; cpu columns are user time)"
