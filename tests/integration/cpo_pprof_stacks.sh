#!/bin/bash
# cpo export --pprof with stacks, read by the real pprof: the recursion
# program runs under `axp run --stacks --collector DB`, cpod stores its
# stacks, `cpo export --pprof` writes them, and pprof, built here offline
# from Debian's golang-github-google-pprof-dev sources, must read the
# file: `pprof -top` totals the machine's samples and shows cumulative
# counts above flat ones for the mutually recursive is_even (flat and cum
# apart: stacks are there), and `-traces` lists stacks from _start through
# main to the recursion.  Without Go or those sources the pprof part is
# skipped (said so) and the file is only decoded here: samples with stacks,
# values adding up to the machine's samples.
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
AXP=$BUILD/bin/axp CPO=$BUILD/bin/cpo CPOD=$BUILD/bin/cpod P=$BUILD/programs
SRC=/usr/share/gocode/src/github.com/google/pprof
for f in $AXP $CPO $CPOD; do
  [ -x "$f" ] || { echo "$f not built (make all builds it)"; exit 77; }
done
[ -x "$P/recursion-static" ] || { echo "$P not built (make programs)"; exit 77; }
command -v python3 >/dev/null || { echo "python3 missing"; exit 77; }
. tests/integration/lib/cpod.sh

# offline: the packaged sources and their packaged dependencies only
PPROF=""
if ! command -v go >/dev/null; then
  echo "skip: the real pprof (go missing: apt-get install golang-go)"
elif [ ! -f "$SRC/pprof.go" ]; then
  echo "skip: the real pprof (sources missing: apt-get install golang-github-google-pprof-dev)"
elif (cd "$T" && GO111MODULE=off GOPATH=/usr/share/gocode GOCACHE="$T/gocache" GOFLAGS= GOPROXY=off \
      go build -o "$T/pprof" github.com/google/pprof) > "$T/go.err" 2>&1; then
  PPROF=$T/pprof
else
  sed 's/^/     /' "$T/go.err"
  check "pprof builds from the packaged sources" false
fi

"$CPOD" --db "$DB" --flush 1h || { echo "FAIL cpod did not start"; exit 1; }
"$AXP" run --pmu cycles:4000 --stacks --collector "$DB" --stats="$T/st.json" "$P/recursion-static" \
  > /dev/null 2> "$T/axp.err"
check "recursion ran with --stacks under --collector" [ $? = 0 ]
"$CPO" flush --db "$DB" > /dev/null
"$CPO" export --db "$DB" --pprof "$T/p.pb.gz" 2> "$T/export.err"
check "cpo export --pprof writes the stacks" [ $? = 0 -a ! -s "$T/export.err" ]
python3 - "$T" <<'PY' || status=1
import gzip, json, sys
T = sys.argv[1]
d = gzip.open(f"{T}/p.pb.gz").read()
def varint(b, i):
    v = s = 0
    while True:
        x = b[i]; i += 1
        v |= (x & 0x7f) << s; s += 7
        if x < 0x80:
            return v, i
def fields(b):
    i = 0
    while i < len(b):
        k, i = varint(b, i)
        if k & 7 == 0:
            v, i = varint(b, i)
        elif k & 7 == 2:
            n, i = varint(b, i); v = b[i:i + n]; i += n
        else:
            raise SystemExit("unexpected wire type %d" % (k & 7))
        yield k >> 3, k & 7, v
def packed(v):
    out, i = [], 0
    while i < len(v):
        x, i = varint(v, i); out.append(x)
    return out
lens, total = [], 0
for f, w, v in fields(d):
    if f == 2:
        locs, vals = [], []
        for g, w2, u in fields(v):
            if g == 1:
                locs += packed(u) if w2 == 2 else [u]
            elif g == 2:
                vals += packed(u) if w2 == 2 else [u]
        lens.append(len(locs)); total += vals[0]
want = json.load(open(f"{T}/st.json"))["samples"]["cycles"]
ok = total == want and max(lens) >= 10 and sum(1 for n in lens if n > 1) > len(lens) // 2
print(("ok   " if ok else "FAIL ") + f"decoded: {len(lens)} samples, values add up to {total} of {want},"
      f" up to {max(lens)} locations each")
sys.exit(0 if ok else 1)
PY
[ -n "$PPROF" ] || exit $status
"$T/pprof" -top -nodecount=200 "$T/p.pb.gz" > "$T/top" 2> "$T/top.err"
check "pprof -top reads the file" [ $? = 0 ]
sed -n '1,14p' "$T/top" | sed 's/^/     /'
"$T/pprof" -traces "$T/p.pb.gz" > "$T/traces" 2> "$T/traces.err"
check "pprof -traces reads the file" [ $? = 0 ]
python3 - "$T" <<'PY' || status=1
import json, re, sys
T = sys.argv[1]
fails = 0
def check(cond, msg):
    global fails
    print(("ok   " if cond else "FAIL ") + msg)
    fails += 0 if cond else 1
want = json.load(open(f"{T}/st.json"))["samples"]["cycles"]
top = open(f"{T}/top").read()
m = re.search(r"of (\d+) total", top)
check(m is not None and int(m.group(1)) == want, f"pprof's total is the machine's {want} samples")
rows = {}
for line in top.splitlines():
    f = line.split()
    if len(f) == 6 and f[0].isdigit() and f[3].isdigit():
        rows[f[5]] = (int(f[0]), int(f[3]))
ie = rows.get("is_even")
check(ie is not None and ie[1] > ie[0], f"is_even: cum above flat {ie}")
mn = rows.get("main")
check(mn is not None and mn[1] > 10 * max(mn[0], 1), f"main: cum from its callees far above its flat {mn}")
traces = open(f"{T}/traces").read().split("-----------+")
deep = [t for t in traces if "hof_f" in t and "main" in t and "_start" in t]
check(len(deep) > 0, f"{len(deep)} traces run from _start through main to hof_f")
order_ok = all(t.find("hof_f") < t.find("main") < t.find("_start") for t in deep)
check(order_ok, "each lists the leaf first and _start last")
sys.exit(1 if fails else 0)
PY
exit $status
