#!/usr/bin/env python3
"""Where a kernel's warps wait, from ncu's per-SASS-instruction source page (the *.csv.gz
that device_lib.sh's ncu_prof writes): the stall reasons over the kernel, then the instructions with the most stall samples, each with the
instructions before it (a try_wait's branch stalls on the SYNCS instruction above it).
Usage: ncu_source_top.py FILE.csv.gz [TOP] [CONTEXT]"""
import csv
import gzip
import sys


def num(x):
    return float(x) if x not in ("-", "") else 0.0


path = sys.argv[1]
top_n = int(sys.argv[2]) if len(sys.argv) > 2 else 12
ctx = int(sys.argv[3]) if len(sys.argv) > 3 else 2
with gzip.open(path, "rt") as fh:
    r = csv.reader(fh)
    next(r)  # the kernel's name
    hdr = next(r)
    rows = [dict(zip(hdr, x)) for x in r if len(x) >= len(hdr)]
samples = "Warp Stall Sampling (All Samples)"
total = sum(num(x[samples]) for x in rows) or 1.0
stalls = [h for h in hdr if h.startswith("stall_") and "Not Issued" not in h]
print(f"## {path}: {total:.0f} stall samples, {sum(num(x['Instructions Executed']) for x in rows):.0f} warp instructions")
agg = sorted(((sum(num(x[h]) for x in rows), h[6:]) for h in stalls), reverse=True)
print("stall reasons: " + ", ".join(f"{k} {v / total * 100:.1f}%" for v, k in agg[:9]))
order = sorted(range(len(rows)), key=lambda i: -num(rows[i][samples]))[:top_n]
for i in order:
    print()
    for x in rows[max(0, i - ctx):i + 1]:
        why = max((num(x[h]), h[6:]) for h in stalls)
        print(f"    {x['Address'][-5:]} {num(x[samples]) / total * 100:5.1f}% n={num(x['Instructions Executed']):9.0f} "
              f"{x['Source'].strip()[:70]:70s} {why[1] if why[0] else ''}")
