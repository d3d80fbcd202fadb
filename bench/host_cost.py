#!/usr/bin/env python3
"""The host cost of one call through flashtile's Python binding, layer by layer, against PyTorch SDPA's backends in
the same process (torch CUDA tensors).

Each layer is called N times back to back without a sync; host µs/call is the loop's wall time over N (the GPU work of
the tiny shape is shorter than the host work, so the queue never fills). The layers peel the binding from the outside
in: flashtile.attention -> the custom op -> the op's body -> ft_attention_forward on tensors wrapped once -> the plan
alone. The step rows time a whole forward + backward (autograd) at a training shape, wall per step after a sync.

    python3 bench/host_cost.py [--n 300] [--csv out.csv] [--profile]
"""

import argparse
import csv
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402

import flashtile as ft  # noqa: E402
from flashtile import _torch as ftt  # noqa: E402


def per_call(fn, n):
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    host = (time.perf_counter() - t) / n * 1e6
    torch.cuda.synchronize()
    total = (time.perf_counter() - t) / n * 1e6
    return host, total


def tensors(B, S, H, D, grad=False):
    g = torch.Generator(device="cuda").manual_seed(0)
    make = lambda: torch.randn(B, S, H, D, device="cuda", dtype=torch.bfloat16, generator=g)  # noqa: E731
    q, k, v, do = make(), make(), make(), make()
    if grad:
        q, k, v = (x.requires_grad_() for x in (q, k, v))
    return q, k, v, do


def sdpa(backend, q, k, v, causal=False):
    with sdpa_kernel(backend):
        return F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                              is_causal=causal)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--csv")
    ap.add_argument("--profile", action="store_true", help="cProfile a tiny fwd+bwd step (200 of them)")
    a = ap.parse_args()
    rows = []

    def row(name, fn, n=a.n):
        host, total = per_call(fn, n)
        rows.append((name, host, total))
        print("%-58s host %8.1f us/call   with GPU %8.1f us/call" % (name, host, total), flush=True)

    print("flashtile", ft.version(), "at", ft.library_path(), "| torch", torch.__version__,
          "|", torch.cuda.get_device_name())
    q, k, v, _ = tensors(1, 128, 1, 128)
    row("sdpa cudnn forward (1x128x1x128)", lambda: sdpa(SDPBackend.CUDNN_ATTENTION, q, k, v))
    row("sdpa flash forward", lambda: sdpa(SDPBackend.FLASH_ATTENTION, q, k, v))
    row("flashtile.attention", lambda: ft.attention(q, k, v))
    scale = None
    args = (False, scale, None, False, False, False, -1, -1, 0.0, None, None)
    row("  the custom op flashtile::attention_fwd", lambda: ftt.attention_fwd(q, k, v, *args))
    row("  the op's body (_run_forward)", lambda: ftt._run_forward(q, k, v, False, scale, None, False, False))
    dev, kind, stream = ftt._device(q)
    out, lse = ftt._fwd_outputs(q, False)
    wrapped = ftt._wrapped(dev, kind, [("q", q), ("k", k), ("v", v), ("out", out), ("lse", None)])
    opts = ft._options(False, None, None, stream=stream)
    row("    ft_attention_forward on wrapped tensors", lambda: ft._forward(wrapped, opts))
    row("    ft_attention_plan on wrapped tensors", lambda: ft._forward(wrapped, opts, run=False))
    row("    wrapping 5 tensors", lambda: ftt._wrapped(dev, kind, [("q", q), ("k", k), ("v", v), ("out", out),
                                                                  ("lse", None)]))
    row("    _device(q)", lambda: ftt._device(q))
    row("    _fwd_outputs", lambda: ftt._fwd_outputs(q, False))
    row("    _options", lambda: ft._options(False, None, None, stream=stream))

    qg, kg, vg, do = tensors(1, 128, 1, 128, grad=True)
    row("sdpa cudnn fwd+bwd (autograd)", lambda: torch.autograd.grad(
        sdpa(SDPBackend.CUDNN_ATTENTION, qg, kg, vg), (qg, kg, vg), do.transpose(1, 2)))
    row("flashtile fwd+bwd (autograd)", lambda: torch.autograd.grad(ft.attention(qg, kg, vg), (qg, kg, vg), do))
    o, lse = ftt._run_forward(qg.detach(), kg.detach(), vg.detach(), False, None, None, True, False)
    row("  the op's body (_run_backward)", lambda: ftt._run_backward(
        qg.detach(), kg.detach(), vg.detach(), o, lse, do, False, None, None, False))

    for (B, S, causal) in [(32, 512, False), (16, 1024, True)]:
        qg, kg, vg, do = tensors(B, S, 16, 128, grad=True)
        name = "%dx%d d128%s" % (B, S, " causal" if causal else "")
        row("step %s: sdpa cudnn" % name, lambda: torch.autograd.grad(
            sdpa(SDPBackend.CUDNN_ATTENTION, qg, kg, vg, causal), (qg, kg, vg), do.transpose(1, 2)), n=50)
        row("step %s: flashtile" % name, lambda: torch.autograd.grad(
            ft.attention(qg, kg, vg, causal=causal), (qg, kg, vg), do), n=50)
        o, lse = ftt._run_forward(qg.detach(), kg.detach(), vg.detach(), causal, None, None, True, False)
        row("  %s _run_backward alone" % name, lambda: ftt._run_backward(
            qg.detach(), kg.detach(), vg.detach(), o, lse, do, causal, None, None, False), n=50)
    if a.profile:  # where the Python side of a tiny fwd+bwd step goes
        import cProfile
        import pstats
        qg, kg, vg, do = tensors(1, 128, 1, 128, grad=True)
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(200):
            torch.autograd.grad(ft.attention(qg, kg, vg), (qg, kg, vg), do)
        prof.disable()
        torch.cuda.synchronize()
        pstats.Stats(prof).sort_stats("tottime").print_stats(25)
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["layer", "host_us_per_call", "with_gpu_us_per_call"])
            w.writerows([(n, "%.2f" % h, "%.2f" % t) for n, h, t in rows])


if __name__ == "__main__":
    main()
