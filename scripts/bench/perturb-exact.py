#!/usr/bin/env python3
"""perturb-exact.py --seed N [--sigma S] IN OUT: axp's exact counts (IN, format
of docs/machine.md) with every count of the main image multiplied by
exp(gauss(0, S)) (default S = 0.02), rounded, a count that was not 0 kept at
1 or more and 0 kept 0.

A plan's held-out cycles can move by points when its inputs move by a few
per cent (docs/notes/optimizer-rounds.md), so one plan from exact counts is
one draw; plans from perturbed copies are further draws of the same
knowledge, and their mean is what a rule should be judged on."""
import argparse
import math
import random
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--sigma", type=float, default=0.02)
    ap.add_argument("inp")
    ap.add_argument("out")
    a = ap.parse_args()
    rnd = random.Random(a.seed)

    def p(v):
        v = int(v)
        return str(max(1, round(v * math.exp(rnd.gauss(0, a.sigma))))) if v else "0"

    # the count fields of each record kind, by position after the kind
    with open(a.inp) as f, open(a.out, "w") as o:
        for n, line in enumerate(f, 1):
            w = line.split()
            if len(w) < 2 or w[1] != "0" or w[0] not in ("block", "branch", "call", "edge", "jump"):
                o.write(line)
                continue
            try:
                if w[0] == "block":
                    w[4] = p(w[4])
                elif w[0] == "branch":
                    w[4], w[5] = p(w[4]), p(w[5])
                elif w[0] == "call":
                    w[3] = p(w[3])
                elif w[0] == "edge":
                    w[6] = p(w[6])
                else:   # jump IMG PC KIND COUNT [IMG:TARGET=COUNT]...
                    w[4] = p(w[4])
                    w[5:] = [t.rsplit("=", 1)[0] + "=" + p(t.rsplit("=", 1)[1]) for t in w[5:]]
            except (IndexError, ValueError):
                sys.exit(f"{a.inp}:{n}: not an exact-count record: {line.strip()}")
            o.write(" ".join(w) + "\n")


if __name__ == "__main__":
    main()
