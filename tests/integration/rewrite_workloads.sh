#!/bin/bash
# Rewrites the workloads (build/workloads/bin: lua, zstd, speedtest1, dash;
# `make workloads`) with the identity plan and random plans of seeds 1-5, in
# check mode, verifies every result against its original (`cpo addrmap
# --verify`), and runs the dynamic ones exactly as workloads_qemu.sh runs the
# originals (it is reused, pointed at a build tree holding the rewritten
# binaries): lua scripts, zstd round trip, speedtest1 --size 5 --verify,
# dash.  zstd's playTests.sh (about 2 minutes under qemu) runs for the plans
# in CPO_PLAYTESTS (default: seed 1, the most demanding; "all" for every
# plan).
# Static builds are rewritten and verified, not run (qemu-alpha 7.2 cannot
# start static glibc programs).  Prints procedures moved and left in place,
# with reasons, per workload.  Exit 77 when no workload is built.
set -u
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
OPT=$BUILD/bin/optimize-image
CPO=$BUILD/bin/cpo
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
      [ -n "$v" ] && rm -f "$out"
    done
  done
  [ $run_qemu = 1 ] || continue
  quick=1
  case " $PLAYTESTS " in *" $plan "*|*" all "*) quick=0 ;; esac
  echo "== plan $plan under qemu"
  if CPO_QUICK=$quick BUILD=$tmp/$plan bash tests/integration/workloads_qemu.sh >"$tmp/$plan.qemu" 2>&1; then
    passed=$((passed + 1))
    grep -E '^(ok|skip)' "$tmp/$plan.qemu" | sed 's/^/   /'
  else
    fail "plan $plan: workloads under qemu"; cat "$tmp/$plan.qemu"
  fi
  rm -rf "$tmp/$plan"
done
echo "rewritten workloads: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
