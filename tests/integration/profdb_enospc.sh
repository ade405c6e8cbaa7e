#!/bin/bash
# A full disk under the profile database: a small tmpfs in a private mount
# namespace, filled up after two batches are stored.  The next merge must
# fail with "No space left on device" naming the profile, leave every
# stored profile readable and unchanged, and leave no temporary file; once
# space is freed, merging works again.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
D=$BUILD/tests/profdb/profdb-driver
[ -x "$D" ] || { echo "$D not built (make test builds it)"; exit 77; }
unshare -rm true 2>/dev/null || { echo "cannot create a private mount namespace (unshare -rm)"; exit 77; }
tmp=$(mktemp -d)
trap '[ -n "${KEEP_TMP:-}" ] || rm -rf "$tmp"' EXIT
mkdir -p "$tmp/mnt" "$tmp/snap"
export D tmp
unshare -rm bash -c '
  set -u
  mount -t tmpfs -o size=4m tmpfs "$tmp/mnt" || { echo "cannot mount a tmpfs"; exit 77; }
  db=$tmp/mnt/db
  "$D" write "$db" 1 "$tmp/log1" 2 || { echo "FAIL: first batches"; exit 1; }
  cp -a "$db/." "$tmp/snap/"
  dd if=/dev/zero of="$tmp/mnt/fill" bs=4k 2>/dev/null
  echo "filled: $(df -k "$tmp/mnt" | awk "NR==2 { print \$4 }") KiB free"
  if "$D" write "$db" 2 "$tmp/log2" 1 2>"$tmp/err"; then
    echo "FAIL: a merge into a full disk succeeded"; exit 1
  fi
  echo "merge on a full disk: $(cat "$tmp/err")"
  grep -q "No space left on device" "$tmp/err" && grep -q "\.prof: cannot" "$tmp/err" ||
    { echo "FAIL: the error does not name the profile and the cause"; exit 1; }
  temps=$(find "$db" -name ".*.tmp" | wc -l)
  [ "$temps" -eq 0 ] || { echo "FAIL: $temps temporaries left"; exit 1; }
  out=$("$D" check "$tmp/snap" "$db" 2 0 2>&1) || { echo "FAIL: $out"; exit 1; }
  echo "ok   stored profiles intact: $out"
  rm -f "$tmp/mnt/fill"
  : >"$tmp/log3"
  "$D" write "$db" 3 "$tmp/log3" 1 || { echo "FAIL: merge after freeing space"; exit 1; }
  echo "ok   merging works again once space is free"
'
