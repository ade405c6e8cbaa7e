#!/bin/bash
# ProfileMe on axp (docs/notes/profileme.md): each workload runs once under
# cpod with cycle samples (cycles:2000), D-cache miss counter samples
# (dmiss:DMISS) and ProfileMe (profileme:PM, pairs within 64), with
# --exact and --truth; then
# - frequencies: the share of ProfileMe samples whose block frequency,
#   counted from the samples, is within 5% of the exact count, beside the
#   cycle-sample estimate of the same run (each weighted by its own
#   samples, and both weighted by instructions executed);
# - event attribution: for instructions with at least 500 ProfileMe
#   samples, the D-cache miss rate from ProfileMe against the cycle
#   model's (--truth, loads answered below the D-cache), and where the
#   dmiss counter's samples land (on a load that missed, or skidded);
# - wasted issue slots per procedure from paired samples against the
#   model's (the issue.* columns of --truth);
# - nothing lost, and the speed of the machine with and without ProfileMe
#   (the same run with cycles:2000 and dmiss alone).
# PM_WORKLOADS picks the workloads (default: lua sort, speedtest1, zstd),
# PM_PERIOD the ProfileMe period (default: per workload, the density at
# which 98% of the samples' blocks come within 5%: 64, and 16 for
# speedtest1, whose run is shortest), PM_DMISS the dmiss period (500).
. "$(dirname "$0")/profileme.inc"
DM=${PM_DMISS:-500}

for w in $WORKLOADS; do
  read -r img args <<<"$(spec "$w")"
  PM=${PM_PERIOD:-$([ "$w" = speedtest1 ] && echo 16 || echo 64)}
  # the pair window must stay below the shortest interval (PM/2)
  WIN=${PM_WINDOW:-$((PM / 2 - 1 < 64 ? PM / 2 - 1 : 64))}
  echo "$w: profileme:$PM (pairs within $WIN), cycles:2000, dmiss:$DM"
  [ -x "$img" ] || { echo "$w: $img not built"; continue; }
  db=$tmp/db-$w
  "$B/cpod" --db "$db" --flush 1h || { echo "$w: cpod did not start"; continue; }
  # shellcheck disable=SC2086
  /usr/bin/time -f "%e" -o "$tmp/t.pm" "$B/axp" run --pmu "cycles:2000,dmiss:$DM,profileme:$PM" \
    --profileme-window "$WIN" --collector "$db" --stats="$tmp/s.json" --exact "$tmp/x.exact" \
    --truth "$tmp/x.truth" -- "$img" $args >/dev/null 2>&1
  "$B/cpo" quit --db "$db" >"$tmp/flush"
  # the speed: the same run without ProfileMe and without the truths, and
  # with ProfileMe, twice each, alternating (the machine is shared): the
  # better wall time and CPU time of each
  for k in 1 2; do
    # shellcheck disable=SC2086
    /usr/bin/time -f "%e %U %S" -o "$tmp/t.0.$k" "$B/axp" run --pmu "cycles:2000,dmiss:$DM" -- "$img" $args \
      >/dev/null 2>&1
    # shellcheck disable=SC2086
    /usr/bin/time -f "%e %U %S" -o "$tmp/t.1.$k" "$B/axp" run --pmu "cycles:2000,dmiss:$DM,profileme:$PM" \
      --profileme-window "$WIN" -- "$img" $args >/dev/null 2>&1
  done
  best() { awk '{ w = $1; c = $2 + $3; if (NR == 1 || w < bw) bw = w; if (NR == 1 || c < bc) bc = c }
                END { printf "%.2f/%.2f", bw, bc }' "$@"; }
  best "$tmp"/t.0.? > "$tmp/t.0"
  best "$tmp"/t.1.? > "$tmp/t.1"
  "$B/cpo" accuracy --db "$db" --exact "$tmp/x.exact" --image "$img" --profileme --json >"$tmp/acc.json" \
    2>"$tmp/err" || { echo "$w: $(cat "$tmp/err")"; continue; }
  "$B/cpo" profileme --db "$db" --image "$img" --json --histories 0 >"$tmp/pm.json"
  "$B/cpo" prof --db "$db" -e dmiss --image "$img" >/dev/null 2>&1
  python3 scripts/bench/profileme_compare.py "$w" "$tmp/acc.json" "$tmp/pm.json" "$tmp/x.truth" \
    "$tmp/x.pmtruth" "$tmp/s.json" "$tmp/flush" "$img" "$(cat "$tmp/t.0")" "$(cat "$tmp/t.1")" "$DM"
done
