#!/bin/bash
# Rewrites the workloads (build/workloads/bin: lua, zstd, speedtest1, dash;
# `make workloads`) with the identity plan and random plans of seeds 1-5, in
# check mode, verifies every result against its original (`cpo addrmap
# --verify`) and recovers the original from it byte for byte (`cpo addrmap
# --original`), and runs the dynamic ones exactly as workloads_qemu.sh runs the
# originals (it is reused, pointed at a build tree holding the rewritten
# binaries): lua scripts, zstd round trip, speedtest1 --size 5 --verify,
# dash.  zstd's playTests.sh (about 2 minutes under qemu) runs for the plans
# in CPO_PLAYTESTS (default: seed 1, the most demanding; "all" for every
# plan).  The plans run under qemu CPO_JOBS at a time (default 2).
# Static builds, which qemu-alpha 7.2 cannot start, are rewritten and
# verified for every plan, and run on axp for the identity plan and the
# first seed (the same checks, when the original passes them on axp).
# Prints procedures moved, left in place and moved whole, with reasons, per
# workload.  Exit 77 when no workload is built.
set -u
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
OPT=$BUILD/bin/optimize-image
CPO=$BUILD/bin/cpo
AXP=$BUILD/bin/axp
T=$ROOT/tests/workloads
W=$BUILD/workloads
SEEDS=${CPO_SEEDS:-"1 2 3 4 5"}
PLAYTESTS=${CPO_PLAYTESTS:-1}

[ -x "$OPT" ] && [ -x "$CPO" ] || { echo "optimize-image or cpo not built (make)"; exit 77; }
present=""
for w in lua zstd speedtest1 dash; do
  [ -x "$W/bin/$w" ] && present="$present $w"
