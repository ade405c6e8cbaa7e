#!/bin/bash
# Exact counts (axp run --exact): flow conservation on every test program,
# the instruction total against --stats, and hand-derived counts for
# intloop (whose source documents its trip counts).
#
# Conservation, per image and address (docs/machine.md, "Exact counts"):
#   in:  entries at X + edges into X  ==  block records starting at X
#   out: block records ending at E    ==  edges and exits from E-4,
#                                          plus fault exits at E
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
AXP=$BUILD/bin/axp
OUT=$BUILD/programs
SRC=$PWD/tests/programs
NM=${NM:-alpha-linux-gnu-nm}

[ -x "$AXP" ] || { echo "$AXP missing: run make"; exit 77; }
[ -d "$OUT" ] || { echo "$OUT missing: run make programs"; exit 77; }
command -v python3 >/dev/null || { echo "python3 missing"; exit 77; }
command -v "$NM" >/dev/null || { echo "$NM missing"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat >"$tmp/check.py" <<'EOF'
import json, re, subprocess, sys
from collections import defaultdict

def load(path):
    recs = defaultdict(list)
    images = {}
    for line in open(path):
        if line.startswith('#'):
            continue
        f = line.split()
        if f[0] == 'image':
            images[f[1]] = (f[2], f[3])
        else:
            recs[f[0]].append(f[1:])
    return images, recs

def conservation(recs):
    inflow, starts, ends, outflow = defaultdict(int), defaultdict(int), defaultdict(int), defaultdict(int)
    for img, s, e, c in recs['block']:
        starts[(img, int(s, 16))] += int(c)
        ends[(img, int(e, 16))] += int(c)
    for img, a, c in recs['entry']:
        inflow[(img, int(a, 16))] += int(c)
    for img, a, k, img2, b, c in recs['edge']:
        inflow[(img2, int(b, 16))] += int(c)
        outflow[(img, int(a, 16) + 4)] += int(c)
    for img, a, k, c in recs['exit']:
        outflow[(img, int(a, 16) + (0 if k == 'X' else 4))] += int(c)
    bad = []
    for key in set(inflow) | set(starts):
        if inflow[key] != starts[key]:
            bad.append('in  %s:%#x: edges+entries %d, blocks %d' % (key[0], key[1], inflow[key], starts[key]))
    for key in set(outflow) | set(ends):
        if outflow[key] != ends[key]:
            bad.append('out %s:%#x: blocks %d, edges+exits %d' % (key[0], key[1], ends[key], outflow[key]))
    return bad

def insn_counts(recs, img):
    n = defaultdict(int)
    for i, s, e, c in recs['block']:
        if i != img:
            continue
        for a in range(int(s, 16), int(e, 16), 4):
            n[a] += int(c)
    return n

mode = sys.argv[1]
images, recs = load(sys.argv[2])
bad = conservation(recs)
if mode == 'conserve':
    total = sum(int(c) * (int(e, 16) - int(s, 16)) // 4 for _, s, e, c in recs['block'])
    stats = json.load(open(sys.argv[3]))
    if total != stats['instructions']:
        bad.append('instructions: exact counts %d, stats %d' % (total, stats['instructions']))
    for b in bad[:20]:
        print('   ', b)
    sys.exit(1 if bad else 0)

# mode intloop: hand-derived counts (see tests/programs/intloop.c)
prog, nm = sys.argv[3], sys.argv[4]
img = [k for k, v in images.items() if v[1] == prog][0]
syms = {}
for line in subprocess.run([nm, '-S', prog], capture_output=True, text=True).stdout.splitlines():
    f = line.split()
    if len(f) == 4 and f[2] in 'tT':
        syms[f[3]] = (int(f[0], 16), int(f[0], 16) + int(f[1], 16))
n = insn_counts(recs, img)
def within(name):
    lo, hi = syms[name]
    return [n[a] for a in range(lo, hi, 4) if n.get(a)]
errs = []
def expect(what, got, want):
    print('    %-40s %s' % (what, got))
    if got != want:
        errs.append('%s: got %s, want %s' % (what, got, want))
expect('loop1000: busiest instruction', max(within('loop1000')), 1000)
c = set(within('nested'))
expect('nested: busiest instruction (10 x 37)', max(c), 370)
expect('nested: outer loop body runs 10 times', 10 in c, True)
expect('third: busiest instruction', max(within('third')), 3000)
lo, hi = syms['bump']
expect('bump: entries', sum(int(x[2]) for x in recs['entry'] if x[0] == img and int(x[1], 16) == lo) +
       sum(int(x[5]) for x in recs['edge'] if x[3] == img and int(x[4], 16) == lo), 1000)
tlo, thi = syms['third']
expect('third: calls to bump', sum(int(x[5]) for x in recs['edge']
       if x[0] == img and tlo <= int(x[1], 16) < thi and x[2] == 'C' and int(x[4], 16) in (lo, lo + 8)), 1000)
for e in errs + bad:
    print('   ', e)
sys.exit(1 if errs or bad else 0)
EOF

fail=0
for c in "$SRC"/*.c; do
  name=$(basename "$c" .c)
  args=""
  [ -f "$SRC/$name.args" ] && args=$(cat "$SRC/$name.args")
  stdin=/dev/null
  [ -f "$SRC/$name.stdin" ] && stdin=$SRC/$name.stdin
  for kind in dyn static; do
    img=$OUT/$name-$kind
    [ -x "$img" ] || continue
    d=$tmp/$name-$kind
    mkdir "$d"
    # shellcheck disable=SC2086
    (cd "$d" && timeout 120 "$AXP" run --exact "$d/x" --stats="$d/s.json" "$img" $args \
        <"$stdin" >/dev/null 2>"$d/err")
    if python3 "$tmp/check.py" conserve "$d/x" "$d/s.json"; then
      echo "ok   $name-$kind: flow conserved, $(grep -c '^block' "$d/x") block records"
    else
      echo "FAIL $name-$kind: flow not conserved"; fail=1
    fi
  done
done

for kind in dyn static; do
  echo "intloop-$kind: hand-derived counts"
  if ! python3 "$tmp/check.py" intloop "$tmp/intloop-$kind/x" "$OUT/intloop-$kind" "$NM"; then
    echo "FAIL intloop-$kind: counts"; fail=1
  else
    echo "ok   intloop-$kind: counts match the source's trip counts"
  fi
done
[ $fail -eq 0 ]
