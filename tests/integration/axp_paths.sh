#!/bin/bash
# Exact path profiles and calling context trees (axp --paths/--cct,
# docs/paths.md) on every test program, static and dynamic, among them
# those that do awkward things to control flow (longjmp, signals, fork and
# exec, threads, recursion, jump tables, calls through pointers):
#   - the paths through every block of the program (and of libc, for one
#     dynamic program) add up to axp's exact count of it;
#   - every metric of the paths plus `outside` equals the run's --stats
#     total, and so does every metric of the calling context tree;
#   - main is one context called once; the folded stacks add up to the cycles;
#   - cpo paths --json and cpo cct --json are JSON; truncated files and a
#     profile read against the wrong image are refused with clear errors.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
AXP=$BUILD/bin/axp CPO=$BUILD/bin/cpo
[ -x "$AXP" ] && [ -x "$CPO" ] || { echo "tools not built (make)"; exit 77; }
ls "$BUILD"/programs/*-dyn >/dev/null 2>&1 || { echo "no programs (make programs)"; exit 77; }
command -v python3 >/dev/null || { echo "python3 missing"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cpo-paths.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failed=0 passed=0
ok() { echo "ok   $*"; passed=$((passed + 1)); }
bad() { echo "FAIL $*"; failed=$((failed + 1)); }

# totals FILE STATS: every column the run's --stats also counts, summed
# over the file's path, partial and outside lines (paths) or nodes (cct).
totals() {
  python3 - "$1" "$2" <<'PY'
import json, sys
f, s = sys.argv[1], json.load(open(sys.argv[2]))
want = {'instructions': s['instructions'], 'cycles': s['cycles'], 'imiss': s['icache_misses'],
        'dmiss': s['dcache_misses'], 'smiss': s['scache_misses'], 'itbmiss': s['itb_misses'],
        'dtbmiss': s['dtb_misses'], 'branchmp': s['branch_mispredicts'], 'jsrmp': s['jump_mispredicts']}
for k, v in s['stalls'].items():
    want['stall_' + k] = v
names, tot = [], []
for line in open(f):
    w = line.split()
    if w[0] == 'metrics':
        names, tot = w[1:], [0] * (len(w) - 1)
        continue
    vals = {'path': w[3:], 'partial': w[5:], 'outside': w[1:], 'node': w[7:], 'root': w[1:]}.get(w[0])
    for i, v in enumerate(vals or []):
        tot[i] += int(v)
got = dict(zip(names, tot))
bad = [f'{k} {got.get(k)} != {v}' for k, v in want.items() if got.get(k) != v]
print('; '.join(bad) if bad else f'{len(want)} metrics equal the run\'s totals')
sys.exit(1 if bad else 0)
PY
}

libc=$(ls /usr/alpha-linux-gnu/lib/libc.so.6.1 2>/dev/null)
for src in tests/programs/*.c; do
  p=$(basename "$src" .c)
  args=$(cat "tests/programs/$p.args" 2>/dev/null)
  input=/dev/null
  [ -f "tests/programs/$p.stdin" ] && input=tests/programs/$p.stdin
  for kind in static dyn; do
    prog=$BUILD/programs/$p-$kind r=$tmp/$p-$kind
    [ -x "$prog" ] || { bad "$prog missing"; continue; }
    # shellcheck disable=SC2086
    "$AXP" run --cpus 2 --paths "$r.paths" --cct "$r.cct" --exact "$r.exact" --stats="$r.stats" "$prog" $args \
      <"$input" >/dev/null 2>"$r.err"
    rc=$?
    want=$(cat tests/programs/$p.status 2>/dev/null || echo 0)
    if [ "$rc" != "$want" ] || [ ! -s "$r.paths" ] || [ ! -s "$r.cct" ]; then
      bad "$p-$kind: axp exited $rc (want $want)"; head -3 "$r.err"; continue
    fi
    if out=$("$CPO" paths "$prog" --from "$r.paths" --exact "$r.exact" 2>&1); then
      ok "$p-$kind: $(echo "$out" | tail -1)"
    else
      bad "$p-$kind paths against exact counts:"; echo "$out" | tail -5
    fi
    if [ "$p" = funcptr ] && [ "$kind" = dyn ] && [ -n "$libc" ]; then
      if out=$("$CPO" paths "$libc" --from "$r.paths" --exact "$r.exact" 2>&1); then
        ok "$p-$kind libc: $(echo "$out" | tail -1)"
      else
        bad "$p-$kind libc paths against exact counts:"; echo "$out" | tail -5
      fi
    fi
    if out=$(totals "$r.paths" "$r.stats"); then ok "$p-$kind paths: $out"; else bad "$p-$kind paths: $out"; fi
    if out=$(totals "$r.cct" "$r.stats"); then ok "$p-$kind cct: $out"; else bad "$p-$kind cct: $out"; fi
  done
done

# the tree's shape on a program whose calls are known
r=$tmp/recursion-static
mains=$(grep -c '^node .* main ' "$r.cct")
calls=$(awk '$1 == "node" && $7 == "main" { print $8 }' "$r.cct")
backs=$(grep -c '^back ' "$r.cct")
if [ "$mains" = 1 ] && [ "$calls" = 1 ] && [ "$backs" -gt 0 ]; then
  ok "recursion: main is one context, called once; recursion folded into $backs back edges"
else
  bad "recursion: $mains main contexts, called $calls times, $backs back edges"
fi
cyc=$(python3 -c "import json; print(json.load(open('$r.stats'))['cycles'])")
fold=$("$CPO" cct --from "$r.cct" --folded | awk '{ s += $NF } END { print s }')
[ "$fold" = "$cyc" ] && ok "folded stacks add up to the run's $cyc cycles" || bad "folded stacks $fold, cycles $cyc"
if "$CPO" paths "$BUILD/programs/recursion-static" --from "$r.paths" --json --top 3 | python3 -c '
import json, sys
d = json.load(sys.stdin)
p = d["procedures"][0]["paths"][0]
assert p["blocks"] and p["count"] > 0 and "cycles" in p["metrics"]' &&
   "$CPO" cct --from "$r.cct" --json | python3 -c 'import json, sys; assert json.load(sys.stdin)["children"]'; then
  ok "cpo paths --json and cpo cct --json parse"
else
  bad "cpo paths --json / cpo cct --json"
fi

# bad input
head -c 2000 "$r.paths" >"$tmp/trunc.paths"
head -n 5 "$r.cct" >"$tmp/trunc.cct"
if ! "$CPO" paths "$BUILD/programs/recursion-static" --from "$tmp/trunc.paths" 2>"$tmp/e1" && grep -q 'trunc.paths:.*truncated' "$tmp/e1" &&
   ! "$CPO" cct --from "$tmp/trunc.cct" 2>"$tmp/e2" && grep -q 'ends early' "$tmp/e2"; then
  ok "truncated files refused: $(cat "$tmp/e1") / $(cat "$tmp/e2")"
else
  bad "truncated files:"; cat "$tmp/e1" "$tmp/e2"
fi
if ! "$CPO" paths "$BUILD/programs/alu-static" --from "$r.paths" 2>"$tmp/e3" && grep -q 'has no paths of' "$tmp/e3"; then
  ok "another image refused: $(cat "$tmp/e3")"
else
  bad "another image:"; cat "$tmp/e3"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
