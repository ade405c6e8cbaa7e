#!/bin/bash
# ProfileMe path reconstruction against the true paths
# (docs/notes/profileme.md "Path reconstruction"): each workload runs once
# under cpod with profileme:P (and cycles:20000, which `cpo accuracy`
# wants beside it), --exact and --profileme-truth; then `cpo accuracy
# --pm-paths` takes, for every instruction with at least PM_MIN (100)
# samples, each sample's true path as far back as the walk goes and says
# how often it is the instruction's top-scored reconstructed path, among
# them, its own history's top, among the paths its history allows, and
# how often the history allowed several.
# PM_WORKLOADS picks the workloads (default: lua sort, speedtest1, zstd),
# PM_PERIOD the ProfileMe period (default 256, 64 for speedtest1, whose
# run is shortest).
. "$(dirname "$0")/profileme.inc"
MIN=${PM_MIN:-100}

printf '%-11s %4s %9s %6s %9s %6s %6s %6s %6s %6s %6s %6s %6s  %s\n' workload P records instrs samples \
  top in-set own-top agrees ambig true-s top-s dist "ends: history/entry/call/length"
for w in $WORKLOADS; do
  read -r img args <<<"$(spec "$w")"
  PM=${PM_PERIOD:-$([ "$w" = speedtest1 ] && echo 64 || echo 256)}
  [ -x "$img" ] || { echo "$w: $img not built"; continue; }
  db=$tmp/db-$w
  "$B/cpod" --db "$db" --flush 1h >/dev/null || { echo "$w: cpod did not start"; continue; }
  # shellcheck disable=SC2086
  "$B/axp" run --pmu "cycles:20000,profileme:$PM" --collector "$db" --stats="$tmp/s.json" --exact "$tmp/x" \
    --profileme-truth "$tmp/t" -- "$img" $args >/dev/null 2>&1
  "$B/cpo" quit --db "$db" >/dev/null
  s=$(date +%s%N)
  "$B/cpo" accuracy --db "$db" --exact "$tmp/x" --image "$img" --pm-paths "$tmp/t" --pm-min "$MIN" --json \
    >"$tmp/acc.json" 2>"$tmp/err" || { echo "$w: $(cat "$tmp/err")"; continue; }
  e=$(date +%s%N)
  python3 - "$w" "$PM" "$tmp/acc.json" "$tmp/s.json" "$(( (e - s) / 1000000 ))" <<'PY'
import json, sys
w, pm, accf, statsf, secs = sys.argv[1:6]
r = json.load(open(accf))["pm_paths"]
made = json.load(open(statsf))["profileme"]["records"]
pc = lambda k: "%5.1f%%" % (100 * r[k])
e = r["ends"]
print("%-11s %4s %9d %6d %9d %s %s %s %s %s %6.3f %6.3f %6.3f  %.1f/%.1f/%.1f/%.1f%%  (%d unknown; analysis %.1f s)"
      % (w, pm, made, r["instructions"], r["samples"], pc("top"), pc("in_set"), pc("own_top"), pc("consistent"),
         pc("ambiguous"), r["true_score"], r["top_score"], r["distance"], 100 * e["history"], 100 * e["entry"],
         100 * e["call"], 100 * e["length"], r["unknown"], int(secs) / 1000))
PY
done
