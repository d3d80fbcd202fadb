#!/usr/bin/env python3
"""Issue 4's table for one binary of a tuning call's grid.log: its dispatched TFLOP/s per cell (mean over its runs in
the call), cuDNN and FA2 from the same call, the ratios and which bars each cell meets (cuDNN >= 1.00x at S >= 2048,
>= 0.90x below; FA2 >= 1.8x; 650 TFLOP/s at d128 non-causal 16k), then the geomeans and counts.
Usage: issue4_table.py grid.log NAME"""
import collections
import math
import sys

from gridlog import BENCH, CUDNN_BAR_LONG, CUDNN_BAR_SHORT, FA2_BAR, LONG_FROM, PEER, run_name

D128_16K = 650.0  # issue 4's TFLOP/s bar at d128 non-causal 16k
path, name = sys.argv[1], sys.argv[2]
ours, peers, binary = collections.defaultdict(list), {}, None
for line in open(path):
    if line.startswith("== "):
        binary = run_name(line)
    m = BENCH.match(line)
    if m and binary == name and line.rstrip().endswith("dispatched"):
        ours[(int(m[2]), m[4], int(m[3]))].append(float(m[5]))
    m = PEER.match(line)
    if m:
        peers[(m[1], int(m[2]), m[4], int(m[3]))] = float(m[5])
print(f"| d | causal | S | flashtile (mean of runs) | cuDNN | FA2 | ÷ cuDNN | ÷ FA2 | cuDNN bar | FA2 bar |")
print("|---|---|---|---|---|---|---|---|---|---|")
rc, rf, met_c, met_f = [], [], 0, 0
for key in sorted(ours):
    d, c, s = key
    tf = sum(ours[key]) / len(ours[key])
    cud, fa2 = peers.get(("cudnn", d, c, s)), peers.get(("flash2", d, c, s))
    if not cud or not fa2:
        continue
    a, b = tf / cud, tf / fa2
    ok_c, ok_f = a >= (CUDNN_BAR_LONG if s >= LONG_FROM else CUDNN_BAR_SHORT), b >= FA2_BAR
    rc.append(a), rf.append(b)
    met_c += ok_c
    met_f += ok_f
    note = f" ({tf:.0f} vs {D128_16K:.0f})" if (d, c, s) == (128, "non-causal", 16384) else ""
    print(f"| {d} | {c} | {s} | {tf:.1f}{note} | {cud:.1f} | {fa2:.1f} | {a:.3f} | {b:.2f} | "
          f"{'met' if ok_c else 'missed'} | {'met' if ok_f else 'missed'} |")
geo = lambda x: math.exp(sum(map(math.log, x)) / len(x))
if rc:
    print(f"\n{name}: {geo(rc):.3f}x cuDNN, {geo(rf):.3f}x FA2 (geomeans); cuDNN bar met in {met_c} of {len(rc)} "
          f"cells, FA2's {FA2_BAR}x in {met_f} of {len(rc)}")
