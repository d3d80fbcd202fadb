#!/usr/bin/env python3
"""Decode over a paged KV cache against the same keys in a contiguous cache, in one process on one GPU: flashtile's
CUDA paths through the Python binding (attention for the contiguous cache, attention_with_kvcache for pages of 16, 64
and 256 keys, the pages shuffled), cuDNN's contiguous call beside them (PyTorch SDPA). GB/s counts the bytes a call
must move (K + V + Q + O); the device's copy rate (a 1 GiB device-to-device copy) is measured in the same run.

    python3 bench/decode_paged.py [--shape B,Sk ...] [--paths cuda_sm90,cuda_sm80] [--out DIR]

Timed with triton.testing.do_bench (CUDA events, median; it zeroes a 256 MB buffer before each call, so the L2 never
holds a cache). Each paged output is compared with the contiguous one of the same path (they read the same keys).
"""

from __future__ import annotations

import argparse
import csv
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

CELLS = [(1, 65536), (16, 8192), (64, 4096), (128, 2048)]  # issue 42's decode cells: (B, Sk)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shape", action="append", help="B,Sk (default: the four decode cells)")
    ap.add_argument("--sq", type=int, default=1, help="query rows (1: decode)")
    ap.add_argument("--heads", default="32,8", help="Hq,Hkv")
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--pages", default="16,64,256")
    ap.add_argument("--paths", default="cuda_sm90,cuda_sm80")
    ap.add_argument("--rep", type=float, default=200, help="do_bench repetition time, ms")
    ap.add_argument("--out", default=None, help="directory for decode_paged.csv")
    args = ap.parse_args()

    import torch
    import flashtile
    from triton.testing import do_bench

    torch.manual_seed(0)
    dev = torch.device("cuda")
    hq, hkv = (int(x) for x in args.heads.split(","))
    d, sq = args.dim, args.sq
    cells = [tuple(int(x) for x in s.split(",")) for s in args.shape] if args.shape else CELLS
    pages = [int(x) for x in args.pages.split(",")]
    paths = [p for p in args.paths.split(",") if p]

    src = torch.empty(1 << 29, dtype=torch.uint8, device=dev)
    dst = torch.empty_like(src)
    copy_ms = do_bench(lambda: dst.copy_(src), warmup=25, rep=args.rep, return_mode="median")
    copy_gbs = 2 * src.numel() / copy_ms / 1e6  # read + write
    del src, dst
    print("device %s; copy rate %.0f GB/s (1 GiB device-to-device: read + write)" %
          (torch.cuda.get_device_name(0), copy_gbs), flush=True)

    rows = []

    def report(cell, impl, page, ms, nbytes, err, kernel):
        gbs = nbytes / ms / 1e6
        rows.append(dict(b=cell[0], sk=cell[1], impl=impl, page=page, ms=ms, gbs=gbs, frac_copy=gbs / copy_gbs,
                         err=err, kernel=kernel))
        print("B=%-4d Sk=%-6d %-22s page %-4s %.4f ms %7.0f GB/s (%.2f of copy) err %.1e %s" %
              (cell[0], cell[1], impl, page or "-", ms, gbs, gbs / copy_gbs, err, kernel), flush=True)

    for (b, sk) in cells:
        q = torch.randn(b, sq, hq, d, device=dev, dtype=torch.bfloat16)
        k = torch.randn(b, sk, hkv, d, device=dev, dtype=torch.bfloat16)
        v = torch.randn(b, sk, hkv, d, device=dev, dtype=torch.bfloat16)
        nbytes = 2 * k.numel() * 2 + 2 * q.numel() * 2
        qt, kt, vt = (x.transpose(1, 2) for x in (q, k, v))
        kt = kt.repeat_interleave(hq // hkv, dim=1) if hkv != hq else kt
        vt = vt.repeat_interleave(hq // hkv, dim=1) if hkv != hq else vt
        from torch.nn.attention import SDPBackend, sdpa_kernel
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
            ref = torch.nn.functional.scaled_dot_product_attention(qt, kt, vt).transpose(1, 2)
            # cuDNN reads the group's K/V once per query head here (expanded): its bytes are still K + V + Q + O of
            # the GQA call, the fair count for the same work.
            ms = do_bench(lambda: torch.nn.functional.scaled_dot_product_attention(qt, kt, vt), warmup=25,
                          rep=args.rep, return_mode="median")
        report((b, sk), "cudnn (expanded kv)", None, ms, nbytes, 0.0, "sdpa cudnn")
        del kt, vt
        for path in paths:
            res = flashtile.plan(q, k, v, path=path)
            out = flashtile.attention(q, k, v, path=path)
            err = (out.float() - ref.float()).abs().max().item()
            ms = do_bench(lambda: flashtile.attention(q, k, v, path=path), warmup=25, rep=args.rep,
                          return_mode="median")
            report((b, sk), "flashtile:" + path, None, ms, nbytes, err, res.kernel)
            for ps in pages:
                per_seq = (sk + ps - 1) // ps
                n_pages = b * per_seq
                perm = torch.randperm(n_pages, device=dev)
                table = perm.view(b, per_seq).to(torch.int32)
                kc = torch.full((n_pages, ps, hkv, d), float("nan"), device=dev, dtype=torch.bfloat16)
                vc = torch.full_like(kc, float("nan"))
                kp = torch.nn.functional.pad(k, (0, 0, 0, 0, 0, per_seq * ps - sk))
                vp = torch.nn.functional.pad(v, (0, 0, 0, 0, 0, per_seq * ps - sk))
                kc[perm] = kp.view(b * per_seq, ps, hkv, d)
                vc[perm] = vp.view(b * per_seq, ps, hkv, d)
                lens = torch.full((b,), sk, device=dev, dtype=torch.int32)
                po = flashtile.attention_with_kvcache(q, kc, vc, table, lens, path=path)
                perr = (po.float() - out.float()).abs().max().item()
                ms = do_bench(lambda: flashtile.attention_with_kvcache(q, kc, vc, table, lens, path=path), warmup=25,
                              rep=args.rep, return_mode="median")
                report((b, sk), "flashtile:" + path, ps, ms, nbytes, perr, "paged")
                del kc, vc, kp, vp
        del q, k, v, ref, out
        torch.cuda.empty_cache()

    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "decode_paged.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            w.writeheader()
            w.writerows(rows)


if __name__ == "__main__":
    main()
