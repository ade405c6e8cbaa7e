#!/bin/bash
# Outputs are written safely (docs/decisions.md): optimize-image, its
# --write-plan and cpo export refuse an output that is a device node, FIFO
# or directory and leave it as it was; a symbolic link at the output is
# replaced, its target untouched; a failed command leaves an existing
# output whole and no temporary behind (axp's --sample-log and
# --values-log too, which replace a file only when the run ends); no
# output may name a file the command reads, another of its outputs, or a
# place inside a database.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
OPT=$BUILD/bin/optimize-image
CPO=$BUILD/bin/cpo
PROG=$BUILD/programs/intloop-static
[ -x "$OPT" ] && [ -x "$CPO" ] || { echo "optimize-image or cpo not built (make)"; exit 77; }
[ -f "$PROG" ] || { echo "$PROG missing (make programs)"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cpo-output-safety.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failed=0 passed=0
check() {
  local what=$1; shift
  if "$@"; then echo "ok   $what"; passed=$((passed + 1)); else echo "FAIL $what"; failed=$((failed + 1)); fi
}
sum_in=$(md5sum < "$PROG")

mkfifo "$tmp/fifo"
"$OPT" "$PROG" --plan identity -o "$tmp/fifo" > /dev/null 2> "$tmp/err"
rc=$?
check "optimize-image -o FIFO fails (exit $rc)" [ $rc -ne 0 ]
check "... saying so: $(head -1 "$tmp/err")" grep -q "is a FIFO: refusing" "$tmp/err"
check "... the FIFO is still a FIFO" [ -p "$tmp/fifo" ]
mkdir "$tmp/dir"
"$OPT" "$PROG" --plan identity -o "$tmp/dir" > /dev/null 2> "$tmp/err"
check "optimize-image -o DIRECTORY refused" grep -q "is a directory: refusing" "$tmp/err"
if [ "$(id -u)" = 0 ] && mknod "$tmp/null" c 1 3 2>/dev/null; then
  "$OPT" "$PROG" --plan identity -o "$tmp/null" > /dev/null 2> "$tmp/err"
  check "optimize-image -o a character device refused" grep -q "character device: refusing" "$tmp/err"
  check "... the node is still a character device" [ -c "$tmp/null" ]
  "$OPT" "$PROG" --plan identity --write-plan "$tmp/null" -o "$tmp/x" > /dev/null 2> "$tmp/err"
  check "--write-plan to a character device refused" grep -q "character device: refusing" "$tmp/err"
fi
"$OPT" "$PROG" --plan identity --write-plan "$tmp/fifo" -o "$tmp/x" > /dev/null 2> "$tmp/err"
check "--write-plan to a FIFO refused" grep -q "is a FIFO: refusing" "$tmp/err"

echo precious > "$tmp/target"
ln -s "$tmp/target" "$tmp/link"
"$OPT" "$PROG" --plan identity -o "$tmp/link" > /dev/null 2> "$tmp/err"
check "optimize-image -o SYMLINK succeeds" [ $? -eq 0 ]
check "... the link's target is untouched" grep -qx precious "$tmp/target"
check "... the link became the new image" [ -f "$tmp/link" -a ! -L "$tmp/link" ]

echo "old image" > "$tmp/old"
"$OPT" "$PROG" --plan "$tmp/no-such-plan" -o "$tmp/old" > /dev/null 2>&1
check "a failed optimize-image leaves the old output whole" grep -qx "old image" "$tmp/old"
echo "old profile" > "$tmp/old.pb.gz"
"$CPO" export --pprof "$tmp/old.pb.gz" --db "$tmp/no-such-db" > /dev/null 2>&1
check "a failed export leaves the old file whole" grep -qx "old profile" "$tmp/old.pb.gz"
"$CPO" export --pprof "$tmp/fifo" --db "$tmp/no-such-db" > /dev/null 2>&1
check "... and a FIFO a FIFO" [ -p "$tmp/fifo" ]
AXP=$BUILD/bin/axp
if [ -x "$AXP" ]; then
  "$AXP" run --stats "$tmp/fifo" -- "$PROG" > /dev/null 2> "$tmp/err"
  check "axp --stats to a FIFO refused before the run" grep -q "is a FIFO: refusing" "$tmp/err"
  LUA=$BUILD/workloads/bin/lua-static
  if [ -x "$LUA" ]; then
    echo "old stats" > "$tmp/stats.json"
    "$AXP" run --stats "$tmp/stats.json" --exact "$tmp/exact" -- "$LUA" -e "for i = 1, 1e9 do end" > /dev/null 2>&1 &
    pid=$!
    sleep 1
    kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null
    check "axp killed mid-run: --stats keeps the old file" grep -qx "old stats" "$tmp/stats.json"
    check "... and --exact leaves no file" [ ! -e "$tmp/exact" ]
    rm -f "$tmp"/.stats.json.* "$tmp"/.exact.*   # a killed process cannot remove its temporaries
  fi
  "$AXP" run --stats "$tmp/stats.json" -- "$PROG" > /dev/null 2>&1
  check "axp --stats replaces the file when the run ends" grep -q '"cycles"\|"instructions"' "$tmp/stats.json"
  # The sample and values logs are opened when sampling starts, before the
  # program is loaded: a program that is not there fails after that.
  echo "old samples" > "$tmp/samples"
  echo "old values" > "$tmp/values"
  "$AXP" run --pmu cycles,values:5000 --sample-log "$tmp/samples" --values-log "$tmp/values" \
    -- "$tmp/no-such-program" > /dev/null 2>&1
  rc=$?
  check "axp run of a missing program fails after the logs are opened (exit $rc)" [ $rc -eq 127 ]
  check "... --sample-log keeps the old file" grep -qx "old samples" "$tmp/samples"
  check "... --values-log keeps the old file" grep -qx "old values" "$tmp/values"
  check "... and no temporary is left beside them" [ -z "$(ls -A "$tmp" | grep '^\.\(samples\|values\)\.')" ]
  STDIO=$BUILD/programs/stdio-static
  if [ -x "$STDIO" ]; then
    mkfifo "$tmp/stdin"
    exec 3<> "$tmp/stdin"   # a writer that never writes: the guest waits on its standard input
    "$AXP" run --pmu cycles:2000 --sample-log "$tmp/samples" -- "$STDIO" < "$tmp/stdin" > /dev/null 2>&1 &
    pid=$!
    sleep 1
    kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null
    exec 3>&-
    check "axp killed mid-run: --sample-log keeps the old file" grep -qx "old samples" "$tmp/samples"
    rm -f "$tmp/stdin" "$tmp"/.samples.*   # a killed process cannot remove its temporaries
  fi
  # whole LOG HEADER N: the log's header line, then N lines, the last one ended
  whole() { [ "$(head -1 "$1")" = "$2" ] && [ $(($(wc -l < "$1") - 1)) -eq "$3" ] && [ -z "$(tail -c 1 "$1")" ]; }
  "$AXP" run --pmu cycles:2000,values:5000 --stats "$tmp/logs.json" --sample-log "$tmp/samples" \
    --values-log "$tmp/values" -- "$PROG" > /dev/null 2>&1
  rc=$?
  ns=$(grep -o '"samples": {"cycles": [0-9]*' "$tmp/logs.json" | grep -o '[0-9]*$')
  nv=$(grep -o '"recorded": [0-9]*' "$tmp/logs.json" | grep -o '[0-9]*$')
  check "axp --sample-log replaces the file when the run ends (exit $rc): all ${ns:-?} samples" \
    whole "$tmp/samples" "# cpu pid pc event" "${ns:-0}"
  check "... --values-log too: all ${nv:-?} records" \
    whole "$tmp/values" "# run index cpu pid tid pc result ea latency level target taken" "${nv:-0}"
  check "... and the run did sample" [ "${ns:-0}" -gt 0 -a "${nv:-0}" -gt 0 ]
  rm -f "$tmp/samples" "$tmp/values" "$tmp/logs.json"
fi
# Outputs that would replace what the command reads, or each other.
# refused STATUS PATTERN FILE CMD...: exits STATUS, says PATTERN, FILE unchanged.
refusal_said() { [ "$rc" -eq "$want_rc" ] && grep -q -- "$want_pat" "$tmp/err"; }
refused() {
  local want=$1 pat=$2 file=$3 before
  shift 3
  before=$(md5sum < "$file")
  "$@" > /dev/null 2> "$tmp/err"
  rc=$? want_rc=$want want_pat=$pat
  check "refused (exit $rc): $(head -1 "$tmp/err")" refusal_said
  check "... $(basename "$file") unchanged" [ "$(md5sum < "$file")" = "$before" ]
}
cp "$PROG" "$tmp/img"
printf 'cpo-layout 1\n' > "$tmp/id.plan"
refused 2 "--report $tmp/img: the same file as the image" "$tmp/img" \
  "$OPT" "$tmp/img" --exact "$tmp/no-such-counts" --report "$tmp/img" -o "$tmp/y"
refused 2 "--write-plan $tmp/./img: the same file as the image" "$tmp/img" \
  "$OPT" "$tmp/img" --plan identity --write-plan "$tmp/./img" -o "$tmp/y"
refused 2 "--write-plan $tmp/id.plan: the same file as --plan" "$tmp/id.plan" \
  "$OPT" "$tmp/img" --plan "$tmp/id.plan" --write-plan "$tmp/id.plan" -o "$tmp/y"
refused 2 "the same file as -o" "$tmp/img" "$OPT" "$tmp/img" --plan identity --write-plan "$tmp/y" -o "$tmp/./y"
mkdir -p "$tmp/db"
refused 2 "inside the database" "$tmp/img" "$OPT" "$tmp/img" --db "$tmp/db" --report "$tmp/db/r" -o "$tmp/y"
refused 2 "inside the database" "$tmp/img" "$CPO" export --pprof "$tmp/db/new/p.pb.gz" --db "$tmp/db"
check "... and no output was made" [ ! -e "$tmp/y" -a ! -e "$tmp/db/r" ]
mv "$tmp/img" "$tmp/report.txt"
refused 2 "the same file as BEFORE" "$tmp/report.txt" "$CPO" report "$tmp/report.txt" "$PROG" -o "$tmp" --db "$tmp/db"
rm -f "$tmp/report.txt" "$tmp/id.plan"
if [ -x "$AXP" ]; then
  cp "$PROG" "$tmp/img"
  echo input > "$tmp/in.txt"
  refused 2 "--exact $tmp/img: the same file as the program" "$tmp/img" "$AXP" run --exact "$tmp/img" -- "$tmp/img"
  refused 2 "the same file as the program's argument" "$tmp/in.txt" "$AXP" run --stats "$tmp/in.txt" -- "$tmp/img" "$tmp/in.txt"
  refused 2 "--sample-log $tmp/img: the same file as the program" "$tmp/img" "$AXP" run --pmu cycles --sample-log "$tmp/img" -- "$tmp/img"
  refused 2 "--exact $tmp/s.json: the same file as --stats" "$tmp/img" "$AXP" run --stats "$tmp/s.json" --exact "$tmp/s.json" -- "$tmp/img"
  refused 2 "inside the collector's database" "$tmp/img" "$AXP" run --pmu cycles --collector "$tmp/db" --stats "$tmp/db/s" -- "$tmp/img"
  check "... and no result file was made" [ ! -e "$tmp/s.json" -a ! -e "$tmp/db/s" ]
  rm -f "$tmp/img" "$tmp/in.txt"
fi
rm -rf "$tmp/db"

left=$(ls -A "$tmp" | grep -c '^\.')
check "no temporary left behind ($left)" [ "$left" -eq 0 ]
check "the input image is unchanged" [ "$(md5sum < "$PROG")" = "$sum_in" ]

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
