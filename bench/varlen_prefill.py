#!/usr/bin/env python3
"""Varlen prefill against the dense kernel on the same total tokens (issue 42's bar: >= 0.95x its TFLOP/s), in one
process on one GPU through the Python binding. A packed batch of lengths drawn uniformly from 64..8192 (seeded) up to
--tokens query rows, q/k/v [total, H, D]; the dense calls run [total / S, S, H, D] for each --dense-seq S.
TFLOP/s counts the score and P.V products of each sequence (4 s^2 H D, halved when causal).

    python3 bench/varlen_prefill.py [--tokens 65536] [--paths auto,cuda_sm80] [--dense-seq 1024,4096] [--out DIR]

Timed with triton.testing.do_bench (CUDA events, median). Each path's varlen output is compared with the dense call
of the same path on the first three sequences alone.
"""

from __future__ import annotations

import argparse
import csv
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))


def draw_lengths(tokens: int, lo: int, hi: int, seed: int) -> list:
    rng = random.Random(seed)
    lens = []
    while sum(lens) < tokens:
        lens.append(rng.randint(lo, hi))
    lens[-1] -= sum(lens) - tokens  # exactly `tokens` rows; the last may fall below lo
    if lens[-1] <= 0:
        lens.pop()
    return lens


def kernel_of(flashtile) -> str:
    r = flashtile.last_result()
    return r.kernel if r is not None else "?"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tokens", type=int, default=65536)
    ap.add_argument("--lengths", default="64,8192", help="lo,hi of the uniform draw")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--paths", default="auto", help="flashtile paths (auto: the library's choice)")
    ap.add_argument("--dense-seq", default="1024,4096", help="the dense calls' sequence lengths")
    ap.add_argument("--rep", type=float, default=200, help="do_bench repetition time, ms")
    ap.add_argument("--out", default=None, help="directory for varlen_prefill.csv")
    args = ap.parse_args()

    import torch
    import flashtile
    from triton.testing import do_bench

    torch.manual_seed(args.seed)
    dev = torch.device("cuda")
    h, d, total = args.heads, args.dim, args.tokens
    lo, hi = (int(x) for x in args.lengths.split(","))
    lens = draw_lengths(total, lo, hi, args.seed)
    cu = torch.tensor([0] + [sum(lens[:i + 1]) for i in range(len(lens))], device=dev, dtype=torch.int32)
    q, k, v = (torch.randn(total, h, d, device=dev, dtype=torch.bfloat16) for _ in range(3))
    print("device %s; %d sequences, %d tokens, lengths %d..%d (mean %.0f); H %d, d %d, bf16" %
          (torch.cuda.get_device_name(0), len(lens), total, min(lens), max(lens), total / len(lens), h, d), flush=True)
    rows = []

    def report(kind, path, causal, ms, flops, err, kernel):
        tf = flops / ms / 1e9
        rows.append(dict(kind=kind, path=path, causal=int(causal), ms=ms, tflops=tf, err=err, kernel=kernel))
        print("%-16s %-10s %-7s %8.3f ms %7.1f TFLOP/s err %.1e %s" %
              (kind, path, "causal" if causal else "full", ms, tf, err, kernel), flush=True)

    for causal in (False, True):
        half = 0.5 if causal else 1.0
        for path in [p for p in args.paths.split(",") if p]:
            pa = None if path == "auto" else path
            try:
                call = lambda: flashtile.attention_varlen(q, k, v, cu, cu, max(lens), max(lens), causal=causal, path=pa)
                out = call()
                kernel = kernel_of(flashtile)
            except Exception as e:  # a path that cannot run varlen says why
                print("%-16s %-10s %-7s refused: %s" % ("varlen", path, "causal" if causal else "full", e), flush=True)
                continue
            err = 0.0
            for i in range(min(3, len(lens))):
                a, b = cu[i].item(), cu[i + 1].item()
                ref = flashtile.attention(q[None, a:b], k[None, a:b], v[None, a:b], causal=causal, path=pa)[0]
                err = max(err, (out[a:b].float() - ref.float()).abs().max().item())
            ms = do_bench(call, warmup=25, rep=args.rep, return_mode="median")
            flops = sum(4.0 * s * s * h * d * half for s in lens)
            report("varlen", path, causal, ms, flops, err, kernel)
            for s in (int(x) for x in args.dense_seq.split(",")):
                b = total // s
                qd, kd, vd = (x[: b * s].view(b, s, h, d) for x in (q, k, v))
                dcall = lambda: flashtile.attention(qd, kd, vd, causal=causal, path=pa)
                dcall()
                kernel = kernel_of(flashtile)
                ms = do_bench(dcall, warmup=25, rep=args.rep, return_mode="median")
                report("dense S=%d" % s, path, causal, ms, 4.0 * b * s * s * h * d * half, 0.0, kernel)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "varlen_prefill.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            w.writeheader()
            w.writerows(rows)


if __name__ == "__main__":
    main()
