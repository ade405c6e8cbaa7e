#!/bin/bash
# The optimizer on held-out inputs, in EV5 cycles from axp --timing (exact
# and deterministic).  Each workload is trained on one set of inputs and
# measured on others the profile never saw:
#   lua         trained on its six test scripts (tests/workloads/lua),
#               measured on the ten of scripts/bench/lua (the last five,
#               json to inherit, added later);
#   speedtest1  trained on --size 1 (main test set), measured on --size 2
#               and on the orm and cte test sets;
#   zstd        trained on one datagen file, compressed at -1, -3, -9 and
#               -19 and decompressed, measured on another file the same
#               ways (-3 aside); OPT_ZSTD_TRAIN=l3 trains at -3 alone, so
#               that every held-out run needs code the profile never saw
#               (docs/notes/optimizer-unseen.md).
# Side by side per input (builds):
#   O2       the workload as built (-O2)
#   exact    optimize-image on O2 from axp's exact counts of the training
#   samples  optimize-image on O2 from cycle samples of the training (cpod,
#            --pmu cycles:$OPT_PERIOD, and values:$OPT_VALUES when set): the
#            product's path; samples2, samples3... the same from further
#            trainings at other sampling phases ($OPT_TRAININGS in all)
#   pgo      gcc's PGO build of the same source (-fprofile-generate, the
#            training under qemu-alpha, -fprofile-use; scripts/workloads/pgo.sh)
#   pgo+s    optimize-image on pgo from samples of the training
# Cycles, I-cache misses, taken-branch, mispredict and layout-addressable
# stall cycles (I-cache + taken branch + mispredicts), the share of O2's
# layout stalls removed; every output and status compared with O2's.  Then
# optimize-image's own time and memory.  Every build runs from the same
# path and in an environment holding only AXP_EPOCH, so argv and the stack
# are the same for all (and on every machine), and with its heap at the
# same address (axp run --brk, above every build's image), so the builds
# differ in their code alone.
# OPT_WORKLOADS picks workloads (default "lua speedtest1 zstd"), OPT_SCRIPTS
# the held-out lua scripts, OPT_BUILDS the builds (default all five; add
# nocol for exact with --no-colour; gaps for exact with --gaps, and for
# each of its draws too; coldh for samples with --cold-handlers, from
# each training's own profile; exttsp and c3 for samples with
# --blocks ext-tsp and --procs c3; round2, the next round of the service
# from a profile of the samples build, and double, its control: these need
# samples), OPT_EXACT_DRAWS further plans from the exact counts each
# perturbed by 2% (builds exactp1, exactp2...: one plan is one draw from a
# spread of points; the mean of exact and its draws is printed; default 0;
# OPT_DRAW_SEED the first draw's seed, default 1, for further draws),
# OPT_PERIOD the
# sampling period (default 4000), OPT_VALUES a value-sampling period for
# the jump hints (default 0: cycles alone; lua's plans lost 1.8 points on
# the mean with value sampling on in the training, docs/notes/
# optimizer-baselines.md), OPT_TRAININGS the trainings from samples
# (default 3; the mean of their geometric means is printed) and OPT_SAMPLES
# the samples to gather (default 1000000: the training is repeated until
# the profile holds that many, as a week of production would; one run of
# speedtest1's training gives 96,000); OPT_SEED the first sampling seed
# (default 0), for another draw of every training.
set -u
# A fixed guest clock for everything that reads the time.
export AXP_EPOCH=${AXP_EPOCH:-1700000000}
BUILD=${BUILD:-build}
AXP=$BUILD/bin/axp OPT=$BUILD/bin/optimize-image CPOD=$BUILD/bin/cpod CPO=$BUILD/bin/cpo
WL=$BUILD/workloads
[ -x "$OPT" ] && [ -x "$AXP" ] && [ -x "$CPOD" ] || { echo "optimize-image, axp or cpod not built (make)"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cpo-bench-opt.XXXXXX")
cleanup() {
  for d in "$tmp"/*.db; do [ -d "$d" ] && "$CPO" quit --db "$d" >/dev/null 2>&1; done
  rm -rf "$tmp"
}
trap cleanup EXIT
WORKLOADS=${OPT_WORKLOADS:-"lua speedtest1 zstd"}
HELD=${OPT_SCRIPTS:-"trees mandel words objects queens json matrix fannkuch lexer inherit"}
BUILDS=${OPT_BUILDS:-"O2 exact samples pgo pgo+s"}
PERIOD=${OPT_PERIOD:-4000}
SAMPLES=${OPT_SAMPLES:-1000000}
TRAININGS=${OPT_TRAININGS:-3}
VALUES=${OPT_VALUES:-0}
EXACT_DRAWS=${OPT_EXACT_DRAWS:-0}
DRAW_SEED=${OPT_DRAW_SEED:-1}
PMU="cycles:$PERIOD"
[ "$VALUES" -gt 0 ] && PMU="$PMU,values:$VALUES"
has() { case " $BUILDS " in *" $1 "*) return 0 ;; esac; return 1; }
# axp with nothing of the caller's environment but the guest clock: axp
# hands its environment to the guest, whose stack, and so its cycles,
# would move with the caller's variables (docs/testing.md).  The figures
# are then the same on any machine.
axp() { env -i AXP_EPOCH="$AXP_EPOCH" "$AXP" "$@"; }

# stat FILE KEY...: numbers from axp's --stats JSON
stat() { python3 -c 'import json,sys
d=json.load(open(sys.argv[1])); s=d["stalls"]
v={"cycles":d["cycles"],"imiss":d["icache_misses"],"taken":s["taken_branch"],
   "misp":s["branch_mispredict"]+s["jump_mispredict"],"icache":s["icache"]}
v["layout"]=v["icache"]+v["taken"]+v["misp"]
print(" ".join(str(v[k]) for k in sys.argv[2:]))' "$@"; }

# row NAME BUILD: one line of the table from $tmp/NAME.BUILD.json against O2's
row() {
  read -r c m t p l <<<"$(stat "$tmp/$1.$2.json" cycles imiss taken misp layout)"
  read -r c0 l0 <<<"$(stat "$tmp/$1.O2.json" cycles layout)"
  awk -v s="$1" -v b="$2" -v c="$c" -v c0="$c0" -v m="$m" -v t="$t" -v p="$p" -v l="$l" -v l0="$l0" \
    'BEGIN { printf "%-8s %-7s %12.0f %8.4f %10.0f %10.0f %10.0f %10.0f %7.1f%%\n", s, b, c, c / c0, m, t, p, l, 100 * (l0 - l) / l0 }'
}
header() { printf '%-8s %-7s %12s %8s %10s %10s %10s %10s %8s\n' input build cycles ratio imiss taken-st mispred-st layout-st removed; }
# The I-cache misses saved both summed over the inputs and as the geometric
# mean of each input's ratio to O2's (as the cycles are), since the two
# differ: one long input dominates the sum.
geomean() {
  awk '$2 == "O2" { m0 += $5; o[$1] = $5 }
       $2 != "O2" && $2 != "build" { n[$2]++; g[$2] += log($4); mi[$2] += $5; if ($4 > w[$2]) w[$2] = $4
                                     if (o[$1] > 0 && $5 > 0) { gm[$2] += log($5 / o[$1]); k[$2]++ } }
       END { for (b in n) printf "geomean %-7s cycles ratio %.4f (worst %.4f), I-cache misses %.1f%% fewer summed, %.1f%% as a geometric mean\n",
             b, exp(g[b] / n[b]), w[b], 100 * (m0 - mi[b]) / m0, k[b] ? 100 * (1 - exp(gm[b] / k[b])) : 0 }' "$1" | sort
}

# The training of workload $1: one line of arguments per run.
train_lines() {
  case $1 in
    lua) for s in closures fib nbody sieve sort strings; do echo "tests/workloads/lua/$s.lua"; done ;;
    speedtest1) echo "--size 1 $tmp/train.sqlite" ;;
    zstd) if [ "${OPT_ZSTD_TRAIN:-levels}" = l3 ]; then echo "-q -3 -c $tmp/z.train.in"
          else printf '%s\n' "-q -1 -c $tmp/z.train.in" "-q -3 -c $tmp/z.train.in" "-q -9 -c $tmp/z.train.in" \
                 "-q -19 -c $tmp/z.train.in" "-q -d -c $tmp/z.train.in.zst"; fi ;;
  esac
}
# A held-out input of workload $1: "NAME:ARGS" per line.
held_lines() {
  case $1 in
    lua) for s in $HELD; do echo "$s:scripts/bench/lua/$s.lua"; done ;;
    speedtest1) printf '%s\n' "size2:--size 2 --verify $tmp/run.sqlite" \
      "orm:--testset orm --size 1 --verify $tmp/run.sqlite" "cte:--testset cte --size 1 --verify $tmp/run.sqlite" ;;
    zstd) printf '%s\n' "c1:-q -1 -c $tmp/z.in" "c9:-q -9 -c $tmp/z.in" "c19:-q -19 -c $tmp/z.in" \
      "d:-q -d -c $tmp/z.in.zst" ;;
  esac
}
# Outputs made comparable: speedtest1's timing column goes, zstd's output is
# summed.
normalise() {
  case $1 in
    speedtest1) sed -E 's/[[:space:]]+[0-9]+\.[0-9]+s$//' ;;
    zstd) md5sum ;;
    *) cat ;;
  esac
}

# train_exact W IMG: --exact files of the training runs, as optimize-image options
train_exact() {
  local i=0 args opts=()
  while read -r args; do
    rm -f "$tmp/train.sqlite"
    # shellcheck disable=SC2086
    axp run --exact "$tmp/$1.ex.$i" -- "$2" $args >/dev/null 2>&1 || { echo "training run failed: $2 $args" >&2; return 1; }
    opts+=(--exact "$tmp/$1.ex.$i"); i=$((i + 1))
  done < <(train_lines "$1")
  echo "${opts[@]}"
}
# samples_in DB: the cycle samples a database holds
samples_in() { "$CPO" prof --db "$1" --all-epochs 2>/dev/null | sed -n 's/^Total samples for event type cycles = //p'; }
# train_rounds W IMG DB N: N rounds of the training runs under cpod
train_rounds() {
  local args r
  # per-process profiles of the program: the I-cache model of the report
  # walks each kind of process apart (docs/optimizer.md, "The cost model")
  "$CPOD" --db "$3" --flush 1h --per-process "$2" || return 1
  for r in $(seq "$4"); do
    while read -r args; do
      rm -f "$tmp/train.sqlite"
      # shellcheck disable=SC2086
      TRAIN_SEED=$((TRAIN_SEED + 1))
      axp run --pmu "$PMU" --pmu-seed "$TRAIN_SEED" --collector "$3" -- "$2" $args >/dev/null 2>&1 ||
        { echo "training run failed: $2 $args" >&2; "$CPO" quit --db "$3" >/dev/null; return 1; }
    done < <(train_lines "$1")
  done
  "$CPO" quit --db "$3" >/dev/null
}
# Each training run gets its own seed for the sampling periods: axp and
# the workloads are deterministic, so runs with one seed take the very same
# samples, and repeating them added nothing (until 2026-11-26 speedtest1's
# 1 M samples were 11 copies of one run's 96,000).
TRAIN_SEED=${OPT_SEED:-0}
# train_samples W IMG DB: the training runs under cpod at the bench's
# period, repeated (each run samples at its own random phase) until the
# database holds $OPT_SAMPLES samples, as a long profile of a program that
# keeps running the same kind of work would.
train_samples() {
  local got more
  rm -rf "$3"
  train_rounds "$1" "$2" "$3" 1 || return 1
  got=$(samples_in "$3")
  [ -n "$got" ] && [ "$got" -gt 0 ] || { echo "training: no samples in $3" >&2; return 1; }
  more=$(( (SAMPLES + got - 1) / got - 1 ))
  [ $more -gt 63 ] && more=63
  [ $more -gt 0 ] && { train_rounds "$1" "$2" "$3" $more || return 1; }
  ROUNDS=$((more + 1))
  echo "training samples: $(samples_in "$3") in $ROUNDS rounds of the training"
}
# optimize NAME IMG ARGS...: optimize-image, timed, its report's summary shown
optimize() {
  local name=$1 img=$2
  shift 2
  /usr/bin/time -f "%e %M %U %S" -o "$tmp/time" "$OPT" "$img" "$@" --report "$tmp/$name.report" \
    -o "$tmp/$name" >"$tmp/log" 2>&1 || { cat "$tmp/log"; return 1; }
  read -r secs kb usr sys <"$tmp/time"
  # CPU time beside the wall clock: on a shared machine the wall clock
  # also counts the time others held the cores.
  echo "optimize-image $name: $secs s ($(awk -v u="$usr" -v s="$sys" 'BEGIN { print u + s }') s CPU), $((kb / 1024)) MB peak"
  sed -n 2,3p "$tmp/$name.report"
  grep -E '^(gaps|unsampled handlers kept hot):' "$tmp/$name.report"
}

# again BUILD BIN [OPTION...]: the first training's database profiled as
# many rounds again on BIN, then O2 optimized from all of it as BUILD.
again() {
  local b=$1 bin=$2
  shift 2
  cp -r "$tmp/$w.db" "$tmp/$w.$b.db"
  train_rounds "$w" "$bin" "$tmp/$w.$b.db" "$ROUNDS" || return 1
  echo "$b samples: $(samples_in "$tmp/$w.$b.db")"
  optimize "$w.$b" "$O2" --db "$tmp/$w.$b.db" --all-epochs "$@" || return 1
  img[$b]=$tmp/$w.$b
}

# cost_check NAME IMG ROUNDS: the report's predicted taken-branch cycles
# saved, per pass of the training (the profile held ROUNDS of them),
# against the taken-branch stall cycles axp measures on the training
# inputs, -O2 against IMG.  The model predicts for the profile it was
# given, so this is measured on the training, not on held-out inputs.
cost_check() {
  local name=$1 img=$2 rounds=$3 args b a m0 m1 i0 i1 ib ia ic t m
  read -r b a < <(sed -n 's/^predicted taken-branch cycles: \([0-9]*\) before, \([0-9]*\) after.*/\1 \2/p' "$tmp/$name.report")
  read -r ib ia < <(sed -n 's/^predicted I-cache misses .*: \([0-9]*\) before, \([0-9]*\) after.*/\1 \2/p' "$tmp/$name.report")
  mkdir -p "$tmp/run"
  # Twice: on the EV5's own 8 KB I-cache, and on one of 1 MB, where
  # nothing misses.  A bubble after a taken branch whose target misses is
  # hidden behind the miss, so on the real cache the layout's fewer misses
  # uncover bubbles the model counts as saved (docs/optimizer.md).
  for ic in 8192 1048576; do
    m0=0 m1=0 i0=0 i1=0
    while read -r args; do
      for x in "$O2" "$img"; do
        cp "$x" "$tmp/run/$w"; rm -f "$tmp/train.sqlite"
        # shellcheck disable=SC2086
        axp run --timing --ev5 icache.size=$ic --stats="$tmp/cost.json" -- "$tmp/run/$w" $args >/dev/null 2>&1
        read -r t m <<<"$(stat "$tmp/cost.json" taken imiss)"
        if [ "$x" = "$O2" ]; then m0=$((m0 + t)) i0=$((i0 + m)); else m1=$((m1 + t)) i1=$((i1 + m)); fi
      done
    done < <(train_lines "$w")
    # The I-cache model predicts misses of the whole profile (every pass
    # of the training it holds), so the shares saved are what compare.
    [ "$ic" = 8192 ] && [ -n "$ib" ] && awk -v n="$name" -v b="$ib" -v a="$ia" -v m0="$i0" -v m1="$i1" 'BEGIN {
      printf "I-cache model %s: predicted %.1f%% fewer misses (%.0f -> %.0f in the profile), measured %.1f%% fewer (%.0f -> %.0f) on the training inputs\n", n, b ? 100 * (1 - a / b) : 0, b, a, m0 ? 100 * (1 - m1 / m0) : 0, m0, m1 }'
    awk -v n="$name" -v b="$b" -v a="$a" -v r="$rounds" -v m0="$m0" -v m1="$m1" -v ic="$ic" 'BEGIN {
      p = (b - a) / r; m = m0 - m1
      printf "cost model %s: predicted %.0f taken-branch cycles saved per training pass, measured %.0f (%.0f -> %.0f) on the training inputs with a %d KB I-cache, ratio %.2f\n", n, p, m, m0, m1, ic / 1024, m ? p / m : 0 }'
  done
}

