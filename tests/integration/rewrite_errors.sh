#!/bin/bash
# optimize-image and cpo addrmap on bad input: every failure is a clear
# message naming the file, line or option at fault and a non-zero exit (1
# for errors, 2 for usage), never a crash; the input image is never changed.
# Also checks that `cpo addrmap NEW ADDR` gives back original addresses.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
OPT=$BUILD/bin/optimize-image
CPO=$BUILD/bin/cpo
PROG=$BUILD/programs/intloop-dyn
[ -x "$OPT" ] && [ -x "$CPO" ] || { echo "optimize-image or cpo not built (make)"; exit 77; }
[ -f "$PROG" ] || { echo "$PROG missing (make programs)"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cpo-rewrite-errors.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failed=0 passed=0

# expect STATUS PATTERN CMD...: exit status and a stderr line matching PATTERN.
expect() {
  local want=$1 pat=$2
  shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  if [ $rc -ne "$want" ] || ! grep -q -- "$pat" "$tmp/err"; then
    echo "FAIL: $* -> exit $rc (want $want), stderr:"; cat "$tmp/err"
    echo "      expected a line matching: $pat"
    failed=$((failed + 1))
  else
    echo "ok   $(head -1 "$tmp/err")"
    passed=$((passed + 1))
  fi
}

sum=$(md5sum <"$PROG")
expect 2 usage "$OPT"
expect 2 usage "$OPT" "$PROG" --plan identity
expect 2 usage "$OPT" "$PROG" --bogus -o "$tmp/x"
expect 2 "seed" "$OPT" "$PROG" --plan random --seed pear -o "$tmp/x"
expect 1 "$tmp/none: cannot open" "$OPT" "$tmp/none" --plan identity -o "$tmp/x"
head -c 3000 "$PROG" >"$tmp/truncated"
expect 1 "$tmp/truncated" "$OPT" "$tmp/truncated" --plan identity -o "$tmp/x"
head -c 5000 /dev/urandom >"$tmp/noise"
expect 1 "$tmp/noise" "$OPT" "$tmp/noise" --plan identity -o "$tmp/x"
printf 'cpo-layout 1\nproc 0x120000000\nblock 0x10\nfrobnicate 3\n' >"$tmp/bad.plan"
expect 1 "$tmp/bad.plan:4: unknown directive" "$OPT" "$PROG" --plan "$tmp/bad.plan" -o "$tmp/x"
printf 'cpo-layout 1\nproc 0x120000000\n' >"$tmp/noproc.plan"
expect 1 "$tmp/noproc.plan:2: 0x120000000 is not the start of a procedure" \
  "$OPT" "$PROG" --plan "$tmp/noproc.plan" -o "$tmp/x"
expect 1 "$tmp/missing.plan" "$OPT" "$PROG" --plan "$tmp/missing.plan" -o "$tmp/x"
cp "$PROG" "$tmp/same"
expect 2 "the same file as the image" "$OPT" "$tmp/same" --plan identity -o "$tmp/same"
cmp -s "$PROG" "$tmp/same" || { echo "FAIL: input overwritten"; failed=$((failed + 1)); }
expect 1 "not a rewritten image" "$CPO" addrmap "$PROG" 0x120000000
expect 1 "no/such/dir/x: cannot create" "$OPT" "$PROG" --plan identity -o "$tmp/no/such/dir/x"

# An image linked without --emit-relocs.
if command -v alpha-linux-gnu-gcc >/dev/null 2>&1; then
  printf 'int main(void) { return 0; }\n' >"$tmp/t.c"
  alpha-linux-gnu-gcc -O2 -o "$tmp/norelocs" "$tmp/t.c"
  expect 1 "emit-relocs" "$OPT" "$tmp/norelocs" --plan identity -o "$tmp/x"
  cp "$PROG" "$tmp/stripped" && alpha-linux-gnu-strip "$tmp/stripped"
  expect 1 "no symbol table (stripped?)" "$OPT" "$tmp/stripped" --plan identity -o "$tmp/x"
  # What cannot be rewritten is refused before a plan or a report is made.
  alpha-linux-gnu-gcc -O2 -fPIE -pie -Wl,--emit-relocs -o "$tmp/pie" "$tmp/t.c"
  "$BUILD/bin/axp" run --exact "$tmp/x.exact" -- "$PROG" >/dev/null 2>&1
  expect 1 "PIE are not supported" "$OPT" "$tmp/pie" --exact "$tmp/x.exact" --report "$tmp/r1" -o "$tmp/x"
  expect 2 "the same file as the image" "$OPT" "$tmp/same" --exact "$tmp/x.exact" --report "$tmp/r2" -o "$tmp/same"
  expect 1 "cannot create a file in" "$OPT" "$PROG" --exact "$tmp/x.exact" --report "$tmp/r3" -o "$tmp/no/x"
  # Counts that declare the image but hold none of its records.
  awk '!($1 ~ /^(block|edge|entry|exit|branch|jump|call)$/ && $2 == 0)' "$tmp/x.exact" >"$tmp/none.exact"
  expect 1 "none.exact: no counts for" "$OPT" "$PROG" --exact "$tmp/none.exact" -o "$tmp/x"
  # A source given twice would count twice.
  expect 2 "the same: it would count twice" "$OPT" "$PROG" --exact "$tmp/x.exact" --exact "$tmp/./x.exact" -o "$tmp/x"
  mkdir -p "$tmp/db"
  expect 2 "the same: it would count twice" "$OPT" "$PROG" --db "$tmp/db" --db "$tmp/db/" -o "$tmp/x"
  expect 2 "the same: it would count twice" "$OPT" "$PROG" --db "$tmp/db" --epoch 1 --epoch 1 -o "$tmp/x"
  if [ -e "$tmp/r1" ] || [ -e "$tmp/r2" ] || [ -e "$tmp/r3" ] || [ -e "$tmp/x" ]; then
    echo "FAIL: a refused run left a report or an output"; failed=$((failed + 1))
  else
    echo "ok   refused runs left no report and no output"; passed=$((passed + 1))
  fi
fi

# Rewriting a rewritten image rewrites its original, recovered from it; the
# map resolves addresses.
if "$OPT" "$PROG" --plan random --seed 3 -o "$tmp/new" >/dev/null 2>"$tmp/err"; then
  if "$OPT" "$tmp/new" --plan identity -o "$tmp/x" >/dev/null 2>"$tmp/err" &&
     "$OPT" "$PROG" --plan identity -o "$tmp/y" >/dev/null 2>&1 && cmp -s "$tmp/x" "$tmp/y"; then
    echo "ok   a rewritten image rewritten again: the same file as from its original"; passed=$((passed + 1))
  else
    echo "FAIL: rewriting a rewritten image: $(cat "$tmp/err")"; failed=$((failed + 1))
  fi
  expect 2 "the rewritten image itself" "$CPO" addrmap "$tmp/new" --original "$tmp/new"
  expect 1 "not a rewritten image" "$CPO" addrmap "$PROG" --original "$tmp/x"
  orig_main=$("$CPO" syms "$PROG" | awk '$NF == "main" { print $2; exit }')
  new_main=$("$CPO" syms "$tmp/new" | awk '$NF == "main" { print $2; exit }')
  got=$("$CPO" addrmap "$tmp/new" "0x$new_main" | awk '{ print $2 }')
  if [ -n "$orig_main" ] && [ "$got" = "0x$(echo "$orig_main" | sed 's/^0*//')" ] && [ "$new_main" != "$orig_main" ]; then
    echo "ok   main moved from 0x$orig_main to 0x$new_main and maps back"; passed=$((passed + 1))
  else
    echo "FAIL: main 0x$orig_main -> 0x$new_main maps back to $got"; failed=$((failed + 1))
  fi
  expect 2 "not an address" "$CPO" addrmap "$tmp/new" pear
else
  echo "FAIL: rewrite of $PROG"; cat "$tmp/err"; failed=$((failed + 1))
fi
[ "$(md5sum <"$PROG")" = "$sum" ] || { echo "FAIL: $PROG changed"; failed=$((failed + 1)); }
echo "rewrite errors: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
