#!/bin/bash
# Regenerates NAME.expected (and NAME.status) for the named programs, or for
# all of them: runs the Alpha dynamic build under qemu-alpha and a host build
# of the same source, requires both to print the same thing and exit with the
# same status, and writes that.  Programs qemu cannot run (the list in
# tests/programs/qemu-cannot-run) take the host build's result alone.  Read every changed .expected file before committing.
#
# usage: tests/programs/update-expected.sh [NAME...]   (after `make programs`)
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) out=$BUILD/programs;; *) out=$root/$BUILD/programs;; esac
QEMU=${QEMU:-qemu-alpha}
ALPHA_ROOT=${ALPHA_ROOT:-/usr/alpha-linux-gnu}

# The one list of programs qemu cannot run, which programs_qemu.sh reads too.
cannot=$(sed -n 's/^\([a-z0-9_]*\) .*/\1/p' "$here/qemu-cannot-run" | tr '\n' ' ')

names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  for c in "$here"/*.c; do names+=("$(basename "$c" .c)"); done
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
make -s -C "$here" host HOST_OUT="$tmp/host" HOST_PROGRAMS="${names[*]}" || exit 1

# run LABEL NAME: runs the command in the array cmd in a fresh directory with
# NAME's args and stdin; leaves stdout in $tmp/LABEL.out, status in LABEL.rc
run() {
  local label=$1 name=$2 args=() stdin=/dev/null
  [ -f "$here/$name.args" ] && read -r -a args < "$here/$name.args"
  [ -f "$here/$name.stdin" ] && stdin=$here/$name.stdin
  local wd; wd=$(mktemp -d "$tmp/wd.XXXXXX")
  (cd "$wd" && timeout 20 "${cmd[@]}" "${args[@]+"${args[@]}"}" < "$stdin" > "$tmp/$label.out")
  echo $? > "$tmp/$label.rc"
}

status=0
for name in "${names[@]}"; do
  [ -f "$here/$name.c" ] || { echo "no such program: $name"; status=1; continue; }
  cmd=("$tmp/host/$name"); run host "$name"
  if [[ " $cannot " == *" $name "* ]]; then
    echo "$name: host build only (qemu cannot run it)"
  else
    [ -x "$out/$name-dyn" ] || { echo "$name: $out/$name-dyn missing (make programs)"; status=1; continue; }
    cmd=("$QEMU" -L "$ALPHA_ROOT" "$out/$name-dyn"); run qemu "$name"
    if ! cmp -s "$tmp/qemu.out" "$tmp/host.out" || ! cmp -s "$tmp/qemu.rc" "$tmp/host.rc"; then
      echo "$name: qemu and host disagree (status $(cat "$tmp/qemu.rc") vs $(cat "$tmp/host.rc")):"
      diff "$tmp/qemu.out" "$tmp/host.out" | head -20
      status=1
      continue
    fi
  fi
  cp "$tmp/host.out" "$here/$name.expected"
  rc=$(cat "$tmp/host.rc")
  if [ "$rc" = 0 ]; then rm -f "$here/$name.status"; else echo "$rc" > "$here/$name.status"; fi
  echo "$name: $(wc -l < "$here/$name.expected") lines, status $rc"
done
exit $status
