#!/bin/bash
# cpo cat on a good profile and on damaged copies of it: every damage gives
# exit status 1 and one line naming the file and what is wrong.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
CPO=${CPO:-$BUILD/bin/cpo}
D=$BUILD/tests/profdb/profdb-driver
[ -x "$CPO" ] || { echo "$CPO not built"; exit 77; }
[ -x "$D" ] || { echo "$D not built (make test builds it)"; exit 77; }
tmp=$(mktemp -d)
trap '[ -n "${KEEP_TMP:-}" ] || rm -rf "$tmp"' EXIT
fail=0
good=$tmp/good.prof
"$D" sample "$good" 500 || exit 1

out=$("$CPO" cat "$good") || { echo "FAIL: cpo cat on a good profile"; exit 1; }
entries=$(echo "$out" | sed -n 's/^entries: *//p')
lines=$(echo "$out" | grep -c '^0x')
samples=$(echo "$out" | sed -n 's/^samples: *//p')
sum=$(echo "$out" | awk '/^0x/ { s += $2 } END { print s }')
if [ "$entries" = "$lines" ] && [ "$lines" -gt 400 ] && [ "$samples" = "$sum" ]; then
  echo "ok   good profile: its $entries entries listed, counts sum to the $samples samples of the header"
else
  echo "FAIL good profile: entries '$entries', lines $lines, samples '$samples', sum $sum"; fail=1
fi
"$CPO" cat --header "$good" | grep -q '^0x' && { echo "FAIL: --header listed entries"; fail=1; }

size=$(stat -c %s "$good")
patch() { # file offset byte
  printf "$(printf '\\x%02x' "$3")" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}
expect() { # name file pattern
  local err rc
  err=$("$CPO" cat "$2" 2>&1 >/dev/null); rc=$?
  if [ $rc -eq 1 ] && [ "$(echo "$err" | wc -l)" -eq 1 ] && echo "$err" | grep -q "^cpo: $2: .*$3"; then
    echo "ok   $1: $err"
  else
    echo "FAIL $1: status $rc, message: $err"; fail=1
  fi
}
head -c 60 "$good" >"$tmp/trunc-header.prof";            expect "truncated header" "$tmp/trunc-header.prof" "truncated"
head -c $((size - 10)) "$good" >"$tmp/trunc-payload.prof"; expect "truncated payload" "$tmp/trunc-payload.prof" "truncated"
: >"$tmp/empty.prof";                                      expect "empty file" "$tmp/empty.prof" "empty"
cp "$good" "$tmp/magic.prof"; patch "$tmp/magic.prof" 0 0x7f; expect "bad magic" "$tmp/magic.prof" "bad magic"
cp "$good" "$tmp/version.prof"; patch "$tmp/version.prof" 8 2; expect "wrong version" "$tmp/version.prof" "version 2"
cp "$good" "$tmp/payload.prof"; patch "$tmp/payload.prof" $((size - 5)) 0; expect "payload damaged" "$tmp/payload.prof" "payload checksum mismatch"
cp "$good" "$tmp/header.prof"; patch "$tmp/header.prof" 20 0x55; expect "header damaged" "$tmp/header.prof" "header checksum mismatch"
expect "missing file" "$tmp/none.prof" "No such file"
exit $fail
