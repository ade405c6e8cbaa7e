#!/bin/bash
# cpo serve refuses a configuration whose deploy path is an original build
# (its own under another spelling: "./", a symbolic link to its directory,
# a hard link; or another program's) or another program's deploy path: the
# service would write over it.  Each refusal names the file and the line of
# the program's heading, and no original changes.  Also the messages for a
# program without its keys, a key given twice, a program named twice, a
# configuration naming no program, no 'db' or no 'state', an empty one, a
# configuration in a missing directory and a state directory that cannot
# be made.  A mistake found once the whole file is read names the line of
# its program's heading; one about the whole file names the file alone: no
# message says line 0, at start or on a SIGHUP.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
CPO=$BUILD/bin/cpo
PROG=$BUILD/programs/intloop-dyn
[ -x "$CPO" ] || { echo "$CPO not built (make)"; exit 77; }
[ -f "$PROG" ] || { echo "$PROG missing (make programs)"; exit 77; }
tmp=$(mktemp -d)
trap '[ -n "${sp:-}" ] && kill "$sp" 2>/dev/null; rm -rf "$tmp"' EXIT
passed=0 failed=0
mkdir -p "$tmp/orig" "$tmp/bin" "$tmp/db"
cp "$PROG" "$tmp/orig/prog" && cp "$PROG" "$tmp/orig/other"
ln -s orig "$tmp/linked"
ln "$tmp/orig/prog" "$tmp/hard"
sum=$(cat "$tmp/orig/prog" "$tmp/orig/other" | md5sum)

# refused NAME PATTERN: the configuration on stdin, after the service's
# two lines, is refused with a line matching PATTERN, and no line says
# line 0.  refused_as_is: the configuration on stdin as it is.
refused_as_is() {
  local name=$1 pat=$2
  cat >"$tmp/$name.conf"
  timeout -k 5 30 "$CPO" serve --config "$tmp/$name.conf" --once >"$tmp/out" 2>&1
  local rc=$?
  if [ $rc -ne 0 ] && grep -q -- "$pat" "$tmp/out" && ! grep -q ':0:' "$tmp/out"; then
    echo "ok   $name: $(head -1 "$tmp/out")"; passed=$((passed + 1))
  else
    echo "FAIL $name: exit $rc, expected a line matching: $pat (and none ':0:')"; cat "$tmp/out"; failed=$((failed + 1))
  fi
}
refused() {
  { printf 'db = db\nstate = state\n'; cat; } >"$tmp/in"
  refused_as_is "$@" <"$tmp/in"
}
refused dot "dot.conf:3: program 'p': 'deploy' must not be the original build" <<<"$(printf '[program p]\noriginal = orig/prog\ndeploy = ./orig/prog\ntest = true\n')"
refused linked-dir "linked-dir.conf:3: program 'p': 'deploy' must not be the original build" <<<"$(printf '[program p]\noriginal = orig/prog\ndeploy = linked/prog\ntest = true\n')"
refused hard-link "hard-link.conf:3: program 'p': 'deploy' must not be the original build" <<<"$(printf '[program p]\noriginal = orig/prog\ndeploy = hard\ntest = true\n')"
refused one-deploy "one-deploy.conf:7: programs 'p' and 'q' have one 'deploy'" <<<"$(printf '[program p]\noriginal = orig/prog\ndeploy = bin/prog\ntest = true\n[program q]\noriginal = orig/other\ndeploy = bin/../bin/prog\ntest = true\n')"
refused others-original "others-original.conf:7: program 'q': 'deploy' is the original build of 'p'" <<<"$(printf '[program p]\noriginal = orig/prog\ndeploy = bin/p\ntest = true\n[program q]\noriginal = orig/other\ndeploy = linked/prog\ntest = true\n')"
refused no-deploy "no-deploy.conf:3: program 'p' needs 'original', 'deploy' and 'test'" <<<"$(printf '[program p]\noriginal = orig/prog\ntest = true\n')"
printf 'db = db\nstate = none/state\n[program p]\noriginal = orig/prog\ndeploy = bin/prog\ntest = true\n' >"$tmp/nostate.conf"
timeout -k 5 30 "$CPO" serve --config "$tmp/nostate.conf" --once >"$tmp/out" 2>&1
if [ $? -ne 0 ] && grep -q "none/state: cannot make the state directory: No such file" "$tmp/out"; then
  echo "ok   a state directory that cannot be made: $(head -1 "$tmp/out")"; passed=$((passed + 1))
else
  echo "FAIL a state directory that cannot be made:"; cat "$tmp/out"; failed=$((failed + 1))
