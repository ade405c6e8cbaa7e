#!/bin/bash
# optimize-image --instrument cct (and paths,cct) on a few small test
# programs (docs/instrument.md): the instrumented program prints its
# expected output and exit status, passes `cpo addrmap --verify`, and
# writes a calling context tree that `cpo cct --from` reads and that
# matches, in shape and call counts, the one `axp run --cct` builds of the
# original on the same input (scripts/cct-compare.py).  Static programs
# run on axp, dynamic ones under qemu-alpha.  recursion folds recursive
# calls, tailcall recurses through a tail call into a procedure still
# running further down the stack, funcptr calls through pointers, setjmp leaves frames with
# longjmp (funcptr also under a random layout), threads has a tree per
# thread, signals and forkexec fork children that go on in the contexts
# they were forked in; with paths,cct the path counts must also equal
# axp's (stdio's, threads' and forkexec's); recursion with a procedure
# pinned matches axp's tree built with --cct-only.  `cpo cct --against` lines
# every one-process tree up with axp's, a dynamic program's too (axp's
# library contexts folded into their callers).  Exit 77
# when the programs are not built.
set -u
cd "$(dirname "$0")/../.."
# shellcheck source=tests/integration/lib/instrument.sh
. tests/integration/lib/instrument.sh

# check NAME KIND MODE RUNNER...  (SEED=N: a random layout)
check() {
  local name=$1 kind=$2 mode=$3 want=0 pargs=(--plan identity)
  shift 3
  [ -n "${SEED:-}" ] && pargs=(--plan random --seed "$SEED")
  local orig=$P/$name-$kind label="$name-$kind ($mode${SEED:+, random layout $SEED})"
  local w=$tmp/$name-$kind-$mode${SEED:+-$SEED}
  [ -f "tests/programs/$name.status" ] && want=$(cat "tests/programs/$name.status")
  mkdir -p "$w"
  # Same-length names: argv[0] and AT_EXECFN are the same length in both runs.
  cp "$orig" "$w/prog.orig"
  if ! "$OPT" "$orig" --instrument "$mode" "${pargs[@]}" -o "$w/prog.inst" >"$w/log" 2>&1; then
    fail "$label: optimize-image"; cat "$w/log"; return
  fi
  "$CPO" addrmap "$w/prog.inst" --verify "$orig" >"$w/verify" 2>&1 || { fail "$label: verify"; tail -5 "$w/verify"; }
  run "$name" "$w/prog.orig" "$w/orig" "$AXP" run "${Q[@]}" --cct "$w/exact.cct" --paths "$w/exact.paths" --
  [ "$(cat "$dir/status")" = "$want" ] || { fail "$label: the original exits $(cat "$dir/status") on axp"; return; }
  run "$name" "$w/prog.inst" "$w/prof" "$@"
  if [ "$(cat "$dir/status")" != "$want" ] || ! cmp -s "$dir/out" "tests/programs/$name.expected"; then
    fail "$label: instrumented: status $(cat "$dir/status"), want $want; or stdout differs"
    diff "tests/programs/$name.expected" "$dir/out" | head -5; tail -3 "$dir/err"; return
  fi
  # cct alone: the tree is CPO_PROFILE_OUT; with paths, CPO_PROFILE_OUT.cct.
  local tree=$w/prof
  [ "$mode" = cct ] || tree=$w/prof.cct
  [ -f "$tree" ] || { fail "$label: no tree written"; return; }
  if ! "$CPO" cct --from "$tree" >"$w/report" 2>&1 ||
     ! "$CPO" cct --from "$tree" --against "$w/exact.cct" >"$w/against" 2>&1; then
    fail "$label: cpo cct cannot read the tree"; tail -3 "$w/report" "$w/against"; return
  fi
  # threads under qemu-alpha: its threads run at once on the host, and how
  # often they wait for each other depends on the timing.
  local skip=()
  [ "$name-$kind" = threads-dyn ] && skip=(--skip-matching 'lock|cond|futex|cleanup|join|cancel|^run$')
  # forkexec's second child kills itself with SIGTERM: a process ended by
  # a signal writes nothing, so its counts may only be lower.
  [ "$name" = forkexec ] && skip=(--at-most)
  # Forked children and exec'd images write TREE.PID.
  local trees=("$tree") f
  for f in "$tree".[0-9]*; do [ -e "$f" ] && trees+=("$f"); done
  if ! python3 scripts/cct-compare.py "${skip[@]}" "$w/exact.cct" "${trees[@]}" >"$w/cmp" 2>&1; then
    fail "$label: calling contexts"; head -10 "$w/cmp"; return
  fi
  # cpo cct --against folds axp's contexts of code the binary does not
  # count (a dynamic program's libraries, procedures not instrumented) into
  # their callers: every context of a one-process tree then lines up with
  # axp's, with the same share of the calls.
  local against=""
  if [ ${#trees[@]} = 1 ] && [ "$name-$kind" != threads-dyn ]; then
    "$CPO" cct --from "$tree" --against "$w/exact.cct" --metric calls --against-metric calls --top 100000 \
      >"$w/calls" 2>&1
    if ! tail -1 "$w/calls" | grep -Eq '^([0-9]+) contexts: \1 within 2 points, largest difference 0\.00 points, 0 not'; then
      fail "$label: cpo cct --against"; grep -v '+0.00  ' "$w/calls" | head -10; return
    fi
    against="; --against: $(tail -1 "$w/calls" | cut -d' ' -f1) contexts lined up"
  fi
  local paths=""
  if [ "$mode" != cct ]; then
    local profs=("$w/prof")
    for f in "$w/prof".[0-9]*; do [ -e "$f" ] && profs+=("$f"); done
    if ! python3 scripts/paths-compare.py "${skip[@]}" "$w/exact.paths" "${profs[@]}" >"$w/pcmp" 2>&1; then
      fail "$label: path counts"; head -10 "$w/pcmp"; return
    fi
    paths="; paths: $(tail -1 "$w/pcmp")"
  fi
  passed=$((passed + 1))
  echo "$label: $(tail -1 "$w/cmp")$against$paths"
}

# axp switches threads only when they block (one CPU, an endless
# quantum): the instrumented run, slower, then interleaves its threads as
# the original does, and no switch falls between a load-locked and its
# store-conditional (which would make the program retry it).
Q=(--quantum 1000000000)
for name in recursion tailcall funcptr setjmp threads signals forkexec; do
  check "$name" static cct "$AXP" run "${Q[@]}" --
done
check stdio static paths,cct "$AXP" run "${Q[@]}" --
check threads static paths,cct "$AXP" run "${Q[@]}" --
check forkexec static paths,cct "$AXP" run "${Q[@]}" --
# forkexec re-executes itself, which qemu-user cannot: its dynamic build
# runs on axp.
check forkexec dyn cct "$AXP" run "${Q[@]}" --

# A procedure the binary does not count inside a recursion: recursion's
# hof_m pinned (left in place, as a branch that would not reach leaves
# one), between activations of hof_f.  axp folds that recursion at hof_m,
# the binary at hof_f, so axp's full tree, folded afterwards, has other
# back edges; `axp run --cct-only` builds it as the binary sees it.
pinned() {
  local w=$tmp/pinned orig=$P/recursion-static label="recursion-static (cct, hof_m pinned)" a
  mkdir -p "$w"
  cp "$orig" "$w/prog.orig"
  a=$("$CPO" syms "$orig" | awk '$NF == "hof_m" { print $2 }')
  printf 'cpo-layout 1\npin 0x%s\n' "$a" >"$w/plan"
  "$OPT" "$orig" --instrument cct --plan "$w/plan" -o "$w/prog.inst" >"$w/log" 2>&1 ||
    { fail "$label: optimize-image"; cat "$w/log"; return; }
  run recursion "$w/prog.inst" "$w/prof" "$AXP" run "${Q[@]}" --
  cmp -s "$dir/out" tests/programs/recursion.expected || { fail "$label: instrumented output"; return; }
  grep -q ' hof_m ' "$w/prof" && { fail "$label: hof_m has a context"; return; }
  run recursion "$w/prog.orig" "$w/orig" "$AXP" run "${Q[@]}" --cct "$w/full.cct" --
  run recursion "$w/prog.orig" "$w/orig" "$AXP" run "${Q[@]}" --cct "$w/only.cct" --cct-only "$w/prof" --
  python3 scripts/cct-compare.py "$w/full.cct" "$w/prof" >"$w/cmp-full" 2>&1
  if ! python3 scripts/cct-compare.py "$w/only.cct" "$w/prof" >"$w/cmp" 2>&1; then
    fail "$label: calling contexts with --cct-only"; head -10 "$w/cmp"; return
  fi
  passed=$((passed + 1))
  echo "$label: --cct-only: $(tail -1 "$w/cmp"); folded afterwards: $(tail -1 "$w/cmp-full" | cut -d';' -f1)"
}
pinned
SEED=1 check funcptr static cct "$AXP" run "${Q[@]}" --
if [ $run_qemu = 1 ]; then
  for name in recursion setjmp threads; do
    check "$name" dyn cct "$ROOT/scripts/qemu-run.sh"
  done
fi
echo "instrumented calling context trees: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
