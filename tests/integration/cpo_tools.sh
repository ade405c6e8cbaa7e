#!/bin/bash
# cpo prof, list, stats, diff and export on databases of known samples in
# real procedures of build/programs/intloop-dyn: every number printed is
# checked exactly (per-procedure sums, %, cum%, statistics, deltas, the JSON
# order, the pprof export decoded back), and so are the errors (no
# database, unknown procedure, bad SET, damaged profile: a message naming
# the culprit and no crash).
#
# The profiles are written by a small Python writer below that follows
# docs/profile-format.md (its zstd frame holds stored blocks, so nothing
# outside Python's standard library is needed): the reader is checked
# against a writer that shares no code with it.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
CPO=$BUILD/bin/cpo
OPT=$BUILD/bin/optimize-image
PROG=$BUILD/programs/intloop-dyn
[ -x "$CPO" ] || { echo "$CPO not built (make)"; exit 77; }
[ -f "$PROG" ] || { echo "$PROG missing (make programs)"; exit 77; }
command -v python3 >/dev/null || { echo "python3 missing (scripts/setup.sh installs it)"; exit 77; }
PROG=$(realpath "$PROG")
tmp=$(mktemp -d)
trap '[ -n "${KEEP_TMP:-}" ] || rm -rf "$tmp"' EXIT
fail=0
ok()   { echo "ok   $1"; }
bad()  { echo "FAIL $1"; fail=1; }
same() { # what expected actual
  if [ "$2" = "$3" ]; then ok "$1"; else bad "$1"; echo "--- expected"; echo "$2"; echo "--- got"; echo "$3"; fi
}

cat >"$tmp/mkprof.py" <<'EOF'
# Profile files from lines "EPOCH HOST PATH BUILDID|- EVENT PERIOD OFF:COUNT..."
# and "current EPOCH" (the marker) on stdin, into the database argv[1].
import os, struct, sys, zlib

def varint(v):
    out = bytearray()
    while True:
        b, v = v & 0x7f, v >> 7
        out.append(b | 0x80 if v else b)
        if not v:
            return bytes(out)

def zstd_stored(data):
    # magic, descriptor 0xE0 (single segment, 8-byte content size), then
    # raw blocks: a 3-byte header (size << 3 | type 0 << 1 | last) each
    frame = bytearray(struct.pack('<IB', 0xFD2FB528, 0xE0) + struct.pack('<Q', len(data)))
    pos = 0
    while True:
        chunk = data[pos:pos + 65536]
        pos += len(chunk)
        last = pos >= len(data)
        frame += struct.pack('<I', len(chunk) << 3 | int(last))[:3] + chunk
        if last:
            return bytes(frame)

def key_of(path, bid):
    if bid:
        return bid.hex()
    if path == '[unknown]':
        return 'unknown'
    h = 0xcbf29ce484222325
    for c in path.encode():
        h = ((h ^ c) * 0x100000001b3) & 0xffffffffffffffff
    return 'path-%016x' % h

def escaped(name):
    # docs/profdb.md: an event's bytes outside [A-Za-z0-9_-] are written %XX
    return ''.join(chr(c) if chr(c).isascii() and (chr(c).isalnum() or chr(c) in '_-') else '%%%02X' % c
                   for c in name.encode())

def profile(path, bid, event, host, period, entries):
    entries = sorted(entries.items())
    enc, prev = bytearray(), 0
    for off, _ in entries:
        enc += varint(off - prev)
        prev = off
    for _, c in entries:
        enc += varint(c)
    payload = zstd_stored(bytes(enc))
    total = sum(c for _, c in entries)
    ev, ho, pa = event.encode(), host.encode(), path.encode()
    var = bid + ev + ho + struct.pack('<H', len(pa)) + pa
    head = b'CPOPROF\n' + struct.pack('<HHIQQQqqQQIBBHH', 1, 0, 82 + len(var) + 4, total,
                                      len(entries), round(period * total), 1700000000,
                                      1700000000, len(payload), len(enc), zlib.crc32(payload),
                                      len(bid), 1, len(ev), len(ho)) + var
    return head + struct.pack('<I', zlib.crc32(head)) + payload

