#!/usr/bin/env python3
"""image-end.py [--align N] IMAGE...: the first address at or above the end
of every PT_LOAD segment of the given 64-bit little-endian ELF images,
rounded up to N bytes (default 8192, an Alpha page): where Linux would
start the heap of the one that ends highest, and so what `axp run --brk`
takes to give several images one heap address (docs/machine.md)."""
import struct
import sys


def end_of(path):
    with open(path, "rb") as f:
        d = f.read()
    if d[:4] != b"\x7fELF" or d[4] != 2 or d[5] != 1:
        sys.exit("image-end: %s: not a 64-bit little-endian ELF file" % path)
    phoff, = struct.unpack_from("<Q", d, 32)
    phentsize, phnum = struct.unpack_from("<HH", d, 54)
    if phentsize != 56 or phoff + 56 * phnum > len(d):
        sys.exit("image-end: %s: program headers out of the file" % path)
    end = 0
    for i in range(phnum):
        ptype, _, _, vaddr, _, _, memsz, _ = struct.unpack_from("<IIQQQQQQ", d, phoff + 56 * i)
        if ptype == 1:
            end = max(end, vaddr + memsz)
    return end


def main():
    args, align = sys.argv[1:], 8192
    if args[:1] == ["--align"] and len(args) > 1:
        align, args = int(args[1], 0), args[2:]
    if not args or align <= 0 or align & (align - 1):
        sys.exit(__doc__)
    end = max(end_of(p) for p in args)
    print(hex((end + align - 1) & ~(align - 1)))


if __name__ == "__main__":
    main()
