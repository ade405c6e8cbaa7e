#!/bin/bash
# The optimizer end to end on every test program (build/programs, `make
# programs`): the program runs once on axp with --exact, optimize-image
# makes a plan from those counts (with a report) and rewrites it in check
# mode (old code overwritten with traps); the result must pass
# `cpo addrmap NEW --verify ORIG` and give the same stdout and exit status as
# tests/programs/NAME.* on axp, and, for dynamic ones, under qemu-alpha too
# (forkexec execs itself, which qemu-user cannot do: axp only).  The input
# image must not change.  Exit 77 when the programs are not built.
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
ls "$P"/*-dyn >/dev/null 2>&1 || { echo "no programs in $P (make programs)"; exit 77; }
run_qemu=1
# Programs qemu-alpha cannot run: tests/programs/qemu-cannot-run.
qemu_cannot_run() { grep -q "^$1 " tests/programs/qemu-cannot-run; }
command -v qemu-alpha >/dev/null 2>&1 || { echo "qemu-alpha missing: axp only"; run_qemu=0; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cpo-optimize-programs.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
fail() { echo "FAIL $*"; failed=$((failed + 1)); }

# run NAME IMAGE LABEL RUNNER...: like tests/programs/README.md says.
run() {
  local name=$1 img=$2 label=$3 args="" stdin=/dev/null want=0 dir rc
  shift 3
  [ -f "tests/programs/$name.args" ] && args=$(cat "tests/programs/$name.args")
  [ -f "tests/programs/$name.stdin" ] && stdin=$ROOT/tests/programs/$name.stdin
  [ -f "tests/programs/$name.status" ] && want=$(cat "tests/programs/$name.status")
  dir=$(mktemp -d "$tmp/run.XXXXXX")
  # shellcheck disable=SC2086
  (cd "$dir" && timeout -k 5 60 "$@" "$img" $args <"$stdin" >"$dir/out" 2>"$dir/err")
  rc=$?
  if [ "$rc" != "$want" ]; then
    fail "$name ($label): exit status $rc, expected $want"; tail -5 "$dir/err"; return 1
  fi
  if ! cmp -s "$dir/out" "tests/programs/$name.expected"; then
    fail "$name ($label): stdout differs"; diff "tests/programs/$name.expected" "$dir/out" | head -10; return 1
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
    ex=$tmp/$name-$kind.exact out=$tmp/$name-$kind.opt
    args=""; stdin=/dev/null
    [ -f "tests/programs/$name.args" ] && args=$(cat "tests/programs/$name.args")
    [ -f "tests/programs/$name.stdin" ] && stdin=$ROOT/tests/programs/$name.stdin
    # shellcheck disable=SC2086
    (cd "$tmp" && timeout -k 5 60 "$AXP" run --exact "$ex" -- "$orig" $args <"$stdin" >/dev/null 2>&1)
    [ -s "$ex" ] || { fail "$name-$kind: no exact counts"; continue; }
    if ! "$OPT" "$orig" --exact "$ex" --report "$out.report" --check -o "$out" >"$out.log" 2>&1; then
      fail "$name-$kind: optimize-image failed"; cat "$out.log"; continue
    fi
    if ! "$CPO" addrmap "$out" --verify "$orig" >"$out.verify" 2>&1; then
      fail "$name-$kind: verify"; tail -25 "$out.verify"
    else
      passed=$((passed + 1))
    fi
    run "$name" "$out" axp "$AXP" run --
    if [ $kind = dyn ] && [ $run_qemu = 1 ] && ! qemu_cannot_run "$name"; then
      run "$name" "$out" qemu "$ROOT/scripts/qemu-run.sh"
    fi
    [ "$(md5sum <"$orig")" = "$sum" ] || fail "$name-$kind: the input image changed"
    echo "$name-$kind: $(sed -n 's/^predicted taken-branch cycles: //p' "$out.report")"
  done
done

# The other block and procedure orders (ext-TSP, C3), which the bench
# measures against the default: same checks, on programs with jump tables,
# calls through pointers, unwinding and many procedures.
for name in bytecode indjump funcptr unwind stdio; do
  orig=$P/$name-static ex=$tmp/$name-static.exact out=$tmp/$name.xc
  [ -s "$ex" ] || continue
  if ! "$OPT" "$orig" --exact "$ex" --blocks ext-tsp --procs c3 --check -o "$out" >"$out.log" 2>&1; then
    fail "$name ext-tsp c3: optimize-image failed"; cat "$out.log"; continue
  fi
  if "$CPO" addrmap "$out" --verify "$orig" >"$out.verify" 2>&1; then passed=$((passed + 1))
  else fail "$name ext-tsp c3: verify"; tail -25 "$out.verify"; fi
  run "$name" "$out" "ext-tsp c3, axp" "$AXP" run -- && echo "$name: ext-tsp and c3 plan runs the same"
done

# A profile of the optimized binary feeds the next round through its address
# map: the original optimized from it predicts the same, within 1% (the
# runs differ a little: the binary's own path and environment differ).
for name in bytecode branchalt; do
  orig=$P/$name-static opt1=$tmp/$name.r1
  args=""; [ -f "tests/programs/$name.args" ] && args=$(cat "tests/programs/$name.args")
  # shellcheck disable=SC2086
  (cd "$tmp" && "$AXP" run --exact "$tmp/$name.x1" -- "$orig" $args >/dev/null 2>&1)
  "$OPT" "$orig" --exact "$tmp/$name.x1" --report "$tmp/$name.rep1" -o "$opt1" >/dev/null || { fail "$name round 1"; continue; }
  # shellcheck disable=SC2086
  (cd "$tmp" && "$AXP" run --exact "$tmp/$name.x2" -- "$opt1" $args >/dev/null 2>&1)
  "$OPT" "$orig" --exact "$tmp/$name.x2" --report "$tmp/$name.rep2" -o "$tmp/$name.r2" >/dev/null || { fail "$name round 2"; continue; }
  p1=$(grep '^predicted taken-branch' "$tmp/$name.rep1") p2=$(grep '^predicted taken-branch' "$tmp/$name.rep2")
  if awk -v a="$p1" -v b="$p2" 'BEGIN { split(a, x, " "); split(b, y, " ")
        for (i in x) if (x[i] ~ /^[0-9]+$/ && (x[i] - y[i] > x[i] / 100 || y[i] - x[i] > x[i] / 100)) exit 1 }'; then
    passed=$((passed + 1)); echo "$name round 2 through the map: $p2"
  else fail "$name round 2: '$p2', round 1: '$p1'"; fi
  run "$name" "$tmp/$name.r2" "round 2, axp" "$AXP" run --
  # The optimized binary itself as the input: its original comes back from
  # its undo record byte for byte, so the same counts make the same image.
  if "$CPO" addrmap "$opt1" --original "$tmp/$name.back" >/dev/null && cmp -s "$orig" "$tmp/$name.back"; then
    passed=$((passed + 1)); echo "$name: original recovered from the optimized binary"
  else fail "$name: original not recovered from $opt1"; fi
  if "$OPT" "$opt1" --exact "$tmp/$name.x2" -o "$tmp/$name.r3" >"$tmp/$name.r3.log" 2>&1 &&
     grep -q "a rewritten image; rewriting its original" "$tmp/$name.r3.log" &&
     cmp -s "$tmp/$name.r2" "$tmp/$name.r3" &&
     "$CPO" addrmap "$tmp/$name.r3" --verify "$orig" >/dev/null 2>&1; then
    passed=$((passed + 1)); echo "$name: optimized binary optimized again, same as from the original"
  else fail "$name: optimizing the optimized binary: $(tail -2 "$tmp/$name.r3.log")"; fi
done

# A damaged undo record, or none, is refused with a message; nothing is written.
# damage IN OUT HOW: HOW=byte flips a byte in the middle of the record,
# HOW=name renames the section so that the record is not found.
damage() {
  python3 - "$@" <<'PY'
import struct, sys
src, dst, how = sys.argv[1:]
f = bytearray(open(src, 'rb').read())
shoff, = struct.unpack_from('<Q', f, 40)
shnum, shstrndx = struct.unpack_from('<HH', f, 60)
names = struct.unpack_from('<IIQQQQ', f, shoff + 64 * shstrndx)[4]
for i in range(shnum):
    name, _, _, _, off, size = struct.unpack_from('<IIQQQQ', f, shoff + 64 * i)
    if f[names + name:names + name + 10] == b'.cpo.undo\0':
        if how == 'byte':
            f[off + size // 2] ^= 0xff
        else:
            f[names + name + 5] = ord('x')
open(dst, 'wb').write(f)
PY
}
for how in byte name; do
  damage "$tmp/bytecode.r1" "$tmp/damaged-$how" $how
  "$OPT" "$tmp/damaged-$how" --exact "$tmp/bytecode.x2" -o "$tmp/x" 2>"$tmp/err"; rc=$?
  case $how in byte) want="damaged\|checksum";; name) want="without an undo record";; esac
  if [ $rc = 1 ] && grep -q "damaged-$how: .*\($want\)" "$tmp/err" && [ ! -e "$tmp/x" ]; then
    passed=$((passed + 1)); echo "undo record $how: $(cat "$tmp/err")"
  else fail "undo record $how: rc $rc, $(cat "$tmp/err")"; fi
done

# From samples: profile under cpod, optimize from the database (the
# estimator's frequencies), and the result runs the same.
CPOD=$BUILD/bin/cpod
if [ -x "$CPOD" ]; then
  db=$tmp/db
  "$CPOD" --db "$db" --flush 1h >/dev/null 2>&1
  for name in bytecode copyloop; do
    args=""; [ -f "tests/programs/$name.args" ] && args=$(cat "tests/programs/$name.args")
    # shellcheck disable=SC2086
    (cd "$tmp" && "$AXP" run --pmu cycles:1000 --collector "$db" -- "$P/$name-dyn" $args >/dev/null 2>&1)
  done
  # Two images whose files are gone by the time of optimizing: another
  # program, and one under the name of the image optimized below.
  mkdir -p "$tmp/gone" "$tmp/gone2"
  cp "$P/intloop-dyn" "$tmp/gone/intloop-dyn" && cp "$P/intloop-static" "$tmp/gone2/copyloop-dyn"
  for g in "$tmp/gone/intloop-dyn" "$tmp/gone2/copyloop-dyn"; do
    (cd "$tmp" && "$AXP" run --pmu cycles:1000 --collector "$db" -- "$g" >/dev/null 2>&1)
  done
  rm -rf "$tmp/gone" "$tmp/gone2"
  "$CPO" quit --db "$db" >/dev/null 2>&1
  for l in "$db"/.cpod/*/regions; do
    r=$(readlink "$l") && case "$r" in /dev/shm/cpod-*) rm -rf "$r";; esac
  done
  for name in bytecode copyloop; do
    "$OPT" "$P/$name-dyn" --db "$db" --report "$tmp/$name.srep" -o "$tmp/$name.s" >/dev/null 2>"$tmp/err" ||
      { fail "$name from samples: $(cat "$tmp/err")"; continue; }
    passed=$((passed + 1)); echo "$name optimized from its samples"
    # bytecode's dispatch is a jump table: from samples its JMP is hinted
    # at the most frequent table edge.
    if [ $name = bytecode ]; then
      # the report's per-procedure hints column adds up to the total
      hsum=$(awk '$2 == "chained" || $2 == "moved" { s += $7 } END { print s + 0 }' "$tmp/$name.srep")
      if grep -q "^jump hints: $hsum\$" "$tmp/$name.srep" && grep -q '^jump hints: [1-9]' "$tmp/$name.srep"; then
        passed=$((passed + 1)); echo "bytecode from samples: $(grep '^jump hints' "$tmp/$name.srep")"
      else fail "bytecode from samples: no jump-table hint ($(grep '^jump hints' "$tmp/$name.srep"))"; fi
      # Opcodes no sample hit stay beside the dispatch, unless asked not
      # to: then the interpreter's hot part is smaller.
      kept=$(sed -n 's/^unsampled handlers kept hot: \([0-9]*\) blocks (\([0-9]*\) bytes).*/\1 \2/p' "$tmp/$name.srep")
      "$OPT" "$P/$name-dyn" --db "$db" --cold-handlers --report "$tmp/$name.crep" -o "$tmp/$name.c" >/dev/null 2>&1
      none=$(sed -n 's/^unsampled handlers kept hot: \([0-9]*\) blocks.*/\1/p' "$tmp/$name.crep")
      hot=$(awk '$10 == "run" { print $4 }' "$tmp/$name.srep") hotc=$(awk '$10 == "run" { print $4 }' "$tmp/$name.crep")
      if [ "${kept%% *}" -gt 0 ] 2>/dev/null && [ "$none" = 0 ] && [ "$hot" -gt "$hotc" ] 2>/dev/null; then
        passed=$((passed + 1)); echo "bytecode from samples: $kept (blocks, bytes) of unsampled handlers kept hot; run's hot part $hotc -> $hot bytes"
      else fail "bytecode handlers: kept '$kept', with --cold-handlers '$none', run's hot part $hot against $hotc"; fi
    fi
    # The shared libc's samples tell the colouring where its hot lines are.
    if grep -q "^shared libraries' code: [1-9][0-9]* executions on [1-9]" "$tmp/$name.srep"; then
      passed=$((passed + 1)); echo "$name from samples: $(grep "^shared libraries" "$tmp/$name.srep")"
    else fail "$name from samples: no shared-library heat ($(grep "^shared libraries" "$tmp/$name.srep"))"; fi
    run "$name" "$tmp/$name.s" "from samples, axp" "$AXP" run --
    [ $run_qemu = 1 ] && run "$name" "$tmp/$name.s" "from samples, qemu" "$ROOT/scripts/qemu-run.sh"
  done
  # An image whose file is gone is named when it may be the image's own
  # (its name) or a library's; the others are counted in one line.
  "$OPT" "$P/copyloop-dyn" --db "$db" -o "$tmp/x" >/dev/null 2>"$tmp/err"
  if grep -q "warning: $tmp/gone2/copyloop-dyn: no readable file there" "$tmp/err" &&
     grep -q "warning: 1 other image of the database ($tmp/gone/intloop-dyn) could not be read" "$tmp/err" &&
     [ "$(grep -c warning "$tmp/err")" = 2 ]; then
    passed=$((passed + 1)); echo "images gone: $(cat "$tmp/err")"
  else fail "images gone: $(cat "$tmp/err")"; fi
  rm -f "$tmp/x"
  # Several databases: each one's estimate of the image, summed; one
  # without samples of the image is left out with a warning.
  # The second is a deployment's: the program profiled, optimized, the
  # optimized binary put in its place and profiled there too.
  db2=$tmp/db2 app=$tmp/dep/app
  mkdir -p "$tmp/dep" && cp "$P/bytecode-dyn" "$app"
  "$CPOD" --db "$db2" --flush 1h >/dev/null 2>&1
  bargs=$(cat tests/programs/bytecode.args 2>/dev/null)
  # shellcheck disable=SC2086
  (cd "$tmp" && "$AXP" run --pmu cycles:1000 --collector "$db2" -- "$app" $bargs >/dev/null 2>&1)
  # the deployment starts a new epoch
  "$CPO" epoch --db "$db2" >/dev/null 2>&1
  "$OPT" "$app" --db "$db2" --all-epochs -o "$app.new" >/dev/null 2>&1 && mv "$app.new" "$app"
  # shellcheck disable=SC2086
  (cd "$tmp" && "$AXP" run --pmu cycles:1000 --collector "$db2" -- "$app" $bargs >/dev/null 2>&1)
  "$CPO" quit --db "$db2" >/dev/null 2>&1
  for l in "$db2"/.cpod/*/regions; do
    r=$(readlink "$l") && case "$r" in /dev/shm/cpod-*) rm -rf "$r";; esac
  done
  insns() { sed -n 's/^predicted.* of \([0-9]*\) instructions.*/\1/p' "$1"; }
  if "$OPT" "$P/bytecode-dyn" --db "$db2" --report "$tmp/b2.rep" -o "$tmp/b2" >/dev/null 2>"$tmp/err" &&
     "$OPT" "$P/bytecode-dyn" --db "$db" --db "$db2" --report "$tmp/b12.rep" -o "$tmp/b12" >/dev/null 2>>"$tmp/err"; then
    a=$(insns "$tmp/bytecode.srep") b=$(insns "$tmp/b2.rep") ab=$(insns "$tmp/b12.rep")
    if [ -n "$a" ] && [ -n "$b" ] && [ -n "$ab" ] &&
       awk -v a="$a" -v b="$b" -v ab="$ab" 'BEGIN { d = ab - a - b; exit !(d < 0.01 * ab && -d < 0.01 * ab) }'; then
      passed=$((passed + 1)); echo "bytecode from two databases: $ab instructions estimated, $a + $b alone"
    else fail "bytecode from two databases: $ab instructions estimated, $a + $b alone"; fi
    run bytecode "$tmp/b12" "from two databases, axp" "$AXP" run --
  else fail "bytecode from two databases: $(cat "$tmp/err")"; fi
  # The deployed binary optimized again from both its profiles, with no
  # complaint that the file at the original's path is another build.
  if "$OPT" "$app" --db "$db2" -o "$tmp/dep/v2" >"$tmp/dep/log" 2>"$tmp/err" && [ ! -s "$tmp/err" ] &&
     grep -q "rewriting its original" "$tmp/dep/log" &&
     "$CPO" addrmap "$tmp/dep/v2" --verify "$P/bytecode-dyn" >/dev/null 2>&1; then
    passed=$((passed + 1)); echo "the deployed optimized binary optimized again from its database"
  else fail "the deployed optimized binary optimized again: $(cat "$tmp/err")"; fi
  # Several epochs: each one's estimate, summed, as with databases.
  read -r e1 e2 < <(ls "$db2" | grep -v '^current$' | sort | tr '\n' ' ')
  if [ -n "${e2:-}" ] &&
     "$OPT" "$P/bytecode-dyn" --db "$db2" --epoch "$e1" --report "$tmp/e1.rep" -o "$tmp/e1" >/dev/null 2>"$tmp/err" &&
     "$OPT" "$P/bytecode-dyn" --db "$db2" --epoch "$e2" --report "$tmp/e2.rep" -o "$tmp/e2" >/dev/null 2>>"$tmp/err" &&
     "$OPT" "$P/bytecode-dyn" --db "$db2" --epoch "$e1" --epoch "$e2" --report "$tmp/e12.rep" -o "$tmp/e12" \
       >/dev/null 2>>"$tmp/err"; then
    a=$(insns "$tmp/e1.rep") b=$(insns "$tmp/e2.rep") ab=$(insns "$tmp/e12.rep")
    if [ -n "$a" ] && [ -n "$b" ] && [ -n "$ab" ] &&
       awk -v a="$a" -v b="$b" -v ab="$ab" 'BEGIN { d = ab - a - b; exit !(d < 0.01 * ab && -d < 0.01 * ab) }'; then
      passed=$((passed + 1)); echo "bytecode from two epochs: $ab instructions estimated, $a + $b alone"
    else fail "bytecode from two epochs: $ab instructions estimated, $a + $b alone"; fi
  else fail "bytecode from two epochs ('${e1:-}' '${e2:-}'): $(cat "$tmp/err")"; fi
  if "$OPT" "$P/copyloop-dyn" --db "$db2" --db "$db" -o "$tmp/c12" >/dev/null 2>"$tmp/err" &&
     grep -q "warning: $db2: no cycle samples of .*left out" "$tmp/err"; then
    passed=$((passed + 1)); echo "a database without the image's samples: $(cat "$tmp/err")"
  else fail "a database without the image's samples: $(cat "$tmp/err")"; fi
  "$OPT" "$P/alu-dyn" --db "$db" --db "$db2" -o "$tmp/x" 2>"$tmp/err"; rc=$?
  { [ $rc = 1 ] && grep -q "no cycle samples of .*every other database" "$tmp/err" && [ ! -e "$tmp/x" ]; } ||
    fail "no database with samples of the image: rc $rc, $(cat "$tmp/err")"
  "$OPT" "$P/alu-dyn" --db "$db" -o "$tmp/x" 2>"$tmp/err"; rc=$?
  { [ $rc = 1 ] && grep -q "no cycle samples of" "$tmp/err" && [ ! -e "$tmp/x" ]; } ||
    fail "an image without samples: rc $rc, $(cat "$tmp/err")"
