#!/bin/bash
# cpo serve refuses a configuration whose deploy path is an original build
# (its own under another spelling: "./", a symbolic link to its directory,
# a hard link; or another program's) or another program's deploy path: the
# service would write over it.  Each refusal names the file and the line of
# the program's heading, and no original changes.  Also the messages for a
# program without its keys, a key given twice, a configuration naming no
# program, a configuration in a missing directory and a state directory
# that cannot be made.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
CPO=$BUILD/bin/cpo
PROG=$BUILD/programs/intloop-dyn
[ -x "$CPO" ] || { echo "$CPO not built (make)"; exit 77; }
[ -f "$PROG" ] || { echo "$PROG missing (make programs)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
mkdir -p "$tmp/orig" "$tmp/bin" "$tmp/db"
cp "$PROG" "$tmp/orig/prog" && cp "$PROG" "$tmp/orig/other"
ln -s orig "$tmp/linked"
ln "$tmp/orig/prog" "$tmp/hard"
sum=$(cat "$tmp/orig/prog" "$tmp/orig/other" | md5sum)

# refused NAME PATTERN: the configuration on stdin, after the service's
# two lines, is refused with a line matching PATTERN.
refused() {
  local name=$1 pat=$2
  { printf 'db = db\nstate = state\n'; cat; } >"$tmp/$name.conf"
  timeout -k 5 30 "$CPO" serve --config "$tmp/$name.conf" --once >"$tmp/out" 2>&1
  local rc=$?
  if [ $rc -ne 0 ] && grep -q -- "$pat" "$tmp/out"; then
    echo "ok   $name: $(head -1 "$tmp/out")"; passed=$((passed + 1))
  else
    echo "FAIL $name: exit $rc, expected a line matching: $pat"; cat "$tmp/out"; failed=$((failed + 1))
  fi
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
refused no-program "no-program.conf:.*no \[program NAME\] to look after" <<<""
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
echo "$passed passed, $failed failed"
[ $failed = 0 ]
