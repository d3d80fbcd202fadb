#!/usr/bin/env python3
"""Peers for bench comparisons of the sm90 kernel: PyTorch SDPA through cuDNN and through FlashAttention-2, timed
with CUDA events (median of 10 after 3 warm-ups) on the same shapes as sm90_check's bench (bf16, B=1, [B,S,H,D])."""
import statistics
import sys

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel


def bench(backend, d, s, h, causal):
    torch.manual_seed(0)
    q = torch.randn(1, h, s, d, device="cuda", dtype=torch.bfloat16)
    k = torch.randn_like(q)
    v = torch.randn_like(q)
    with sdpa_kernel(backend):
        f = lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
        for _ in range(3):
            f()
        torch.cuda.synchronize()
        ts = []
        for _ in range(10):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            f()
            b.record()
            b.synchronize()
            ts.append(a.elapsed_time(b))
    ms = statistics.median(ts)
    flops = 4.0 * h * s * s * d / (2.0 if causal else 1.0)
    return ms, flops / (ms * 1e-3) / 1e12


def main():
    print("torch", torch.__version__, torch.cuda.get_device_name(), "cudnn", torch.backends.cudnn.version())
    peers = (("cudnn", SDPBackend.CUDNN_ATTENTION), ("flash2", SDPBackend.FLASH_ATTENTION))
    if "--cudnn-only" in sys.argv:
        peers = peers[:1]
    for name, be in peers:
        for d, s, h, causal in ((128, 16384, 16, False), (128, 16384, 16, True), (64, 16384, 16, False),
                                (64, 16384, 16, True), (256, 16384, 16, False), (256, 16384, 16, True)):
            try:
                ms, tf = bench(be, d, s, h, causal)
                print(f"peer {name:6s} d={d} bf16 B=1 H={h} S={s} {'causal' if causal else 'non-causal':10s} "
                      f"median {ms:.3f} ms  {tf:.1f} TFLOP/s", flush=True)
            except Exception as e:  # a backend that refuses a shape says so and the rest still run
                print(f"peer {name:6s} d={d} {'causal' if causal else 'non-causal'}: unavailable: {e}".splitlines()[0],
                      flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
