#!/bin/bash
# The driver under concurrency: one producer thread per simulated CPU (4)
# pushes a skewed deterministic stream while a separate consumer process
# drains overflow buffers and requests flushes at random moments.  At the
# end every (pid, pc, event) key must add up exactly: produced = drained +
# still in overflow buffers + still in the hash tables + dropped (counted).
# Both eviction policies, both full-buffer modes, both ways a run ends (a
# last flush answered by the live producer, or the producer leaving and the
# consumer salvaging the region).
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
B=$BUILD/tests/driver/driver_stress
if [ ! -x "$B" ]; then echo "$B not built (make test builds it)"; exit 77; fi
# regions belong on a tmpfs
if [ -w /dev/shm ]; then T=$(mktemp -d /dev/shm/cpo-driver.XXXXXX); else T=$(mktemp -d); fi
trap 'rm -rf "$T"' EXIT
status=0
run() {   # name, options...
  local name=$1; shift
  local dir=$T/$name
  mkdir -p "$dir"
  timeout 300 "$B" consume "$dir/region" "$dir/consumed" "$@" 2>"$dir/consumer.err" &
  local cpid=$!
  timeout 300 "$B" produce "$dir/region" "$dir/produced" "$@" 2>"$dir/producer.err"
  local prc=$?
  wait $cpid
  local crc=$?
  if [ $prc -ne 0 ] || [ $crc -ne 0 ]; then
    echo "FAIL $name: producer exit $prc, consumer exit $crc"
    cat "$dir/producer.err" "$dir/consumer.err"
    status=1
    return
  fi
  if out=$("$B" compare "$dir/produced" "$dir/consumed"); then
    echo "ok   $name: $(echo "$out" | head -1)"
    echo "     $(echo "$out" | sed -n 2p)"
  else
    echo "FAIL $name:"
    echo "$out"
    status=1
  fi
}
run front-stall-flush --policy front --full stall --final flush --cpus 4 --samples 1000000 --seed 1
run rr-stall-exit     --policy rr    --full stall --final exit  --cpus 4 --samples 1000000 --seed 2
run front-drop-exit   --policy front --full drop  --final exit  --cpus 4 --samples 1000000 --seed 3 --table 1024 --buffer 64
run rr-drop-flush     --policy rr    --full drop  --final flush --cpus 4 --samples 1000000 --seed 4 --table 1024 --buffer 64
run rr-tiny-flush     --policy rr    --full stall --final flush --cpus 4 --samples 250000  --seed 5 --table 64 --buffer 16
run front-tiny-exit   --policy front --full stall --final exit  --cpus 4 --samples 250000  --seed 6 --table 64 --buffer 16
exit $status
