#!/usr/bin/env python3
"""The sm90 table (issue 4's bars) for one binary of a device run's grid.log: its dispatched TFLOP/s per cell (mean over its runs in
the log), cuDNN and FA2 from the same log (means over their runs in it), the ratios and which bars each cell meets
(cuDNN >= 1.00x at S >= 2048, >= 0.90x below; FA2 >= 1.8x; 650 TFLOP/s at d128 non-causal 16k), then the geomeans and
counts. Where the peers ran more than once, each round too: a run of NAME with the peers' run after it, FA2's count
and misses.
Usage: sm90_table.py grid.log NAME"""
import collections
import math
import sys

from gridlog import BENCH, CUDNN_BAR_LONG, CUDNN_BAR_SHORT, FA2_BAR, LONG_FROM, PEER, run_name

D128_16K = 650.0  # the TFLOP/s bar at d128 non-causal 16k
path, name = sys.argv[1], sys.argv[2]
ours, peers, binary = collections.defaultdict(list), collections.defaultdict(list), None
rounds = []  # [ours of one run, the peers' run after it]
for line in open(path):
    if line.startswith("== "):
        binary = run_name(line)
        if binary == name:
            rounds.append([{}, {}])
    m = BENCH.match(line)
    if m and binary == name and line.rstrip().endswith("dispatched"):
        ours[(int(m[2]), m[4], int(m[3]))].append(float(m[5]))
        rounds[-1][0][(int(m[2]), m[4], int(m[3]))] = float(m[5])
    m = PEER.match(line)
    if m:
        peers[(m[1], int(m[2]), m[4], int(m[3]))].append(float(m[5]))
        if rounds:
            rounds[-1][1][(m[1], int(m[2]), m[4], int(m[3]))] = float(m[5])
print(f"| d | causal | S | flashtile (mean of runs) | cuDNN (mean) | FA2 (mean) | ÷ cuDNN | ÷ FA2 | cuDNN bar | FA2 bar |")
print("|---|---|---|---|---|---|---|---|---|---|")
rc, rf, met_c, met_f = [], [], 0, 0
for key in sorted(ours):
    d, c, s = key
    tf = sum(ours[key]) / len(ours[key])
    cud, fa2 = peers.get(("cudnn", d, c, s)), peers.get(("flash2", d, c, s))
    if not cud or not fa2:
        continue
    cud, fa2 = sum(cud) / len(cud), sum(fa2) / len(fa2)
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
rounds = [r for r in rounds if r[1]]
if len(rounds) > 1:
    print()
    for i, (o, pr) in enumerate(rounds, 1):
        cells = [(k, v / pr[("flash2",) + k]) for k, v in sorted(o.items()) if ("flash2",) + k in pr]
        miss = [f"d{k[0]} {k[1]} {k[2]} {r:.2f}" for k, r in cells if r < FA2_BAR]
        print(f"round {i}: FA2's {FA2_BAR}x in {len(cells) - len(miss)} of {len(cells)}; missed: {', '.join(miss)}")
