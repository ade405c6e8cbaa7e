#!/usr/bin/env python3
"""cct-compare.py [--at-most] [--skip NAME]... [--skip-matching REGEX]... EXACT FILE...: compare the calling context tree an
instrumented binary wrote (FILE..., cpo-cct 1, one per process, added up)
with axp's exact tree of the original on the same input (`axp run --cct`,
docs/paths.md), in shape and call counts.

The binary has no node for code it does not count: procedures of other
images (a dynamic program's libraries) and those of its own image the
rewriter could not instrument (optimize-image -v names them).  The exact
tree is first seen as the binary sees it: a node of a procedure that
appears nowhere in the binary's trees is left out, its children hang
from its nearest kept ancestor, at the call site by which the chain left
that ancestor.  Contexts are then chains of (procedure, call site) from
the root; every context of one tree must be in the other with the same
number of calls, and each procedure's recursive calls (back edges, added
up per target context) must agree.  Folding afterwards is not exact
when a recursion passes through a procedure folded away with a counted
one inside the cycle (axp folds the recursion at the first, the binary
at the second): then build EXACT with `axp run --cct EXACT --cct-only
FILE`, which gives contexts only to the procedures FILE has
(docs/paths.md).  With --at-most the binary may have fewer calls (a
process killed by a signal writes nothing).  --skip leaves out the
contexts of procedure NAME and everything below them,
--skip-matching those of the procedures whose names the regular
expression finds (a test says why: how often threads wait for each
other depends on the timing, which instrumentation changes).  Prints one
line per difference and a summary; exit 1 on any difference, 2 when a
file is not a tree."""
import sys

import compare_opts


def load(path):
    with open(path) as f:
        lines = f.read().split("\n")
    if not lines or lines[0] != "cpo-cct 1" or "end" not in lines:
        print("cct-compare: %s: not a complete cpo-cct 1 file" % path)
        sys.exit(2)
    t = {"images": {}, "nodes": {0: None}, "back": []}
    for line in lines:
        w = line.split()
        if not w:
            continue
        if w[0] == "image":
            t["images"][int(w[1])] = w[2]
        elif w[0] == "node":
            img = None if w[3] == "-" else t["images"][int(w[3])]
            t["nodes"][int(w[1])] = (int(w[2]), (img, int(w[4], 16)), int(w[5], 16), w[6], int(w[7]))
        elif w[0] == "back":
            t["back"].append((int(w[1]), int(w[2]), int(w[3], 16), int(w[4])))
    return t


def contexts(t, keep):
    """{chain: [calls, name]} and {target chain: recursive calls}, nodes not kept folded away."""
    key = {0: ()}
    left = {0: None}      # for a node left out: (its kept ancestor's key, site leaving it)
    out = {}
    for i in sorted(n for n in t["nodes"] if n):
        parent, proc, site, name, calls = t["nodes"][i]
        if parent in key:
            pkey, psite = key[parent], site
        else:
            pkey, psite = left[parent]
        if keep(proc):
            key[i] = pkey + ((proc, psite),)
            e = out.setdefault(key[i], [0, name])
            e[0] += calls
        else:
            left[i] = (pkey, psite)
    back = {}
    for frm, to, site, count in t["back"]:
        if to in key:
            back[key[to]] = back.get(key[to], 0) + count
    return out, back


def main():
    o = compare_opts.parse(sys.argv[1:], __doc__)
    if not o:
        return 2
    exact = load(o.exact)
    trees = [load(p) for p in o.files]
    ids = {b for t in trees for b in t["images"].values()}
    counted = {n[1] for t in trees for k, n in t["nodes"].items() if k}
    got, gback = {}, {}
    for t in trees:
        c, b = contexts(t, lambda p: True)
        for k, v in c.items():
            got.setdefault(k, [0, v[1]])[0] += v[0]
        for k, v in b.items():
            gback[k] = gback.get(k, 0) + v
    want, wback = contexts(exact, lambda p: p[0] in ids and p in counted)
    names = {n[1]: n[3] for t in trees + [exact] for i, n in t["nodes"].items() if i}
    left = {k for k in set(got) | set(want) if any(o.left_out(names.get(p)) for p, _ in k)}
    bad = 0
    for k in sorted((set(got) | set(want)) - left):
        g, w = got.get(k, [0, None])[0], want.get(k, [0, None])[0]
        if g == w or (o.at_most and g < w):
            continue
        bad += 1
        if bad <= 20:
            name = ";".join((want.get(k) or got.get(k))[1] for _ in [0])
            print("context %s (%d deep): %d calls instrumented, %d exact" %
                  (name, len(k), g, w))
    for k in sorted((set(gback) | set(wback)) - left):
        g, w = gback.get(k, 0), wback.get(k, 0)
        if g != w and not (o.at_most and g < w):
            bad += 1
            if bad <= 20:
                print("recursive calls to a context %d deep: %d instrumented, %d exact" % (len(k), g, w))
    print("%d contexts compared, %d differ, %d left out; %d recursive targets" %
          (len((set(got) | set(want)) - left), bad, len(left), len(set(gback) | set(wback))))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
