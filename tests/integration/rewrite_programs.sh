#!/bin/bash
# Rewrites every test program (build/programs, `make programs`) with the
# identity plan and random plans of seeds 1-5, all in check mode (old code
# overwritten with traps).  Every rewritten image is checked against its
# original with `cpo addrmap NEW --verify ORIG` (instructions, branch
# targets, GP pairs, code pointers, unwind rows); dynamic ones also run under
# qemu-alpha, whose stdout and exit status must equal tests/programs/NAME.*.
# Static ones are only checked structurally (qemu-alpha 7.2 cannot start
# static glibc programs).  forkexec execs itself, which qemu-user cannot do
# without binfmt_misc, so it is not run.  Prints, per program, procedures
# moved and left in place.  Exit 77 when the programs are not built.
set -u
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
OPT=$BUILD/bin/optimize-image
CPO=$BUILD/bin/cpo
P=$BUILD/programs
SEEDS=${CPO_SEEDS:-"1 2 3 4 5"}

[ -x "$OPT" ] && [ -x "$CPO" ] || { echo "optimize-image or cpo not built (make)"; exit 77; }
ls "$P"/*-dyn >/dev/null 2>&1 || { echo "no programs in $P (make programs)"; exit 77; }
run_qemu=1
command -v qemu-alpha >/dev/null 2>&1 || { echo "qemu-alpha missing: structural checks only"; run_qemu=0; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cpo-rewrite-programs.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0

fail() { echo "FAIL $*"; failed=$((failed + 1)); }

# run NAME IMAGE: run under qemu like tests/programs/README.md says.
run() {
  local name=$1 img=$2 args="" stdin=/dev/null want=0 dir rc
  [ -f "tests/programs/$name.args" ] && args=$(cat "tests/programs/$name.args")
  [ -f "tests/programs/$name.stdin" ] && stdin=$ROOT/tests/programs/$name.stdin
  [ -f "tests/programs/$name.status" ] && want=$(cat "tests/programs/$name.status")
  dir=$(mktemp -d "$tmp/run.XXXXXX")
  # shellcheck disable=SC2086
  (cd "$dir" && timeout -k 5 60 "$ROOT/scripts/qemu-run.sh" "$img" $args <"$stdin" >"$dir/out" 2>"$dir/err")
  rc=$?
  if [ "$rc" != "$want" ]; then
    fail "$name ($3): exit status $rc, expected $want"; tail -5 "$dir/err"; return
  fi
  if ! cmp -s "$dir/out" "tests/programs/$name.expected"; then
    fail "$name ($3): stdout differs"; diff "tests/programs/$name.expected" "$dir/out" | head -10; return
  fi
  passed=$((passed + 1))
  rm -rf "$dir"
}

for src in tests/programs/*.c; do
  name=$(basename "$src" .c)
  for kind in dyn static; do
    orig=$P/$name-$kind
    [ -f "$orig" ] || continue
    sum=$(md5sum <"$orig")
    summary=""
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
      if [ $kind = dyn ] && [ $run_qemu = 1 ] && [ "$name" != forkexec ]; then
        run "$name" "$out" "plan $plan"
      fi
      rm -f "$out"
    done
    [ "$(md5sum <"$orig")" = "$sum" ] || fail "$name-$kind: the input image changed"
    echo "$name-$kind: $summary"
  done
done
echo "rewritten programs: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
