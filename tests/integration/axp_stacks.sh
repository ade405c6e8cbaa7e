#!/bin/bash
# Calling contexts at samples (axp run --stacks), on the test programs and
# a hostile guest (tests/stacks/smash.c, built here when the Alpha
# compiler is present):
#   - every sample gets a stack, and the ends counted in --stats add up to
#     the samples; the sample log has one line per sample;
#   - static programs with unwind tables: >= 99% of stacks complete, and
#     every complete one ends in the start code (_start, or the thread
#     start under clone), when binutils for Alpha can name the frames;
#   - --stacks=8 keeps to 8 frames and counts the cut stacks as "depth";
#   - a guest that overwrites its callers' frames while it is sampled runs
#     to the end with its normal output, its stacks counted as corrupt;
#   - stacks change nothing the machine computes: the same cycles and the
#     same samples with and without them;
#   - bad uses are usage errors.
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
AXP=$BUILD/bin/axp
P=$BUILD/programs
[ -x "$AXP" ] || { echo "$AXP missing: run make"; exit 77; }
[ -x "$P/alu-static" ] || { echo "$P missing: run make programs"; exit 77; }
command -v python3 >/dev/null || { echo "python3 missing"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

run() {     # NAME PROGRAM [axp options...]: stats in NAME.json, log in NAME.log
  local name=$1 prog=$2; shift 2
  (cd "$tmp" && "$AXP" run --pmu cycles:2000 "$@" --stats="$tmp/$name.json" \
     --sample-log "$tmp/$name.log" "$prog" > "$tmp/$name.out" 2> "$tmp/$name.err") ||
    fail "$name: axp exited $? ($(head -c 300 "$tmp/$name.err"))"
}

run alu "$P/alu-static" --stacks
run threads "$P/threads-static" --stacks
run signals "$P/signals-static" --stacks --pmu cycles:200   # dense: samples inside the handlers
run rec8 "$P/recursion-static" --stacks=8
run plain "$P/alu-static"
cmp -s "$tmp/alu.out" "$P/../../tests/programs/alu.expected" 2>/dev/null ||
  cmp -s "$tmp/alu.out" "$ROOT/tests/programs/alu.expected" || fail "alu: output differs with --stacks"
hostile=""
if command -v alpha-linux-gnu-gcc >/dev/null; then
  if alpha-linux-gnu-gcc -O2 -g -static -o "$tmp/smash" tests/stacks/smash.c 2> "$tmp/cc.err"; then
    run smash "$tmp/smash" --stacks
    hostile=smash
    [ "$(wc -l < "$tmp/smash.out")" = 3 ] && [ "$(sort -u -k3 "$tmp/smash.out" | wc -l)" = 1 ] ||
      fail "smash: its output is not three equal checksums"
  else
    fail "smash.c does not build: $(head -c 300 "$tmp/cc.err")"
  fi
else
  echo "skip: the hostile guest (alpha-linux-gnu-gcc missing)"
fi
NM=$(command -v alpha-linux-gnu-nm || true)

python3 - "$tmp" "$P" "$NM" $hostile <<'PY' || fails=$((fails + 1))
import bisect, json, subprocess, sys
tmp, P, nm = sys.argv[1], sys.argv[2], sys.argv[3]
hostile = sys.argv[4:]
fails = 0
def check(cond, msg):
    global fails
    print(("ok: " if cond else "FAIL: ") + msg)
    fails += 0 if cond else 1

def load(name):
    st = json.load(open(f"{tmp}/{name}.json"))
    rows = [l.split() for l in open(f"{tmp}/{name}.log") if not l.startswith("#")]
    return st, rows

def symbols(prog):
    if not nm:
        return None
    out = subprocess.run([nm, "-n", prog], capture_output=True, text=True).stdout
    syms = [(int(a, 16), n) for a, t, n in (l.split() for l in out.splitlines() if len(l.split()) == 3)
            if t in "tTwW"]
    addrs = [a for a, _ in syms]
    return lambda pc: syms[bisect.bisect_right(addrs, pc) - 1][1] if addrs and pc >= addrs[0] else "?"

for name, prog in (("alu", "alu-static"), ("threads", "threads-static"), ("signals", "signals-static"),
                   ("rec8", "recursion-static")) + tuple((h, None) for h in hostile):
    st, rows = load(name)
    s = st["stacks"]
    ends = s["ends"]
    check(s["samples"] == sum(ends.values()) == len(rows) == sum(st["samples"].values()),
          f"{name}: {s['samples']} stacks, ends add up, one log line each, as many as samples")
    check(all(len(r) >= 5 and r[4] in ends for r in rows), f"{name}: every log line says how its walk ended")
    if name in ("alu", "threads", "signals"):
        share = ends["complete"] / max(1, s["samples"])
        check(share >= 0.99 if name != "signals" else share >= 0.9,
              f"{name}: {100 * share:.2f}% of stacks complete {ends}")
        sym = symbols(f"{P}/{prog}")
        if sym:
            bad = 0
            for r in rows:
                if r[4] != "complete":
                    continue
                frames = [sym(int(a, 16)) for a in [r[2]] + r[5:]]
                if frames[-1] not in ("__start", "_start", "thread_start", "__clone", "__clone3"):
                    bad += 1
                    if bad < 3:
                        print("  " + " <- ".join(frames))
            check(bad == 0, f"{name}: every complete stack starts in the start code ({bad} not)")
    if name == "rec8":
        check(max(len(r) - 4 for r in rows) <= 8 and ends["depth"] > 0,
              f"rec8: at most 8 frames, {ends['depth']} stacks cut at the depth limit")
    if name == "signals":
        check(ends["signal_frame"] > 0, f"signals: {ends['signal_frame']} stacks stop at a signal frame")
    if name == "smash":
        check(ends["corrupt"] + ends["unreadable"] > 0.5 * s["samples"],
              f"smash: the overwritten frames are counted: {ends}")
a, b = json.load(open(f"{tmp}/alu.json")), json.load(open(f"{tmp}/plain.json"))
check(a["samples"] == b["samples"] and a["guest_seconds"] == b["guest_seconds"],
      "alu: the same samples and guest time with and without --stacks")
sys.exit(1 if fails else 0)
PY

for bad in "--stacks=0" "--stacks=99999" "--stacks=x"; do
  "$AXP" run --pmu cycles "$bad" "$P/alu-static" > /dev/null 2> "$tmp/bad.err"
  rc=$?
  [ $rc = 2 ] && grep -q -- "--stacks" "$tmp/bad.err" || fail "$bad: status $rc, $(cat "$tmp/bad.err")"
done
"$AXP" run --stacks "$P/alu-static" > /dev/null 2> "$tmp/bad.err"
rc=$?
[ $rc = 2 ] && grep -q -- "--pmu" "$tmp/bad.err" || fail "--stacks without --pmu: status $rc"

[ $fails = 0 ] && echo "axp_stacks: all passed" || { echo "axp_stacks: $fails failed"; exit 1; }
