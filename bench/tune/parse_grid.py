#!/usr/bin/env python3
"""Tabulates a tuning call's grid.log (sm90_check --grid lines of several binaries + sm90_peer.py lines): TFLOP/s per
cell for each binary and launch mode, cuDNN and FA2, and the best flashtile variant over cuDNN.
Usage: parse_grid.py grid.log"""
import collections
import re
import sys

rows = collections.defaultdict(dict)
binary = None
for line in open(sys.argv[1]):
    if line.startswith("== "):
        binary = line.split()[1].rsplit("_", 1)[-1]
    m = re.match(r"bench sm90_fwd_(\w+) d=(\d+) bf16 B=\d+ H=\d+ S=(\d+) (\S+)\s+median [\d.]+ ms\s+([\d.]+) TFLOP", line)
    if m:
        mode, d, s, c, tf = m.groups()
        rows[(int(d), c, int(s))][f"{binary}_{mode}"] = float(tf)
    m = re.match(r"peer (\w+)\s+d=(\d+) bf16 B=\d+ H=\d+ S=(\d+) (\S+)\s+median [\d.]+ ms\s+([\d.]+) TFLOP", line)
    if m:
        name, d, s, c, tf = m.groups()
        rows[(int(d), c, int(s))][name] = float(tf)
cols = sorted({k for r in rows.values() for k in r if k not in ("cudnn", "flash2")})
print("| d | causal | S | " + " | ".join(cols) + " | cuDNN | FA2 | best / cuDNN | best / FA2 |")
print("|" + "---|" * (len(cols) + 7))
for key in sorted(rows):
    r = rows[key]
    best = max((r[c] for c in cols if c in r), default=0.0)
    cud, fa2 = r.get("cudnn", 0.0), r.get("flash2", 0.0)
    cells = " | ".join(f"{r[c]:.1f}" if c in r else "-" for c in cols)
    print(f"| {key[0]} | {key[1]} | {key[2]} | {cells} | {cud:.1f} | {fa2:.1f} | "
          f"{best / cud if cud else 0:.3f} | {best / fa2 if fa2 else 0:.2f} |")
