#!/bin/bash
# cpo serve and the faults around an install.  An install that fails while
# the service runs (a directory put where the executable goes: the rename
# over it fails) is logged once, the phase stays "deploying" and the
# install is tried again at every look; once the way is clear the version
# goes in, the history says so, and judging goes on.  Then what a kill can
# leave, cleaned up by the next start: a temporary beside the deploy path,
# a version directory the state never recorded and a half-made one.  Last, a SIGHUP that
# names another state directory, damaged state files (with every program
# refused, --once exits 1), where a rejected round's message points, a
# deploy path replaced behind the service's back, and a file where
# versions/ goes.  About 10 s.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$(pwd)/$BUILD ;; esac
CPO=$BUILD/bin/cpo AXP=$BUILD/bin/axp CPOD=$BUILD/bin/cpod PROG=$BUILD/programs/bytecode-dyn
for f in "$CPO" "$AXP" "$CPOD"; do [ -x "$f" ] || { echo "$f not built (make)"; exit 77; }; done
[ -f "$PROG" ] || { echo "$PROG missing (make programs)"; exit 77; }
command -v qemu-alpha >/dev/null || { echo "qemu-alpha not installed"; exit 77; }
. tests/integration/lib/cpod.sh
W=$T/w
mkdir -p "$W/bin" "$W/orig"
cp "$PROG" "$W/orig/prog"
"$CPOD" --db "$DB" --flush 1h || { echo "FAIL cpod did not start"; exit 1; }
cat >"$W/serve.conf" <<EOC
db = $DB
state = state
poll = 0.2
[program p]
original = orig/prog
deploy = bin/prog
test = \$RUN \$EXE 2000 >/dev/null; test \$? = 47
min-samples = 50
min-gain = 0
converge = 0.5
EOC
day() {   # the running version's work, from where it now is
  for i in 1 2 3; do timeout -k 5 60 "$AXP" run --pmu cycles:500 --collector "$DB" -- "$1" 2000 >/dev/null; done
  "$CPO" epoch --db "$DB" >/dev/null
}
phase() { sed -n 's/^phase //p' "$W/state/p/state"; }
runs() { timeout -k 5 60 "$AXP" run -- "$W/bin/prog" 2000 >/dev/null 2>&1; [ $? = 47 ]; }
passed=0 failed=0
ok() { if "${@:2}"; then echo "ok   $1"; passed=$((passed + 1)); else echo "FAIL $1"; failed=$((failed + 1)); fi; }

timeout -k 5 60 "$CPO" serve --config "$W/serve.conf" --once >/dev/null 2>&1
ok "version 0 deployed" runs
cp "$W/bin/prog" "$W/v0"
timeout -k 5 60 "$CPO" serve --config "$W/serve.conf" --for 40 2>"$W/serve.err" &
sp=$!   # timeout passes the TERM below on to cpo serve
sleep 1
# The executable moves aside and a directory takes its place: the rename of
# the next install over it fails.
mv "$W/bin/prog" "$W/bin/real" && mkdir "$W/bin/prog" && touch "$W/bin/prog/x"
day "$W/bin/real"; day "$W/bin/real"
for i in $(seq 50); do [ "$(phase)" = deploying ] && break; sleep 0.2; done
ok "a failed install leaves the phase at deploying" [ "$(phase)" = deploying ]
sleep 1
ok "its failure is logged once" [ "$(grep -c 'cannot install version 1' "$W/serve.err")" = 1 ]
# The way is cleared by removing the directory alone: putting the old
# executable back too would race the service's next look, which may install
# into the empty path before the mv lands on top of it.
rm -rf "$W/bin/prog" "$W/bin/real"
for i in $(seq 50); do [ "$(phase)" = judging ] && break; sleep 0.2; done
ok "once the way is clear the install goes through ($(phase))" [ "$(phase)" = judging ]
ok "the history says so" grep -q '^history .* 1 installed: at .*after an install that had failed' "$W/state/p/state"
ok "the deploy path holds version 1, which runs" bash -c 'cmp -s "$1/bin/prog" "$1/state/p/versions/1/exe" && ! cmp -s "$1/bin/prog" "$1/v0"' _ "$W"
ok "and it runs" runs
kill "$sp" 2>/dev/null; wait "$sp" 2>/dev/null

# What a kill -9 in an install or at the end of a round leaves.
next=$(sed -n 's/^next //p' "$W/state/p/state")
cp -r "$W/state/p/versions/1" "$W/state/p/versions/$next"
cp -r "$W/state/p/versions/1" "$W/state/p/versions/$((next + 1)).tmp"
head -c 1000 "$W/bin/prog" >"$W/bin/.prog.Ab3xYz"
echo keep >"$W/bin/.prog.keep"
timeout -k 5 60 "$CPO" serve --config "$W/serve.conf" --once >/dev/null 2>&1
ok "a start removes a version the state never recorded" [ ! -e "$W/state/p/versions/$next" ]
ok "and a half-made one (N.tmp)" [ ! -e "$W/state/p/versions/$((next + 1)).tmp" ]
ok "but no recorded one" [ -d "$W/state/p/versions/0" -a -d "$W/state/p/versions/1" ]
ok "and an install's temporary beside the deploy path" [ ! -e "$W/bin/.prog.Ab3xYz" ]
ok "but no other file there" [ -f "$W/bin/.prog.keep" ]
ok "the log names both" bash -c 'grep -q "removing version $2, which a stop left unrecorded" "$1" &&
  grep -q "removing .*/bin/.prog.Ab3xYz, left by an install" "$1"' _ "$W/state/serve.log" "$next"
