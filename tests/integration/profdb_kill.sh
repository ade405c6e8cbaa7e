#!/bin/bash
# A profile writer killed with SIGKILL in the middle of its merges, 20
# times over one database.  After each kill every profile must read
# cleanly and hold exactly the merges that were stored: its state before
# the writer started plus batches 1..k, where k is the last batch the
# writer reported stored or the one after it (renamed into place, not yet
# reported).  A partly applied merge or a lost one fails.  Odd rounds kill
# at a random moment; even rounds wait for a profile to be half written
# (its temporary file present) and kill the writer there.  Then one clean
# run must remove the temporaries the killed writers left behind.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
D=$BUILD/tests/profdb/profdb-driver
[ -x "$D" ] || { echo "$D not built (make test builds it)"; exit 77; }
tmp=$(mktemp -d)
trap '[ -n "${KEEP_TMP:-}" ] || rm -rf "$tmp"' EXIT
db=$tmp/db snap=$tmp/snap
mkdir -p "$snap"
midwrite=0
for round in $(seq 1 20); do
  log=$tmp/log.$round
  : >"$log"
  mode=$([ $((round % 2)) -eq 0 ] && echo mid)
  "$D" killrun "$db" "$round" "$log" $((100 + RANDOM % 1200)) $mode || { echo "FAIL round $round"; exit 1; }
  temps=$(find "$db" -name '.*.tmp' | wc -l)
  [ "$temps" -gt 0 ] && midwrite=$((midwrite + 1))
  done=$(tail -n 1 "$log")
  if ! out=$("$D" check "$snap" "$db" "$round" "${done:-0}" 2>&1); then
    echo "FAIL round $round: $out"
    exit 1
  fi
  echo "ok   round $round: killed; temporaries left $temps; $out"
  rm -rf "$snap" && cp -a "$db" "$snap"
done
echo "kills that caught a profile half written (temporary file left): $midwrite of 20"
[ "$midwrite" -ge 5 ] || { echo "FAIL: fewer than 5 kills landed inside a profile write"; exit 1; }

: >"$tmp/log.last"
"$D" write "$db" 99 "$tmp/log.last" 1 || { echo "FAIL: clean run after the kills"; exit 1; }
temps=$(find "$db" -name '.*.tmp' | wc -l)
[ "$temps" -eq 0 ] || { echo "FAIL: $temps temporaries left after a clean run"; exit 1; }
out=$("$D" check "$snap" "$db" 99 1 2>&1) || { echo "FAIL after clean run: $out"; exit 1; }
echo "ok   clean run: no temporaries left; $out"