db = sys.argv[1]
for line in sys.stdin:
    f = line.split()
    if not f:
        continue
    if f[0] == 'current':
        with open(os.path.join(db, 'current'), 'w') as out:
            out.write(f[1] + '\n')
        continue
    epoch, host, path, bidhex, event, period = f[:6]
    bid = b'' if bidhex == '-' else bytes.fromhex(bidhex)
    entries = {}
    for pair in f[6:]:
        o, c = pair.split(':')
        entries[int(o, 0)] = entries.get(int(o, 0), 0) + int(c)
    d = os.path.join(db, epoch, host)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, '%s.%s.prof' % (key_of(path, bid), escaped(event))), 'wb') as out:
        out.write(profile(path, bid, event, host, float(period), entries))
EOF
mkprof() { python3 "$tmp/mkprof.py" "$1"; }

# Addresses come from the program itself, so a rebuilt program still works.
fn()   { "$CPO" syms "$1" | awk -v n="$2" '$4 == "FUNC" && $NF == n && $2 !~ /^0+$/ { print "0x" $2; exit }'; }
fsz()  { "$CPO" syms "$1" | awk -v n="$2" '$4 == "FUNC" && $NF == n && $2 !~ /^0+$/ { print $3; exit }'; }
hex()  { printf '0x%x' "$1"; }
bid()  { "$CPO" info "$1" | awk '$1 == "build-id:" { print $2 }'; }
MAIN=$(fn "$PROG" main) LOOP=$(fn "$PROG" loop1000) THIRD=$(fn "$PROG" third)
PLT=0x$("$CPO" info "$PROG" | awk '$2 == ".plt" { print $4 }')
BID=$(bid "$PROG")
[ -n "$MAIN" ] && [ -n "$LOOP" ] && [ -n "$THIRD" ] && [ "$PLT" != 0x ] && [ -n "$BID" ] ||
  { echo "FAIL cannot read the symbols of $PROG"; exit 1; }
E1=20260101T000000Z E2=20260102T000000Z E3=20260103T000000Z
DB=$tmp/db
mkprof "$DB" <<EOF
$E1 alpha1 $PROG $BID cycles 62000 $MAIN:10 $(hex $((MAIN + 4))):5 $LOOP:100 $(hex $((LOOP + 16))):50 $THIRD:30 $PLT:7
$E1 alpha2 $PROG $BID cycles 62000 $LOOP:20
$E1 alpha1 $PROG $BID imiss 1000 $MAIN:3 $LOOP:1
$E1 alpha1 $PROG $BID cycles@pid-42 62000 $LOOP:999
$E1 alpha1 [unknown] - cycles 62000 0x4000:9
$E2 alpha1 $PROG $BID cycles 62000 $MAIN:30 $LOOP:60 $THIRD:90
$E3 alpha1 $PROG $BID cycles 62000 $MAIN:15 $LOOP:120 $(hex $((THIRD + 8))):45
current $E1
EOF

# ---- prof ------------------------------------------------------------------------
out=$("$CPO" prof --db "$DB" 2>&1)
same "prof: header, rows sorted by cycles, %, cum%, imiss column, unknown and PLT rows" \
"Database $DB, epoch $E1
Total samples for event type cycles = 231, imiss = 4
The counts given below are the number of samples for each listed event type.

cycles       %    cum%  imiss       %  procedure  image
   170  73.59%  73.59%      1  25.00%  loop1000   $PROG
    30  12.99%  86.58%      0   0.00%  third      $PROG
    15   6.49%  93.07%      3  75.00%  main       $PROG
     9   3.90%  96.97%      0   0.00%  [unknown]  [unknown]
     7   3.03% 100.00%      0   0.00%  [.plt]     $PROG" "$out"

