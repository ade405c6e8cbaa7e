#!/bin/bash
# Rewrites every test program (build/programs, `make programs`) with the
# identity plan and random plans of seeds 1-5, all in check mode (old code
# overwritten with traps).  Every rewritten image is checked against its
# original with `cpo addrmap NEW --verify ORIG` (instructions, branch
# targets, GP pairs, code pointers, unwind rows); dynamic ones also run under
# qemu-alpha, whose stdout and exit status must equal tests/programs/NAME.*;
# static ones (which qemu-alpha 7.2 cannot start) run on axp instead, when
# the original runs correctly there.  The original must come back from each
# rewritten image's undo record byte for byte.  forkexec execs itself, which qemu-user
# cannot do without binfmt_misc, so it is not run under qemu.  Prints, per
# program, procedures moved, left in place and moved whole, with reasons.
# Exit 77 when the programs are not built.
set -u
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
OPT=$BUILD/bin/optimize-image
CPO=$BUILD/bin/cpo
AXP=$BUILD/bin/axp
P=$BUILD/programs
SEEDS=${CPO_SEEDS:-"1 2 3 4 5"}

[ -x "$OPT" ] && [ -x "$CPO" ] || { echo "optimize-image or cpo not built (make)"; exit 77; }
ls "$P"/*-dyn >/dev/null 2>&1 || { echo "no programs in $P (make programs)"; exit 77; }
run_qemu=1
# Programs qemu-alpha cannot run: tests/programs/qemu-cannot-run.
qemu_cannot_run() { grep -q "^$1 " tests/programs/qemu-cannot-run; }
command -v qemu-alpha >/dev/null 2>&1 || { echo "qemu-alpha missing: structural checks only"; run_qemu=0; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cpo-rewrite-programs.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0

fail() { echo "FAIL $*"; failed=$((failed + 1)); }

# run NAME IMAGE LABEL [RUNNER...]: run (under qemu unless a runner is
# given) like tests/programs/README.md says; count a failure unless QUIET.
run() {
  local name=$1 img=$2 label=$3 args="" stdin=/dev/null want=0 dir rc
  shift 3
  local runner=("$@")
  [ ${#runner[@]} -gt 0 ] || runner=("$ROOT/scripts/qemu-run.sh")
  [ -f "tests/programs/$name.args" ] && args=$(cat "tests/programs/$name.args")
  [ -f "tests/programs/$name.stdin" ] && stdin=$ROOT/tests/programs/$name.stdin
  [ -f "tests/programs/$name.status" ] && want=$(cat "tests/programs/$name.status")
  dir=$(mktemp -d "$tmp/run.XXXXXX")
  # shellcheck disable=SC2086
  (cd "$dir" && timeout -k 5 60 "${runner[@]}" "$img" $args <"$stdin" >"$dir/out" 2>"$dir/err")
  rc=$?
  if [ "$rc" != "$want" ]; then
    [ -n "${QUIET:-}" ] && return 1
    fail "$name ($label): exit status $rc, expected $want"; tail -5 "$dir/err"; return 1
  fi
  if ! cmp -s "$dir/out" "tests/programs/$name.expected"; then
    [ -n "${QUIET:-}" ] && return 1
    fail "$name ($label): stdout differs"; diff "tests/programs/$name.expected" "$dir/out" | head -10; return 1
  fi
  [ -n "${QUIET:-}" ] || passed=$((passed + 1))
  rm -rf "$dir"
}

for src in tests/programs/*.c; do
  name=$(basename "$src" .c)
  for kind in dyn static; do
    orig=$P/$name-$kind
    [ -f "$orig" ] || continue
    sum=$(md5sum <"$orig")
    summary=""
    # Static images run on axp, if the original does.
    on_axp=0
    if [ $kind = static ] && [ -x "$AXP" ] && QUIET=1 run "$name" "$orig" original "$AXP" run --; then
      on_axp=1
    fi
    for plan in identity $SEEDS; do
      if [ "$plan" = identity ]; then args=(--plan identity); else args=(--plan random --seed "$plan"); fi
      out=$tmp/$name-$kind.$plan
      if ! "$OPT" "$orig" "${args[@]}" --check -o "$out" >"$out.log" 2>&1; then
        fail "$name-$kind plan $plan: optimize-image failed"; cat "$out.log"; continue
      fi
      [ -z "$summary" ] && summary="$(head -1 "$out.log" | sed 's/.*: //')$(grep -E '^  (left in place|moved whole)' "$out.log" | sed -E 's/^  (left in place|moved whole, blocks not reordered): /; \1: /' | tr -d '\n')"
      if ! "$CPO" addrmap "$out" --verify "$orig" >"$out.verify" 2>&1; then
        fail "$name-$kind plan $plan: verify"; tail -25 "$out.verify"
      else
        passed=$((passed + 1))
      fi
      # The undo record gives the original back, byte for byte.
      if "$CPO" addrmap "$out" --original "$out.back" >/dev/null 2>"$out.err" && cmp -s "$orig" "$out.back"; then
        passed=$((passed + 1))
      else fail "$name-$kind plan $plan: original not recovered: $(cat "$out.err")"; fi
      rm -f "$out.back"
      if [ $kind = dyn ] && [ $run_qemu = 1 ] && ! qemu_cannot_run "$name"; then
        run "$name" "$out" "plan $plan"
      elif [ $on_axp = 1 ]; then
        run "$name" "$out" "plan $plan, axp" "$AXP" run --
      fi
      rm -f "$out"
    done
    [ "$(md5sum <"$orig")" = "$sum" ] || fail "$name-$kind: the input image changed"
    [ $kind = static ] && [ $on_axp = 0 ] && summary="$summary (not run: the original fails on axp)"
    echo "$name-$kind: $summary"
  done
done
echo "rewritten programs: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
