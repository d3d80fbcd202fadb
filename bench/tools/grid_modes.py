#!/usr/bin/env python3
"""Each binary's TFLOP/s per grid cell and launch mode (sm90_check's forced `persist` and `pertile` runs), averaged
over its runs in a log, causal and non-causal. ab_grid.py compares the runs labelled `dispatched`, which sm90_check
takes from the launch rules it was built with; a binary from a branch that changes where launches go persistent is
labelled by its own rules. Read the forced modes here.
Usage: grid_modes.py grid.log [causal|non-causal]"""
import collections
import sys

from gridlog import BENCH, run_name

runs = collections.defaultdict(lambda: collections.defaultdict(list))
name = None
for line in open(sys.argv[1]):
    if line.startswith("== "):
        name = run_name(line)
    m = BENCH.match(line)
    if m:
        runs[(int(m[2]), m[4], int(m[3]))][f"{name}/{m[1]}"].append(float(m[5]))
only = sys.argv[2] if len(sys.argv) > 2 else None
for cell in sorted(runs):
    if only and cell[1] != only:
        continue
    cols = "  ".join(f"{k} {sum(v) / len(v):.0f}" for k, v in sorted(runs[cell].items()))
    print(f"d{cell[0]} {cell[1]} {cell[2]}: {cols}")
