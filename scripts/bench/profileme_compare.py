#!/usr/bin/env python3
"""One workload's ProfileMe figures for scripts/bench/profileme.sh:
frequencies (cpo accuracy --profileme --json), event attribution
(cpo profileme --json against axp --truth), wasted issue slots per
procedure (against axp --pm-truth, when there is one), records lost,
and the machine's speed with and without ProfileMe."""
import json
import math, os, re, subprocess, sys

(w, accf, pmf, truthf, pmtruthf, statsf, flushf, img, t0, t1, dmiss_period) = sys.argv[1:12]
acc = json.load(open(accf))
pm = acc["profileme"]
print("  frequencies: ProfileMe %d samples, %.1f%% of them in blocks within 5%% of exact (10%%: %.1f%%); "
      "cycle samples %.0f, %.1f%% within 5%%" % (pm["samples"], 100 * pm["blocks"]["within5"],
      100 * pm["blocks"]["within10"], acc["samples"], 100 * acc["blocks"]["within5"]))
print("  by instructions executed, within 5%%: ProfileMe %.1f%%, cycle samples %.1f%%" %
      (100 * pm["blocks_by_executions"]["within5"], 100 * acc["cycle_blocks_by_executions"]["within5"]))

# the truth: per pc, loads by level and dmiss samples
hdr, truth = None, {}
for line in open(truthf):
    if line.startswith("#"):
        hdr = line[1:].split()
        continue
    f = dict(zip(hdr, line.split()))
    pc = int(f["pc"], 16)
    t = truth.setdefault(pc, [0, 0, 0])
    lv = [int(f["load." + k]) for k in ("dcache", "scache", "bcache", "memory")]
    t[0] += sum(lv)
    t[1] += sum(lv[1:])
    t[2] += int(f.get("dmiss", 0))
rows = json.load(open(pmf))
n = ok = okc = ok3 = 0
expect = 0.0    # loads an unbiased sampler would put within 2 points
worst = 0.0
period = float(dmiss_period)
for r in rows:
    pc = int(r["address"], 16)
    if r["samples"] < 500 or not r["loads"] or pc not in truth or not truth[pc][0]:
        continue
    execs, misses, ds = truth[pc]
    true_rate = misses / execs
    pm_rate = r["dmiss"] / r["loads"]
    cnt_rate = ds * period / execs
    n += 1
    ok += abs(pm_rate - true_rate) <= 0.02
    okc += abs(cnt_rate - true_rate) <= 0.02
    # the binomial noise of a rate from this many load samples
    sigma = (max(true_rate * (1 - true_rate), 1e-9) / r["loads"]) ** 0.5
    ok3 += abs(pm_rate - true_rate) <= 3 * sigma + 1e-9
    # P(|X/k - p| <= 0.02) for X binomial(k, p), k the load samples:
    # normal approximation with continuity correction
    k = r["loads"]
    half = (0.02 * k + 0.5) / max((k * true_rate * (1 - true_rate)) ** 0.5, 1e-9)
    expect += math.erf(half / 2 ** 0.5)
    worst = max(worst, abs(pm_rate - true_rate))
tot_ds = sum(t[2] for t in truth.values())
on_missing = sum(t[2] for t in truth.values() if t[1])
print("  D-cache miss rate, %d loads with >= 500 samples: ProfileMe within 2 points of the model for %d "
      "(largest gap %.2f points; within 3 sigma of binomial noise: %d; an unbiased sampler of as many "
      "samples would put %.1f within 2 points); dmiss counter samples x period / "
      "executions within 2 points for %d" % (n, ok, 100 * worst, ok3, expect, okc))
print("  dmiss counter samples: %d, %.1f%% on a load that missed, the rest skidded" %
      (tot_ds, 100 * on_missing / tot_ds if tot_ds else 0))

# wasted issue slots per procedure: ProfileMe's estimate against the
# model's (the truth's issue.* columns), procedures by the image's symbols
procs = []
for line in subprocess.run([os.path.join(os.path.dirname(sys.argv[0]), "..", "..", os.environ.get("BUILD", "build"),
                            "bin", "cpo"), "syms", img], capture_output=True, text=True).stdout.splitlines():
    f = line.split()
    if len(f) >= 8 and f[3] == "FUNC" and int(f[2]) > 0:
        procs.append((int(f[1], 16), int(f[1], 16) + int(f[2]), f[-1]))
procs.sort()
def proc_of(pc):
    lo, hi = 0, len(procs)
    while lo < hi:
        mid = (lo + hi) // 2
        if procs[mid][1] <= pc:
            lo = mid + 1
        else:
            hi = mid
    return procs[lo][2] if lo < len(procs) and procs[lo][0] <= pc < procs[lo][1] else None
true_w, est_w = {}, {}
hdr = None
for line in open(truthf):
    if line.startswith("#"):
        hdr = line[1:].split()
        continue
    f = dict(zip(hdr, line.split()))
    if "issue.slots" not in f:
        break
    p = proc_of(int(f["pc"], 16))
    if p:
        true_w[p] = true_w.get(p, 0) + int(f["issue.slots"]) - int(f["issue.used"])
for r in rows:
    p = proc_of(int(r["address"], 16))
    if p and r["wasted_slots"] is not None:
        est_w[p] = est_w.get(p, 0) + r["wasted_slots"]
total = sum(true_w.values())
top = sorted(true_w, key=lambda p: -true_w[p])
big = [p for p in top if true_w[p] >= 0.01 * total]
good = [p for p in big if abs(est_w.get(p, 0) - true_w[p]) <= 0.10 * true_w[p]]
if total:
    print("  wasted issue slots: %d procedures with >= 1%% of the model's %.3g; ProfileMe within 10%% for %d "
          "(%.1f%% of those slots)" % (len(big), total, len(good),
          100 * sum(true_w[p] for p in good) / max(1, sum(true_w[p] for p in big))))
    for p in big[:8]:
        print("    %-28s model %12.0f  ProfileMe %12.0f  %+6.1f%%" % (p[:28], true_w[p], est_w.get(p, 0),
              100 * (est_w.get(p, 0) - true_w[p]) / true_w[p]))

st = json.load(open(statsf))
d = st["driver"]
flush = open(flushf).read()
m = re.search(r"since start (\d+) records, (\d+) unmapped, (\d+) malformed, (\d+) lost", flush)
print("  records: %d made, %d lost on the way, cpod took %s (%s unmapped, %s lost)" %
      (st["profileme"]["records"], d["profileme_lost"] + d["profileme_rejected"],
       m.group(1) if m else "?", m.group(2) if m else "?", m.group(4) if m else "?"))
w0, c0 = map(float, t0.split("/"))
w1, c1 = map(float, t1.split("/"))
print("  speed (best of two): %.2f s wall, %.2f s CPU without ProfileMe; %.2f s, %.2f s with: %+.1f%% wall, "
      "%+.1f%% CPU" % (w0, c0, w1, c1, 100 * (w1 / w0 - 1), 100 * (c1 / c0 - 1)))
