#!/bin/bash
# The machine's samples through a driver region to an outside consumer:
# `axp run --cpus 4 --pmu ... --driver PATH` runs dash starting
# four lua processes at once (every CPU busy; fork, exec and exit notices)
# while tests/driver/drv_drain drains the region, asks for flushes (which
# the machine answers from its poll hook) and salvages the region once the
# machine has gone.  Every sample the machine took must be accounted for
# exactly: produced = drained + in overflow buffers + in hash tables, per
# (pid, pc, event) against the machine's --truth counts, nothing dropped,
# and every sample in a mapping a LOAD notice announced for its process.
# The consumer creates the region with small tables and buffers first (the
# machine resumes a region of its CPU count), so the workload's samples are
# evicted, handed over in many buffers and left in part-filled ones.  Both
# eviction policies; the rr run takes no flushes, so all it gets while the
# machine runs comes from evictions, and it samples 30 times as often as
# by default, so that they fill many buffers.  The front run also carries
# every sample's stack (--stacks) through the stack rings: stacks taken
# must equal samples produced, none lost, and per (pid, pc, event) the
# stacks' leaves must be exactly the machine's samples.
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
AXP=$BUILD/bin/axp DRAIN=$BUILD/tests/driver/drv_drain W=$BUILD/workloads/bin
[ -x "$AXP" ] || { echo "$AXP not built (make all builds it)"; exit 77; }
[ -x "$DRAIN" ] || { echo "$DRAIN not built (make test builds it)"; exit 77; }
for f in $W/dash $W/lua; do
  [ -x "$f" ] || { echo "$f not built (make workloads builds it)"; exit 77; }
done
# regions belong on a tmpfs
if [ -w /dev/shm ]; then T=$(mktemp -d /dev/shm/axp-conserve.XXXXXX); else T=$(mktemp -d); fi
trap 'rm -rf "$T"' EXIT
status=0
check() {   # what, command...
  local what=$1; shift
  if "$@"; then echo "ok   $what"; else echo "FAIL $what"; status=1; fi
}
summary() { sed -n "s/^# $1 //p" "$2"; }
json() {   # python-expression stats-file
  python3 -c "import json, sys; d = json.load(open(sys.argv[1])); print($1)" "$2"
}

LUA_LOOP='local s = 0 for i = 1, 400000 do s = s + i % 7 end print(s)'
SCRIPT="for i in 1 2 3 4; do '$W/lua' -e '$LUA_LOOP' & done; wait"

run() {   # name policy flush-every-ms cpus:table:buffer pmu-events [axp options]
  local name=$1 policy=$2 every=$3 shape=$4 events=$5 d=$T/$1
  shift 5
  mkdir -p "$d"
  timeout 600 "$DRAIN" "$d/region" "$d/consumed" --flush-every "$every" --create "$shape" \
    2> "$d/drain.err" &
  local dp=$! i
  # the machine must find the consumer's region, not make its own
  for ((i = 0; i < 600; i++)); do [ -e "$d/region" ] && break; sleep 0.05; done
  timeout 600 "$AXP" run --cpus 4 --pmu "$events" --driver "$d/region" --driver-policy "$policy" "$@" \
    --truth "$d/truth" --stats="$d/stats.json" "$W/dash" -c "$SCRIPT" > "$d/out" 2> "$d/axp.err"
  local rc=$?
  wait $dp
  local drc=$?
  check "$name: axp exit $rc, consumer exit $drc" [ $rc -eq 0 -a $drc -eq 0 ]
  cat "$d/axp.err" "$d/drain.err" | sed 's/^/     /'
  [ $rc -eq 0 -a $drc -eq 0 ] || return
  check "$name: four lua processes printed their sums" [ "$(grep -c '^[0-9]' "$d/out")" -eq 4 ]
  local busy
  busy=$(json 'sum(1 for c in d["per_cpu"] if c["instructions"] > 10**7)' "$d/stats.json")
  check "$name: all 4 CPUs ran guest code ($busy busy)" [ "$busy" -eq 4 ]

  local produced in_driver consumed drained ovf hash dropped
  produced=$(json 'sum(d["samples"].values())' "$d/stats.json")
  in_driver=$(summary driver.samples "$d/consumed")
  consumed=$(summary consumed "$d/consumed")
  drained=$(summary drained "$d/consumed")
  ovf=$(summary in_overflow "$d/consumed")
  hash=$(summary in_hash "$d/consumed")
  dropped=$(summary driver.dropped "$d/consumed")
  echo "     produced $produced = drained $drained + in overflow $ovf + in hash $hash" \
       "(dropped $dropped, $(summary flushes "$d/consumed") flushes," \
       "$(summary entries "$d/consumed") entries)"
  check "$name: the driver counted every sample the machine took ($in_driver of $produced)" \
    [ "$produced" -gt 0 -a "$in_driver" = "$produced" ]
  check "$name: produced = drained + in overflow + in hash, nothing dropped" \
    [ "$dropped" = 0 -a $((drained + ovf + hash)) -eq "$produced" -a "$consumed" = "$produced" ]

  # per key: the machine's own count of samples per (pid, pc, event)
  local ids
  ids=$(json '" ".join("%s=%d" % kv for kv in d["driver"]["event_ids"].items())' "$d/stats.json")
  awk -v ids="$ids" '
    BEGIN { n = split(ids, a, " "); for (i = 1; i <= n; i++) { split(a[i], kv, "="); id[kv[1]] = kv[2] } }
    /^#/ { for (i = 5; i <= NF; i++) if ($i in id) col[i - 1] = id[$i]; next }   # "# pid pc hoq EVENT... stall.CAUSE..."
    { for (i = 4; i <= NF; i++) if ((i in col) && $i > 0) print $1, $2, col[i], $i }' "$d/truth" | sort > "$d/want"
  grep -v '^#' "$d/consumed" | sort > "$d/got"
  check "$name: per (pid, pc, event) the consumer got exactly the machine's samples ($(wc -l < "$d/want") keys)" \
    cmp -s "$d/want" "$d/got"
  check "$name: every sample lies in a mapping announced for its process (unmapped $(summary unmapped "$d/consumed"))" \
    [ "$(summary unmapped "$d/consumed")" = 0 ]
  local procs
  procs=$(json 'len(d["processes"])' "$d/stats.json")
  check "$name: an EXIT notice per process ($(summary exits "$d/consumed") of $procs)" \
    [ "$(summary exits "$d/consumed")" = "$procs" ]
  check "$name: no notice lost" [ "$(summary driver.notices_lost "$d/consumed")" = 0 ]
  case " $* " in *" --stacks "*) ;; *) return ;; esac
  local stacks frames mframes
  stacks=$(summary stacks "$d/consumed")
  frames=$(summary stack_frames "$d/consumed")
  mframes=$(json 'd["stacks"]["frames"]' "$d/stats.json")
  echo "     stacks: taken $stacks of $produced samples, $frames frames (the machine walked $mframes)," \
       "lost $(summary stacks.lost "$d/consumed")"
  check "$name: stacks taken = samples produced, none lost, every frame carried" \
    [ "$stacks" = "$produced" -a "$(summary stacks.lost "$d/consumed")" = 0 -a "$frames" = "$mframes" ]
  check "$name: per (pid, pc, event) the stacks' leaves are exactly the machine's samples" \
    cmp -s "$d/want" <(sort "$d/consumed.stacks")
}