out=$(CPO_DB=$DB "$CPO" prof -i -e imiss 2>&1)
same "prof -i -e imiss, database from CPO_DB" \
"Database $DB, epoch $E1
Total samples for event type imiss = 4
The counts given below are the number of samples for each listed event type.

imiss       %    cum%  image
    4 100.00% 100.00%  $PROG" "$out"

out=$("$CPO" prof --db "$DB" --all-epochs --limit 2 | tail -n +6)
same "prof --all-epochs --limit 2 (cycles 231+180+180 = 591)" \
"   350  59.22%  59.22%      1  25.00%  loop1000   $PROG
   165  27.92%  87.14%      0   0.00%  third      $PROG" "$out"
out=$("$CPO" prof --db "$DB" --epoch $E2 | sed -n 2p)
same "prof --epoch" "Total samples for event type cycles = 180" "$out"

json=$("$CPO" prof --db "$DB" --json)
check=$(python3 -c '
import json, sys
rows = json.loads(sys.stdin.read())
print(" ".join("%s:%s:%d:%d" % (r["procedure"], r["image"].split("/")[-1], r["samples"]["cycles"], r["samples"]["imiss"]) for r in rows))
print(list(rows[0].keys()), list(rows[0]["samples"].keys()))' <<<"$json" 2>&1)
same "prof --json: valid JSON, same order and numbers" \
"loop1000:intloop-dyn:170:1 third:intloop-dyn:30:0 main:intloop-dyn:15:3 [unknown]:[unknown]:9:0 [.plt]:intloop-dyn:7:0
['procedure', 'image', 'samples'] ['cycles', 'imiss']" "$check"
json=$("$CPO" prof --db "$DB" --json -i -e cycles)
same "prof --json -i" '[
  {"image": "'"$PROG"'", "samples": {"cycles": 222}},
  {"image": "[unknown]", "samples": {"cycles": 9}}
]' "$json"

# ---- list ------------------------------------------------------------------------
out=$("$CPO" list loop1000 --db "$DB")
rows=$(echo "$out" | awk -v a="$(printf '%x' $((LOOP)))" -v b="$(printf '%x' $((LOOP + 16)))" '$1 == a || $1 == b { print $1, $2, $3, $4 }')
same "list: samples on the right instructions" "$(printf '%x' $((LOOP))) 120 1 ldah
$(printf '%x' $((LOOP + 16))) 50 0 clr" "$rows"
n=$(echo "$out" | grep -c '^1200')
size=$(fsz "$PROG" loop1000)
same "list: one line per instruction of loop1000" "$((size / 4))" "$n"
sum=$(echo "$out" | awk '/^1200/ { c += $2; i += $3 } END { print c, i }')
same "list: columns add up to the procedure's samples" "170 1" "$sum"
echo "$out" | grep -q '^Samples: cycles 170 (76.58% of the image, 73.59% of all), imiss 1 (25.00% of the image, 25.00% of all)$' &&
  ok "list: procedure summary" || bad "list: procedure summary: $(echo "$out" | grep '^Samples')"
if "$CPO" list loop1000 --db "$DB" --source | grep -q 'intloop\.c:[0-9]*:'; then
  ok "list --source: source lines from the image's line information"
else
  bad "list --source shows no source line"
fi
"$CPO" list main --db "$DB" --image intloop-dyn | grep -q "^Procedure main in $PROG" &&
  ok "list --image by file name" || bad "list --image by file name"
"$CPO" list main --db "$DB" --image "$PROG" | grep -q "^Procedure main in $PROG" &&
  ok "list --image by path" || bad "list --image by path"

# ---- stats -----------------------------------------------------------------------
out=$("$CPO" stats "$DB@$E1" "$DB@$E2" "$DB@$E3" 2>&1)
same "stats: per-set totals, range%, sum, sum%, N, mean, std-dev (n-1), min, max" \
"Number of samples of type cycles
  set 1 = 231  $DB@$E1
  set 2 = 180  $DB@$E2
  set 3 = 180  $DB@$E3
  TOTAL 591