for w in $WORKLOADS; do
  O2=$WL/bin/$w
  [ -f "$O2" ] || { echo "$w: not built (make workloads)"; continue; }
  if [ "$w" = zstd ]; then
    "$WL/host/datagen" -g1M -P40 -s7 >"$tmp/z.train.in"; "$WL/host/datagen" -g1M -P60 -s3 >"$tmp/z.in"
    axp run -- "$O2" -q -3 -c "$tmp/z.in" >"$tmp/z.in.zst"
    axp run -- "$O2" -q -3 -c "$tmp/z.train.in" >"$tmp/z.train.in.zst"
  fi
  echo; echo "$w: training on $(train_lines "$w" | sed "s|$tmp/||g" | paste -sd, -)"
  declare -A img=([O2]=$O2)
  wbuilds=$BUILDS
  if has exact || has nocol || has gaps; then
    ex=$(train_exact "$w" "$O2") || exit 1
    # shellcheck disable=SC2086
    has exact && { optimize "$w.exact" "$O2" $ex || exit 1; img[exact]=$tmp/$w.exact
                   cost_check "$w.exact" "$tmp/$w.exact" 1; }
    # shellcheck disable=SC2086
    has nocol && { optimize "$w.nocol" "$O2" $ex --no-colour || exit 1; img[nocol]=$tmp/$w.nocol; }
    # shellcheck disable=SC2086
    has gaps && { optimize "$w.gaps" "$O2" $ex --gaps || exit 1; img[gaps]=$tmp/$w.gaps; }
    # Further draws of the exact plan: the same counts, each perturbed by
    # 2% (scripts/bench/perturb-exact.py), for the spread one plan hides.
    for d in $(seq "$DRAW_SEED" $((DRAW_SEED + EXACT_DRAWS - 1))); do
      pex=()
      for f in $ex; do
        case $f in --exact) pex+=(--exact) ;;
          *) scripts/bench/perturb-exact.py --seed "$d" "$f" "$f.p$d" || exit 1; pex+=("$f.p$d") ;; esac
      done
      if has exact; then
        optimize "$w.exactp$d" "$O2" "${pex[@]}" || exit 1
        img[exactp$d]=$tmp/$w.exactp$d
        wbuilds="$wbuilds exactp$d"
      fi
      if has gaps; then
        optimize "$w.gapsp$d" "$O2" "${pex[@]}" --gaps || exit 1
        img[gapsp$d]=$tmp/$w.gapsp$d
        wbuilds="$wbuilds gapsp$d"
      fi
    done
  fi
  if has samples; then
    train_samples "$w" "$O2" "$tmp/$w.db" || exit 1
    optimize "$w.samples" "$O2" --db "$tmp/$w.db" --all-epochs || exit 1
    img[samples]=$tmp/$w.samples
    has coldh && { optimize "$w.coldh" "$O2" --db "$tmp/$w.db" --all-epochs --cold-handlers || exit 1
                   img[coldh]=$tmp/$w.coldh; }
    cost_check "$w.samples" "$tmp/$w.samples" "$ROUNDS"
    # More trainings of the same runs at other sampling phases: where hot
    # code lands in the direct-mapped I-cache moves held-out inputs by a
    # point or more from one training to the next, so one training's plan
    # is one draw (docs/notes/optimizer-baselines.md).
    for t in $(seq 2 "$TRAININGS"); do
      train_samples "$w" "$O2" "$tmp/$w.db$t" || exit 1
      optimize "$w.samples$t" "$O2" --db "$tmp/$w.db$t" --all-epochs || exit 1
      img[samples$t]=$tmp/$w.samples$t
      wbuilds="$wbuilds samples$t"
      if has coldh; then
        optimize "$w.coldh$t" "$O2" --db "$tmp/$w.db$t" --all-epochs --cold-handlers || exit 1
        img[coldh$t]=$tmp/$w.coldh$t
        wbuilds="$wbuilds coldh$t"
      fi
    done
    # The service's next round: the plan from samples deployed, profiled
    # on the same training as long again (its samples carried back through
    # its address map), and the original optimized from both profiles in
    # one database.  "double" is its control: the original profiled as
    # long again instead, so the two hold as many samples and differ only
    # in which binary the second half came from.
    if has round2; then
      cp "$tmp/$w.samples" "$tmp/$w.deployed"
      again round2 "$tmp/$w.deployed" --image "$tmp/$w.deployed" || exit 1
    fi
    has double && { again double "$O2" || exit 1; }
    has exttsp && { optimize "$w.exttsp" "$O2" --db "$tmp/$w.db" --all-epochs --blocks ext-tsp || exit 1
                    img[exttsp]=$tmp/$w.exttsp; }
    has c3 && { optimize "$w.c3" "$O2" --db "$tmp/$w.db" --all-epochs --procs c3 || exit 1
                img[c3]=$tmp/$w.c3; }
  fi
  if has pgo || has pgo+s; then
    train_lines "$w" >"$tmp/train.args"
    if scripts/workloads/pgo.sh "$WL" "$w" "$tmp/pgo-$w" -- sh -c \
        'while read -r a; do rm -f "$0/train.sqlite"; scripts/qemu-run.sh "$PGO_BIN" $a >/dev/null || exit 1; done <"$0/train.args"' "$tmp"; then
      img[pgo]=$tmp/pgo-$w/bin/$w
      if has pgo+s; then
        train_samples "$w" "${img[pgo]}" "$tmp/$w.pgo.db" || exit 1
        optimize "$w.pgo+s" "${img[pgo]}" --db "$tmp/$w.pgo.db" --all-epochs || exit 1
        img[pgo+s]=$tmp/$w.pgo+s
      fi
    fi
  fi
  imgs=()
  for b in $wbuilds; do [ -n "${img[$b]:-}" ] && imgs+=("${img[$b]}"); done
  # One heap address for all builds, above every one's image: a rewritten
  # image ends higher than -O2's, so its own heap would start higher, and
  # lua, which hashes tables by address, then runs its tables and
  # collector differently (one held-out script moved 2 points with the
  # heap alone).  With one address the builds differ in their code alone.
  brk=$(scripts/image-end.py --align 0x100000 "${imgs[@]}") || exit 1
  echo "every build's heap starts at $brk (axp run --brk)"
  header
  while IFS=: read -r n args; do
    for b in $wbuilds; do
      [ -n "${img[$b]:-}" ] || continue
      mkdir -p "$tmp/run"; cp "${img[$b]}" "$tmp/run/$w"
      rm -f "$tmp/run.sqlite"
      # shellcheck disable=SC2086
      axp run --brk "$brk" --timing --stats="$tmp/$n.$b.json" -- "$tmp/run/$w" $args >"$tmp/raw" 2>&1
      st=$?
      normalise "$w" <"$tmp/raw" >"$tmp/$n.$b.out"
      echo "status $st" >>"$tmp/$n.$b.out"
      cmp -s "$tmp/$n.O2.out" "$tmp/$n.$b.out" || echo "FAIL $w $n: $b output differs from O2"
      row "$n" "$b"
    done
  done < <(held_lines "$w") | tee "$tmp/$w.table"
  geomean "$tmp/$w.table" | tee "$tmp/$w.geo"
  # The mean of each family of draws: samples, samples2, ... (trainings)
  # and exact, exactp1, ... (perturbed exact counts).
  # With the standard error of that mean: a change to the plan that moves
  # the mean by less than about two of them is not told from the spread.
  awk '$2 ~ /^(samples[0-9]*|coldh[0-9]*|exact(p[0-9]+)?|gaps(p[0-9]+)?)$/ {
         f = $2; sub(/p?[0-9]+$/, "", f); n[f]++; s[f] += $5; q[f] += $5 * $5
         if (n[f] == 1 || $5 < lo[f]) lo[f] = $5; if ($5 > hi[f]) hi[f] = $5
         if (match($0, /, [0-9.]+% as a geo/)) gm[f] += substr($0, RSTART + 2, RLENGTH - 11) }
       END { for (f in n) if (n[f] > 1) {
               m = s[f] / n[f]; v = (q[f] - n[f] * m * m) / (n[f] - 1)
               printf "%s over %d %s: cycles ratio %.4f on the mean (standard error %.4f; %.4f to %.4f), I-cache misses %.1f%% fewer as a geometric mean, on the mean\n",
                 f, n[f], f ~ /^(samples|coldh)/ ? "trainings" : "draws", m, sqrt(v > 0 ? v / n[f] : 0), lo[f], hi[f], gm[f] / n[f] } }' \
    "$tmp/$w.geo"
  unset img
done
