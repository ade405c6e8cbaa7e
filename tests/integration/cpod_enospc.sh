#!/bin/bash
# cpod over a full disk: the database on a small tmpfs in a private mount
# namespace.  A flush into the full disk must fail with an error naming
# the cause, keep the daemon serving and the stored profiles intact; once
# space is freed the refused merge is retried and nothing is lost or
# doubled, also when the daemon was killed while the merge was pending.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
PROD=$BUILD/tests/cpod/cpod_producer DUMP=$BUILD/tests/cpod/cpod_dump
for f in $BUILD/bin/cpod $BUILD/bin/cpo $PROD $DUMP; do
  [ -x "$f" ] || { echo "$f not built (make test builds it)"; exit 77; }
done
P=$BUILD/programs
IMAGES="$P/intloop-dyn $P/forkexec-dyn $P/malloc-dyn $P/alu-dyn"
for f in $IMAGES; do [ -f "$f" ] || { echo "need the test programs (make programs)"; exit 77; }; done
unshare -rm true 2>/dev/null || { echo "cannot create a private mount namespace (unshare -rm)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/mnt"
export BUILD PROD DUMP IMAGES tmp
unshare -rm bash -c '
  set -u
  mount -t tmpfs -o size=3m tmpfs "$tmp/mnt" || { echo "cannot mount a tmpfs"; exit 77; }
  db=$tmp/mnt/db log=$tmp/log status=0
  cpod() { "$BUILD/bin/cpod" --db "$db" --flush 1h --log "$log"; }
  finish() {
    "$BUILD/bin/cpo" quit --db "$db" >/dev/null 2>&1
    for l in "$db"/.cpod/*/regions; do
      r=$(readlink "$l") && case "$r" in /dev/shm/cpod-*) rm -rf "$r";; esac
    done
  }
  check() { local what=$1; shift; if "$@"; then echo "ok   $what"; else echo "FAIL $what"; status=1; fi; }
  sum() { cat "$@" | awk "{ k = \$1 \" \" \$2 \" \" \$3; c[k] += \$4 } END { for (k in c) print k, c[k] }" | sort; }
  same() { "$DUMP" "$db" | sort | cmp -s - "$1"; }

  trap finish EXIT
  cpod || exit 1
  timeout 120 "$PROD" "$db" "$tmp/a" --seed 1 --samples 60000 --quiet $IMAGES || status=1
  "$BUILD/bin/cpo" flush --db "$db" >/dev/null
  check "a first flush stores the first machine" same <(sum "$tmp/a")
  dd if=/dev/zero of="$tmp/mnt/fill" bs=4k 2>/dev/null
  timeout 120 "$PROD" "$db" "$tmp/b" --seed 2 --samples 60000 --quiet $IMAGES || status=1
  "$BUILD/bin/cpo" flush --db "$db" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  echo "     flush on a full disk: $(cat "$tmp/err")"
  check "it fails (exit $rc), naming the cause" grep -q "No space left on device" "$tmp/err"
  "$BUILD/bin/cpo" flush --db "$db" >/dev/null 2>"$tmp/err"
  check "the daemon still serves, and retries the merge at the next flush" grep -q "merge generation 2 failed" "$tmp/err"
  check "the stored profiles are intact" same <(sum "$tmp/a")
  # While the disk stays full the daemon backs off: no spinning, a quiet log.
  pid=$(cat "$db"/.cpod/*/lock)
  ticks() { awk "{ print \$14 + \$15 }" /proc/$pid/stat; }
  sleep 1
  t0=$(ticks) l0=$(stat -c %s "$log")
  sleep 6
  t1=$(ticks) l1=$(stat -c %s "$log")
  echo "     over 6 s of a full disk: $((t1 - t0)) CPU ticks, $((l1 - l0)) bytes of log"
  check "cpod stays under 1% of a core while merges fail" [ $((t1 - t0)) -le 6 ]
  check "its log grows under 10 KB a minute" [ $((l1 - l0)) -lt 1000 ]
  rm -f "$tmp/mnt/fill"
  timeout 120 "$PROD" "$db" "$tmp/c" --seed 3 --samples 30000 --quiet $IMAGES || status=1
  "$BUILD/bin/cpo" flush --db "$db" >/dev/null
  check "with space again, the refused merge and the new samples are in, once" same <(sum "$tmp/a" "$tmp/b" "$tmp/c")
  check "the log says the merge was retried" grep -q "(retried)" "$log"

  # Refused again, then killed while the merge is pending: the next daemon finishes it.
  timeout 120 "$PROD" "$db" "$tmp/d" --seed 4 --samples 60000 --quiet $IMAGES || status=1
  "$BUILD/bin/cpo" flush --db "$db" >/dev/null 2>&1   # drains d into memory first
  dd if=/dev/zero of="$tmp/mnt/fill" bs=4k 2>/dev/null
  timeout 120 "$PROD" "$db" "$tmp/e" --seed 5 --samples 60000 --quiet $IMAGES || status=1
  "$BUILD/bin/cpo" flush --db "$db" >/dev/null 2>&1
  pid=$(cat "$db"/.cpod/*/lock)
  kill -9 "$pid"
  rm -f "$tmp/mnt/fill"
  for t in $(seq 100); do cpod 2>/dev/null && break; sleep 0.02; done
  "$BUILD/bin/cpo" flush --db "$db" >/dev/null
  check "after a kill while refused, the next daemon stores everything once" \
    same <(sum "$tmp/a" "$tmp/b" "$tmp/c" "$tmp/d" "$tmp/e")
  exit $status
'
