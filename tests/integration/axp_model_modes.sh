#!/bin/bash
# How the cycle model is run changes nothing: each run below is made three
# ways, the default (the model on its own host thread, using blocks'
# static schedules: AXP_MODEL_THREAD=1), with AXP_SCHEDULES=0 (the model
# works through every instruction) and with AXP_MODEL_THREAD=0 (the model
# inline in the executor), and all three must give the same output, the
# same --stats (every counter: cycles, stalls, misses, samples, driver)
# and the same samples in the same order.  The runs cover one and several
# CPUs, threads, fork and exec, signals, every sampled event, and changed
# EV5 parameters.
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
AXP=$BUILD/bin/axp P=$BUILD/programs W=$BUILD/workloads/bin
[ -x "$AXP" ] || { echo "$AXP not built (make all builds it)"; exit 77; }
[ -f "$P/threads-dyn" ] || { echo "$P/threads-dyn not built (make programs builds it)"; exit 77; }
[ -x "$W/lua" ] || { echo "$W/lua not built (make workloads builds it)"; exit 77; }

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
check() {   # what, command...
  local what=$1; shift
  if "$@"; then echo "ok   $what"; pass=$((pass + 1)); else echo "FAIL $what"; fail=$((fail + 1)); fi
}
same() { [ -s "$1" ] && [ -s "$2" ] && cmp -s "$1" "$2"; }
# the stats without what depends on the host (times, the region's path)
canon() {
  python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for k in ("host_seconds", "instructions_per_second"):
    d.pop(k, None)
if isinstance(d.get("driver"), dict):
    d["driver"].pop("region", None)
print(json.dumps(d, sort_keys=True, indent=1))' "$1"
}

seq 1 200000 > "$T/input"
cat > "$T/loop.lua" <<'LUA'
local t, s = {}, 0
for i = 1, 200000 do t[i % 1000] = (t[i % 1000] or 0) + i; s = s + (i * 7) % 13 end
print(s, #t)
LUA
runs=(
  "lua|--pmu cycles,dmiss,imiss,branchmp,jsrmp|$W/lua $T/loop.lua"
  "lua-narrow|--ev5 issue_width=2 --ev5 write_buffer_entries=1 --ev5 icache.line=64 --pmu cycles:4000,smiss|$W/lua $T/loop.lua"
  "zstd-4cpu|--cpus 4 --pmu cycles,dtbmiss,itbmiss|$W/zstd -q -c -T2 $T/input"
  "threads|--cpus 2 --pmu cycles:5000,issues|$P/threads-dyn"
  "forkexec|--cpus 4 --timing|$P/forkexec-dyn"
  "signals|--pmu cycles:3000|$P/signals-dyn"
  "copyloop|--timing --ev5 bcache.size=0|$P/copyloop-dyn"
  "fpmath|--pmu cycles:2000,dmiss|$P/fpmath-dyn"
)
for r in "${runs[@]}"; do
  IFS='|' read -r name opts prog <<< "$r"
  for mode in default nosched inline; do
    sched=1 thread=1
    [ $mode = nosched ] && sched=0
    [ $mode = inline ] && thread=0
    log=(); case $opts in *--pmu*) log=(--sample-log "$T/$name.$mode.log") ;; esac
    # shellcheck disable=SC2086
    AXP_EPOCH=1000 AXP_SCHEDULES=$sched AXP_MODEL_THREAD=$thread "$AXP" run $opts \
      --stats="$T/$name.$mode.json" "${log[@]}" $prog > "$T/$name.$mode.out" 2>&1
    echo $? > "$T/$name.$mode.rc"
    canon "$T/$name.$mode.json" > "$T/$name.$mode.canon" 2>/dev/null
  done
  check "$name: every run succeeds" \
    [ "$(cat "$T/$name.default.rc" "$T/$name.nosched.rc" "$T/$name.inline.rc")" = "$(printf '0\n0\n0')" ]
  cycles=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["cycles"])' "$T/$name.default.json" 2>/dev/null)
  for mode in nosched inline; do
    check "$name, $mode: same output" cmp -s "$T/$name.default.out" "$T/$name.$mode.out"
    check "$name, $mode: same stats ($cycles cycles)" same "$T/$name.default.canon" "$T/$name.$mode.canon"
    case $opts in
      *--pmu*) check "$name, $mode: same samples in the same order ($(grep -vc '^#' "$T/$name.default.log"))" \
                 same "$T/$name.default.log" "$T/$name.$mode.log" ;;
    esac
  done
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
