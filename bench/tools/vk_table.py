#!/usr/bin/env python3
"""The Vulkan table (issue 5's bars) from a device run's vk.csv (flashtile_bench CSVs, each after a "# TAG" line, one per
process): every Vulkan path on d 64/128/256 x S 1k/4k/16k x causal, the first two processes side by side, the same
process's cuda_sm90 figure, PyTorch's cuDNN (f16) from the same run where --peers names its log (the lines of
bench/tools/sm90_peer.py --vk-cells --dtype f16), and llama.cpp's figure from ../shared/peers/llamacpp_vulkan_fa_h200.csv
with the bar.
Usage: vk_table.py vk.csv [llamacpp_vulkan_fa_h200.csv] [--peers peers.log]"""
import collections
import csv
import os
import re
import sys

# Issue 5's bars: flashtile path -> (llama.cpp path, factor).
BARS = {"vulkan_coopmat2": ("cm2", 1.2), "vulkan_coopmat": ("cm1", 3.0), "vulkan_portable": ("scalar", 1.5)}
here = os.path.dirname(os.path.abspath(__file__))
args = sys.argv[1:]
cudnn = {}  # (d, S, causal) -> TFLOP/s of PyTorch's cuDNN at f16, from the same run
if "--peers" in args:
    i = args.index("--peers")
    for line in open(args[i + 1]):
        m = re.match(r"peer cudnn\s+d=(\d+) f16 B=\d+ H=\d+ S=(\d+) (\S+)\s+median [\d.]+ ms\s+([\d.]+) TFLOP", line)
        if m:
            cudnn[(int(m[1]), int(m[2]), int(m[3] == "causal"))] = float(m[4])
    del args[i:i + 2]
peers_csv = args[1] if len(args) > 1 else os.path.join(here, "../../../shared/peers/llamacpp_vulkan_fa_h200.csv")
peers = {(r["path"], int(r["d"]), int(r["s"]), int(r["causal"])): float(r["fwd_tflops"])
         for r in csv.DictReader(open(peers_csv))}
runs, tag, hdr = collections.OrderedDict(), None, None
for row in csv.reader(open(args[0])):
    if not row:
        continue
    if row[0].startswith("#"):
        tag = row[0][1:].strip()
        runs[tag] = {}
        continue
    if row[0] == "device":
        hdr = row
        continue
    r = dict(zip(hdr, row))
    key = (r["path"], int(r["head_dim"]), int(r["seqlen_q"]), int(r["causal"]))
    runs[tag][key] = (float(r["tflops"] or 0), r["kernel"])
tabs = list(runs.values())
t1, t2 = tabs[0], tabs[1] if len(tabs) > 1 else {}
print("| path | d | S | causal | flashtile TFLOP/s (process 1 / 2) | flashtile CUDA f16 | cuDNN f16 | llama.cpp | ratio "
      "| bar | kernel |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
met, total = collections.Counter(), collections.Counter()
for path, (peer_path, factor) in BARS.items():
    for d in (64, 128, 256):
        for c in (0, 1):
            for s in (1024, 4096, 16384):
                k = (path, d, s, c)
                if k not in t1:
                    continue
                v, kernel = t1[k]
                v2 = t2.get(k, (0.0, ""))[0]
                cu = t1.get(("cuda_sm90", d, s, c), (0.0, ""))[0]
                dnn = f"{cudnn[(d, s, c)]:.1f}" if (d, s, c) in cudnn else "-"
                p = peers.get((peer_path, d, s, c))
                if p:
                    ratio = v / p
                    total[path] += 1
                    met[path] += ratio >= factor
                    miss = f"{factor}x: missed by {100 * (1 - ratio / factor):.0f}%"
                    bar = f"{factor}x: met" if ratio >= factor else miss
                    cells = f"{p:.1f} | {ratio:.2f}x | {bar}"
                else:
                    cells = "- | - | no llama.cpp figure"
                causal = "yes" if c else "no"
                print(f"| {path} | {d} | {s} | {causal} | {v:.1f} / {v2:.1f} | {cu:.1f} | {dnn} | {cells} | {kernel} |")
print()
for path in BARS:
    if total[path]:
        print(f"{path}: bar met in {met[path]} of {total[path]} cells")
