#!/bin/bash
# Every test program (tests/programs), dynamic and static build, under axp:
# stdout and exit status must equal NAME.expected and NAME.status (default
# 0).  Each runs as tests/programs/README.md says: by absolute path, from a
# fresh empty working directory, with NAME.args and NAME.stdin.  The static
# builds are held to the same expected output as the dynamic ones (which is
# what qemu-alpha prints for those).
# Exit 1 with diffs if any differs, 77 if axp or the programs are missing.
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
pass=0 fail=0

for c in "$SRC"/*.c; do
  name=$(basename "$c" .c)
  args=""
  [ -f "$SRC/$name.args" ] && args=$(cat "$SRC/$name.args")
  stdin=/dev/null
  [ -f "$SRC/$name.stdin" ] && stdin=$SRC/$name.stdin
  want=0
  [ -f "$SRC/$name.status" ] && want=$(cat "$SRC/$name.status")
  for kind in dyn static; do
    img=$OUT/$name-$kind
    if [ ! -x "$img" ]; then
      fail=$((fail + 1)); echo "FAIL $name-$kind: $img missing"; continue
    fi
    dir=$tmp/$name-$kind
    mkdir "$dir"
    # shellcheck disable=SC2086
    (cd "$dir" && timeout 120 "$AXP" run "$img" $args <"$stdin" >"$tmp/out" 2>"$tmp/err")
    rc=$?
    if [ "$rc" = "$want" ] && cmp -s "$tmp/out" "$SRC/$name.expected"; then
      pass=$((pass + 1)); echo "ok   $name-$kind"
    else
      fail=$((fail + 1)); echo "FAIL $name-$kind: status $rc (want $want)"
      diff "$tmp/out" "$SRC/$name.expected" | head -20
      head -20 "$tmp/err"
    fi
  done
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
