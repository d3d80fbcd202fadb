#!/usr/bin/env python3
"""A/B table of a device run's grid.log: for each cell, each binary's dispatched TFLOP/s averaged over its runs in
the log (binaries run interleaved, `== DIR/sm90_check_NAME ...` headings; NAME@ctasN for runs with a forced
grid), its ratio to BASE, and cuDNN from the same log; then each binary's geomean ratio to BASE,
causal and non-causal apart. grid_table.py gives the table against the sm90 bars; this one says whether a variant
beats the kernel it came from.
Usage: ab_grid.py grid.log BASE"""
import collections
import math
import sys

from gridlog import BENCH, PEER, run_name

path, base = sys.argv[1], sys.argv[2]
runs = collections.defaultdict(lambda: collections.defaultdict(list))
peers, names, binary = {}, [], None
for line in open(path):
    if line.startswith("== "):
        binary = run_name(line)
        if binary not in names:
            names.append(binary)
    m = BENCH.match(line)
    if m and line.rstrip().endswith("dispatched"):
        runs[(int(m[2]), m[4], int(m[3]))][binary].append(float(m[5]))
    m = PEER.match(line)
    if m and m[1] == "cudnn":
        peers[(int(m[2]), m[4], int(m[3]))] = float(m[5])

mean = lambda xs: sum(xs) / len(xs)
print("| d | causal | S | " + " | ".join(names) + " | cuDNN |")
print("|---" * (len(names) + 4) + "|")
ratios = collections.defaultdict(list)
for cell in sorted(runs):
    r = runs[cell]
    b = mean(r[base])
    cols = []
    for n in names:
        if r[n]:
            ratios[(n, cell[1])].append(mean(r[n]) / b)
            cols.append(f"{mean(r[n]):.1f} ({mean(r[n]) / b:.3f})")
        else:
            cols.append("-")
    cudnn = peers.get(cell)
    print(f"| {cell[0]} | {cell[1]} | {cell[2]} | " + " | ".join(cols) + f" | {cudnn if cudnn else '-'} |")
print()
for (n, c), xs in sorted(ratios.items()):
    print(f"{n} {c}: geomean {math.exp(sum(map(math.log, xs)) / len(xs)):.3f}x {base}")
