#!/bin/bash
# What sampling costs on axp, and what the driver makes of a real sample
# stream.  speedtest1 (dynamic, --size $PMU_BENCH_SIZE, default 5) runs
# side by side: functional, --timing (the EV5 cycle model), --pmu cycles
# (the model, the counters and the driver's private region drained in
# process); prints wall and CPU seconds and the slowdowns (target: --pmu at
# most 4x functional).  Then the sample stream of a `--pmu cycles,imiss`
# run (--sample-log) is replayed through the driver under both eviction
# policies (tests/driver/drv_replay): hash miss rate, aggregation (samples
# per entry reaching the consumer, the final table flush included; target
# at least 10) and CPU ns per drv_sample, median of replays into warm
# tables; the same for a stream sampled 31x/16x as often (cycles:2000,
# imiss:256), which is what a profile of a run that many times longer
# gives the tables to aggregate.
set -eu
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
AXP=$BUILD/bin/axp
REPLAY=$BUILD/tests/driver/drv_replay
PROG=$BUILD/workloads/bin/speedtest1
SIZE=${PMU_BENCH_SIZE:-5}
[ -x "$AXP" ] || { echo "axp not built (make)"; exit 0; }
[ -x "$PROG" ] || { echo "speedtest1 not built (make workloads)"; exit 0; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# run NAME AXP-OPTIONS...: one run of speedtest1; "wall cpu" seconds
run() {
  local name=$1
  shift
  /usr/bin/time -f "%e %U %S" -o "$tmp/$name.time" \
    "$AXP" run --stats="$tmp/$name.json" "$@" "$PROG" --size "$SIZE" >/dev/null 2>"$tmp/$name.err" </dev/null ||
    { echo "$name: axp failed:"; cat "$tmp/$name.err"; exit 1; }
  awk '{ printf "%s %.2f\n", $1, $2 + $3 }' "$tmp/$name.time"
}
stat() {   # file python-expression
  python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

read -r fw fc < <(run functional)
read -r tw tc < <(run timing --timing)
read -r pw pc < <(run pmu --pmu cycles)
insns=$(stat "$tmp/functional.json" 'd["instructions"]')
samples=$(stat "$tmp/pmu.json" 'sum(d["samples"].values())')
echo "speedtest1 --size $SIZE: $insns instructions, $(stat "$tmp/pmu.json" 'd["cycles"]') cycles," \
     "$samples cycle samples"
printf '%-28s %9s %9s %12s %12s\n' mode "wall s" "cpu s" "wall ratio" "cpu ratio"
row() {   # name wall cpu
  awk -v n="$1" -v w="$2" -v c="$3" -v fw="$fw" -v fc="$fc" \
    'BEGIN { printf "%-28s %9.2f %9.2f %12.2f %12.2f\n", n, w, c, w / fw, c / fc }'
}
row functional "$fw" "$fc"
row --timing "$tw" "$tc"
row "--pmu cycles" "$pw" "$pc"
awk -v p="$pc" -v t="$tc" 'BEGIN { printf "--pmu cycles / --timing: %.3f (cpu)\n", p / t }'
echo "driver in the --pmu run: $(stat "$tmp/pmu.json" '"aggregation %.2f, %d entries, dropped %d" % (d["driver"]["aggregation"], d["driver"]["overflow_entries"], d["driver"]["dropped"])')"

if [ ! -x "$REPLAY" ]; then
  echo "drv_replay not built (make bench builds it): no per-policy figures"
  exit 0
fi
for spec in cycles,imiss cycles:2000,imiss:256; do
  "$AXP" run --pmu "$spec" --sample-log "$tmp/log" --stats="$tmp/s.json" "$PROG" --size "$SIZE" \
    >/dev/null 2>"$tmp/err" </dev/null || { echo "axp --pmu $spec failed:"; cat "$tmp/err"; exit 1; }
  echo
  echo "--pmu $spec: $(stat "$tmp/s.json" 'd["samples"]'); axp's own aggregation" \
       "($(stat "$tmp/s.json" 'd["driver"]["policy"]')): $(stat "$tmp/s.json" 'd["driver"]["aggregation"]')"
  "$REPLAY" "$tmp/log" --reps "${PMU_BENCH_REPS:-11}"
done
echo "(ns/sample: drv_sample replayed in a tight loop, tables in the host's caches: a lower bound)"

# Aggregation grows with the length of a profile: the distinct (pid, pc,
# event) keys of a workload are bounded by its code, the samples are not.
# A longer speedtest1 run at DCPI's default periods, both policies.
LONG=${PMU_BENCH_LONG_SIZE:-20}
echo
for pol in front rr; do
  "$AXP" run --pmu cycles,imiss --driver-policy "$pol" --stats="$tmp/l.json" "$PROG" --size "$LONG" \
    >/dev/null 2>"$tmp/err" </dev/null || { echo "axp --size $LONG failed:"; cat "$tmp/err"; exit 1; }
  echo "speedtest1 --size $LONG, --pmu cycles,imiss, policy $pol: $(stat "$tmp/l.json" \
    '"%d samples, %d overflow entries, aggregation %.2f" % (d["driver"]["samples"], d["driver"]["overflow_entries"], d["driver"]["aggregation"])')"
done
