#!/usr/bin/env python3
"""flashtile's backward against PyTorch SDPA's (FLASH = FlashAttention-2, CUDNN), in one process on one GPU.

Per case and implementation, interleaved, timed with triton.testing.do_bench (median, an L2 flush between calls):
  bwd      the backward alone: flashtile.attention_backward from the forward's out and lse; SDPA's backward through
           torch.autograd.grad on a graph kept alive (retain_graph), so both time the gradient kernels and their
           output allocations, not the forward;
  fwd+bwd  one training step's attention: forward, then backward (flashtile through its autograd op).
  det      flashtile's backward with deterministic=True (bit-identical runs), to say what it costs.
TFLOP/s count 2.5 x the forward's FLOPs for the backward, 3.5 x for fwd+bwd. flashtile's dq, dk, dv are checked
against cuDNN's (FA2's where cuDNN refuses) on every case. The grid is peers.py's (src/cases/cases.hpp bench_grid).

    python3 bench/peers_backward.py [--quick] [--dim 64,128] [--seq ..] [--causal 0|1] [--path P] [--out DIR]
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "python"))

import peers  # noqa: E402  (the grid, FLOPs, environment and SDPA helpers)

BWD_FACTOR, STEP_FACTOR = 2.5, 3.5


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="seqlen 1024 and 4096 only")
    ap.add_argument("--dtype", default="bf16")
    ap.add_argument("--dim", default="64,128")
    ap.add_argument("--seq", default="")
    ap.add_argument("--causal", choices=["0", "1"], default=None)
    ap.add_argument("--shape", action="append", default=[], help="extra case B,Sq,Sk,Hq,Hkv,D[,causal]")
    ap.add_argument("--peers", default="cudnn,fa2")
    ap.add_argument("--modes", default="bwd,fwd+bwd,det", help="what to time (bwd, fwd+bwd, det)")
    ap.add_argument("--path", default=None, help="flashtile's kernel path (e.g. cuda_sm80; default: the device's best)")
    ap.add_argument("--warmup", type=float, default=25)
    ap.add_argument("--rep", type=float, default=100)
    ap.add_argument("--out", default=".")
    args = ap.parse_args()

    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from triton.testing import do_bench
    import flashtile as ft

    os.makedirs(args.out, exist_ok=True)
    tdt = {"bf16": torch.bfloat16, "f16": torch.float16}
    dims = [int(x) for x in args.dim.split(",") if x]
    seqs = [int(x) for x in args.seq.split(",") if x]
    causal = None if args.causal is None else args.causal == "1"
    dtypes = args.dtype.split(",")
    cases = peers.grid(dtypes, dims, seqs, causal, args.quick)
    cases += [peers.parse_shape(s, dt) for s in args.shape for dt in dtypes]
    modes = args.modes.split(",")
    env = peers.environment(torch)
    env["flashtile_version"] = ft.version()
    print("peers_backward.py: %s" % json.dumps(env), flush=True)

    rows = []
    hdr = "%-16s %-8s %-5s %4s %6s %4s %6s %4s %4s %9s %8s %9s  %s" % (
        "impl", "mode", "dtype", "d", "causal", "B", "S", "Hq", "Hkv", "ms", "TFLOP/s", "err", "note")
    print(hdr)
    print("-" * len(hdr))
    for c in cases:
        dt = tdt[c["dtype"]]
        gen = torch.Generator(device="cuda")
        gen.manual_seed(c["b"] * 7919 + c["sq"] * 31 + c["d"])
        mk = lambda s, h: torch.randn(c["b"], s, h, c["d"], device="cuda", dtype=dt, generator=gen)  # noqa: E731
        q, k, v = mk(c["sq"], c["hq"]), mk(c["sk"], c["hkv"]), mk(c["sk"], c["hkv"])
        dout = mk(c["sq"], c["hq"])
        gqa = c["hq"] != c["hkv"]
        kw = dict(is_causal=c["causal"], enable_gqa=gqa)
        fwd_flops = peers.flops(c)
        grads = {}

        def record(impl, mode, fn, factor, note=""):
            row = dict(impl=impl, mode=mode, dtype=c["dtype"], d=c["d"], causal=int(c["causal"]), b=c["b"],
                       sq=c["sq"], sk=c["sk"], hq=c["hq"], hkv=c["hkv"], ms="", tflops="", err="", status="ok",
                       note=note)
            try:
                fn()
                torch.cuda.synchronize()
                ms = do_bench(fn, warmup=args.warmup, rep=args.rep, return_mode="median")
                row.update(ms="%.4f" % ms, tflops="%.1f" % (factor * fwd_flops / (ms * 1e-3) / 1e12))
            except Exception as e:  # a peer that refuses the case, or a failure to report
                row.update(status="error", note=("%s: %s" % (type(e).__name__, e)).splitlines()[0][:200])
            rows.append(row)
            return row

        # Peers: SDPA on [B, H, S, D] views, requires_grad leaves.
        for p in args.peers.split(","):
            backend = getattr(SDPBackend, peers.PEERS[p])
            qt, kt, vt = (x.transpose(1, 2).detach().requires_grad_() for x in (q, k, v))
            try:
                with sdpa_kernel(backend):
                    out = F.scaled_dot_product_attention(qt, kt, vt, **kw)
                g = torch.autograd.grad(out, (qt, kt, vt), dout.transpose(1, 2), retain_graph=True)
                grads[p] = [x.transpose(1, 2) for x in g]
            except Exception as e:
                rows.append(dict(impl=p, mode="bwd", dtype=c["dtype"], d=c["d"], causal=int(c["causal"]), b=c["b"],
                                 sq=c["sq"], sk=c["sk"], hq=c["hq"], hkv=c["hkv"], ms="", tflops="", err="",
                                 status="unsupported", note=str(e).splitlines()[0][:200]))
                continue
            if "bwd" in modes:
                record(p, "bwd", lambda: torch.autograd.grad(out, (qt, kt, vt), dout.transpose(1, 2),
                                                             retain_graph=True), BWD_FACTOR)

            def step(backend=backend, qt=qt, kt=kt, vt=vt):
                with sdpa_kernel(backend):
                    o = F.scaled_dot_product_attention(qt, kt, vt, **kw)
                return torch.autograd.grad(o, (qt, kt, vt), dout.transpose(1, 2))
            if "fwd+bwd" in modes:
                record(p, "fwd+bwd", step, STEP_FACTOR)
            del out

        # flashtile: the backward from the forward's out and lse; the training step through autograd.
        out, lse = ft.attention(q, k, v, causal=c["causal"], return_lse=True, path=args.path)
        bwd = lambda det=False: ft.attention_backward(q, k, v, out, lse, dout, causal=c["causal"],  # noqa: E731
                                                      path=args.path, deterministic=det)
        grads["flashtile"] = bwd()
        kernel = ft.last_result().kernel if hasattr(ft, "last_result") else ""
        ref = next((p for p in ("cudnn", "fa2") if p in grads), None)
        err = ""
        if ref:
            errs = [peers.rel_err(torch, a, b) for a, b in zip(grads["flashtile"], grads[ref])]
            err = "%.1e/%.1e/%.1e vs %s" % (errs[0], errs[1], errs[2], ref)
        if "bwd" in modes:
            record("flashtile", "bwd", bwd, BWD_FACTOR, kernel)["err"] = err
        if "det" in modes:
            first = bwd(True)
            again = bwd(True)
            same = all(torch.equal(a, b) for a, b in zip(first, again))
            record("flashtile", "det", lambda: bwd(True), BWD_FACTOR, "bit-identical" if same else "DIFFERS")
        if "fwd+bwd" in modes:
            qg, kg, vg = (x.detach().requires_grad_() for x in (q, k, v))

            def ft_step():
                o = ft.attention(qg, kg, vg, causal=c["causal"], path=args.path)
                return torch.autograd.grad(o, (qg, kg, vg), dout)
            record("flashtile", "fwd+bwd", ft_step, STEP_FACTOR)
        for r in rows:
            if r["sq"] == c["sq"] and r["d"] == c["d"] and r["causal"] == int(c["causal"]) and not r.get("printed"):
                r["printed"] = True
                print("%-16s %-8s %-5s %4d %6s %4d %6d %4d %4d %9s %8s %9s  %s" % (
                    r["impl"], r["mode"], r["dtype"], r["d"], "yes" if r["causal"] else "no", r["b"], r["sq"],
                    r["hq"], r["hkv"], r["ms"] or "-", r["tflops"] or "-", r["err"] or "-",
                    r["note"] if r["status"] == "ok" else r["status"] + ": " + r["note"]), flush=True)
        del q, k, v, dout, out, lse, grads
        torch.cuda.empty_cache()

    summary = summarize(rows)
    for r in rows:
        r.pop("printed", None)
    with open(os.path.join(args.out, "peers_backward.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    with open(os.path.join(args.out, "peers_backward.json"), "w") as f:
        json.dump(dict(environment=env, results=rows, summary=summary), f, indent=1)
    return 0


def summarize(rows):
    """flashtile / peer TFLOP/s per case and mode; geomeans."""
    by = {}
    for r in rows:
        if r["status"] == "ok" and r["tflops"]:
            by.setdefault((r["mode"], r["dtype"], r["d"], r["causal"], r["sq"]), {})[r["impl"]] = float(r["tflops"])
    out = []
    print("\nratios (flashtile TFLOP/s / peer's)")
    for (mode, dt, d, causal, s), impls in sorted(by.items()):
        base = "flashtile"
        if mode == "det":
            if "flashtile" in by.get(("bwd", dt, d, causal, s), {}):
                out.append(dict(mode="det", dtype=dt, d=d, causal=causal, s=s,
                                vs_nondet=impls["flashtile"] / by[("bwd", dt, d, causal, s)]["flashtile"]))
            continue
        if base not in impls:
            continue
        r = dict(mode=mode, dtype=dt, d=d, causal=causal, s=s, tflops=impls[base])
        for p in ("cudnn", "fa2"):
            if p in impls:
                r["vs_" + p] = impls[base] / impls[p]
        out.append(r)
        print("%-8s %-5s d%-4d %-6s S%-6d %7.1f TFLOP/s  /cudnn %s  /fa2 %s" % (
            mode, dt, d, "causal" if causal else "", s, impls[base],
            "%.3f" % r["vs_cudnn"] if "vs_cudnn" in r else "-", "%.3f" % r["vs_fa2"] if "vs_fa2" in r else "-"))
    geo = lambda xs: math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")  # noqa: E731
    for mode in ("bwd", "fwd+bwd"):
        for p in ("cudnn", "fa2"):
            xs = [r["vs_" + p] for r in out if r["mode"] == mode and "vs_" + p in r]
            if xs:
                print("geomean %s /%s: %.3f (min %.3f, %d cells)" % (mode, p, geo(xs), min(xs), len(xs)))
    dets = [r["vs_nondet"] for r in out if r["mode"] == "det"]
    if dets:
        print("deterministic / default backward: geomean %.3f (min %.3f)" % (geo(dets), min(dets)))
    return out


if __name__ == "__main__":
    t0 = time.time()
    rc = main()
    print("peers_backward.py: done in %.0f s" % (time.time() - t0))
    sys.exit(rc)
