#!/bin/sh
# roundtrip.sh DATAGEN DIR ZSTD...
#
# Generates a 2 MiB test file with zstd's datagen (fixed seed) in DIR, then
# compresses it with the zstd command given (the rest of the arguments: a
# program, or e.g. `scripts/qemu-run.sh build/workloads/bin/zstd`) at several
# levels, single- and multi-threaded, decompresses each result with the same
# command and compares it with the input.  Prints one line per case: level,
# compressed size and md5 of the compressed bytes (zstd's output is
# deterministic for a given version, level and input), so two zstd builds of
# the same version must print the same lines.  roundtrip.expected was made
# with Debian's zstd 1.5.4 for x86-64.
set -eu
[ $# -ge 3 ] || { echo "usage: roundtrip.sh DATAGEN DIR ZSTD..." >&2; exit 2; }
datagen=$1 dir=$2
shift 2
"$datagen" -g2M -P40 -s7 >"$dir/input" 2>/dev/null
echo "input $(wc -c <"$dir/input") bytes, md5 $(md5sum <"$dir/input" | cut -d' ' -f1)"
for opts in -1 -3 -9 -19 "-5 -T2" "-3 --long=24"; do
  # shellcheck disable=SC2086
  "$@" -q $opts -c "$dir/input" >"$dir/input.zst"
  "$@" -q -d -c "$dir/input.zst" >"$dir/output"
  if ! cmp -s "$dir/input" "$dir/output"; then
    echo "zstd $opts: decompressed output differs from the input" >&2
    exit 1
  fi
  "$@" -q -t "$dir/input.zst"
  echo "zstd $opts: $(wc -c <"$dir/input.zst") bytes, md5 $(md5sum <"$dir/input.zst" | cut -d' ' -f1), round trip ok"
done
