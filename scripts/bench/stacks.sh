#!/bin/bash
# What --stacks costs on axp.  speedtest1 (static, --size $STACKS_BENCH_SIZE,
# default 5) and lua-static running fib.lua, each three ways side by side:
# --pmu cycles (the model on its own thread when the host has two CPUs),
# --pmu cycles with the model inline (AXP_MODEL_THREAD=0, what --stacks
# forces), and --pmu cycles --stacks.  Prints wall and CPU seconds and the
# ratios to the inline run, whether the simulated cycles and samples are
# the same (they must be: the walk costs no simulated time), the frames
# per stack and the share of stacks complete (reaching the start code).
set -eu
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
AXP=$BUILD/bin/axp
W=$BUILD/workloads/bin
SIZE=${STACKS_BENCH_SIZE:-5}
[ -x "$AXP" ] || { echo "axp not built (make)"; exit 0; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export AXP_EPOCH=1700000000
stat() {   # file python-expression
  python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}
run() {   # name env axp-options -- program args: "wall cpu"
  local name=$1 env=$2
  shift 2
  /usr/bin/time -f "%e %U %S" -o "$tmp/$name.time" env $env \
    "$AXP" run --stats="$tmp/$name.json" "$@" >/dev/null 2>"$tmp/$name.err" </dev/null ||
    { echo "$name: axp failed:"; cat "$tmp/$name.err"; return 1; }
  awk '{ printf "%s %.2f\n", $1, $2 + $3 }' "$tmp/$name.time"
}
bench() {   # label program args...
  local label=$1
  shift
  [ -x "$1" ] || { echo "$label: $1 not built (make workloads)"; return 0; }
  # the guest sees axp's environment: the same variable, of the same
  # length, in every arm keeps the runs instruction for instruction alike
  read -r tw tc < <(run thread AXP_MODEL_THREAD=1 --pmu cycles "$@")
  read -r iw ic < <(run inline AXP_MODEL_THREAD=0 --pmu cycles "$@")
  read -r sw sc < <(run stacks AXP_MODEL_THREAD=1 --pmu cycles --stacks "$@")
  echo "$label: $(stat "$tmp/stacks.json" 'd["cycles"]') cycles, $(stat "$tmp/stacks.json" 'sum(d["samples"].values())') samples"
  printf '  %-34s %9s %9s %12s %12s\n' mode "wall s" "cpu s" "wall/inline" "cpu/inline"
  for r in "--pmu cycles (model thread):$tw:$tc" "--pmu cycles (model inline):$iw:$ic" "--pmu cycles --stacks:$sw:$sc"; do
    IFS=: read -r n w c <<< "$r"
    awk -v n="$n" -v w="$w" -v c="$c" -v iw="$iw" -v ic="$ic" \
      'BEGIN { printf "  %-34s %9.2f %9.2f %12.3f %12.3f\n", n, w, c, w / iw, c / ic }'
  done
  local same=yes a
  for a in thread inline; do
    [ "$(stat "$tmp/$a.json" '(d["cycles"], d["samples"])')" = "$(stat "$tmp/stacks.json" '(d["cycles"], d["samples"])')" ] || same=no
  done
  echo "  the same simulated cycles and samples in all three: $same"
  echo "  stacks: $(stat "$tmp/stacks.json" '"%.1f frames each, %.3f%% complete, ends %s" % (d["stacks"]["frames"] / max(1, d["stacks"]["samples"]), 100.0 * d["stacks"]["ends"]["complete"] / max(1, d["stacks"]["samples"]), d["stacks"]["ends"])')"
}
bench "speedtest1-static --size $SIZE" "$W/speedtest1-static" --size "$SIZE"
bench "lua-static fib.lua" "$W/lua-static" tests/workloads/lua/fib.lua
