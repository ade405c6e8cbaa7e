#!/bin/bash
# Runs the whole suite after `make test` has built it: the unit tests plain and
# under ASan+UBSan, a short run of every fuzzer, and every integration test in
# tests/integration (a script: exit 0 passes, 77 skips, anything else fails).
# With QUICK=1 (`make check`), fuzzers run 5 s each and only the integration
# tests listed in tests/integration/quick.list.  Prints the time each part
# took, then ends with the line "N passed, N failed, N skipped".
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
export BUILD
LOG=$BUILD/test-logs
mkdir -p "$LOG"
passed=0 failed=0 skipped=0
failures=() flaky=()
QUICK=${QUICK:-0}
[ "$QUICK" = 1 ] && FUZZ_SECONDS=${FUZZ_SECONDS:-5}
timings=()
part_start=$(date +%s)
# part NAME: the time since the previous part ended, for the summary
part() {
  local now
  now=$(date +%s)
  timings+=("$1 $((now - part_start))s")
  part_start=$now
}

# Criterion prints "Synthesis: Tested: T | Passing: P | Failing: F | Crashing: C".
run_unit() {
  local name=$1; shift
  echo "== $name"
  "$@" 2>&1 | tee "$LOG/$name.log" | grep -E '^\[(----|FAIL)\]|Synthesis' || true
  local syn p f c
  syn=$(grep 'Synthesis' "$LOG/$name.log" | tail -1)
  if [ -z "$syn" ]; then
    failed=$((failed + 1)); failures+=("$name (no summary)"); return
  fi
  p=$(echo "$syn" | sed -n 's/.*Passing: \([0-9]*\).*/\1/p')
  f=$(echo "$syn" | sed -n 's/.*Failing: \([0-9]*\).*/\1/p')
  c=$(echo "$syn" | sed -n 's/.*Crashing: \([0-9]*\).*/\1/p')
  # A test that failed is run once more on its own.  One that then passes
  # counts as passed but is named among the flaky ones in the summary: a
  # test that fails only under the load of the others is a finding to
  # follow up, not one to hide, and a real failure fails twice.
  local t again=0
  while read -r t; do
    [ -n "$t" ] || continue
    if "$1" --filter "${t/:://}" >>"$LOG/$name.rerun.log" 2>&1; then
      again=$((again + 1)); flaky+=("$name: $t failed, then passed alone")
    fi
  done < <(sed -n 's/^\[FAIL\] \([^:]*::[^:]*\):.*/\1/p' "$LOG/$name.log")
  passed=$((passed + p + again)); failed=$((failed + f + c - again))
  [ $((f + c - again)) -eq 0 ] || failures+=("$name: $((f + c - again)) failing or crashing")
}

run_unit unit "$BUILD/tests/unit" -j2
part unit
ASAN_OPTIONS=detect_leaks=0:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  run_unit unit-asan "$BUILD/asan/tests/unit" -j2
part unit-asan

# Fuzzers and integration tests share one pool of JOBS workers (default:
# one per core): the tests that run whole workloads first, so the long poles
# start early, then the fuzzers (one process on one core each), then the
# rest.  Each writes its own log; results are reported in name order.
JOBS=${JOBS:-$(nproc)}
run_fuzzer() {
  local fz=$1 name corpus
  name=fuzz-$(basename "$fz")
  corpus=$BUILD/fuzz/corpus-$(basename "$fz")
  mkdir -p "$corpus"
  # a crash input goes to the logs, not into the checkout
  "$fz" -max_total_time="${FUZZ_SECONDS:-20}" -rss_limit_mb=2048 -artifact_prefix="$LOG/$name-" \
    "$corpus" tests/fuzz/seeds >"$LOG/$name.log" 2>&1
  echo $? >"$LOG/$name.result"
}
run_one() {
  local t=$1 name start
  name=$(basename "$t" .sh)
  start=$(date +%s)
  # A fixed environment: axp hands its own to the guest, whose stack (and
  # so its cycles and what the samples hit) would otherwise move with the
  # host's variables, and a figure that passed here could fail elsewhere.
  # The suite's own switches (CPO_QUICK, KEEP_TMP) still pass.
  local keep=()
  [ -n "${CPO_QUICK:-}" ] && keep+=("CPO_QUICK=$CPO_QUICK")
  [ -n "${KEEP_TMP:-}" ] && keep+=("KEEP_TMP=$KEEP_TMP")
  env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
    TMPDIR="${TMPDIR:-/tmp}" BUILD="$BUILD" "${keep[@]}" bash "$t" >"$LOG/$name.log" 2>&1
  echo "$? $(( $(date +%s) - start ))" >"$LOG/$name.result"
}
fuzzers=() tests=()
for fz in "$BUILD"/fuzz/*; do
  [ -x "$fz" ] && [ -f "$fz" ] && fuzzers+=("$fz")
done
for t in tests/integration/*workloads*.sh tests/integration/*.sh; do
  [ -f "$t" ] || continue
  [ "$QUICK" = 1 ] && ! grep -qx "$(basename "$t" .sh)" tests/integration/quick.list && continue
  case " ${tests[*]-} " in *" $t "*) continue;; esac
  tests+=("$t")
done
queue=()
for t in "${tests[@]-}"; do case $t in *workloads*) queue+=("test:$t");; esac; done
for fz in "${fuzzers[@]-}"; do [ -n "$fz" ] && queue+=("fuzz:$fz"); done
for t in "${tests[@]-}"; do case $t in *workloads*|"") ;; *) queue+=("test:$t");; esac; done
for job in "${queue[@]-}"; do
  [ -n "$job" ] || continue
  case $job in
    fuzz:*) rm -f "$LOG/fuzz-$(basename "${job#fuzz:}").result" ;;
    test:*) rm -f "$LOG/$(basename "${job#test:}" .sh).result" ;;
  esac
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
  case $job in
    fuzz:*) run_fuzzer "${job#fuzz:}" & ;;
    test:*) run_one "${job#test:}" & ;;
  esac
done
wait
part "fuzzers+integration"
for fz in "${fuzzers[@]-}"; do
  [ -n "$fz" ] || continue
  name=fuzz-$(basename "$fz")
  echo "== $name"
  if [ "$(cat "$LOG/$name.result" 2>/dev/null)" = 0 ]; then
    passed=$((passed + 1)); echo "ok   $name ($(grep -c . "$LOG/$name.log") log lines)"
  else
    failed=$((failed + 1)); failures+=("$name"); tail -30 "$LOG/$name.log"
  fi
done
for t in $(printf '%s\n' "${tests[@]-}" | sort); do
  name=$(basename "$t" .sh)
  read -r rc secs <"$LOG/$name.result" || { rc=1; secs=?; }
  case $rc in
    0)  passed=$((passed + 1)); echo "ok   $name (${secs}s)";;
    77) skipped=$((skipped + 1)); echo "skip $name: $(tail -1 "$LOG/$name.log")";;
    *)  failed=$((failed + 1)); failures+=("$name"); echo "FAIL $name (${secs}s)"; tail -40 "$LOG/$name.log";;
  esac
done

for f in "${flaky[@]+"${flaky[@]}"}"; do echo "flaky: $f"; done
for f in "${failures[@]+"${failures[@]}"}"; do echo "failed: $f"; done
# A failing unit test's name and assertion, again here: a log that is cut
# to its tail still says which test failed and why.
for name in unit unit-asan; do
  grep -E '^\[(----|FAIL)\]' "$LOG/$name.log" 2>/dev/null | grep -v '^\[----\] *$' | head -20 |
    sed "s/^/$name: /"
done
echo "time: ${timings[*]}"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
