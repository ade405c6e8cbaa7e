#!/bin/bash
# Compile the instrumented image's runtime (rewriter/runtime/) for Alpha
# into a flat blob the rewriter appends to its new segment.  The blob runs
# at whatever address it lands on, so its code may hold only PC-relative
# relocations (branches, GP displacements) and no data of its own; this
# script refuses anything else.
#   build-runtime.sh ALPHA_CC OUT
set -euo pipefail
cc=$1 out=$2
dir=$(dirname "$0")/../rewriter/runtime
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=${cc%gcc}
"$cc" -O2 -ffreestanding -fno-builtin -fno-tree-loop-distribute-patterns -mno-fp-regs \
    -fno-pic -fno-stack-protector -fno-asynchronous-unwind-tables -fno-unwind-tables \
    -nostdlib -static -Wl,-q -Wl,--build-id=none -Wl,-e,rt_blob -Wl,-Ttext=0 \
    -o "$tmp/rt.elf" "$dir/rt.S" "$dir/rt.c"
bad=$("${prefix}readelf" -W -S "$tmp/rt.elf" |
      awk '$2 ~ /^\./ && $2 != ".text" && $2 != ".eh_frame" && $2 != ".comment" &&
           $2 !~ /^\.(rela|symtab|strtab|shstrtab)/ && $6 != "000000" { print $2 }')
if [ -n "$bad" ]; then
    echo "build-runtime: the runtime has data the blob cannot carry: $bad" >&2
    exit 1
fi
relocs=$("${prefix}readelf" -W -r "$tmp/rt.elf" |
         awk '/^Relocation section/ { sec = $3 } sec == "'"'"'.rela.text'"'"'" && $3 ~ /^R_ALPHA/ { print $3 }' |
         sort -u)
for r in $relocs; do
    case $r in
        R_ALPHA_BRADDR|R_ALPHA_GPDISP|R_ALPHA_NONE|R_ALPHA_LITUSE|R_ALPHA_HINT) ;;
        *) echo "build-runtime: relocation $r in the runtime's code: not position-independent" >&2
           exit 1 ;;
    esac
done
"${prefix}objcopy" -O binary -j .text "$tmp/rt.elf" "$tmp/rt.bin"
mv "$tmp/rt.bin" "$out"
