#!/bin/bash
# cpo serve end to end on the dynamic lua workload (docs/service.md):
# days of work under cpod, with cpo serve optimizing, checking on axp and
# qemu-alpha, deploying and judging unattended; a bad candidate from the
# fault hook that judging must roll back; then cpo serve killed with -9 at
# random moments twenty times, after which the deployed executable must run,
# the state must read back and the service must resume.  Exit 77 when the
# workloads are not built.
set -u
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
CPO=$BUILD/bin/cpo
AXP=$BUILD/bin/axp
LUA=$BUILD/workloads/bin/lua
S=$ROOT/tests/workloads/lua
[ -x "$LUA" ] || { echo "workloads not built (make workloads)"; exit 77; }
command -v qemu-alpha >/dev/null || { echo "qemu-alpha not installed"; exit 77; }

. tests/integration/lib/cpod.sh
W=$T/w
mkdir -p "$W/bin"
"$BUILD/bin/cpod" --db "$DB" --flush 1h || { echo "FAIL cpod did not start"; exit 1; }
cat >"$W/serve.conf" <<EOF
db = $DB
state = state
poll = 0.2
[program lua]
original = $LUA
deploy = bin/lua
test = \$RUN \$EXE $S/sieve.lua
min-samples = 2000
EOF
SERVE_PID=
serve_start() { "$CPO" serve --config "$W/serve.conf" 2>>"$W/serve.err" & SERVE_PID=$!; }
serve_stop() { [ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null; wait "$SERVE_PID" 2>/dev/null; SERVE_PID=; }
trap 'serve_stop; cpod_cleanup' EXIT
# a day of work on the deployed executable, then a new epoch
day() {
  "$AXP" run --pmu cycles:4000 --collector "$DB" -- "$W/bin/lua" "$S/closures.lua" >/dev/null &&
  "$AXP" run --pmu cycles:4000 --collector "$DB" -- "$W/bin/lua" "$S/sieve.lua" >/dev/null &&
  "$CPO" epoch --db "$DB" >/dev/null
}
history() { local n; n=$(grep -c "^history .* $1:" "$W/state/lua/state" 2>/dev/null); echo "${n:-0}"; }
# wait_for WHAT N: until the history holds N entries WHAT (60 s at most)
wait_for() {
  local i
  for i in $(seq 300); do [ "$(history "$1")" -ge "$2" ] && return 0; sleep 0.2; done
  return 1
}
build_id() { "$CPO" info "$1" 2>/dev/null | sed -n 's/^build-id: *//p'; }
deployed_matches() {
  local v
  v=$(sed -n 's/^deployed //p' "$W/state/lua/state")
  [ -n "$v" ] && [ "$(build_id "$W/bin/lua")" = "$(build_id "$W/state/lua/versions/$v/exe")" ]
}

serve_start
check "a first start installs the original" wait_for deployed 1
day && day
check "a converged profile is optimized, checked and deployed" wait_for deployed 2
check "the deploy path holds the deployed version" deployed_matches
# judging takes whole epochs after the deploy's: the next day and one more
day && day
check "the new version is judged and kept" wait_for kept 1
grep '^history' "$W/state/lua/state" | sed 's/^/     /'
serve_stop

# A bad candidate: a random layout, which must be caught by judging.
CPO_SERVE_FAULT=random-plan:lua serve_start
day && day
check "the fault hook's candidate is deployed" wait_for deployed 3
day && day
check "judging rolls the bad candidate back" wait_for "rolled back" 1
check "the version before it is back at the deploy path" deployed_matches
grep '^history' "$W/state/lua/state" | tail -3 | sed 's/^/     /'
serve_stop

# kill -9 at random moments: of rounds, checks and installs.
kills=0 bad=0
for i in $(seq 20); do
  [ $((i % 3)) -eq 1 ] && day
  serve_start
  sleep "0.$((RANDOM % 10))$((RANDOM % 10))"
  [ $((i % 4)) -eq 0 ] && sleep 1
  kill -9 "$SERVE_PID" 2>/dev/null && kills=$((kills + 1))
  wait "$SERVE_PID" 2>/dev/null
  SERVE_PID=
  out=$("$AXP" run -- "$W/bin/lua" -e 'print(6 * 7)' 2>&1)
  if [ "$out" != 42 ] || ! "$CPO" status --config "$W/serve.conf" >/dev/null 2>&1; then
    bad=$((bad + 1))
    echo "     after kill $i: deployed program says '$out'"
  fi
done
check "20 kills: the deployed program always ran, the state always read back ($kills kills)" [ "$bad" -eq 0 ]
"$CPO" serve --config "$W/serve.conf" --once 2>>"$W/serve.err"
check "the service resumes after the kills" [ $? -eq 0 ]
check "no half-made version is left" [ -z "$(ls -d "$W"/state/lua/versions/*.tmp 2>/dev/null)" ]
check "the deploy path holds the deployed version after the kills" deployed_matches
st=$("$CPO" status --config "$W/serve.conf")
echo "$st" | sed 's/^/     /' | head -8
check "cpo status names the deployed version" grep -q '^lua: version [0-9]* deployed' <<<"$st"

# configuration mistakes are named with their line
printf 'db = x\nstate = y\n[program p]\noriginal = a\ndeploy = b\ntest = t\nmin-sample = 3\n' >"$W/bad.conf"
err=$("$CPO" serve --config "$W/bad.conf" --once 2>&1)
check "an unknown key is an error naming its line" grep -q 'bad.conf:7: unknown program key' <<<"$err"
exit $status
