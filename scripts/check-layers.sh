#!/bin/bash
# check-layers.sh: the rooms' dependency order (docs/architecture.md), from
# every #include of a project header:
#   - a room includes only its own headers and those of the rooms below it;
#   - no room and no tool includes another room's internal.h (tests may,
#     to test a room's own passes).
# The table below is the one place the order is written down.  tools/ and
# tests/ may include any room's public headers.  Prints each violation as
# FILE:LINE: message and exits 1 if there is one.
set -u
cd "$(dirname "$0")/.."

# ROOM: the rooms it may use.
MAP='
common:
alpha: common
image: alpha common
profdb: common
machine: image alpha common
collector: profdb image alpha common
cfg: image alpha common
paths: cfg machine profdb image alpha common
estimator: paths cfg profdb image alpha common
optimizer: estimator cfg profdb image alpha common
rewriter: optimizer estimator cfg profdb image alpha common
report: estimator cfg profdb image alpha common
service: report rewriter optimizer estimator cfg collector profdb machine image alpha common
'
git ls-files '*.c' '*.h' | xargs grep -Hn '#[[:space:]]*include[[:space:]]*"' |
awk -v map="$MAP" '
BEGIN {
  n = split(map, lines, "\n")
  for (i = 1; i <= n; i++) {
    if (lines[i] !~ /:/) continue
    room = lines[i]; sub(/:.*/, "", room)
    deps = lines[i]; sub(/^[^:]*:/, "", deps)
    isroom[room] = 1; may[room] = deps
    k = split(deps, d, " ")
    for (j = 1; j <= k; j++) ok[room, d[j]] = 1
  }
  bad = 0
}
{
  file = $0; sub(/:.*/, "", file)
  rest = $0; sub(/^[^:]*:/, "", rest); line = rest; sub(/:.*/, "", line)
  if (!match($0, /"[a-z_]+\/[^"]*"/)) next
  inc = substr($0, RSTART + 1, RLENGTH - 2)
  troom = inc; sub(/\/.*/, "", troom); theader = inc; sub(/^[^\/]*\//, "", theader)
  if (!(troom in isroom)) next
  room = file; sub(/\/.*/, "", room)
  if (theader == "internal.h" && troom != room && room != "tests") {
    printf "%s:%s: includes %s: a room'"'"'s internal.h is for that room alone\n", file, line, inc; bad = 1; next
  }
  if (!(room in isroom) || troom == room) next
  if (!((room, troom) in ok)) {
    printf "%s:%s: %s/ includes %s, but %s may use only:%s\n", file, line, room, inc, room, (may[room] == "" ? " nothing" : may[room]); bad = 1
  }
}
END {
  if (!bad) print "check-layers: every include keeps to the map"
  exit bad
}'
