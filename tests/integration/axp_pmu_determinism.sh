#!/bin/bash
# Sampling is deterministic: two identical `axp run --pmu cycles` runs of a
# multi-threaded program on 4 CPUs (threads-dyn, and zstd compressing with
# two worker threads) give the same cycles, the same samples in the same
# order (--sample-log), the same per-instruction truth (--truth) and the
# same driver counters.  A run with another --pmu-seed keeps the cycles
# (the counters observe without changing execution) and moves the samples.
# The private driver region axp drains itself loses nothing: every sample
# reaches its consumer, through overflow entries only.
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
AXP=$BUILD/bin/axp P=$BUILD/programs W=$BUILD/workloads/bin
[ -x "$AXP" ] || { echo "$AXP not built (make all builds it)"; exit 77; }
[ -f "$P/threads-dyn" ] || { echo "$P/threads-dyn not built (make programs builds it)"; exit 77; }
[ -x "$W/zstd" ] || { echo "$W/zstd not built (make workloads builds it)"; exit 77; }

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
status=0
check() {   # what, command...
  local what=$1; shift
  if "$@"; then echo "ok   $what"; else echo "FAIL $what"; status=1; fi
}
# what the stats say about execution and sampling, without host times and paths
canon() {
  python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
keep = {k: d.get(k) for k in ("instructions", "cycles", "cycles_per_cpu", "samples", "mean_period",
                               "per_cpu", "stalls", "icache_misses", "dcache_misses")}
keep["driver"] = {k: v for k, v in d["driver"].items() if k != "region"}
print(json.dumps(keep, sort_keys=True, indent=1))' "$1"
}
field() { python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }

seq 1 300000 > "$T/input"
run() {   # name tag pmu-spec seed program args...
  local name=$1 tag=$2 spec=$3 seed=$4; shift 4
  "$AXP" run --cpus 4 --pmu "$spec" --pmu-seed "$seed" --stats="$T/$name.$tag.json" \
    --truth "$T/$name.$tag.truth" --sample-log "$T/$name.$tag.log" "$@" > "$T/$name.$tag.out" 2>&1
}

for w in "threads cycles:5000 $P/threads-dyn" "zstd cycles $W/zstd -q -c -T2 $T/input"; do
  set -- $w
  name=$1 spec=$2; shift 2
  run "$name" a "$spec" 1 "$@"; ra=$?
  run "$name" b "$spec" 1 "$@"; rb=$?
  run "$name" s "$spec" 2 "$@"; rs=$?
  check "$name: three runs succeed (exit $ra $rb $rs)" [ $ra -eq 0 -a $rb -eq 0 -a $rs -eq 0 ]
  [ $ra -eq 0 -a $rb -eq 0 -a $rs -eq 0 ] || continue
  n=$(field "$T/$name.a.json" 'sum(d["samples"].values())')
  c=$(field "$T/$name.a.json" 'd["cycles"]')
  check "$name: sampled ($n samples over $c cycles)" [ "$n" -gt 100 ]
  canon "$T/$name.a.json" > "$T/$name.a.canon"
  canon "$T/$name.b.json" > "$T/$name.b.canon"
  check "$name: same cycles, samples and driver counters in both runs" cmp -s "$T/$name.a.canon" "$T/$name.b.canon"
  check "$name: same samples in the same order" cmp -s "$T/$name.a.log" "$T/$name.b.log"
  check "$name: same per-instruction truth" cmp -s <(sort "$T/$name.a.truth") <(sort "$T/$name.b.truth")
  check "$name: the sample log holds every sample ($(grep -vc '^#' "$T/$name.a.log"))" \
    [ "$(grep -vc '^#' "$T/$name.a.log")" = "$n" ]
  busy=$(field "$T/$name.a.json" 'sum(1 for c in d["per_cpu"] if c["instructions"] > 0)')
  check "$name: ran on $busy CPUs" [ "$busy" -ge 2 ]
  for k in instructions cycles; do
    a=$(field "$T/$name.a.json" "d['$k']") s=$(field "$T/$name.s.json" "d['$k']")
    check "$name: another seed, same $k ($a, $s)" [ "$a" = "$s" ]
  done
  check "$name: another seed, other samples" bash -c "! cmp -s '$T/$name.a.log' '$T/$name.s.log'"
  # the private region: drained to the last entry
  ok=$(field "$T/$name.a.json" '(lambda v: v["mode"] == "private" and v["dropped"] == 0 and v["rejected"] == 0
        and v["samples"] == v["drained_samples"] == '"$n"' and v["drained_entries"] == v["entries_taken"]
        == v["overflow_entries"] > 0)(d["driver"])')
  check "$name: the private region delivered every sample (aggregation $(field "$T/$name.a.json" 'd["driver"]["aggregation"]'))" \
    [ "$ok" = True ]
done
exit $status