done
[ -n "$present" ] || { echo "no workloads in $W/bin (make workloads)"; exit 77; }
run_qemu=1
command -v qemu-alpha >/dev/null 2>&1 || { echo "qemu-alpha missing: structural checks only"; run_qemu=0; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cpo-rewrite-workloads.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
fail() { echo "FAIL $*"; failed=$((failed + 1)); }

# on_axp WORKLOAD BIN: the workload's checks with BIN run on axp; prints
# the first difference and returns 1 on a mismatch.
on_axp() {
  local w=$1 bin=$2 d rc
  d=$(mktemp -d "$tmp/axp.XXXXXX")
  case $w in
  lua)
    for script in "$T"/lua/*.lua; do
      (cd "$d" && timeout -k 5 300 "$AXP" run -- "$bin" "$script" </dev/null >"$d/out" 2>"$d/err") &&
        cmp -s "$d/out" "${script%.lua}.expected" ||
        { echo "lua $(basename "$script"): differs"; tail -3 "$d/err"; return 1; }
    done ;;
  speedtest1)
    (cd "$d" && timeout -k 5 600 "$AXP" run -- "$bin" --size 5 --verify </dev/null 2>"$d/err" |
      sed -E 's/[[:space:]]+[0-9]+\.[0-9]+s$//' >"$d/out") && cmp -s "$d/out" "$T/speedtest1/size5.expected" ||
      { echo "speedtest1 --size 5: differs"; diff "$T/speedtest1/size5.expected" "$d/out" | head -5; return 1; } ;;
  zstd)
    (cd "$d" && timeout -k 5 900 sh "$T/zstd/roundtrip.sh" "$W/host/datagen" "$d" "$AXP" run -- "$bin" \
      </dev/null >"$d/out" 2>"$d/err") && cmp -s "$d/out" "$T/zstd/roundtrip.expected" ||
      { echo "zstd round trip: differs"; diff "$T/zstd/roundtrip.expected" "$d/out" | head -5; tail -3 "$d/err"; return 1; } ;;
  dash)
    (cd "$d" && timeout -k 5 300 "$AXP" run -- "$bin" "$T/dash/script.sh" </dev/null >"$d/out" 2>"$d/err")
    rc=$?
    [ $rc -eq 3 ] && cmp -s "$d/out" "$T/dash/script.expected" ||
      { echo "dash script.sh: status $rc or output differs"; return 1; } ;;
  esac
  rm -rf "$d"
}

# Which static originals pass on axp (a failure there is not the rewriter's).
axp_ok=""
if [ -x "$AXP" ]; then
  for w in $present; do
    [ -x "$W/bin/$w-static" ] || continue
    if on_axp "$w" "$W/bin/$w-static" >"$tmp/axp-$w.log" 2>&1; then
      axp_ok="$axp_ok $w"
    else
      echo "note: the original $w-static fails its checks on axp; its rewrites are only verified"
      sed 's/^/      /' "$tmp/axp-$w.log"
    fi
  done
fi

for plan in identity $SEEDS; do
  if [ "$plan" = identity ]; then args=(--plan identity); else args=(--plan random --seed "$plan"); fi
  tree=$tmp/$plan/workloads
  mkdir -p "$tree/bin"
  ln -s "$W/host" "$tree/host"
  ln -s "$W/src" "$tree/src"
  for w in $present; do
    for v in "" -static; do
      orig=$W/bin/$w$v
      [ -x "$orig" ] || continue
      out=$tree/bin/$w$v
      start=$(date +%s%N)
      if ! "$OPT" "$orig" "${args[@]}" --check -o "$out" >"$out.log" 2>&1; then
        fail "$w$v plan $plan: optimize-image failed"; cat "$out.log"; continue
      fi
      ms=$(( ($(date +%s%N) - start) / 1000000 ))
      if [ "$plan" = identity ] || [ "$plan" = "${SEEDS%% *}" ]; then
        echo "$w$v plan $plan: $(head -1 "$out.log" | sed 's/.*: //')$(grep -E '^  (left in place|moved whole)' "$out.log" | sed -E 's/^  (left in place|moved whole, blocks not reordered): /; \1: /' | tr -d '\n') (${ms} ms)"
      fi
      if "$CPO" addrmap "$out" --verify "$orig" >"$out.verify" 2>&1; then
        passed=$((passed + 1))
      else
        fail "$w$v plan $plan: verify"; tail -25 "$out.verify"
      fi
      if "$CPO" addrmap "$out" --original "$out.back" >/dev/null 2>"$out.err" && cmp -s "$orig" "$out.back"; then
        passed=$((passed + 1))
      else fail "$w$v plan $plan: original not recovered: $(cat "$out.err")"; fi
      rm -f "$out.back"
      if [ -n "$v" ]; then
        case " $axp_ok " in
        *" $w "*)
          if [ "$plan" = identity ] || [ "$plan" = "${SEEDS%% *}" ]; then
            if on_axp "$w" "$out" >"$out.axp" 2>&1; then
              passed=$((passed + 1)); echo "   ok   $w$v plan $plan on axp"
            else
              fail "$w$v plan $plan on axp"; cat "$out.axp"
            fi
          fi ;;
        esac
        rm -f "$out"
      fi
    done
  done
  [ $run_qemu = 1 ] || continue
  quick=1
  case " $PLAYTESTS " in *" $plan "*|*" all "*) quick=0 ;; esac
  # The runs under qemu are independent: CPO_JOBS of them at a time.
  while [ "$(jobs -rp | wc -l)" -ge "${CPO_JOBS:-2}" ]; do wait -n; done
  (CPO_QUICK=$quick BUILD=$tmp/$plan bash tests/integration/workloads_qemu.sh >"$tmp/$plan.qemu" 2>&1
   echo $? >"$tmp/$plan.rc") &
done
wait
for plan in identity $SEEDS; do
  [ -f "$tmp/$plan.rc" ] || continue
  echo "== plan $plan under qemu"
  if [ "$(cat "$tmp/$plan.rc")" = 0 ]; then
    passed=$((passed + 1))
    grep -E '^(ok|skip)' "$tmp/$plan.qemu" | sed 's/^/   /'
  else
    fail "plan $plan: workloads under qemu"; cat "$tmp/$plan.qemu"
  fi
done
echo "rewritten workloads: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
