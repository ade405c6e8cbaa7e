#!/bin/bash
# optimize-image --instrument paths on the test programs (docs/instrument.md).
# Static programs run on axp, dynamic ones under qemu-alpha; each
# instrumented program must print what tests/programs/NAME.expected says,
# exit as the original does, pass `cpo addrmap --verify`, write a profile
# `cpo paths ORIGINAL --from` reads, and count, for every procedure it
# counts, exactly the complete paths `axp run --paths` counts in the
# original on the same input (scripts/paths-compare.py says which
# procedures are not compared, and why).  Both runs get the same clean
# environment and program names of the same length, so glibc's start-up
# sees the same strings.  Two static programs are also instrumented under
# a random layout.  threads (static and dynamic) is counted per thread.
# Exit 77 when the programs are not built.
set -u
cd "$(dirname "$0")/../.."
# shellcheck source=tests/integration/lib/instrument.sh
. tests/integration/lib/instrument.sh

# check NAME KIND PLAN RUNNER...
check() {
  local name=$1 kind=$2 plan=$3 want=0 w
  shift 3
  local orig=$P/$name-$kind label="$name-$kind ($plan)"
  [ -f "tests/programs/$name.status" ] && want=$(cat "tests/programs/$name.status")
  w=$tmp/$name-$kind-$plan
  mkdir -p "$w"
  # Same-length names: argv[0] and AT_EXECFN are the same length in both runs.
  cp "$orig" "$w/prog.orig"
  local pargs=(--plan identity)
  [ "$plan" = identity ] || pargs=(--plan random --seed "$plan")
  if ! "$OPT" "$orig" --instrument paths "${pargs[@]}" -o "$w/prog.inst" >"$w/log" 2>&1; then
    fail "$label: optimize-image"; cat "$w/log"; return
  fi
  "$CPO" addrmap "$w/prog.inst" --verify "$orig" >"$w/verify" 2>&1 || { fail "$label: verify"; tail -5 "$w/verify"; }
  # threads: axp switches threads only when they block (an endless
  # quantum), so the slower instrumented run interleaves its threads as
  # the original does.
  local q=()
  [ "$name" = threads ] && [ "$1" = "$AXP" ] && q=(--quantum 1000000000) && set -- "$AXP" run "${q[@]}" --
  run "$name" "$w/prog.orig" "$w/orig" "$AXP" run "${q[@]}" --paths "$w/exact" --
  [ "$(cat "$dir/status")" = "$want" ] || { fail "$label: the original exits $(cat "$dir/status") on axp"; return; }
  run "$name" "$w/prog.inst" "$w/prof" "$@"
  if [ "$(cat "$dir/status")" != "$want" ] || ! cmp -s "$dir/out" "tests/programs/$name.expected"; then
    fail "$label: instrumented: status $(cat "$dir/status"), want $want; or stdout differs"
    diff "tests/programs/$name.expected" "$dir/out" | head -5; tail -3 "$dir/err"; return
  fi
  [ -f "$w/prof" ] || { fail "$label: no profile written"; return; }
  if ! "$CPO" paths "$orig" --from "$w/prof" >"$w/report" 2>&1; then
    fail "$label: cpo paths cannot read the profile"; tail -3 "$w/report"; return
  fi
  # Forked children and exec'd images write FILE.PID.
  local profs=("$w/prof") f
  for f in "$w"/prof.*; do [ -e "$f" ] && profs+=("$f"); done
  # forkexec's second child kills itself with SIGTERM: a process ended by
  # a signal writes no profile, so its counts may only be lower.
  local mode=()
  [ "$name" = forkexec ] && mode=(--at-most)
  # signals waits in sigsuspend for a 20 ms timer, which fires at another
  # point of the slower instrumented run: sigsuspend may find it pending.
  [ "$name" = signals ] && mode=(--skip __sigsuspend)
  # threads under qemu-alpha: its threads run at once on the host, and how
  # often they wait for each other (locks, condition variables, futexes,
  # the token ring in run) depends on the timing.
  [ "$name-$kind" = threads-dyn ] && mode=(--skip-matching 'lock|cond|futex|cleanup|join|cancel|^run$')
  if ! python3 scripts/paths-compare.py "${mode[@]}" "$w/exact" "${profs[@]}" >"$w/cmp" 2>&1; then
    fail "$label: path counts"; head -10 "$w/cmp"; return
  fi
  passed=$((passed + 1))
  echo "$label: $(tail -1 "$w/cmp"); $(grep -E '^instrumented' "$w/log" | sed 's/^instrumented: //')"
}

