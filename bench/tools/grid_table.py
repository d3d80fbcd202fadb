#!/usr/bin/env python3
"""Tabulates a device run's grid.log (sm90_check --grid lines of several binaries + sm90_peer.py lines): TFLOP/s per
cell for each binary and launch mode, cuDNN and FA2, and the best flashtile variant over cuDNN. Lines sm90_check
marks "dispatched" (the launch mode the library picks) also fill a BINARY_dispatched column, on which the sm90
bars are checked (cuDNN >= 1.00x at S >= 2048 and >= 0.90x below; FA2 >= 1.8x).
Usage: grid_table.py grid.log"""
import collections
import math
import sys

from gridlog import BENCH, CUDNN_BAR_LONG, CUDNN_BAR_SHORT, FA2_BAR, LONG_FROM, PEER

rows = collections.defaultdict(dict)
binary = None
for line in open(sys.argv[1]):
    if line.startswith("== "):
        binary = line.split()[1].rsplit("_", 1)[-1]
    m = BENCH.match(line)
    if m:
        mode, d, s, c, tf = m.groups()
        rows[(int(d), c, int(s))][f"{binary}_{mode}"] = float(tf)
        if line.rstrip().endswith("dispatched"):
            rows[(int(d), c, int(s))][f"{binary}_dispatched"] = float(tf)
    m = PEER.match(line)
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

geo = lambda x: math.exp(sum(map(math.log, x)) / len(x))
for col in (c for c in cols if c.endswith("_dispatched")):  # the sm90 bars on each binary's dispatched mode
    vs_cudnn, vs_fa2, met, met_fa2 = [], [], 0, 0
    for (d, c, s), r in sorted(rows.items()):
        if col not in r or not r.get("cudnn") or not r.get("flash2"):
            continue
        a, b = r[col] / r["cudnn"], r[col] / r["flash2"]
        vs_cudnn.append(a), vs_fa2.append(b)
        met += a >= (CUDNN_BAR_LONG if s >= LONG_FROM else CUDNN_BAR_SHORT)
        met_fa2 += b >= FA2_BAR
    if vs_cudnn:
        n = len(vs_cudnn)
        print(f"\n{col}: geomean {geo(vs_cudnn):.3f}x cuDNN, {geo(vs_fa2):.3f}x FA2; cuDNN bar met in {met} of {n} "
              f"cells, FA2 {FA2_BAR}x in {met_fa2} of {n}")
