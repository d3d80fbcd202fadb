#!/usr/bin/env python3
"""Reads khr_layout_probe's output; prints which of attn_coopmat.comp's register-softmax layouts (1, 2) the device's
16 x 16 f32 accumulators have, or 0 (none, or no probe output)."""
import re
import sys

def main():
    got = {}
    for line in open(sys.argv[1]):
        m = re.match(r"lane\s+(\d+):(.*)", line)
        if m:
            got[int(m.group(1))] = [tuple(map(int, p)) for p in re.findall(r"\(\s*(-?\d+),\s*(-?\d+)\)", m.group(2))]
    if len(got) != 32:
        print(0)
        return
    for layout, (rh, ch) in ((1, (1, 2)), (2, (2, 1))):
        if all(got[l][i] == ((l >> 2) + 8 * ((i >> rh) & 1), 2 * (l & 3) + (i & 1) + 8 * ((i >> ch) & 1))
               for l in range(32) for i in range(8) if len(got[l]) == 8):
            if all(len(got[l]) == 8 for l in range(32)):
                print(layout)
                return
    print(0)

main()
