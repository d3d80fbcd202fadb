#!/usr/bin/env python3
"""A few forward calls of one shape, for ncu (which profiles a chosen launch): bf16, `--calls` calls.

    python3 bench/tools/fwd_call.py ft|fa2 D        flashtile's sm80 path or FA2 (PyTorch SDPA): B 4 x 4096, 2048 / d
                                                    heads, non-causal
    python3 bench/tools/fwd_call.py varlen|dense D [--causal]
                                                    flashtile's default path on bench/varlen_prefill.py's batch (65536
                                                    tokens, lengths 64..8192, seed 0, H 16) packed, or as [16, 4096]
"""
import argparse
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, ".."))
import flashtile  # noqa: E402
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("mode", choices=["ft", "fa2", "varlen", "dense"])
ap.add_argument("dim", type=int)
ap.add_argument("--causal", action="store_true")
ap.add_argument("--calls", type=int, default=4)
a = ap.parse_args()
d, bf = a.dim, torch.bfloat16
if a.mode in ("ft", "fa2"):
    q, k, v = (torch.randn(4, 4096, 2048 // d, d, device="cuda", dtype=bf) for _ in range(3))
    for _ in range(a.calls):
        if a.mode == "fa2":
            with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
                torch.nn.functional.scaled_dot_product_attention(*(x.transpose(1, 2) for x in (q, k, v)), is_causal=a.causal)
        else:
            flashtile.attention(q, k, v, causal=a.causal, path="cuda_sm80")
else:
    from varlen_prefill import draw_lengths

    lens = draw_lengths(65536, 64, 8192, 0)
    q, k, v = (torch.randn(65536, 16, d, device="cuda", dtype=bf) for _ in range(3))
    cu = torch.tensor([0] + [sum(lens[: i + 1]) for i in range(len(lens))], device="cuda", dtype=torch.int32)
    for _ in range(a.calls):
        if a.mode == "varlen":
            flashtile.attention_varlen(q, k, v, cu, cu, max(lens), max(lens), causal=a.causal)
        else:
            flashtile.attention(*(x.view(16, 4096, 16, d) for x in (q, k, v)), causal=a.causal)
torch.cuda.synchronize()
