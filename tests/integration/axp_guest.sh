#!/bin/bash
# A guest can never corrupt or kill axp, and axp keeps it where it belongs:
#  - procself reads (and writes) every /proc/self entry, zeroes every
#    writable region /proc/self/smaps lists through /proc/self/mem, and
#    re-executes itself through /proc/self/exe: axp stays alive, exits with
#    the guest's status, and "/.." at the root is the root;
#  - escape tries every spelling of a path outside the working directory
#    (absolute, "..", symbolic links, /proc, *at(), link, rename): under
#    --sandbox every one fails and the file outside is untouched, while a
#    run without it shows the same spellings do reach the file;
#  - limits: --mem-limit gives the guest ENOMEM, --max-threads EAGAIN.
# Dynamic and static builds.  Exit 1 on a failure, 77 if axp or the
# programs are missing.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
AXP=$BUILD/bin/axp
OUT=$BUILD/programs
SRC=$PWD/tests/programs
[ -x "$AXP" ] || { echo "$AXP missing: run make"; exit 77; }
[ -x "$OUT/escape-dyn" ] || { echo "$OUT missing: run make programs"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }

for kind in dyn static; do
  # /proc/self, /../, exec of /proc/self/exe
  mkdir -p "$tmp/p-$kind" && cd "$tmp/p-$kind"
  timeout 60 "$AXP" run "$OUT/procself-$kind" </dev/null >out 2>err; rc=$?
  if [ $rc = 0 ] && cmp -s out "$SRC/procself.expected"; then ok "procself-$kind"
  else bad "procself-$kind: status $rc"; diff out "$SRC/procself.expected"; head -5 err; fi
  timeout 60 "$AXP" run "$OUT/procself-$kind" hostile </dev/null >out 2>err; rc=$?
  if [ $rc = 0 ] && grep -q '^hostile: survived$' out; then ok "procself-$kind hostile: axp alive"
  else bad "procself-$kind hostile: status $rc (axp must survive and exit with the guest's 0)"; head -5 err; fi
  # the same guest inside the sandbox
  cp "$OUT/procself-$kind" .
  timeout 60 "$AXP" run --sandbox "./procself-$kind" </dev/null >out 2>err; rc=$?
  if [ $rc = 0 ] && cmp -s out "$SRC/procself.expected"; then ok "procself-$kind --sandbox"
  else bad "procself-$kind --sandbox: status $rc"; diff out "$SRC/procself.expected"; head -5 err; fi
  cd - >/dev/null

  # --sandbox against every escape
  mkdir -p "$tmp/out-$kind" "$tmp/w-$kind"
  secret=$tmp/out-$kind/secret
  echo "SECRET-$kind-$$" >"$secret"
  (cd "$tmp/w-$kind" && timeout 60 "$AXP" run --sandbox "$OUT/escape-$kind" "$secret" "SECRET-$kind" "$tmp/w-$kind" >"$tmp/esc" 2>"$tmp/err"); rc=$?
  n=$(grep -c ' closed$' "$tmp/esc")
  if [ $rc = 0 ] && [ "$n" -ge 17 ] && ! grep -q ' open$' "$tmp/esc" && grep -q "SECRET-$kind-$$" "$secret"; then
    ok "escape-$kind --sandbox: $n spellings, all closed, the file intact"
  else bad "escape-$kind --sandbox: status $rc"; grep ' open$' "$tmp/esc"; head -5 "$tmp/err"; fi
  # the control: the same spellings reach the file without --sandbox
  rm -rf "$tmp/w-$kind"/*
  (cd "$tmp/w-$kind" && timeout 60 "$AXP" run "$OUT/escape-$kind" "$secret" "SECRET-$kind" "$tmp/w-$kind" >"$tmp/esc" 2>&1)
  if grep -q '^absolute  *open$' "$tmp/esc" && grep -q '^absolute symlink  *open$' "$tmp/esc"; then ok "escape-$kind without --sandbox reaches the file"
  else bad "escape-$kind without --sandbox: the control run did not reach the file"; fi

  # limits
  out=$(cd "$tmp" && timeout 60 "$AXP" run --mem-limit 32 "$OUT/limits-$kind"); rc=$?
  if [ $rc = 0 ] && echo "$out" | grep -q '^memory: ENOMEM$'; then ok "limits-$kind --mem-limit 32: ENOMEM"
  else bad "limits-$kind --mem-limit 32: status $rc: $out"; fi
  out=$(cd "$tmp" && timeout 60 "$AXP" run --max-threads 8 "$OUT/limits-$kind"); rc=$?
  if [ $rc = 0 ] && echo "$out" | grep -q '^processes: EAGAIN$'; then ok "limits-$kind --max-threads 8: EAGAIN"
  else bad "limits-$kind --max-threads 8: status $rc: $out"; fi
done

# a limit that would not even hold the stack is a usage error
out=$("$AXP" run --mem-limit 8 "$OUT/limits-dyn" 2>&1); rc=$?
[ $rc = 2 ] && ok "--mem-limit below 16 MB refused: $out" || bad "--mem-limit 8: status $rc"
exit $fail
