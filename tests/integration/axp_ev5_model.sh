#!/bin/bash
# The EV5 cycle model on whole programs (axp run --timing), the checks the
# machine issue asks for:
#   alu       the dual-issuable loop of alu_loop() runs at CPI <= 0.6
#   copyloop  memory-bound: the copy loop runs at a
#             CPI at least 3x what it is with every memory access as fast as
#             a D-cache hit, and D-cache plus write-buffer stalls are the
#             program's largest stall cause (DCPI paper, Figure 2)
#   bigloop   a 12 KB loop body misses the 8 KB I-cache on every pass; with
#             a 32 KB I-cache those misses are gone
#   branchalt the alternating branch (a blbc taken when i is even, taken
#             first) swings its 2-bit counter between the two weak states and
#             is mispredicted all 10000 times, on top of the start-up's
#   indjump   a JSR whose hint names one of its two targets (patched by
#             optimize-image) mispredicts 5000 times fewer, in fewer cycles
# Per-procedure CPI comes from --truth (head-of-queue cycles per
# instruction) and --exact (instructions executed per block).
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
AXP=$BUILD/bin/axp
CPO=$BUILD/bin/cpo
OPT=$BUILD/bin/optimize-image
P=$BUILD/programs

for t in "$AXP" "$CPO" "$OPT"; do [ -x "$t" ] || { echo "$t missing: run make"; exit 77; }; done
for p in alu copyloop bigloop branchalt indjump; do
  [ -x "$P/$p-static" ] || { echo "$P/$p-static missing: run make programs"; exit 77; }
done
command -v python3 >/dev/null || { echo "python3 missing"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { echo "ok: $*"; pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }

# axp_run ARGS...: axp run, its output dropped; a failure is a failed check
# (a model that cannot run must not pass on empty figures)
axp_run() {
  "$AXP" run "$@" >/dev/null
  local rc=$?
  [ $rc -eq 0 ] || bad "axp run $* exited with status $rc"
}
# num X: X is a positive number
num() { [[ $1 =~ ^[0-9]+(\.[0-9]+)?$ ]] && awk -v x="$1" 'BEGIN { exit !(x > 0) }'; }

# stat FILE KEY -> the top-level JSON number
stat() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }

# proc_cpi IMAGE PROC TRUTH EXACT -> "cycles instructions cpi" of PROC
proc_cpi() {
  local range
  range=$("$CPO" syms "$1" | awk -v p="$2" '$NF == p && $4 == "FUNC" { print $2, $3; exit }')
  python3 - "$range" "$3" "$4" <<'EOF'
import sys
lo, size = sys.argv[1].split()
lo = int(lo, 16); hi = lo + int(size)
cyc = 0
for l in open(sys.argv[2]):
    if l[0] == '#':
        continue
    f = l.split()
    if lo <= int(f[1], 16) < hi:
        cyc += int(f[2])
ins = 0
for l in open(sys.argv[3]):
    f = l.split()
    if f[0] == 'block' and lo <= int(f[2], 16) < hi:
        ins += (int(f[3], 16) - int(f[2], 16)) // 4 * int(f[4])
print(cyc, ins, '%.4f' % (cyc / ins))
EOF
}

# ---- alu -------------------------------------------------------------------
axp_run --timing --truth="$tmp/alu.truth" --exact "$tmp/alu.exact" "$P/alu-static"
read -r c i cpi < <(proc_cpi "$P/alu-static" alu_loop "$tmp/alu.truth" "$tmp/alu.exact")
if num "$cpi" && awk -v x="$cpi" 'BEGIN { exit !(x <= 0.6) }'; then
  ok "alu_loop: $c cycles, $i instructions, CPI $cpi <= 0.6"
else
  bad "alu_loop: CPI $cpi > 0.6 ($c cycles, $i instructions)"
fi

# ---- copyloop -------------------------------------------------------------
# no B-cache fitted, as copyloop.c assumes: its arrays stream from memory
axp_run --ev5 bcache.size=0 --stats="$tmp/copy.json" --truth="$tmp/copy.truth" \
  --exact "$tmp/copy.exact" "$P/copyloop-static"
axp_run --ev5 scache.latency=2 --ev5 bcache.latency=2 --ev5 mem_latency=0 \
  --ev5 write_buffer_drain=0 --truth="$tmp/fast.truth" --exact "$tmp/fast.exact" \
  "$P/copyloop-static"
read -r _ _ slow < <(proc_cpi "$P/copyloop-static" copy "$tmp/copy.truth" "$tmp/copy.exact")
read -r _ _ fast < <(proc_cpi "$P/copyloop-static" copy "$tmp/fast.truth" "$tmp/fast.exact")
if num "$slow" && num "$fast" && awk -v s="$slow" -v f="$fast" 'BEGIN { exit !(s >= 3 * f) }'; then
  ok "copy: CPI $slow, $fast with ideal memory (x$(awk -v s="$slow" -v f="$fast" 'BEGIN { printf "%.1f", s / f }'))"
