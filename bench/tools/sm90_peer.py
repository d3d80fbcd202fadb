#!/usr/bin/env python3
"""Peers for bench comparisons of the sm90 kernel: PyTorch SDPA through cuDNN and through FlashAttention-2, timed
with CUDA events (as sm90_check: 100 ms warm-up, median of 7 batches of 10 calls) on the same shapes as sm90_check's bench (bf16, B=1, [B,S,H,D]).
--grid: sm90_check --grid's cells instead (B = 16384/S, H = 2048/d, S 512..16384, d 64/128/256, causal or not); the
tensors are [B,S,H,D] in memory (flashtile's layout), handed to SDPA as [B,H,S,D] views.
--vk-cells: issue 5's table cells instead (the same B and H, S 1k/4k/16k). --dtype f16|bf16 (default bf16): the
Vulkan table runs f16, so its cuDNN column comes from --vk-cells --dtype f16 --cudnn-only (bench/tools/vk_table.py).
--cell D,S,CAUSAL: one grid cell; --cudnn-only / --flash-only: one peer (for ncu). --grid-d D: the grid's cells of
this head dim alone. --warm-ms T: T ms of warm-up instead of 100 (as sm90_check --warm-ms)."""
import statistics
import sys

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel


def bench(backend, d, s, h, causal, b=1, dtype=torch.bfloat16, warm_ms=100.0):
    torch.manual_seed(0)
    q, k, v = (torch.randn(b, s, h, d, device="cuda", dtype=dtype).transpose(1, 2) for _ in range(3))
    with sdpa_kernel(backend):
        f = lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
        # As sm90_check's bench: >= warm_ms of warm-up (--warm-ms, 100), then the median of 7 batches of 10 back-to-back calls.
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        for _ in range(100000):
            f()
            e1.record()
            e1.synchronize()
            if e0.elapsed_time(e1) >= warm_ms:
                break
        ts = []
        for _ in range(7):
            e0.record()
            for _ in range(10):
                f()
            e1.record()
            e1.synchronize()
            ts.append(e0.elapsed_time(e1) / 10)
    ms = statistics.median(ts)
    flops = 4.0 * b * h * s * s * d / (2.0 if causal else 1.0)
    return ms, flops / (ms * 1e-3) / 1e12


def main():
    print("torch", torch.__version__, torch.cuda.get_device_name(), "cudnn", torch.backends.cudnn.version())
    peers = (("cudnn", SDPBackend.CUDNN_ATTENTION), ("flash2", SDPBackend.FLASH_ATTENTION))
    if "--cudnn-only" in sys.argv:
        peers = peers[:1]
    if "--flash-only" in sys.argv:  # FA2 alone (for ncu)
        peers = peers[1:]
    cells = [(1, 128, 16384, 16, False), (1, 128, 16384, 16, True), (1, 64, 16384, 16, False),
             (1, 64, 16384, 16, True), (1, 256, 16384, 16, False), (1, 256, 16384, 16, True)]
    if "--cell" in sys.argv:  # --cell D,S,CAUSAL: one grid cell (for ncu)
        d, s, c = (int(x) for x in sys.argv[sys.argv.index("--cell") + 1].split(","))
        cells = [(16384 // s, d, s, 2048 // d, bool(c))]
    if "--grid" in sys.argv or "--vk-cells" in sys.argv:
        lengths = (1024, 4096, 16384) if "--vk-cells" in sys.argv else (512, 1024, 2048, 4096, 8192, 16384)
        dims = (int(sys.argv[sys.argv.index("--grid-d") + 1]),) if "--grid-d" in sys.argv else (64, 128, 256)
        cells = [(16384 // s, d, s, 2048 // d, c) for d in dims for c in (False, True) for s in lengths]
    dname = sys.argv[sys.argv.index("--dtype") + 1] if "--dtype" in sys.argv else "bf16"
    dtype = {"bf16": torch.bfloat16, "f16": torch.float16}[dname]
    warm_ms = float(sys.argv[sys.argv.index("--warm-ms") + 1]) if "--warm-ms" in sys.argv else 100.0
    for name, be in peers:
        for b, d, s, h, causal in cells:
            try:
                ms, tf = bench(be, d, s, h, causal, b, dtype, warm_ms)
                print(f"peer {name:6s} d={d} {dname} B={b} H={h} S={s} {'causal' if causal else 'non-causal':10s} "
                      f"median {ms:.3f} ms  {tf:.1f} TFLOP/s", flush=True)
            except Exception as e:  # a backend that refuses a shape says so and the rest still run
                print(f"peer {name:6s} d={d} {'causal' if causal else 'non-causal'}: unavailable: {e}".splitlines()[0],
                      flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