fi
refused twice "twice.conf:7: 'min-gain' given twice in one section" <<<"$(printf '[program p]\noriginal = orig/prog\ndeploy = bin/p\nmin-gain = 0.01\nmin-gain = 0.5\ntest = true\n')"
# A program's mistakes name the line of its heading (of the second, for a
# name given twice), also those found once the whole file is read.
refused named-twice "named-twice.conf:7: program 'p' named twice" <<<"$(printf '[program p]\noriginal = orig/prog\ndeploy = bin/p\ntest = true\n[program p]\noriginal = orig/other\n')"
refused second-no-test "second-no-test.conf:7: program 'q' needs 'original', 'deploy' and 'test'" <<<"$(printf '[program p]\noriginal = orig/prog\ndeploy = bin/p\ntest = true\n[program q]\noriginal = orig/other\ndeploy = bin/q\n')"
# About the whole file: the file alone, no line.
refused no-program "no-program.conf: no \[program NAME\] to look after" <<<""
refused_as_is empty "empty.conf: no 'db' (the profile database cpod fills)" </dev/null
refused_as_is no-db "no-db.conf: no 'db' (the profile database cpod fills)" <<<"$(printf 'state = state\n[program p]\noriginal = orig/prog\ndeploy = bin/p\ntest = true\n')"
refused_as_is no-state "no-state.conf: no 'state' (the service's own directory)" <<<"$(printf 'db = db\n[program p]\noriginal = orig/prog\ndeploy = bin/p\ntest = true\n')"
refused_as_is state-in-db "state-in-db.conf: 'state' (.*/db/./serve) lies inside 'db' (.*/db)" <<<"$(printf 'db = db\nstate = db/./serve\n[program p]\noriginal = orig/prog\ndeploy = bin/p\ntest = true\n')"
timeout -k 5 30 "$CPO" serve --config "$tmp/none/serve.conf" --once >"$tmp/out" 2>&1
if [ $? -ne 0 ] && grep -q "none/serve.conf: No such file or directory" "$tmp/out"; then
  echo "ok   a configuration in a missing directory: $(head -1 "$tmp/out")"; passed=$((passed + 1))
else
  echo "FAIL a configuration in a missing directory:"; cat "$tmp/out"; failed=$((failed + 1))
fi
if [ "$(cat "$tmp/orig/prog" "$tmp/orig/other" | md5sum)" = "$sum" ] && [ ! -e "$tmp/bin/prog" ] && [ ! -e "$tmp/state" ]; then
  echo "ok   no original changed, nothing deployed"; passed=$((passed + 1))
else
  echo "FAIL an original changed or something was deployed"; failed=$((failed + 1))
fi
# On a SIGHUP a broken configuration is logged with the same names: the
# program's heading line, or the file alone.
mkdir -p "$tmp/hup/bin"
cp "$PROG" "$tmp/hup/prog"
good='db = db\nstate = state\npoll = 0.2\n[program p]\noriginal = prog\ndeploy = bin/prog\ntest = true\n'
printf "$good" >"$tmp/hup/serve.conf"
log=$tmp/hup/state/serve.log
# Not under timeout(1), which would take the SIGHUP as its own: --for
# bounds it.
"$CPO" serve --config "$tmp/hup/serve.conf" --for 30 >"$tmp/hup/out" 2>&1 &
sp=$!
waitlog() { for _ in $(seq 100); do grep -q -- "$1" "$log" 2>/dev/null && return 0; sleep 0.1; done; return 1; }
hup_check() {   # NAME PATTERN: the configuration on stdin, read on a SIGHUP
  cat >"$tmp/hup/serve.conf"
  kill -HUP $sp
  if waitlog "$2"; then
    echo "ok   SIGHUP, $1: $(grep -- "$2" "$log" | head -1)"; passed=$((passed + 1))
  else
    echo "FAIL SIGHUP, $1: expected a line matching: $2"; cat "$log"; failed=$((failed + 1))
  fi
}
if waitlog "p: version 0 deployed"; then
  hup_check "a program without 'test'" "SIGHUP: .*serve.conf:8: program 'q' needs 'original', 'deploy' and 'test'; going on" \
    <<<"$(printf "$good"; printf '[program q]\noriginal = prog\ndeploy = bin/q\n')"
  hup_check "an empty file" "SIGHUP: .*serve.conf: no 'db' (the profile database cpod fills); going on" </dev/null
else
  echo "FAIL the service did not start for the SIGHUP checks"; cat "$tmp/hup/out" "$log"; failed=$((failed + 1))
fi
kill -TERM $sp 2>/dev/null
wait $sp
sp=
if ! grep -q ':0:' "$log" "$tmp/hup/out"; then
  echo "ok   no line 0 in the log"; passed=$((passed + 1))
else
  echo "FAIL line 0 in the log:"; grep ':0:' "$log" "$tmp/hup/out"; failed=$((failed + 1))
fi
echo "$passed passed, $failed failed"
[ $failed = 0 ]
