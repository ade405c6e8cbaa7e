#!/bin/bash
# Calling contexts from sampled stacks against the exact tree (issue 19's
# acceptance): lua closures.lua and speedtest1 --size 1 run once each
# under cpod with --pmu cycles:2000 --stacks and axp's exact --cct of the
# same run; for the top 50 contexts by exact cycles, the share of samples
# each gets in the tree of the stacks (cpo cct --against) and how many are
# within 2 points; and how many stacks were complete.
set -u
export AXP_EPOCH=${AXP_EPOCH:-1700000000}
BUILD=${BUILD:-build}
B=$BUILD/bin WL=$BUILD/workloads
[ -x "$B/cpo" ] && [ -x "$B/axp" ] && [ -x "$B/cpod" ] || { echo "tools not built (make)"; exit 0; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cpo-bench-cct.XXXXXX")
cleanup() {
  for d in "$tmp"/db-*; do "$B/cpo" quit --db "$d" >/dev/null 2>&1; done
  rm -rf "$tmp"
}
trap cleanup EXIT
for w in lua-closures speedtest1; do
  case $w in
    lua-closures) cmd="$WL/bin/lua-static tests/workloads/lua/closures.lua" ;;
    speedtest1) cmd="$WL/bin/speedtest1-static --size 1" ;;
  esac
  [ -x "${cmd%% *}" ] || { echo "$w: not built (make workloads)"; continue; }
  db=$tmp/db-$w
  "$B/cpod" --db "$db" --flush 1h || { echo "$w: cpod did not start"; continue; }
  # shellcheck disable=SC2086
  "$B/axp" run --pmu cycles:2000 --stacks --collector "$db" --cct "$tmp/$w.cct" --stats="$tmp/$w.stats" \
    -- $cmd >/dev/null 2>&1 </dev/null
  "$B/cpo" quit --db "$db" >/dev/null
  python3 - "$tmp/$w.stats" "$w" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); e = d["stacks"]["ends"]; n = d["stacks"]["samples"]
print("%s: %d samples, stacks complete %.3f%% (%s)" % (sys.argv[2], n, 100.0 * e["complete"] / n,
      ", ".join("%s %d" % (k, v) for k, v in e.items() if v and k != "complete") or "no other ends"))
PY
  "$B/cpo" cct --db "$db" --against "$tmp/$w.cct" --top 50 | tail -1 | sed "s/^/$w: top /"
done