for name in intloop recursion funcptr bytecode indjump fpmath malloc stdio setjmp signals forkexec threads; do
  check "$name" static identity "$AXP" run --
done
for name in intloop funcptr; do
  check "$name" static 1 "$AXP" run --
done
# forkexec re-executes itself, which qemu-user cannot: its dynamic build
# runs on axp.
check forkexec dyn identity "$AXP" run --
if [ $run_qemu = 1 ]; then
  for name in intloop recursion funcptr bytecode setjmp signals stdio threads; do
    check "$name" dyn identity "$ROOT/scripts/qemu-run.sh"
  done
fi
# A profile that cannot be made: the program is unchanged, stderr says so.
if [ -f "$tmp/intloop-static-identity/prog.inst" ]; then
  run intloop "$tmp/intloop-static-identity/prog.inst" "$tmp/no/such/dir/prof" "$AXP" run --
  if [ "$(cat "$dir/status")" = 0 ] && cmp -s "$dir/out" tests/programs/intloop.expected &&
     grep -q "cannot create the path profile" "$dir/err"; then
    passed=$((passed + 1)); echo "intloop-static: an uncreatable profile is reported, the run unchanged"
  else
    fail "intloop-static: an uncreatable profile"; cat "$dir/err"
  fi
fi

# lua: output unchanged under qemu-alpha and on axp, a profile cpo paths
# reads.  (Its counts are compared in docs/instrument.md: axp's exact
# profile of closures.lua takes 14 s, too long here.)
LUA=$BUILD/workloads/bin/lua
if [ -x "$LUA" ]; then
  w=$tmp/lua
  mkdir -p "$w"
  if ! "$OPT" "$LUA" --instrument paths -o "$w/lua" >"$w/log" 2>&1; then
    fail "lua: optimize-image"; cat "$w/log"
  else
    runners=("$AXP run --")
    [ $run_qemu = 1 ] && runners+=("$ROOT/scripts/qemu-run.sh")
    for r in "${runners[@]}"; do
      rm -f "$w/prof"*
      # shellcheck disable=SC2086
      (cd "$w" && env -i PATH=/usr/bin:/bin CPO_PROFILE_OUT="$w/prof" timeout -k 5 60 $r "$w/lua" \
         "$ROOT/tests/workloads/lua/closures.lua" >"$w/out" 2>"$w/err")
      if ! cmp -s "$w/out" tests/workloads/lua/closures.expected; then
        fail "lua closures.lua ($r): output differs"; tail -3 "$w/err"
      elif ! "$CPO" paths "$LUA" --from "$w/prof" >"$w/report" 2>&1; then
        fail "lua closures.lua ($r): cpo paths cannot read the profile"; tail -3 "$w/report"
      else
        passed=$((passed + 1))
        echo "lua closures.lua ($(basename "${r%% *}")): output unchanged, $(grep -c '^proc' "$w/prof") procedures in the profile"
      fi
    done
  fi
fi
# lua counts exactly what axp counts once both heaps start at the same
# address.  The instrumented image is larger, so its heap starts higher,
# and lua hashes tables and closures used as keys by address: in other
# buckets they walk other chains and the collector runs at other times.
# axp --brk starts the original's heap where the instrumented image's
# starts; both run from the same path (lua interns argv[0]).  A short
# script that keys tables by tables and closures and collects them: with
# --brk every procedure counts as axp does, without it some differ.
if [ -x "$LUA" ] && [ -x "$w/lua" ]; then
  cat >"$w/heap.lua" <<'LUA'
local keys, t = {}, {}
for i = 1, 3000 do
  local k = (i % 3 == 0) and function() return i end or {i}
  keys[i] = k
  t[k] = i
end
local sum = 0
for i = 1, 3000, 7 do sum = sum + t[keys[i]] end
local seen, n = {}, 0
for i = 1, 2000 do
  local w = string.format("w%d", i * 7919 % 1000)
  if not seen[w] then seen[w] = true; n = n + 1 end