Statistics calculated using the sample counts for each procedure from 3 different sample set(s)

  range%          sum     sum%    N           mean        std-dev          min          max  procedure  image
 100.00%            9    1.52%    1           3.00           5.20            0            9  [unknown]  [unknown]
 100.00%            7    1.18%    1           2.33           4.04            0            7  [.plt]     $PROG
  36.36%          165   27.92%    3          55.00          31.22           30           90  third      $PROG
  31.43%          350   59.22%    3         116.67          55.08           60          170  loop1000   $PROG
  25.00%           60   10.15%    3          20.00           8.66           15           30  main       $PROG" "$out"
out=$("$CPO" stats -e imiss "$DB" "$DB@all" | tail -n 3)
same "stats -e imiss, DIR (current epoch) and DIR@all" \
"  range%          sum     sum%    N           mean        std-dev          min          max  procedure  image
   0.00%            6   75.00%    2           3.00           0.00            3            3  main       $PROG
   0.00%            2   25.00%    2           1.00           0.00            1            1  loop1000   $PROG" "$out"

# ---- diff ------------------------------------------------------------------------
out=$("$CPO" diff "$DB@$E1" "$DB@$E2")
same "diff: per image and per procedure, delta and change in share" \
"A: $DB@$E1, 231 samples of cycles
B: $DB@$E2, 180 samples of cycles

Images
           A            B         delta       A%       B%   change  image
         222          180           -42   96.10%  100.00%    +3.90  $PROG
           9            0            -9    3.90%    0.00%    -3.90  [unknown]

Procedures
           A            B         delta       A%       B%   change  procedure  image
         170           60          -110   73.59%   33.33%   -40.26  loop1000   $PROG
          30           90           +60   12.99%   50.00%   +37.01  third      $PROG
          15           30           +15    6.49%   16.67%   +10.17  main       $PROG
           9            0            -9    3.90%    0.00%    -3.90  [unknown]  [unknown]
           7            0            -7    3.03%    0.00%    -3.03  [.plt]     $PROG" "$out"

