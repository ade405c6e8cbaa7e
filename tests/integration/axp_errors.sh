#!/bin/bash
# axp's errors: bad programs and options give a clear message naming what is
# wrong and a non-zero status, never a crash; guest faults end the guest the
# way Linux/Alpha would, with a message naming the signal, pc, instruction
# and address; unsupported system calls are reported (and stop the machine
# under --strict).
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
AXP=$BUILD/bin/axp
OUT=$BUILD/programs
CC=${ALPHA_CC:-alpha-linux-gnu-gcc}

[ -x "$AXP" ] || { echo "$AXP missing: run make"; exit 77; }
[ -x "$OUT/intloop-dyn" ] || { echo "$OUT missing: run make programs"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# expect NAME STATUS PATTERN -- COMMAND...: status (or "nonzero") and a
# pattern stderr must match (grep -E).
expect() {
  local name=$1 want=$2 pat=$3
  shift 4
  "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
  local rc=$?
  local okrc=no
  if [ "$want" = nonzero ]; then [ $rc -ne 0 ] && okrc=yes; else [ $rc -eq "$want" ] && okrc=yes; fi
  if [ $okrc = yes ] && [ $rc -lt 128 -o "$want" != nonzero ] && grep -Eq -- "$pat" "$tmp/err"; then
    echo "ok   $name: status $rc: $(head -1 "$tmp/err")"
  else
    echo "FAIL $name: status $rc (want $want), stderr:"; head -5 "$tmp/err"
    fail=1
  fi
}

expect "missing program" 127 "/no/such/program.*No such file" -- "$AXP" run /no/such/program
printf 'hello' >"$tmp/garbage"; chmod +x "$tmp/garbage"
expect "not an ELF file" nonzero "garbage.*not an ELF" -- "$AXP" run "$tmp/garbage"
cp /bin/true "$tmp/host-true"
expect "host (non-Alpha) ELF" nonzero "host-true.*(not an Alpha|machine)" -- "$AXP" run "$tmp/host-true"
head -c 200 "$OUT/intloop-static" >"$tmp/truncated"; chmod +x "$tmp/truncated"
expect "truncated ELF" nonzero "truncated" -- "$AXP" run "$tmp/truncated"
python3 - "$OUT/intloop-dyn" "$tmp/nointerp" <<'EOF'
import sys
b = open(sys.argv[1], 'rb').read()
old = b'/lib/ld-linux.so.2'
assert old in b
open(sys.argv[2], 'wb').write(b.replace(old, b'/lib/ld-nowhere.so', 1))
EOF
chmod +x "$tmp/nointerp"
expect "missing interpreter" nonzero "ld-nowhere.so.*not found" -- "$AXP" run "$tmp/nointerp"
expect "bad --root" 2 "--root /no/such/root" -- "$AXP" run --root /no/such/root "$OUT/intloop-dyn"
expect "bad --cpus" 2 "--cpus" -- "$AXP" run --cpus 0 "$OUT/intloop-dyn"
expect "unknown option" 2 "unknown option '--frobnicate'" -- "$AXP" run --frobnicate "$OUT/intloop-dyn"
expect "bad --brk" 2 "--brk: expected an address" -- "$AXP" run --brk 0x1234 "$OUT/intloop-dyn"
expect "--cct-only without --cct" 2 "--cct-only needs --cct" -- "$AXP" run --cct-only "$tmp/garbage" "$OUT/intloop-static"
echo "cpo-paths 1" >"$tmp/paths"
expect "--cct-only not a tree" 2 "--cct-only .*paths.*not a calling context tree" -- \
  "$AXP" run --cct "$tmp/t.cct" --cct-only "$tmp/paths" "$OUT/intloop-static"
expect "--brk inside the image" 126 "--brk 0x120000000 lies below the end of its image" -- "$AXP" run --brk 0x120000000 "$OUT/intloop-static"
expect "no program" 2 "no program" -- "$AXP" run
expect "unknown command" 2 "unknown command" -- "$AXP" fly

if command -v "$CC" >/dev/null; then
  cat >"$tmp/faults.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
int main(int argc, char **argv)
{
    volatile long *p = 0;
    static char buf[32] = "0123456789abcdefghijklmnopqrstu";
    if (argc < 2) return 2;
    switch (argv[1][0]) {
    case 's': return (int)*p;                               /* SIGSEGV */
    case 'i': __asm__ volatile(".long 0x64000000"); break;  /* PAL-reserved: SIGILL */
    case 'u': {                                             /* fixed up */
        long v;
        memcpy(&v, buf, 0);
        v = *(volatile long *)(buf + 3);
        printf("unaligned %lx\n", v);
        return 0;
    }
    case 'n': return syscall(398, 0, 0) == -1 ? 0 : 1;    /* io_setup: ENOSYS */
    }
    return 0;
}
EOF
  if "$CC" -O2 -o "$tmp/faults" "$tmp/faults.c" 2>"$tmp/ccerr"; then
    expect "guest SIGSEGV" 139 "SIGSEGV .*at pc 0x[0-9a-f]+ \[ld.* address 0x0" -- "$AXP" run "$tmp/faults" s
    expect "guest SIGILL" 132 "SIGILL .*at pc 0x[0-9a-f]+ \[" -- "$AXP" run "$tmp/faults" i
    "$AXP" run "$tmp/faults" u >"$tmp/out" 2>&1
    if grep -q "unaligned 6139383736353433" "$tmp/out"; then echo "ok   unaligned load fixed up"; else echo "FAIL unaligned load: $(cat "$tmp/out")"; fail=1; fi
    expect "unsupported call reported" 0 "unsupported system call io_setup \(398\)" -- "$AXP" run "$tmp/faults" n
    expect "unsupported call under --strict" 125 "io_setup \(398\).*--strict" -- "$AXP" run --strict "$tmp/faults" n
  else
    echo "skip guest faults: $CC failed: $(head -1 "$tmp/ccerr")"
  fi
  # two threads each holding the mutex the other wants: the machine says so
  cat >"$tmp/deadlock.c" <<'EOF'
#include <pthread.h>
#include <unistd.h>
static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER, b = PTHREAD_MUTEX_INITIALIZER;
static void *t(void *x) { pthread_mutex_lock(&b); usleep(1000); pthread_mutex_lock(&a); return x; }
int main(void)
{
    pthread_t th;
    pthread_mutex_lock(&a);
    pthread_create(&th, 0, t, 0);
    usleep(1000);
    pthread_mutex_lock(&b);
    pthread_join(th, 0);
    return 0;
}
EOF
  if "$CC" -O2 -o "$tmp/deadlock" "$tmp/deadlock.c" -lpthread 2>"$tmp/ccerr"; then
    expect "guest deadlock" 125 "deadlock: every guest thread is blocked" -- timeout 60 "$AXP" run "$tmp/deadlock"
  fi
fi
[ $fail -eq 0 ]
