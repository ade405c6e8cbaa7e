#!/bin/bash
# image/ against binutils, on every Alpha program and workload we build:
#   cpo syms    vs readelf -sW : entries per table equal; every 97th entry
#                                equal in value, size, type, bind, visibility,
#                                Alpha st_other flags, section and name
#   cpo relocs  vs readelf -rW : entries per section equal; every 97th entry
#                                equal in offset, type, symbol index, value,
#                                name and addend
#   cpo syms --labels vs objdump -d : every "<label>" objdump prints after
#                                a branch or jump target, equal
# Names are compared without "@VERSION" (readelf adds version suffixes to
# .dynsym names from the version tables).  Exit 77 when nothing is built.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
CPO=${CPO:-$BUILD/bin/cpo}
READELF=${READELF:-alpha-linux-gnu-readelf}
OBJDUMP=${OBJDUMP:-alpha-linux-gnu-objdump}
[ -x "$CPO" ] || { echo "$CPO not built"; exit 77; }
command -v "$READELF" >/dev/null && command -v "$OBJDUMP" >/dev/null ||
  { echo "alpha-linux-gnu binutils not installed"; exit 77; }

images=()
for f in "$BUILD"/programs/* "$BUILD"/workloads/bin/*; do
  [ -f "$f" ] && [ "$(head -c4 "$f" 2>/dev/null | od -An -c | tr -d ' ')" = '177ELF' ] && images+=("$f")
done
[ ${#images[@]} -gt 0 ] || { echo "no Alpha programs in $BUILD/programs or $BUILD/workloads/bin: run make programs workloads"; exit 77; }

tmp=$(mktemp -d)
trap '[ -n "${KEEP_TMP:-}" ] || rm -rf "$tmp"' EXIT

# Normalised records, one per line: "C table count" for every table and
# "E table index fields..." for sampled entries.
readelf_syms='
  /^Symbol table / { t = $3; gsub(/\047/, "", t); print "C", t, $5; k = 0; next }
  /^ *[0-9]+: / {
    line = $0; other = "-"
    if (match(line, /\[[^]]*\]/)) {
      other = substr(line, RSTART + 1, RLENGTH - 2); gsub(/ /, "_", other)
      line = substr(line, 1, RSTART - 1) substr(line, RSTART + RLENGTH)
    }
    n = split(line, f, " "); name = n >= 8 ? f[8] : ""; sub(/@.*/, "", name)
    size = f[3]; if (size ~ /^0x/) size = "hex"
    if (k++ % 97 == 0) print "E", t, f[1], f[2], size, f[4], f[5], f[6], other, f[7], name
  }'
cpo_syms='
  /^Symbol table / { t = $3; sub(/:$/, "", t); print "C", t, $4; k = 0; next }
  /^ *[0-9]+: / {
    name = NF >= 9 ? $9 : ""; sub(/@.*/, "", name)
    size = $3; if (size + 0 > 99999) size = "hex"
    if (k++ % 97 == 0) print "E", t, $1, $2, size, $4, $5, $6, $7, $8, name
  }'
readelf_relocs='
  function hex(s,   i, v) { v = 0; for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return v }
  /^Relocation section / { t = $3; gsub(/\047/, "", t); print "C", t, $(NF-1); k = 0; next }
  /^[0-9a-f]+  [0-9a-f]+ R_/ {
    if (k++ % 97) next
    type = $3; sub(/^R_ALPHA_/, "", type); sym = hex(substr($2, 1, 8))
    if ($4 ~ /^[0-9a-f]+$/ && length($4) == 16) {
      name = $5; sub(/@.*/, "", name)
      print "E", t, $1, type, sym, $4, name, $6, $7
    } else if ($4 ~ /^\(/) {
      print "E", t, $1, type, sym, "lituse"
    } else {
      print "E", t, $1, type, sym, "0000000000000000", "-", "+", $4
    }
  }'
cpo_relocs='
  /^Relocation section / { print "C", $3, $(NF-2); k = 0; t = $3; next }
  /^  [0-9a-f]+  / {
    if (k++ % 97) next
    name = $5; sub(/@.*/, "", name); add = $7; sub(/^0x/, "", add)
    if ($2 == "LITUSE") print "E", t, $1, $2, $3, "lituse"
    else print "E", t, $1, $2, $3, $4, name, $6, add
  }'
objdump_labels='
  NF >= 3 && $0 ~ /<[^>]*>$/ {
    a = $1; sub(/^ */, "", a); sub(/:$/, "", a)
    n = split($NF, p, " "); tg = p[n - 1]; sub(/.*,/, "", tg)
    l = p[n]; sub(/^</, "", l); sub(/>$/, "", l)
    print a, tg, l
  }'

fail=0 total=0
for img in "${images[@]}"; do
  name=${img#"$BUILD"/}
  bad=0
  "$READELF" -sW "$img" 2>/dev/null | awk "$readelf_syms" | grep -v '^C [^ ]* 0$' > "$tmp/rs"
  "$CPO" syms "$img" | awk "$cpo_syms" | grep -v '^C [^ ]* 0$' > "$tmp/cs" || bad=1
  "$READELF" -rW "$img" 2>/dev/null | awk "$readelf_relocs" | grep -v '^C [^ ]* 0$' > "$tmp/rr"
  "$CPO" relocs "$img" | awk "$cpo_relocs" | grep -v '^C [^ ]* 0$' > "$tmp/cr" || bad=1
  if ! diff "$tmp/rs" "$tmp/cs" > "$tmp/d1"; then
    echo "FAIL $name: symbols differ from readelf (< readelf, > cpo):"; head -20 "$tmp/d1"; bad=1
  fi
  if ! diff "$tmp/rr" "$tmp/cr" > "$tmp/d2"; then
    echo "FAIL $name: relocations differ from readelf (< readelf, > cpo):"; head -20 "$tmp/d2"; bad=1
  fi
  "$OBJDUMP" -d "$img" 2>/dev/null | awk -F'\t' "$objdump_labels" > "$tmp/ol"
  awk '{ print $1, $2 }' "$tmp/ol" | "$CPO" syms --labels "$img" > "$tmp/cl"
  nl=$(wc -l < "$tmp/ol")
  nbad=$(paste -d' ' "$tmp/ol" "$tmp/cl" | awk '$3 != $4' | tee "$tmp/d3" | wc -l)
  if [ "$nbad" -ne 0 ] || [ "$(wc -l < "$tmp/cl")" -ne "$nl" ]; then
    echo "FAIL $name: $nbad of $nl labels differ from objdump (insn target objdump cpo):"; head -10 "$tmp/d3"; bad=1
  fi
  nsym=$(awk '$1 == "C" { s += $3 } END { print s + 0 }' "$tmp/cs")
  nrel=$(awk '$1 == "C" { s += $3 } END { print s + 0 }' "$tmp/cr")
  [ $bad -eq 0 ] && echo "ok   $name: $nsym symbols, $nrel relocations, $nl labels match"
  fail=$((fail + bad)); total=$((total + 1))
done
echo "$((total - fail)) of $total images match readelf and objdump"
[ $fail -eq 0 ]
