# Sourced (not run) by the integration tests of instrumented binaries
# (docs/instrument.md), from the project root: the tools and the test
# programs (exit 77 when missing), a temporary directory $tmp removed at
# exit, `fail WHAT`, counters passed and failed, and `run NAME IMAGE
# PROFILE RUNNER...`, which runs a test program from a fresh directory
# with its args and stdin and a clean environment naming PROFILE, leaving
# its stdout, stderr and status in $dir.
ROOT=$(pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
OPT=$BUILD/bin/optimize-image
CPO=$BUILD/bin/cpo
AXP=$BUILD/bin/axp
P=$BUILD/programs

[ -x "$OPT" ] && [ -x "$CPO" ] && [ -x "$AXP" ] || { echo "tools not built (make)"; exit 77; }
ls "$P"/*-static >/dev/null 2>&1 || { echo "no programs in $P (make programs)"; exit 77; }
run_qemu=1
command -v qemu-alpha >/dev/null 2>&1 || { echo "qemu-alpha missing: dynamic programs not run"; run_qemu=0; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cpo-instrument.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
if ! "$OPT" "$P/intloop-static" --instrument paths -o "$tmp/probe" >"$tmp/probe.log" 2>&1 &&
   grep -q "no runtime to instrument with" "$tmp/probe.log"; then
  echo "optimize-image was built without the Alpha cross compiler: no runtime"; exit 77
fi
passed=0 failed=0
fail() { echo "FAIL $*"; failed=$((failed + 1)); }

run() {
  local name=$1 img=$2 prof=$3 args="" stdin=/dev/null
  shift 3
  [ -f "tests/programs/$name.args" ] && args=$(cat "tests/programs/$name.args")
  [ -f "tests/programs/$name.stdin" ] && stdin=$ROOT/tests/programs/$name.stdin
  dir=$(mktemp -d "$tmp/run.XXXXXX")
  # shellcheck disable=SC2086
  (cd "$dir" && env -i PATH=/usr/bin:/bin CPO_PROFILE_OUT="$prof" timeout -k 5 60 "$@" "$img" $args \
     <"$stdin" >"$dir/out" 2>"$dir/err")
  echo $? >"$dir/status"
}
