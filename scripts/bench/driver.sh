#!/bin/bash
# The sampling driver's two eviction policies side by side: DCPI's
# round-robin and swap-to-front / insert-at-front, on the same synthetic
# cycle-sample streams (shapes in tests/driver/stream.h), one run.  Prints
# per policy the hash miss rate, aggregation (samples per entry reaching
# the daemon), CPU time per drv_sample, a daemon stand-in's time per entry,
# their sum per sample, and the front/rr ratios.
set -eu
BUILD=${BUILD:-build}
B=$BUILD/tests/driver/driver_bench
if [ ! -x "$B" ]; then echo "driver_bench: not built (make bench builds it)"; exit 1; fi
"$B" --samples "${DRIVER_BENCH_SAMPLES:-4000000}" --reps "${DRIVER_BENCH_REPS:-5}"
echo "speedtest1 on axp: not measured yet (needs the machine's PMU feeding the driver)"
