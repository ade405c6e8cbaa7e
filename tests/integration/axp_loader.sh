#!/bin/bash
# axp loads what Linux loads, from the program headers alone: a dynamic
# image stripped with plain strip after --emit-relocs, one without section
# headers and one with damaged debug sections run and print what intloop
# prints (as under qemu-alpha); an image with e_phnum 0xffff and no
# loadable segment is refused (exit 126) instead of run.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
AXP=$BUILD/bin/axp
P=$BUILD/programs/intloop-dyn
STRIP=${STRIP:-alpha-linux-gnu-strip}
[ -x "$AXP" ] && [ -f "$P" ] || { echo "axp or $P missing (make, make programs)"; exit 77; }
command -v "$STRIP" >/dev/null && command -v python3 >/dev/null || { echo "$STRIP or python3 missing"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
check() { local what=$1; shift; if "$@"; then echo "ok   $what"; else echo "FAIL $what"; status=1; fi; }

cp "$P" "$tmp/stripped" && "$STRIP" "$tmp/stripped"
python3 - "$P" "$tmp" <<'PY'
import struct, sys
src, out = sys.argv[1], sys.argv[2]
d = bytearray(open(src, 'rb').read())
n = bytearray(d)
struct.pack_into('<Q', n, 0x28, 0); struct.pack_into('<H', n, 0x3c, 0); struct.pack_into('<H', n, 0x3e, 0)
open(out + '/noshdr', 'wb').write(n)
b = bytearray(d)
shoff = struct.unpack_from('<Q', b, 0x28)[0]; shnum, shstrndx = struct.unpack_from('<HH', b, 0x3c)
strtab = struct.unpack_from('<Q', b, shoff + 64 * shstrndx + 24)[0]
for i in range(shnum):
    name = struct.unpack_from('<I', b, shoff + 64 * i)[0]
    if b[strtab + name:strtab + name + 6] == b'.debug':
        struct.pack_into('<Q', b, shoff + 64 * i + 24, len(b) + 100000)
open(out + '/baddebug', 'wb').write(b)
x = bytearray(d)
struct.pack_into('<H', x, 0x38, 0xffff)
open(out + '/phxnum', 'wb').write(x)
PY
chmod +x "$tmp"/*
for f in stripped noshdr baddebug; do
  "$AXP" run "$tmp/$f" > "$tmp/$f.out" 2> "$tmp/$f.err"
  rc=$?
  check "$f: runs (exit $rc) $(head -c 120 "$tmp/$f.err")" [ $rc -eq 0 ]
  check "$f: prints what intloop prints" cmp -s "$tmp/$f.out" tests/programs/intloop.expected
done
"$AXP" run "$tmp/phxnum" > /dev/null 2> "$tmp/phxnum.err"
rc=$?
check "e_phnum 0xffff without a loadable segment refused (exit $rc: $(head -1 "$tmp/phxnum.err"))" [ $rc -eq 126 ]
exit $status