end
for i = 1, 3000, 2 do t[keys[i]] = nil end
collectgarbage()
local left = 0
for _ in pairs(t) do left = left + 1 end
print(sum, n, left)
LUA
  brk=$(scripts/image-end.py "$w/lua")
  mkdir -p "$w/run"
  cp "$w/lua" "$w/run/lua"
  (cd "$w" && env -i PATH=/usr/bin:/bin CPO_PROFILE_OUT="$w/heap.inst" timeout -k 5 60 "$AXP" run -- run/lua heap.lua >"$w/heap.out1" 2>&1)
  cp "$LUA" "$w/run/lua"
  (cd "$w" && env -i PATH=/usr/bin:/bin timeout -k 5 60 "$AXP" run --brk "$brk" --paths "$w/heap.exact" -- run/lua heap.lua >"$w/heap.out2" 2>&1)
  (cd "$w" && env -i PATH=/usr/bin:/bin timeout -k 5 60 "$AXP" run --paths "$w/heap.moved" -- run/lua heap.lua >/dev/null 2>&1)
  if ! cmp -s "$w/heap.out1" "$w/heap.out2" || ! grep -qx '643071	1000	1500' "$w/heap.out1"; then
    fail "lua heap.lua: output differs"; tail -3 "$w/heap.out1" "$w/heap.out2"
  elif ! python3 scripts/paths-compare.py "$w/heap.exact" "$w/heap.inst" >"$w/heap.cmp" 2>&1; then
    fail "lua heap.lua: path counts differ with the heaps at one address (--brk $brk)"; tail -5 "$w/heap.cmp"
  elif python3 scripts/paths-compare.py "$w/heap.moved" "$w/heap.inst" >"$w/heap.cmp2" 2>&1; then
    fail "lua heap.lua: path counts equal with the heaps apart: the check proves nothing"
  else
    passed=$((passed + 1))
    echo "lua heap.lua: $(tail -1 "$w/heap.cmp"); heaps apart: $(tail -1 "$w/heap.cmp2" | sed 's/procedures counted: //')"
  fi
fi
# zstd (dynamic) instrumented with paths and the tree, compressing 200 KB
# at -3: the same compressed bytes, and its paths and tree what axp counts
# in the original run with the same heap and path.
ZSTD=$BUILD/workloads/bin/zstd DATAGEN=$BUILD/workloads/host/datagen
if [ -x "$ZSTD" ] && [ -x "$DATAGEN" ]; then
  w=$tmp/zstd
  mkdir -p "$w/run"
  "$DATAGEN" -g200K -P40 -s3 >"$w/in" 2>/dev/null
  if ! "$OPT" "$ZSTD" --instrument paths,cct -o "$w/zstd" >"$w/log" 2>&1; then
    fail "zstd: optimize-image"; cat "$w/log"
  else
    brk=$(scripts/image-end.py "$w/zstd")
    cp "$w/zstd" "$w/run/zstd"
    (cd "$w" && env -i PATH=/usr/bin:/bin CPO_PROFILE_OUT="$w/inst" timeout -k 5 60 "$AXP" run -- run/zstd -q -3 -c in >"$w/out1" 2>"$w/err")
    cp "$ZSTD" "$w/run/zstd"
    (cd "$w" && env -i PATH=/usr/bin:/bin timeout -k 5 60 "$AXP" run --brk "$brk" --paths "$w/exact" --cct "$w/exact.cct" \
       -- run/zstd -q -3 -c in >"$w/out2" 2>>"$w/err")
    if ! cmp -s "$w/out1" "$w/out2" || [ ! -s "$w/out1" ]; then
      fail "zstd -3: output differs"; tail -3 "$w/err"
    elif ! python3 scripts/paths-compare.py "$w/exact" "$w/inst" >"$w/cmp" 2>&1 ||
         ! python3 scripts/cct-compare.py "$w/exact.cct" "$w/inst.cct" >"$w/ccmp" 2>&1; then
      fail "zstd -3: path counts or tree differ"; tail -3 "$w/cmp" "$w/ccmp"
    else
      passed=$((passed + 1))
      echo "zstd -3: $(tail -1 "$w/cmp"); $(tail -1 "$w/ccmp")"
    fi
  fi
fi
echo "instrumented programs: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
