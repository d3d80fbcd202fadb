#!/usr/bin/env python3
"""Per bench line of a timestamped grid.log (each bench line prefixed with
`date +%T.%N`; clocks.log from device_lib.sh's clocks_start), the SM clock, power, temperature and
clock-event reasons that nvidia-smi sampled (clocks.log) between the previous line and this one (the line's cell:
its warm-up and timed launches). Usage: power_trace.py grid.log clocks.log"""
import re
import sys


def secs(hms):
    h, m, s = hms.split(":")
    return int(h) * 3600 + int(m) * 60 + float(s)


def main():
    grid, clocks = sys.argv[1], sys.argv[2]
    samples = []
    for line in open(clocks):
        f = [x.strip() for x in line.split(",")]
        if len(f) < 5 or "MHz" not in f[1]:
            continue
        t = secs(f[0].split()[-1])
        try:
            w = float(f[2].split()[0])
        except ValueError:
            w = float("nan")
        samples.append((t, int(f[1].split()[0]), w, f[3], f[4]))
    prev = None
    for line in open(grid):
        if line.startswith("== "):
            print(line.rstrip())
            prev = None
            continue
        m = re.match(r"(\d+:\d+:[\d.]+) (.*)", line)
        if not m:
            continue
        t, text = secs(m.group(1)), m.group(2)
        if ("bench" in text or "peer" in text) and "TFLOP/s" in text and prev is not None:
            win = [s for s in samples if prev < s[0] <= t]
            tf = re.search(r"([\d.]+) TFLOP/s", text).group(1)
            cell = re.search(r"d=\d+ \w+ B=\d+ H=\d+ S=\d+ +\S+", text).group(0)
            mode = "persist" if "persist" in text else "pertile" if "pertile" in text else text.split()[1]
            if win:
                mhz = sorted(s[1] for s in win)[len(win) // 2]
                w = sorted(s[2] for s in win)[len(win) // 2]
                reasons = sorted({s[4] for s in win})
                print(f"{cell:40s} {mode:8s} {tf:>7s} TFLOP/s  {t - prev:5.2f} s  {mhz} MHz  {w:.0f} W  "
                      f"{win[-1][3]} C  reasons {' '.join(reasons)}")
            else:
                print(f"{cell:40s} {mode:8s} {tf:>7s} TFLOP/s  {t - prev:5.2f} s  (no samples)")
        prev = t
    return 0


if __name__ == "__main__":
    sys.exit(main())