run front-flushes front 200 4:1024:128 cycles,imiss --stacks
check "front-flushes: the machine answered the consumer's flushes" [ "$(summary flushes "$T/front-flushes/consumed")" -gt 0 ]
run rr-evictions rr 0 4:64:256 cycles:2000,imiss:512
check "rr-evictions: samples reached the consumer through evictions while the machine ran" \
  [ "$(summary driver.evictions "$T/rr-evictions/consumed")" -gt 0 -a "$(summary drained "$T/rr-evictions/consumed")" -gt 0 ]

# Value records through the region's value rings, on 4 CPUs: every value
# the machine recorded (--values-log) reaches the consumer exactly once,
# per (pid, pc, kind, value), none dropped, each in an announced mapping.
# The consumer's rings are small (1024 records per CPU) and it flushes
# often, so records wait in full rings and are taken while the machine
# runs as well as at the end.
values_run() {
  local d=$T/values
  mkdir -p "$d"
  timeout 600 "$DRAIN" "$d/region" "$d/consumed" --flush-every 20 --create 4:1024:128:1024 \
    --values "$d/values" 2> "$d/drain.err" &
  local dp=$! i
  for ((i = 0; i < 600; i++)); do [ -e "$d/region" ] && break; sleep 0.05; done
  timeout 600 "$AXP" run --cpus 4 --pmu cycles,values:20000 --values-length 8 --driver "$d/region" \
    --values-log "$d/log" --stats="$d/stats.json" "$W/dash" -c "$SCRIPT" > "$d/out" 2> "$d/axp.err"
  local rc=$?
  wait $dp
  local drc=$?
  check "values: axp exit $rc, consumer exit $drc" [ $rc -eq 0 -a $drc -eq 0 ]
  cat "$d/axp.err" "$d/drain.err" | sed 's/^/     /'
  [ $rc -eq 0 -a $drc -eq 0 ] || return
  # kinds as the driver numbers them: 1 result, 2 address, 3 latency, 4 target
  awk '!/^#/ { if ($7 != "-") print $4, $6, 1, $7; if ($8 != "-") print $4, $6, 2, $8;
               if ($9 != "-") printf "%s %s 3 0x%x\n", $4, $6, $9; if ($11 != "-") print $4, $6, 4, $11 }' \
    "$d/log" | sort > "$d/want"
  sort "$d/values" > "$d/got"
  local posted dropped
  posted=$(json 'd["driver"]["values_posted"]' "$d/stats.json")
  dropped=$(summary driver.values_dropped "$d/consumed")
  echo "     recorded $(wc -l < "$d/want") values, posted $posted, consumer took $(summary values "$d/consumed"), dropped $dropped"
  check "values: the machine recorded some on every CPU" \
    [ "$(awk '!/^#/ {print $3}' "$d/log" | sort -u | wc -l)" -eq 4 ]
  check "values: posted = recorded = taken, none dropped" \
    [ "$posted" -eq "$(wc -l < "$d/want")" -a "$(summary values "$d/consumed")" = "$posted" -a "$dropped" = 0 ]
  check "values: per (pid, pc, kind, value) the consumer got exactly the machine's records" cmp -s "$d/want" "$d/got"
  check "values: every record lies in a mapping announced for its process" \
    [ "$(summary values_unmapped "$d/consumed")" = 0 ]
}
values_run
exit $status
