#!/usr/bin/env python3
"""Executed warp instructions per SASS opcode in two kernels, from ncu's source pages (the
*.csv.gz that device_lib.sh's ncu_prof writes): the totals, then the opcodes by how many more either kernel executes, and the mbarrier try_waits
by the threads a warp runs them with (1: a lone thread's polling, e.g. a producer's).
Usage: ncu_opcodes.py OURS.csv.gz PEER.csv.gz [TOP]"""
import collections
import csv
import gzip
import sys


def load(path):
    with gzip.open(path, "rt") as fh:
        r = csv.reader(fh)
        next(r)  # the kernel's name
        h = next(r)
        si, ei, ti = h.index("Source"), h.index("Instructions Executed"), h.index("Thread Instructions Executed")
        ops, waits = collections.Counter(), collections.Counter()
        for row in r:
            if len(row) <= ti or not row[ei].isdigit():
                continue
            toks = row[si].split()
            if not toks:
                continue
            op = (toks[1] if toks[0].startswith("@") and len(toks) > 1 else toks[0]).split(".")[0]
            n = int(row[ei])
            ops[op] += n
            if "TRYWAIT" in row[si] and n:
                waits["lone thread" if int(row[ti]) <= n else "whole warp"] += n
        return ops, waits


a, b = load(sys.argv[1]), load(sys.argv[2])
top = int(sys.argv[3]) if len(sys.argv) > 3 else 12
print(f"warp instructions: {sum(a[0].values()) / 1e6:.1f}M against {sum(b[0].values()) / 1e6:.1f}M")
for op in sorted(set(a[0]) | set(b[0]), key=lambda o: -abs(a[0][o] - b[0][o]))[:top]:  # either way
    print(f"  {op:10s} {a[0][op] / 1e6:6.2f}M against {b[0][op] / 1e6:6.2f}M ({(a[0][op] - b[0][op]) / 1e6:+.2f}M)")
for k in ("lone thread", "whole warp"):
    print(f"  try_wait by a {k}: {a[1][k] / 1e6:.2f}M against {b[1][k] / 1e6:.2f}M")