# Two versions of one image: a rewritten copy (its own build-id, procedures
# moved, third split into hot and cold parts) lined up through its address
# map, so samples in the cold part, which has no symbol, still count for
# third.
# The first random plan (by seed) that splits third and moves both is used.
if [ -x "$OPT" ] && "$OPT" "$PROG" --plan random --seed 1 -o "$tmp/intloop-opt" >/dev/null 2>&1; then
  NEW=$tmp/intloop-opt NBID=$(bid "$tmp/intloop-opt")
  map=$("$CPO" addrmap "$NEW")
  # the new address of the code entry starting at original address $1;
  # with $2 $3, the first code entry moved out of [$2, $2 + $3) from
  # inside [$4, $4 + $5) (a cold part)
  at() {
    local range orig kind
    while read -r range orig kind; do
      [ "$kind" = code ] || continue
      if [ $# -eq 1 ]; then
        [ $((orig)) -eq $(($1)) ] && { echo "${range%-*}"; return; }
      elif [ $((orig)) -ge $(($4)) ] && [ $((orig)) -lt $(($4 + $5)) ] &&
           { [ $((${range%-*})) -lt $(($2)) ] || [ $((${range%-*})) -ge $(($2 + $3)) ]; }; then
        echo "${range%-*}"; return
      fi
    done <<<"$map"
  }
  for seed in $(seq 1 40); do
    "$OPT" "$PROG" --plan random --seed "$seed" -o "$tmp/intloop-opt" >/dev/null 2>&1 || break
    NBID=$(bid "$NEW") map=$("$CPO" addrmap "$NEW")
    NLOOP=$(at "$LOOP") NTHIRD=$(at "$THIRD")
    COLD=$(at "$THIRD" "$(fn "$NEW" third)" "$(fsz "$NEW" third)" "$THIRD" "$(fsz "$PROG" third)")
    [ -n "$NLOOP" ] && [ -n "$NTHIRD" ] && [ -n "$COLD" ] && break
  done
  if [ -n "$NLOOP" ] && [ -n "$NTHIRD" ] && [ -n "$COLD" ] && [ "$NBID" != "$BID" ]; then
    R=$tmp/rdb
    mkprof "$R" <<EOF
$E1 alpha1 $PROG $BID cycles 62000 $LOOP:60 $THIRD:40
$E2 alpha1 $NEW $NBID cycles 62000 $NLOOP:40 $NTHIRD:5 $COLD:25
current $E2
EOF
    out=$("$CPO" diff "$R@$E1" "$R" 2>&1 | tail -n +4)
    same "diff of an image and its rewritten copy, cold part mapped back to third" \
"Images
           A            B         delta       A%       B%   change  image
         100           70           -30  100.00%  100.00%    +0.00  $NEW

Procedures
           A            B         delta       A%       B%   change  procedure  image
          60           40           -20   60.00%   57.14%    -2.86  loop1000   $NEW
          40           30           -10   40.00%   42.86%    +2.86  third      $NEW" "$out"
    # Without the original anywhere (a database that never saw it), the
    # rewritten image is placed with its own symbols, and says so.
    R2=$tmp/rdb2
    mkprof "$R2" <<EOF
$E2 alpha1 $NEW $NBID cycles 62000 $NLOOP:40 $COLD:25
current $E2
EOF
    err=$("$CPO" diff "$R2" "$R2" 2>&1 >/dev/null)
    echo "$err" | grep -q "rewritten from build-id $BID, whose image was not found" &&
      ok "diff: a rewritten image whose original is unknown is reported" ||
      bad "diff without the original: $err"
  else
    bad "could not find moved code of loop1000 and third in the address map of $NEW"
  fi
else
  echo "skip rewritten-image diff: $OPT cannot rewrite $PROG"
fi

# ---- export ----------------------------------------------------------------------
"$CPO" export --pprof "$tmp/out.pb.gz" --db "$DB" || bad "export failed"
dec=$(python3 - "$tmp/out.pb.gz" <<'EOF' 2>&1
import gzip, sys
data = gzip.open(sys.argv[1]).read()
def varint(b, i):
    v = s = 0
    while True:
        c = b[i]; i += 1; v |= (c & 0x7f) << s; s += 7
        if c < 0x80:
            return v, i
def fields(b):
    i, out = 0, []
    while i < len(b):
        k, i = varint(b, i)
        if k & 7 == 0:
            v, i = varint(b, i)
        else:
            n, i = varint(b, i); v = b[i:i + n]; i += n
        out.append((k >> 3, v))
    return out
def ints(b):
    i, out = 0, []
    while i < len(b):
        v, i = varint(b, i); out.append(v)
    return out
top = fields(data)
strs = [v.decode() for f, v in top if f == 6]
types = [strs[dict(fields(v))[1]] for f, v in top if f == 1]
funcs = {dict(fields(v))[1]: strs[dict(fields(v))[2]] for f, v in top if f == 5}
locs = {}
for f, v in top:
    if f == 4:
        d = fields(v)
        line = dict(fields(dict(d)[4]))
        locs[dict(d)[1]] = funcs[line[1]]
sums = {}
for f, v in top:
    if f == 2:
        d = dict(fields(v))
        name = locs[ints(d[1])[0]]
        vals = ints(d[2])
        sums[name] = [a + b for a, b in zip(sums.get(name, [0] * len(vals)), vals)]
print(strs[0] == '', types)
for name in sorted(sums):
    print(name, *sums[name])
EOF
)
same "export --pprof: gzip, sample types, per-procedure sums decoded back" \
"True ['cycles', 'imiss']
[.plt] 7 0
[unknown] 9 0
loop1000 170 1
main 15 3
third 30 0" "$dec"
PPROF=""
command -v pprof >/dev/null && PPROF="pprof"
[ -z "$PPROF" ] && command -v go >/dev/null && PPROF="go tool pprof"
if [ -n "$PPROF" ]; then
  if $PPROF -top -sample_index=cycles "$tmp/out.pb.gz" 2>&1 | grep -q 'loop1000'; then
    ok "$PPROF reads the export"
  else
    bad "$PPROF cannot read the export"
  fi
else
  echo "skip pprof check: neither pprof nor go is installed"
fi

# ---- errors ----------------------------------------------------------------------
expect() { # what status pattern command...
  local what=$1 want=$2 pat=$3 err rc
  shift 3
  err=$("$@" 2>&1 >/dev/null); rc=$?
  if [ $rc -eq "$want" ] && echo "$err" | grep -q -- "$pat"; then
    ok "$what: $(echo "$err" | head -1)"
  else
    bad "$what: status $rc (want $want), message: $err"
  fi
}
expect "no database" 2 "give --db DIR or set CPO_DB" env -u CPO_DB "$CPO" prof
expect "--epoch with --all-epochs" 2 "--epoch and --all-epochs cannot both be given" "$CPO" prof --db "$DB" --all-epochs --epoch 20200101T000000Z
expect "--db without a directory" 2 "option --db needs a database directory" "$CPO" prof --db
expect "-e without an event" 2 "option -e needs an event name" "$CPO" prof --db "$DB" -e
expect "missing database" 1 "$tmp/nodb" "$CPO" prof --db "$tmp/nodb"
expect "unknown epoch" 1 "no epoch \"20200101T000000Z\"" "$CPO" prof --db "$DB" --epoch 20200101T000000Z
expect "--epoch with --all-epochs" 2 "cannot both be given" "$CPO" prof --db "$DB" --epoch $E1 --all-epochs
expect "event without samples" 1 "no samples of event 'dmiss'" "$CPO" prof --db "$DB" -e dmiss
expect "unknown procedure" 1 "no procedure named 'nosuchproc'" "$CPO" list nosuchproc --db "$DB"
expect "unknown image" 1 "no samples of an image named 'lua'" "$CPO" list main --db "$DB" --image lua
expect "bad SET" 2 "bad SET '$DB@yesterday'" "$CPO" stats "$DB@yesterday"
expect "SET naming no database" 1 "$tmp/nodb" "$CPO" diff "$tmp/nodb" "$DB"
expect "diff of one SET" 2 "two SETs needed" "$CPO" diff "$DB"
expect "export to a missing directory" 1 "$tmp/no/dir/x.pb.gz" "$CPO" export --pprof "$tmp/no/dir/x.pb.gz" --db "$DB"
expect "unknown option" 2 "unknown argument '--frobnicate'" "$CPO" prof --db "$DB" --frobnicate

# Images whose file is missing or is another build: reported whole, with a warning.
W=$tmp/wdb
mkprof "$W" <<EOF
$E1 alpha1 $tmp/gone/prog aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa cycles 62000 0x1000:4
$E1 alpha1 $PROG bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb cycles 62000 $LOOP:6
current $E1
EOF
out=$("$CPO" prof --db "$W" 2>"$tmp/warn" | tail -n 2)
same "images not read: one row each" \
"     6  60.00%  60.00%  [image not read]  $PROG
     4  40.00% 100.00%  [image not read]  $tmp/gone/prog" "$out"
grep -q "^cpo: warning: $PROG has build-id $BID, its profiles bbbb" "$tmp/warn" &&
  grep -q "^cpo: warning: $tmp/gone/prog: .*No such file" "$tmp/warn" &&
  ok "images not read: warnings name the files" || bad "warnings: $(cat "$tmp/warn")"

# A damaged profile: the error names it; no partial report, no crash.
cp -r "$DB" "$tmp/damaged"
victim=$tmp/damaged/$E1/alpha1/$BID.cycles.prof
size=$(stat -c %s "$victim")
printf '\x55' | dd of="$victim" bs=1 seek=$((size - 3)) conv=notrunc status=none
for cmd in "prof --db $tmp/damaged" "list main --db $tmp/damaged" "stats $tmp/damaged" \
           "diff $tmp/damaged $DB" "export --pprof $tmp/d.pb.gz --db $tmp/damaged"; do
  # shellcheck disable=SC2086
  expect "damaged profile ($cmd)" 1 "$victim: payload checksum mismatch" "$CPO" $cmd
done
[ ! -e "$tmp/d.pb.gz" ] && ok "no export file left after an error" || bad "export file left after an error"

# cpo values and cpo profileme: a damaged file stops them too, with nothing
# printed (they once said so on stderr and printed the rest, status 0).
cp -r "$DB" "$tmp/vdamaged"
for kind in values:values pm:profileme; do
  victim=$tmp/vdamaged/$E1/alpha1/$BID.${kind%%:*}
  printf 'CPO\n%%064d' 0 >"$victim"
  for json in "" --json; do
    out=$("$CPO" "${kind#*:}" --db "$tmp/vdamaged" $json 2>"$tmp/err"); rc=$?
    [ $rc = 1 ] && [ -z "$out" ] && grep -q "$victim" "$tmp/err" &&
      ok "damaged .${kind%%:*} (${kind#*:} $json): $(head -1 "$tmp/err")" ||
      bad "damaged .${kind%%:*} (${kind#*:} $json): status $rc, stdout '$out', stderr $(cat "$tmp/err")"
  done
done

# A profile renamed to another image's key: listed by its header, summed by
# its name, its samples went missing or to the other image.
cp -r "$DB" "$tmp/renamed"
moved=$tmp/renamed/$E2/alpha1/path-0123456789abcdef.cycles.prof
mv "$tmp/renamed/$E2/alpha1/$BID.cycles.prof" "$moved"
for sel in "--epoch $E2" --all-epochs; do
  # shellcheck disable=SC2086
  expect "renamed profile (prof $sel)" 1 "$moved: its header's key does not match its name" "$CPO" prof --db "$tmp/renamed" $sel
done

# The stack readers check --epoch as prof does: no such epoch, or one
# outside the database (the stacks of $DB/../db once read as the database's).
expect "stacks of an unknown epoch" 1 'no epoch "20200101T000000Z"' "$CPO" prof --db "$DB" --epoch 20200101T000000Z --folded
expect "cct of an unknown epoch" 1 'no epoch "20200101T000000Z"' "$CPO" cct --db "$DB" --epoch 20200101T000000Z
expect "stacks of an epoch outside the database" 1 "no epoch \"../db/$E1\"" "$CPO" prof --db "$tmp/renamed" --epoch "../db/$E1" --callers main

# Exact counts cut short after their image lines read as counts of zero.
printf '# axp exact counts\nimage 0 %s %s\n' "$BID" "$PROG" >"$tmp/cut.exact"
printf 'image 0 %s %s\nimage 1 - /lib/x\nblock 1 0x1000 0x1010 4\n' "$BID" "$PROG" >"$tmp/norun.exact"
expect "accuracy, image lines only" 1 "$tmp/cut.exact: no counts for any image" "$CPO" accuracy --exact "$tmp/cut.exact" --image "$PROG" --db "$DB"
expect "optimize-image --exact, image lines only" 1 "$tmp/cut.exact: no counts for any image" "$OPT" "$PROG" --exact "$tmp/cut.exact" -o "$tmp/opt.out"
expect "accuracy, no run of the image" 1 "$tmp/norun.exact: no counts for $PROG" "$CPO" accuracy --exact "$tmp/norun.exact" --image "$PROG" --db "$DB"

for l in -1 5x 0; do
  expect "report --limit '$l'" 2 "--limit '$l' is not a positive number" "$CPO" report "$PROG" "$PROG" --db "$DB" -o "$tmp/rep" --limit "$l"
done

exit $fail
