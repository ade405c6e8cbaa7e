#!/bin/bash
# optimize-image --instrument cct (and paths,cct) on a few small test
# programs (docs/instrument.md): the instrumented program prints its
# expected output and exit status, passes `cpo addrmap --verify`, and
# writes a calling context tree that `cpo cct --from` reads and that
# matches, in shape and call counts, the one `axp run --cct` builds of the
# original on the same input (scripts/cct-compare.py).  Static programs
# run on axp, dynamic ones under qemu-alpha.  recursion folds recursive
# calls, funcptr calls through pointers, setjmp leaves frames with
# longjmp (funcptr also under a random layout), threads has a tree per
# thread; with paths,cct the path counts must also equal axp's.  Exit 77
# when the programs are not built.
set -u
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
OPT=$BUILD/bin/optimize-image
CPO=$BUILD/bin/cpo
AXP=$BUILD/bin/axp
P=$BUILD/programs

[ -x "$OPT" ] && [ -x "$CPO" ] && [ -x "$AXP" ] || { echo "tools not built (make)"; exit 77; }
ls "$P"/*-static >/dev/null 2>&1 || { echo "no programs in $P (make programs)"; exit 77; }
run_qemu=1
command -v qemu-alpha >/dev/null 2>&1 || { echo "qemu-alpha missing: dynamic programs not run"; run_qemu=0; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cpo-instcct.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
if ! "$OPT" "$P/intloop-static" --instrument cct -o "$tmp/probe" >"$tmp/probe.log" 2>&1 &&
   grep -q "no runtime to instrument with" "$tmp/probe.log"; then
  echo "optimize-image was built without the Alpha cross compiler: no runtime"; exit 77
fi
passed=0 failed=0
fail() { echo "FAIL $*"; failed=$((failed + 1)); }

# run NAME IMAGE PROFILE RUNNER...: from a fresh directory, the program's
# args and stdin, a clean environment naming PROFILE; leaves stdout and
# the status in $dir.
run() {
  local name=$1 img=$2 prof=$3 args="" stdin=/dev/null
  shift 3
  [ -f "tests/programs/$name.args" ] && args=$(cat "tests/programs/$name.args")
  [ -f "tests/programs/$name.stdin" ] && stdin=$ROOT/tests/programs/$name.stdin
  dir=$(mktemp -d "$tmp/run.XXXXXX")
  # shellcheck disable=SC2086
  (cd "$dir" && env -i PATH=/usr/bin:/bin CPO_PROFILE_OUT="$prof" timeout -k 5 60 "$@" "$img" $args \
     <"$stdin" >"$dir/out" 2>"$dir/err")
  echo $? >"$dir/status"
}

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
  run "$name" "$w/prog.orig" "$w/orig" "$AXP" run --cct "$w/exact.cct" --paths "$w/exact.paths" --
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
  # threads: how often the workers wait for each other depends on the
  # timing, which instrumentation changes.
  local skip=()
  [ "$name" = threads ] && skip=(--skip-matching 'lock|cond|futex|cleanup|join|cancel|^run$')
  if ! python3 scripts/cct-compare.py "${skip[@]}" "$w/exact.cct" "$tree" >"$w/cmp" 2>&1; then
    fail "$label: calling contexts"; head -10 "$w/cmp"; return
  fi
  local paths=""
  if [ "$mode" != cct ]; then
    if ! python3 scripts/paths-compare.py "$w/exact.paths" "$w/prof" >"$w/pcmp" 2>&1; then
      fail "$label: path counts"; head -10 "$w/pcmp"; return
    fi
    paths="; paths: $(tail -1 "$w/pcmp")"
  fi
  passed=$((passed + 1))
  echo "$label: $(tail -1 "$w/cmp")$paths"
}

for name in recursion funcptr setjmp threads; do
  check "$name" static cct "$AXP" run --
done
check stdio static paths,cct "$AXP" run --
SEED=1 check funcptr static cct "$AXP" run --
if [ $run_qemu = 1 ]; then
  for name in recursion setjmp threads; do
    check "$name" dyn cct "$ROOT/scripts/qemu-run.sh"
  done
fi
echo "instrumented calling context trees: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
