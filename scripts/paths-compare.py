#!/usr/bin/env python3
"""paths-compare.py [--at-most] [--skip NAME]... [--skip-matching REGEX]... EXACT FILE...: compare the complete-path counts of an
instrumented binary's profiles (FILE..., one per process, added up) with
axp's exact profile of the original on the same input (cpo-paths 1, see
docs/paths.md).  Every procedure the binary counted must have exactly
axp's counts, except:
  - procedures where axp recorded partial paths (a longjmp, a signal
    handler left by longjmp, a fork's child resuming mid-path): the binary
    has no partial paths (docs/instrument.md);
  - glibc's start-up code that walks the program headers
    (__libc_setup_tls, _dlfo_process_initial, _dlfo_sort_mappings.part.0,
    _dl_non_dynamic_init):
    the instrumented image has one more segment.
--skip leaves a procedure out, --skip-matching those whose names the
regular expression finds (a test says why).  With --at-most, the
binary may count fewer (never more, never other
paths): for programs with a process killed by a signal, which writes no
profile.  Prints one line per difference and a summary; exit 1 on any
difference, 2 when a file is not a path profile."""
import sys

import compare_opts

HEADERS = {"__libc_setup_tls", "_dlfo_process_initial", "_dlfo_sort_mappings.part.0", "_dl_non_dynamic_init"}


def load(path):
    procs, cur = {}, None
    with open(path) as f:
        lines = f.read().split("\n")
    if not lines or lines[0] != "cpo-paths 1" or "end" not in lines:
        print("paths-compare: %s: not a complete cpo-paths 1 file" % path)
        sys.exit(2)
    for line in lines:
        w = line.split()
        if not w:
            continue
        if w[0] == "proc":
            cur = procs.setdefault(int(w[1], 16), {"name": w[2], "paths": {}, "partial": 0})
        elif w[0] == "path":
            cur["paths"][int(w[1])] = cur["paths"].get(int(w[1]), 0) + int(w[2])
        elif w[0] == "partial":
            cur["partial"] += 1
    return procs


def main():
    o = compare_opts.parse(sys.argv[1:], __doc__)
    if not o:
        return 2
    exact = load(o.exact)
    got = {}
    for path in o.files:
        for addr, p in load(path).items():
            d = got.setdefault(addr, {"name": p["name"], "paths": {}})
            for k, v in p["paths"].items():
                d["paths"][k] = d["paths"].get(k, 0) + v
    same = differ = skipped = 0
    for addr, p in sorted(got.items()):
        e = exact.get(addr, {"paths": {}, "partial": 0})
        if e["partial"] or p["name"] in HEADERS or o.left_out(p["name"]):
            skipped += 1
            continue
        if e["paths"] == p["paths"]:
            same += 1
            continue
        if o.at_most and all(v <= e["paths"].get(k, 0) for k, v in p["paths"].items()):
            skipped += 1
            continue
        differ += 1
        print("%s 0x%x: axp %s, binary %s" % (p["name"], addr, sorted(e["paths"].items())[:8],
                                               sorted(p["paths"].items())[:8]))
    print("procedures counted: %d as axp, %d differ, %d not compared" % (same, differ, skipped))
    return 1 if differ or not same else 0


sys.exit(main())
