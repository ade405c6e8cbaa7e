#!/bin/bash
# cpo report (docs/reports.md) on lua before and after optimize-image: the
# text's per-procedure samples are cpo diff's, the HTML page renders in
# headless Chromium without console errors and shows the text's figures (a
# screenshot is kept in the test logs), and bad inputs get clear errors.
# Exit 77 when the workloads are not built or Chromium is not installed.
set -u
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
CPO=$BUILD/bin/cpo
AXP=$BUILD/bin/axp
LUA=$BUILD/workloads/bin/lua
S=$ROOT/tests/workloads/lua
[ -x "$LUA" ] || { echo "workloads not built (make workloads)"; exit 77; }
CHROMIUM=$(command -v chromium || command -v chromium-browser) || { echo "chromium not installed"; exit 77; }

. tests/integration/lib/cpod.sh
"$BUILD/bin/cpod" --db "$DB" --flush 1h || { echo "FAIL cpod did not start"; exit 1; }
"$AXP" run --exact "$T/train.exact" --pmu cycles:4000 --collector "$DB" -- "$LUA" "$S/sieve.lua" >/dev/null
"$BUILD/bin/optimize-image" "$LUA" --exact "$T/train.exact" -o "$T/lua.opt" >/dev/null
"$CPO" epoch --db "$DB" >/dev/null
"$AXP" run --pmu cycles:4000 --collector "$DB" -- "$T/lua.opt" "$S/sieve.lua" >/dev/null
"$CPO" flush --db "$DB" >/dev/null
E1=$(ls "$DB" | grep '^2' | head -1) E2=$(ls "$DB" | grep '^2' | tail -1)

out=$("$CPO" report "$LUA" "$T/lua.opt" --db "$DB" -o "$T/rep")
check "cpo report runs" [ $? -eq 0 ]
check "it writes report.txt and index.html" [ -s "$T/rep/report.txt" -a -s "$T/rep/index.html" ]
check "the text is what it printed" diff <(echo "$out") "$T/rep/report.txt"
echo "$out" | sed -n '1,12p' | sed 's/^/     /'
check "cycles per run before and after" grep -q '^cycles per run: [0-9]* -> [0-9]* ([-+]' <<<"$out"

# the samples of the five hottest procedures, as cpo diff counts them
diff_out=$("$CPO" diff "$DB@$E1" "$DB@$E2")
mismatch=0
for p in $(awk '/^procedure/ {on=1; getline; next} on && NF >= 3 {print $1} on && NF == 0 {exit}' <<<"$out" | head -5); do
  r=$(awk -v p="$p" '$1 == p {print $2, $3; exit}' <<<"$out")
  d=$(awk -v p="$p" '$7 == p {print $1, $2; exit}' <<<"$diff_out")
  [ "$r" = "$d" ] || { mismatch=1; echo "     $p: report '$r', diff '$d'"; }
done
check "the hottest procedures' samples are cpo diff's" [ "$mismatch" -eq 0 ]

# the page in headless Chromium
LOG=$BUILD/test-logs
mkdir -p "$LOG"
flags=(--headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$T/chrome")
"$CHROMIUM" "${flags[@]}" --enable-logging=stderr --v=0 --window-size=1200,2400 \
  --screenshot="$LOG/cpo_report.png" "file://$T/rep/index.html" >/dev/null 2>"$T/chrome.err"
check "Chromium renders the page (screenshot in the test logs)" [ -s "$LOG/cpo_report.png" ]
check "no console errors" bash -c "! grep -q 'CONSOLE' '$T/chrome.err'"
dom=$("$CHROMIUM" "${flags[@]}" --dump-dom "file://$T/rep/index.html" 2>/dev/null)
after=$(sed -n 's/^cycles per run: [0-9]* -> \([0-9]*\) .*/\1/p' <<<"$out")
check "the page shows the text's cycles per run ($after)" grep -q "id=\"cpr-after\">$after<" <<<"$dom"
check "the page draws its charts" [ "$(grep -o '<svg' <<<"$dom" | wc -l)" -ge 3 ]

# bad input
err=$("$CPO" report /nonexistent "$T/lua.opt" --db "$DB" -o "$T/rep2" 2>&1)
check "a missing image is named" grep -q '/nonexistent' <<<"$err"
err=$("$CPO" report "$LUA" "$T/lua.opt" --db "$T/nodb" -o "$T/rep2" 2>&1)
check "a missing database is an error" [ -n "$err" ]
env -u CPO_DB "$CPO" report "$LUA" "$T/lua.opt" -o "$T/rep2" >/dev/null 2>&1
check "no database given is a usage error" [ $? -eq 2 ]
exit $status
