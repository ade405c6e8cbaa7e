#!/usr/bin/env python3
"""One workload's ProfileMe figures for scripts/bench/profileme.sh:
frequencies (cpo accuracy --profileme --json), event attribution
(cpo profileme --json against axp --truth), wasted issue slots per
procedure (against axp --pm-truth, when there is one), records lost,
and the machine's speed with and without ProfileMe."""
import json, os, re, subprocess, sys

(w, accf, pmf, truthf, pmtruthf, statsf, flushf, img, t0, t1, dmiss_period) = sys.argv[1:12]
acc = json.load(open(accf))
pm = acc["profileme"]
print(f"{w}:")
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
n = ok = okc = 0
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
    worst = max(worst, abs(pm_rate - true_rate))
tot_ds = sum(t[2] for t in truth.values())
on_missing = sum(t[2] for t in truth.values() if t[1])
print("  D-cache miss rate, %d loads with >= 500 samples: ProfileMe within 2 points of the model for %d "
      "(largest gap %.2f points); dmiss counter samples x period / executions within 2 points for %d"
      % (n, ok, 100 * worst, okc))
print("  dmiss counter samples: %d, %.1f%% on a load that missed, the rest skidded" %
      (tot_ds, 100 * on_missing / tot_ds if tot_ds else 0))

if os.path.exists(pmtruthf):
    print("  wasted issue slots: see " + pmtruthf)

st = json.load(open(statsf))
d = st["driver"]
flush = open(flushf).read()
m = re.search(r"since start (\d+) records, (\d+) unmapped, (\d+) malformed, (\d+) lost", flush)
print("  records: %d made, %d lost on the way, cpod took %s (%s unmapped, %s lost)" %
      (st["profileme"]["records"], d["profileme_lost"] + d["profileme_rejected"],
       m.group(1) if m else "?", m.group(2) if m else "?", m.group(4) if m else "?"))
print("  speed: %s s without ProfileMe, %s s with: %+.1f%%" % (t0, t1, 100 * (float(t1) / float(t0) - 1)))
