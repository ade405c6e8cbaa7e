#!/bin/bash
# The timed executor (the one a timing model hooks into) on whole programs:
# with AXP_TIMED=1 axp runs it with a counting hook.  Every test program
# must give its expected output and status, the hook must have seen exactly
# the instructions retired, and the count must equal the functional
# executor's.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
AXP=$BUILD/bin/axp
OUT=$BUILD/programs
SRC=$PWD/tests/programs

[ -x "$AXP" ] || { echo "$AXP missing: run make"; exit 77; }
[ -d "$OUT" ] || { echo "$OUT missing: run make programs"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
num() { sed -n "s/^ *\"$1\": \([0-9]*\),*/\1/p" "$2" | head -1; }

for c in "$SRC"/*.c; do
  name=$(basename "$c" .c)
  args=""
  [ -f "$SRC/$name.args" ] && args=$(cat "$SRC/$name.args")
  stdin=/dev/null
  [ -f "$SRC/$name.stdin" ] && stdin=$SRC/$name.stdin
  want=0
  [ -f "$SRC/$name.status" ] && want=$(cat "$SRC/$name.status")
  img=$OUT/$name-dyn
  [ -x "$img" ] || continue
  # both runs in the same directory: the environment (PWD) must not differ
  d=$tmp/$name
  mkdir "$d" "$d.functional" "$d.timed"
  for mode in functional timed; do
    t=0
    [ $mode = timed ] && t=1
    # shellcheck disable=SC2086
    (cd "$d" && AXP_TIMED=$t timeout 120 "$AXP" run --stats="$d.$mode/s.json" "$img" $args \
        <"$stdin" >"$d.$mode/out" 2>"$d.$mode/err")
    echo $? >"$d.$mode/rc"
    rm -rf "${d:?}"/*
  done
  f=$d.functional t=$d.timed
  rc=$(cat "$t/rc")
  n_t=$(num instructions "$t/s.json") n_f=$(num instructions "$f/s.json") h=$(num hook_retired "$t/s.json")
  if [ "$rc" != "$want" ] || ! cmp -s "$t/out" "$SRC/$name.expected"; then
    echo "FAIL $name: timed executor: status $rc (want $want) or output differs"; head -5 "$t/err"; fail=1
  elif [ "$h" != "$n_t" ]; then
    echo "FAIL $name: hook saw $h instructions, $n_t retired"; fail=1
  elif [ "$n_t" != "$n_f" ] && [ "$name" != forkexec ]; then
    echo "FAIL $name: timed $n_t instructions, functional $n_f"; fail=1
  else
    echo "ok   $name: $n_t instructions, every one seen by the hook"
  fi
done
[ $fail -eq 0 ]
