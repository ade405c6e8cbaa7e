#!/bin/bash
# The Alpha test programs (tests/programs) against their expected output.
#
# Builds nothing: `make test` runs `make programs` first.  For every
# tests/programs/NAME.c:
#   - NAME-dyn and NAME-static exist; NAME-static has no PT_INTERP (static),
#     NAME-dyn has one; both carry .rela.text (linked with --emit-relocs);
#   - NAME-dyn runs under qemu-alpha in a fresh empty working directory, with
#     NAME.args as arguments and NAME.stdin as standard input, and its stdout
#     and exit status must equal NAME.expected and NAME.status (default 0);
#   - programs qemu cannot run (QEMU_CANNOT_RUN below) are built with the host
#     compiler instead and that build is compared the same way.
# One line per check; exit 1 (with diffs) if any check fails, 77 if the
# programs or the Alpha tools are missing.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
OUT=$BUILD/programs
SRC=tests/programs
QEMU=${QEMU:-qemu-alpha}
ALPHA_ROOT=${ALPHA_ROOT:-/usr/alpha-linux-gnu}
READELF=${READELF:-alpha-linux-gnu-readelf}

# Programs qemu-alpha cannot run, with the reason: tests/programs/qemu-cannot-run.
QEMU_CANNOT_RUN=$(sed -n 's/^\([a-z0-9_]*\) .*/\1/p' tests/programs/qemu-cannot-run | tr '\n' ' ')

for tool in "$QEMU" "$READELF"; do
  command -v "$tool" >/dev/null || { echo "$tool not installed"; exit 77; }
done
[ -d "$OUT" ] || { echo "$OUT missing: run make programs"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0

ok()  { pass=$((pass + 1)); echo "ok   $*"; }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

names=()
for c in "$SRC"/*.c; do names+=("$(basename "$c" .c)"); done

# ---- the images ------------------------------------------------------------
for name in "${names[@]}"; do
  for kind in dyn static; do
    img=$OUT/$name-$kind
    if [ ! -f "$img" ]; then
      bad "$name-$kind: $img missing"
      continue
    fi
    # readelf -l prints "Requesting program interpreter" for a PT_INTERP.
    headers=$("$READELF" -lW "$img" 2>&1)
    if echo "$headers" | grep -q 'INTERP'; then interp=yes; else interp=no; fi
    if [ "$kind" = static ] && [ $interp = yes ]; then
      bad "$name-static: has a program interpreter (not statically linked)"
    elif [ "$kind" = dyn ] && [ $interp = no ]; then
      bad "$name-dyn: no program interpreter (not dynamically linked)"
    else
      ok "$name-$kind: $([ $kind = static ] && echo 'static, no INTERP' || echo 'dynamic, has INTERP')"
    fi
    if "$READELF" -SW "$img" 2>/dev/null | grep -q '\.rela\.text '; then
      ok "$name-$kind: has .rela.text (--emit-relocs)"
    else
      bad "$name-$kind: no .rela.text section (not linked with --emit-relocs)"
    fi
  done
done

# ---- running them ------------------------------------------------------------
need_host=()
for name in "${names[@]}"; do
  [[ " $QEMU_CANNOT_RUN " == *" $name "* ]] && need_host+=("$name")
done
if [ ${#need_host[@]} -gt 0 ]; then
  if ! make -s -C "$SRC" host HOST_OUT="$tmp/host" HOST_PROGRAMS="${need_host[*]}" \
       >"$tmp/host-build.log" 2>&1; then
    cat "$tmp/host-build.log"
    bad "host build of ${need_host[*]}"
  fi
fi

# check NAME LABEL CMD...: runs CMD in a fresh directory with NAME's args and
# stdin and compares stdout and exit status with NAME.expected / NAME.status
check() {
  local name=$1 label=$2; shift 2
  local args=() stdin=/dev/null want=0
  [ -f "$SRC/$name.args" ] && read -r -a args < "$SRC/$name.args"
  [ -f "$SRC/$name.stdin" ] && stdin=$PWD/$SRC/$name.stdin
  [ -f "$SRC/$name.status" ] && want=$(tr -d ' \n' < "$SRC/$name.status")
  if [ ! -f "$SRC/$name.expected" ]; then
    bad "$name ($label): $SRC/$name.expected missing"
    return
  fi
  local wd; wd=$(mktemp -d "$tmp/wd.XXXXXX")
  (cd "$wd" && timeout 30 "$@" "${args[@]+"${args[@]}"}" <"$stdin" >"$tmp/$name.out" 2>"$tmp/$name.err")
  local rc=$?
  local same=yes
  cmp -s "$tmp/$name.out" "$SRC/$name.expected" || same=no
  if [ $same = yes ] && [ "$rc" = "$want" ]; then
    ok "$name ($label): stdout matches, exit status $rc"
  else
    bad "$name ($label): $([ $same = yes ] && echo "stdout matches" || echo "stdout differs"), exit status $rc (expected $want)"
    [ $same = yes ] || diff -u "$SRC/$name.expected" "$tmp/$name.out" | head -40
    [ -s "$tmp/$name.err" ] && { echo "--- stderr:"; head -20 "$tmp/$name.err"; }
  fi
}

for name in "${names[@]}"; do
  if [[ " $QEMU_CANNOT_RUN " == *" $name "* ]]; then
    if [ -x "$tmp/host/$name" ]; then
      check "$name" "host build; qemu cannot run it" "$tmp/host/$name"
    else
      bad "$name (host build): not built"
    fi
  elif [ -f "$OUT/$name-dyn" ]; then
    check "$name" "qemu-alpha, -dyn" "$QEMU" -L "$ALPHA_ROOT" "$(cd "$OUT" && pwd)/$name-dyn"
  fi
done

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] || exit 1