# SIGHUP with another state directory: kept as it was (its lock and log
# stay with the first), not served half-locked.
timeout -k 5 60 "$CPO" serve --config "$W/serve.conf" --for 20 2>/dev/null &
sp=$!
for i in $(seq 50); do grep -q "reading\|deployed at" "$W/state/serve.log" 2>/dev/null && break; sleep 0.1; done
sleep 0.5
sed -i 's/^state = state$/state = state2/' "$W/serve.conf"
pkill -HUP -f "serve --config $W/serve.conf --for 20"
for i in $(seq 50); do grep -q "takes a restart" "$W/state/serve.log" && break; sleep 0.1; done
ok "SIGHUP with another 'state' is refused in the log" grep -q "'state' changed from .* which takes a restart" "$W/state/serve.log"
ok "and the other directory is not served" [ ! -e "$W/state2" ]
kill "$sp" 2>/dev/null; wait "$sp" 2>/dev/null
# A state file cut short in a number, or naming a version not yet made,
# is damage to report, not a 0 to go on with.
sed -i 's/^state = state2$/state = state/' "$W/serve.conf"
cp "$W/state/p/state" "$W/state.good"
sed -i 's/^next .*/next /' "$W/state/p/state"
timeout -k 5 60 "$CPO" serve --config "$W/serve.conf" --once >"$W/out" 2>&1
rc=$?
ok "a number cut short is refused" grep -q "not looked after: .*/state:[0-9]*: cannot read this line" "$W/out"
# With every program refused there is nothing to serve: a failure to start.
ok "with no program looked after, --once says so and exits 1 (exit $rc)" bash -c '[ "$1" = 1 ] &&
  grep -q "no program is looked after: every one .*/serve.conf names was refused" "$2"' _ "$rc" "$W/out"
sed 's/^deployed .*/deployed 99/' "$W/state.good" >"$W/state/p/state"
timeout -k 5 60 "$CPO" serve --config "$W/serve.conf" --once >"$W/out" 2>&1
ok "a version not below next is refused" grep -q "not looked after: .*a version named is not below next" "$W/out"
# A rejected round's files are kept under failed-N, and its message names
# them there.
cp "$W/state.good" "$W/state/p/state"
sed -i 's/test \$? = 47$/test \$? = 46/' "$W/serve.conf"
for pass in 1 2 3; do   # judging the version deployed above comes first
  day "$W/bin/prog"; day "$W/bin/prog"
  timeout -k 5 60 "$CPO" serve --config "$W/serve.conf" --once >"$W/out" 2>&1
  grep -q rejected "$W/out" && break
done
see=$(grep -o 'see [^)]*' "$W/out" | head -1 | cut -c5-)
ok "a rejection names a file that is there (${see:-none})" [ -n "$see" -a -e "$see" ]
# The deploy path replaced behind the service's back: said, not undone.
cp "$BUILD/programs/intloop-dyn" "$W/bin/other" && mv "$W/bin/other" "$W/bin/prog"
timeout -k 5 60 "$CPO" serve --config "$W/serve.conf" --once >"$W/out" 2>&1
ok "a replaced deploy path is logged" grep -q "bin/prog no longer holds version [0-9]* (another file is there); left as it is" "$W/out"
ok "and left as it is" cmp -s "$W/bin/prog" "$BUILD/programs/intloop-dyn"
"$CPO" status --config "$W/serve.conf" >"$W/status" 2>&1
ok "cpo status says so" grep -q "but .*bin/prog no longer holds version" "$W/status"
# A file where versions/ goes is refused at start-up, named, and nothing of
# the program is touched: not its state file, not the file, not an
# install's temporary beside the deploy path.
mv "$W/state/p/versions" "$W/versions" && echo x >"$W/state/p/versions"
head -c 1000 "$W/bin/prog" >"$W/bin/.prog.Qr7tUv"
files() { (cd "$W" && stat -c '%n %i %s %Y' state/p/* bin/.prog.* && md5sum state/p/state); }
before=$(files)
timeout -k 5 60 "$CPO" serve --config "$W/serve.conf" --once >"$W/out" 2>&1
rc=$?
ok "a file in place of versions/ is refused, exit 1 (exit $rc)" bash -c '[ "$1" = 1 ] &&
  grep -q "p: not looked after: .*/state/p/versions is a file, not a directory" "$2"' _ "$rc" "$W/out"
ok "and nothing of the program is touched" [ "$(files)" = "$before" ]
rm "$W/state/p/versions" "$W/bin/.prog.Qr7tUv" && mv "$W/versions" "$W/state/p/versions"
echo "$passed passed, $failed failed"
[ $failed = 0 ]