fi

# Gaps (--gaps): on lua, trained on strings.lua, hot procedures move off
# the sets of their callers' and callees' hot lines (the test programs are
# too small to need it).  The plan says so, the measure falls, and the
# result verifies and runs two scripts as the original does, on axp and
# under qemu-alpha.  Without --gaps the plan has none.
lua=$BUILD/workloads/bin/lua
if [ -x "$lua" ]; then
  timeout -k 5 120 env -i "$AXP" run --exact "$tmp/lua.ex" -- "$lua" tests/workloads/lua/strings.lua >/dev/null 2>&1
  "$OPT" "$lua" --exact "$tmp/lua.ex" --write-plan "$tmp/lua.nogaps" -o "$tmp/x" >/dev/null 2>&1
  if [ -s "$tmp/lua.nogaps" ] && ! grep -q ' gap ' "$tmp/lua.nogaps"; then passed=$((passed + 1))
  else fail "lua without --gaps: $(grep -c ' gap ' "$tmp/lua.nogaps") gaps in the plan"; fi
  rm -f "$tmp/x"
  if "$OPT" "$lua" --exact "$tmp/lua.ex" --gaps --report "$tmp/lua.rep" --write-plan "$tmp/lua.plan" --check \
       -o "$tmp/lua.opt" >/dev/null 2>"$tmp/err"; then
    read -r ng gb cb ca <<<"$(sed -nE 's/^gaps: ([0-9]+) .*\(([0-9]+) bytes.* ([0-9]+) without the gaps, ([0-9]+) with$/\1 \2 \3 \4/p' "$tmp/lua.rep")"
    np=$(grep -c '^proc .* gap ' "$tmp/lua.plan")
    if [ "${ng:-0}" -gt 0 ] && [ "$np" = "$ng" ] && [ "$ca" -lt "$cb" ]; then
      passed=$((passed + 1)); echo "lua: $ng gaps ($gb bytes), partners' conflict measure $cb -> $ca"
    else fail "lua gaps: '$(grep '^gaps' "$tmp/lua.rep")', $np in the plan"; fi
    if "$CPO" addrmap "$tmp/lua.opt" --verify "$lua" >"$tmp/lua.verify" 2>&1; then passed=$((passed + 1))
    else fail "lua with gaps: verify"; tail -5 "$tmp/lua.verify"; fi
    for s in strings sort; do
      runners=("axp:$AXP run --")
      [ $run_qemu = 1 ] && runners+=("qemu:$ROOT/scripts/qemu-run.sh")
      for r in "${runners[@]}"; do
        # shellcheck disable=SC2086
        want=$(timeout -k 5 120 ${r#*:} "$lua" "tests/workloads/lua/$s.lua" 2>&1; echo "status $?")
        # shellcheck disable=SC2086
        got=$(timeout -k 5 120 ${r#*:} "$tmp/lua.opt" "tests/workloads/lua/$s.lua" 2>&1; echo "status $?")
        if [ "$want" = "$got" ]; then passed=$((passed + 1))
        else fail "lua with gaps on $s.lua (${r%%:*}): the output differs"; fi
      done
    done
  else fail "lua with gaps: $(cat "$tmp/err")"; fi
fi

# Errors are one line naming what is wrong.
o=$P/alu-static
"$OPT" "$o" --exact "$tmp/none.exact" -o "$tmp/x" 2>"$tmp/err"; rc=$?
{ [ $rc = 1 ] && grep -q "none.exact" "$tmp/err" && [ "$(wc -l <"$tmp/err")" = 1 ]; } ||
  fail "missing exact file: rc $rc, $(cat "$tmp/err")"
printf 'block zz\n' >"$tmp/bad.exact"
"$OPT" "$o" --exact "$tmp/bad.exact" -o "$tmp/x" 2>"$tmp/err"; rc=$?
{ [ $rc = 1 ] && grep -q "bad.exact:1:" "$tmp/err"; } || fail "bad exact file: rc $rc, $(cat "$tmp/err")"
"$OPT" "$o" --exact "$tmp/$(ls "$tmp" | grep -m1 'alu-dyn.exact')" -o "$tmp/x" 2>"$tmp/err"; rc=$?
{ [ $rc = 1 ] && grep -q "hold no image" "$tmp/err"; } || fail "other image's counts: rc $rc, $(cat "$tmp/err")"
[ -e "$tmp/x" ] && fail "an output was written after an error"
echo "optimized programs: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
