#!/bin/bash
# The house keeps to its map: scripts/check-layers.sh passes on the tree
# (every #include obeys the rooms' dependency order, no room reaches into
# another's internal.h).
set -u
cd "$(dirname "$0")/../.."
command -v git >/dev/null && git rev-parse --git-dir >/dev/null 2>&1 || { echo "not a git checkout"; exit 77; }
status=0
out=$(scripts/check-layers.sh 2>&1)
if [ $? -eq 0 ]; then echo "ok   $out"; else echo "FAIL the tree breaks the map:"; echo "$out"; status=1; fi
exit $status