else
  bad "copy: CPI $slow is not 3x the ideal-memory $fast"
fi
top=$(python3 -c '
import json,sys
s = json.load(open(sys.argv[1]))["stalls"]
mem = s["dcache"] + s["write_buffer"]
other = max(v for k, v in s.items() if k not in ("dcache", "write_buffer"))
print("%d %d %s" % (mem, other, "yes" if mem > other else "no"))' "$tmp/copy.json")
case $top in
  *yes) ok "copyloop: D-cache + write-buffer stalls ${top% *} beat every other cause";;
  *) bad "copyloop: memory stalls are not the largest cause ($top)";;
esac

# ---- bigloop --------------------------------------------------------------
axp_run --timing --stats="$tmp/big.json" "$P/bigloop-static"
axp_run --ev5 icache.size=32768 --stats="$tmp/bigfit.json" "$P/bigloop-static"
m1=$(stat "$tmp/big.json" icache_misses) m2=$(stat "$tmp/bigfit.json" icache_misses)
# the body's last third and first third share I-cache sets: at least 256
# misses on each of the 19 passes after the first
if [ $((m1 - m2)) -ge $((19 * 256)) ]; then
  ok "bigloop: $m1 I-cache misses in 8 KB, $m2 in 32 KB"
else
  bad "bigloop: $m1 I-cache misses in 8 KB, $m2 in 32 KB (expected 19 x 256 more)"
fi

# ---- branchalt --------------------------------------------------------------
# The start-up's mispredicts are measured on alu, whose loop has none.
axp_run --timing --stats="$tmp/br.json" "$P/branchalt-static"
axp_run --timing --stats="$tmp/alu.json" "$P/alu-static"
mp=$(stat "$tmp/br.json" branch_mispredicts) base=$(stat "$tmp/alu.json" branch_mispredicts)
if [ "$mp" -ge 10000 ] && [ "$mp" -le $((10000 + 2 * base)) ]; then
  ok "branchalt: $mp conditional-branch mispredicts (10000 from the alternating branch, start-up ~$base)"
else
  bad "branchalt: $mp mispredicts, expected 10000 plus start-up (~$base)"
fi

# ---- indjump: the hint -------------------------------------------------------
jsr=$("$CPO" disasm "$P/indjump-static" --proc dispatch | awk '$3 == "jsr" { sub(":", "", $1); print "0x" $1; exit }')
even=$("$CPO" syms "$P/indjump-static" | awk '$NF == "target_even" { print "0x" substr($2, length($2) - 8); exit }')
"$OPT" "$P/indjump-static" --plan identity --write-plan "$tmp/plan" -o "$tmp/ij-id" >/dev/null
echo "hint $jsr $even" >>"$tmp/plan"
"$OPT" "$P/indjump-static" --plan "$tmp/plan" -o "$tmp/ij-hint" >/dev/null
axp_run --timing --stats="$tmp/ij1.json" "$tmp/ij-id"
axp_run --timing --stats="$tmp/ij2.json" "$tmp/ij-hint"
j1=$(stat "$tmp/ij1.json" jump_mispredicts) j2=$(stat "$tmp/ij2.json" jump_mispredicts)
c1=$(stat "$tmp/ij1.json" cycles) c2=$(stat "$tmp/ij2.json" cycles)
if [ $((j1 - j2)) -eq 5000 ] && [ "$c2" -lt "$c1" ]; then
  ok "indjump: hint to target_even: $j1 -> $j2 jump mispredicts, $c1 -> $c2 cycles"
else
  bad "indjump: $j1 -> $j2 jump mispredicts, $c1 -> $c2 cycles (expected 5000 fewer, fewer cycles)"
fi

# ---- determinism -------------------------------------------------------------
axp_run --ev5 bcache.size=0 --stats="$tmp/copy2.json" "$P/copyloop-static"
if [ "$(stat "$tmp/copy.json" cycles)" = "$(stat "$tmp/copy2.json" cycles)" ]; then
  ok "copyloop twice: $(stat "$tmp/copy.json" cycles) cycles both times"
else
  bad "copyloop twice: $(stat "$tmp/copy.json" cycles) then $(stat "$tmp/copy2.json" cycles) cycles"
fi

# ---- bad parameters ------------------------------------------------------------
for bad_arg in "icache.size=1000" "nosuch=1" "issue_width=9" "dcache.line=x"; do
  if "$AXP" run --ev5 "$bad_arg" "$P/alu-static" >/dev/null 2>"$tmp/err"; then
    bad "--ev5 $bad_arg accepted"
  elif grep -q "${bad_arg%%=*}" "$tmp/err"; then
    ok "--ev5 $bad_arg refused: $(head -1 "$tmp/err")"
  else
    bad "--ev5 $bad_arg: message does not name it: $(head -1 "$tmp/err")"
  fi
done

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
