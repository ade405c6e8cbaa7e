#!/bin/bash
# Several daemons sharing one database, as over NFS: six writer processes
# merge into it at once, four as hosts of their own and two under one
# shared host name, while a reader reads every profile over and over and
# a new epoch starts half way.  The reader must never meet an unreadable
# profile, and at the end the sum over hosts and epochs must equal
# everything every writer merged.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
D=$BUILD/tests/profdb/profdb-driver
[ -x "$D" ] || { echo "$D not built (make test builds it)"; exit 77; }
tmp=$(mktemp -d)
trap '[ -n "${KEEP_TMP:-}" ] || rm -rf "$tmp"' EXIT
db=$tmp/db
N=4
mkdir -p "$db"
"$D" readloop "$db" "$tmp/stop" >"$tmp/reader.out" 2>&1 &
reader=$!
hosts=(alpha1 alpha2.example.com alpha3 alpha4 shared shared)
pids=()
for i in "${!hosts[@]}"; do
  "$D" hostwrite "$db" "${hosts[$i]}" $((i + 1)) $N &
  pids+=($!)
done
# the new epoch starts once a writer has merged, while they still run: a
# run where they were all done first would test nothing
for _ in $(seq 200); do
  ls "$db"/*/*/*.prof >/dev/null 2>&1 && break
  sleep 0.05
done
epoch=$("$D" newepoch "$db") || { echo "FAIL: new epoch"; exit 1; }
running=0
for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && running=$((running + 1)); done
[ "$running" -gt 0 ] || { echo "FAIL: every writer had finished before the new epoch started"; exit 1; }
echo "new epoch $epoch started while $running of ${#pids[@]} writers ran"
status=0
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || { echo "FAIL: writer $((i + 1)) (host ${hosts[$i]})"; status=1; }
done
touch "$tmp/stop"
wait "$reader" || status=1
cat "$tmp/reader.out"
[ $status -eq 0 ] || exit 1
ls "$db" | sed 's/^/epoch dir: /'
out=$("$D" hostcheck "$db" 1 2 3 4 5 6 -- $N 2>&1) || { echo "FAIL: $out"; exit 1; }
echo "ok   $out"
