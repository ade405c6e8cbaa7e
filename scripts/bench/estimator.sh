#!/bin/bash
# The estimator against axp's exact counts and truth (docs/estimator.md):
# each workload runs once under cpod with --exact and --truth, at DCPI's
# default period (cycles 60000-64000) and at two dense ones (cycles:2000
# and cycles:500: the estimates improve with density, and a week of
# production is denser still); for each, cpo accuracy gives the share of
# cycle samples whose block frequency
# is within 5, 10 and 15% of the truth, the share of executions whose edge
# is within 10%, how much of the dynamic stall the culprits name and the
# unexplained share; then the analysis speed of cpo calc --all on every
# procedure, in MB of text per second.  EST_WORKLOADS picks the workloads
# (default: copyloop, lua on three scripts, speedtest1, zstd).
set -u
export AXP_EPOCH=${AXP_EPOCH:-1700000000}
BUILD=${BUILD:-build}
B=$BUILD/bin
WL=$BUILD/workloads
[ -x "$B/cpo" ] && [ -x "$B/axp" ] && [ -x "$B/cpod" ] || { echo "tools not built (make)"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cpo-bench-est.XXXXXX")
cleanup() {
  for d in "$tmp"/db-*; do "$B/cpo" quit --db "$d" >/dev/null 2>&1; done
  rm -rf "$tmp"
}
trap cleanup EXIT
"$WL/host/datagen" -g2M -P40 -s7 >"$tmp/z.dat" 2>/dev/null

# name image args...
WORKLOADS=${EST_WORKLOADS:-"copyloop lua-closures lua-sort lua-nbody speedtest1 zstd"}
spec() {
  case $1 in
    copyloop) echo "$BUILD/programs/copyloop-static";;
    lua-*) echo "$WL/bin/lua-static tests/workloads/lua/${1#lua-}.lua";;
    speedtest1) echo "$WL/bin/speedtest1-static --size 1";;
    zstd) echo "$WL/bin/zstd-static -3 -c $tmp/z.dat";;
  esac
}

printf '%-13s %-7s %9s %7s %7s %7s %8s %8s %7s %8s\n' workload period samples "blk5%" "blk10%" "blk15%" \
  "edge10%" named "per-cyc" unexpl
for w in $WORKLOADS; do
  read -r img args <<<"$(spec "$w")"
  [ -x "$img" ] || { echo "$w: $img not built"; continue; }
  for period in default 2000 500; do
    db=$tmp/db-$w-$period
    pmu=cycles; [ "$period" = default ] || pmu=cycles:$period
    "$B/cpod" --db "$db" --flush 1h || { echo "$w: cpod did not start"; continue; }
    # shellcheck disable=SC2086
    "$B/axp" run --pmu "$pmu" --collector "$db" --exact "$tmp/x.exact" --truth "$tmp/x.truth" \
      -- "$img" $args >/dev/null 2>&1
    "$B/cpo" quit --db "$db" >/dev/null
    "$B/cpo" accuracy --db "$db" --exact "$tmp/x.exact" --truth "$tmp/x.truth" --image "$img" --json \
      >"$tmp/acc.json" 2>"$tmp/err" || { echo "$w $period: $(cat "$tmp/err")"; continue; }
    python3 - "$tmp/acc.json" "$w" "$period" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); b, e, c = d["blocks"], d["edges"], d["culprits"]
print("%-13s %-7s %9.0f %6.1f%% %6.1f%% %6.1f%% %7.1f%% %7.1f%% %7.2f %7.2f%%" % (
    sys.argv[2], sys.argv[3], d["samples"], 100 * b["within5"], 100 * b["within10"],
    100 * b["within15"], 100 * e["within10"], 100 * c["covered"], c["per_stall"],
    100 * c["unexplained"]))
PY
  done
done

echo
echo "analysis speed: cpo calc --all --json on every procedure (dense profiles)"
for w in $WORKLOADS; do
  read -r img args <<<"$(spec "$w")"
  db=$tmp/db-$w-2000
  [ -d "$db" ] || continue
  bytes=$(python3 - "$img" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
shoff, = struct.unpack_from("<Q", d, 0x28); shentsize, shnum, shstrndx = struct.unpack_from("<HHH", d, 0x3a)
sec = [struct.unpack_from("<IIQQQQIIQQ", d, shoff + i * shentsize) for i in range(shnum)]
print(sum(s[5] for s in sec if s[1] == 1 and s[2] & 4))
PY
)
  /usr/bin/time -f "%e" -o "$tmp/t" "$B/cpo" calc --all --json --db "$db" --image "$img" >/dev/null 2>&1
  secs=$(cat "$tmp/t")
  awk -v w="$w" -v b="$bytes" -v s="$secs" 'BEGIN { printf "  %-13s %7.2f MB of code in %5.2f s: %6.2f MB/s\n", w, b / 1e6, s, (s > 0 ? b / 1e6 / s : 0) }'
done
