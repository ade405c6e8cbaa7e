#!/usr/bin/env python3
"""Compare `cpo disasm` with `alpha-linux-gnu-objdump -d` instruction by
instruction (address, word, text including the <symbol+off> label).
Prints the agreement and the first disagreements; exits 1 below the bar."""
import re
import subprocess
import sys

def objdump(path):
    out = subprocess.run(["alpha-linux-gnu-objdump", "-d", path],
                         capture_output=True, text=True, check=True).stdout
    rows = {}
    pat = re.compile(r"^\s+([0-9a-f]+):\t([0-9a-f]{2}) ([0-9a-f]{2}) ([0-9a-f]{2}) ([0-9a-f]{2}) \t(.*)$")
    for line in out.splitlines():
        m = pat.match(line)
        if m:
            word = m.group(5) + m.group(4) + m.group(3) + m.group(2)
            rows[int(m.group(1), 16)] = (word, m.group(6).rstrip())
    return rows

def ours(cpo, path):
    p = subprocess.run([cpo, "disasm", "--verify", path], capture_output=True, text=True)
    if p.returncode != 0:
        sys.stderr.write(p.stderr)
        raise SystemExit(f"cpo disasm failed on {path}")
    rows = {}
    for line in p.stdout.splitlines():
        m = re.match(r"^([0-9a-f]+): ([0-9a-f]{8}) (.*)$", line)
        if m:
            rows[int(m.group(1), 16)] = (m.group(2), m.group(3).rstrip())
    return rows, p.stderr.strip()

def main():
    cpo, bar, paths = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
    worst = 100.0
    for path in paths:
        ref = objdump(path)
        got, verify = ours(cpo, path)
        bad = [(a, ref[a], got.get(a)) for a in sorted(ref) if got.get(a) != ref[a]]
        extra = len(set(got) - set(ref))
        pct = 100.0 * (len(ref) - len(bad)) / max(len(ref), 1)
        worst = min(worst, pct)
        print(f"{path}: {len(ref)} instructions, {len(bad)} differ, {extra} extra, "
              f"agreement {pct:.4f}% ({verify.removeprefix('cpo: ')})")
        for a, r, g in bad[:10]:
            print(f"   {a:x}: objdump {r[0]} {r[1]!r}  cpo {g and g[0]} {g and g[1]!r}")
        if "0 failed to re-encode" not in verify:
            print(f"   re-encoding failed on {path}")
            worst = -1
    return 0 if worst >= bar else 1

if __name__ == "__main__":
    sys.exit(main())
