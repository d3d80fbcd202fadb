#!/usr/bin/env python3
"""flashtile against its peers, in one process on one GPU: PyTorch scaled_dot_product_attention forced to each of
its backends (FLASH = FlashAttention-2, CUDNN, EFFICIENT) and flashtile's CUDA paths through the Python binding.

Every case runs the implementations interleaved (case by case, one after another), timed with
triton.testing.do_bench (CUDA events, median; do_bench zeroes a 256 MB buffer before each call, so the L2 never
holds the inputs). flashtile's output is checked against cuDNN's on every case (against FA2's where cuDNN refuses).
The cuBLAS bf16 GEMM ceiling (8192³ torch.matmul) is measured in the same run; every result is also reported as a
fraction of it. Writes a CSV, a JSON (environment, ratios) and a PNG (TFLOP/s vs seqlen, one panel per d × causal).

    python3 bench/peers.py [--quick] [--out DIR] [--merge-bench bench.csv]

Needs torch with CUDA, triton, matplotlib (the device image has them). flashtile is optional: without a CUDA path
(or without the library) only the peers are timed. The grid is src/cases/cases.hpp's bench_grid.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import json
import math
import os
import platform
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

PEERS = {"fa2": "FLASH_ATTENTION", "cudnn": "CUDNN_ATTENTION", "efficient": "EFFICIENT_ATTENTION"}


def grid(dtypes, dims, seqs, causal_filter, quick):
    """src/cases/cases.hpp bench_grid: hidden 2048 (heads = 2048/d), batch x seqlen = 16384, seqlen 512..16384."""
    out = []
    for dt in dtypes:
        for d in (64, 128, 256):
            if dims and d not in dims:
                continue
            for causal in (False, True):
                if causal_filter is not None and causal != causal_filter:
                    continue
                s = 512
                while s <= 16384:
                    if (not seqs or s in seqs) and (not quick or s in (1024, 4096)):
                        out.append(dict(dtype=dt, b=16384 // s, sq=s, sk=s, hq=2048 // d, hkv=2048 // d, d=d,
                                        causal=causal))
                    s *= 2
    return out


def parse_shape(text, dt):
    f = text.split(",")
    if len(f) not in (6, 7):
        raise SystemExit("--shape: expected B,Sq,Sk,Hq,Hkv,D[,causal], got %r" % text)
    b, sq, sk, hq, hkv, d = (int(x) for x in f[:6])
    causal = len(f) == 7 and f[6] in ("1", "causal")
    return dict(dtype=dt, b=b, sq=sq, sk=sk, hq=hq, hkv=hkv, d=d, causal=causal)


def flops(c):
    f = 4.0 * c["b"] * c["hq"] * c["sq"] * c["sk"] * c["d"]
    return f / 2 if c["causal"] else f


def environment(torch):
    env = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
           "host": platform.node(), "python": platform.python_version(), "torch": torch.__version__,
           "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version(),
           "device": torch.cuda.get_device_name(0), "sms": torch.cuda.get_device_properties(0).multi_processor_count,
           "command": " ".join([os.path.basename(sys.executable)] + sys.argv)}
    try:
        import triton
        env["triton"] = triton.__version__
    except Exception:
        pass
    try:
        q = subprocess.run(["nvidia-smi", "--query-gpu=driver_version,clocks.max.sm,power.limit",
                            "--format=csv,noheader"], capture_output=True, text=True, timeout=20)
        env["nvidia_smi"] = q.stdout.strip()
        env["driver"] = q.stdout.split(",")[0].strip()
    except Exception as e:
        env["driver"] = "unknown (%s)" % e
    return env


def gemm_ceiling(torch, do_bench):
    n = 8192
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    ms = do_bench(lambda: torch.matmul(a, b), warmup=100, rep=500, return_mode="median")
    del a, b
    return 2.0 * n ** 3 / (ms * 1e-3) / 1e12, ms


def sdpa_call(torch, F, sdpa_kernel, backend, qt, kt, vt, kw):
    """A timed callable for SDPA forced to `backend`, its first output ([B, S, H, D] view) and a note. A backend that
    refuses GQA gets K/V expanded to all heads beforehand (outside the timing; noted). Raises with PyTorch's reasons
    (its warnings) when the backend refuses the case."""
    import warnings

    def attempt(k_, v_, kw_):
        def fn():
            with sdpa_kernel(backend):
                return F.scaled_dot_product_attention(qt, k_, v_, **kw_)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                return fn, fn().transpose(1, 2)
            except RuntimeError as e:
                why = "; ".join(str(w.message).split(" (Triggered")[0] for w in caught)
                raise RuntimeError("%s %s" % (str(e).splitlines()[0], why)) from None

    try:
        fn, out = attempt(kt, vt, kw)
        return fn, out, ""
    except RuntimeError:
        if not kw.get("enable_gqa"):
            raise
    rep = qt.shape[1] // kt.shape[1]
    ke, ve = kt.repeat_interleave(rep, dim=1), vt.repeat_interleave(rep, dim=1)
    kw = dict(kw, enable_gqa=False)
    fn, out = attempt(ke, ve, kw)
    return fn, out, "GQA refused: K/V pre-expanded to %d heads" % qt.shape[1]


def rel_err(torch, got, ref):
    g, r = got.float(), ref.float()
    if not torch.isfinite(g).all():
        return math.inf
    return ((g - r).norm() / r.norm().clamp_min(1e-30)).item()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="bf16, seqlen 1024 and 4096 only (a smoke test)")
    ap.add_argument("--dtype", default=None, help="bf16,f16 (default both; bf16 with --quick)")
    ap.add_argument("--dim", default="", help="head dims, e.g. 64,128")
    ap.add_argument("--seq", default="", help="seqlens, e.g. 1024,4096")
    ap.add_argument("--causal", choices=["0", "1"], default=None)
    ap.add_argument("--shape", action="append", default=[], help="extra case B,Sq,Sk,Hq,Hkv,D[,causal] (GQA ok)")
    ap.add_argument("--peers", default="fa2,cudnn,efficient", help="SDPA backends to time")
    ap.add_argument("--no-flashtile", action="store_true")
    ap.add_argument("--flashtile-paths", default="", help="flashtile paths to time (default: the CUDA device's)")
    ap.add_argument("--warmup", type=float, default=25, help="do_bench warm-up, ms")
    ap.add_argument("--rep", type=float, default=100, help="do_bench repetition time, ms")
    ap.add_argument("--merge-bench", default="", help="flashtile_bench CSV (e.g. Vulkan paths) to add to table/plot")
    ap.add_argument("--out", default=".", help="folder for peers.csv, peers.json, peers.png")
    args = ap.parse_args()

    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from triton.testing import do_bench

    if not torch.cuda.is_available():
        raise SystemExit("peers.py needs a CUDA GPU")
    os.makedirs(args.out, exist_ok=True)
    tdt = {"bf16": torch.bfloat16, "f16": torch.float16}
    dtypes = (args.dtype or ("bf16" if args.quick else "bf16,f16")).split(",")
    dims = [int(x) for x in args.dim.split(",") if x]
    seqs = [int(x) for x in args.seq.split(",") if x]
    causal = None if args.causal is None else args.causal == "1"
    cases = grid(dtypes, dims, seqs, causal, args.quick)
    cases += [parse_shape(s, dt) for s in args.shape for dt in dtypes]
    peers = [p for p in args.peers.split(",") if p]

    env = environment(torch)
    print("peers.py: %s" % json.dumps(env), flush=True)

    # flashtile: its CUDA paths, if the library loads and has a CUDA device.
    ft, ft_paths, ft_note = None, [], ""
    if not args.no_flashtile:
        try:
            import flashtile as ft
            cuda_devs = [d for d in ft.devices() if d.backend == "cuda"]
            if cuda_devs:
                ft_paths = [p for p in cuda_devs[0].paths
                            if not args.flashtile_paths or p in args.flashtile_paths.split(",")]
                env["flashtile_library"] = ft.library_path()
                env["flashtile_version"] = ft.version()
            else:
                ft_note = "flashtile has no CUDA device: %s" % ft.unavailable_reason("cuda")
        except Exception as e:
            ft_note = "flashtile not usable: %s" % e
    if ft_note:
        print("peers.py: %s; timing the peers only" % ft_note, flush=True)
    env["flashtile_paths"] = ft_paths
    env["flashtile_note"] = ft_note

    ceiling, gemm_ms = gemm_ceiling(torch, do_bench)
    env["gemm_bf16_8192_tflops"] = round(ceiling, 1)
    print("cuBLAS bf16 8192^3 GEMM: %.3f ms, %.1f TFLOP/s (the ceiling below)" % (gemm_ms, ceiling), flush=True)

    rows = []
    hdr = "%-22s %-5s %4s %6s %4s %6s %6s %4s %4s %9s %8s %7s %9s  %s" % (
        "impl", "dtype", "d", "causal", "B", "Sq", "Sk", "Hq", "Hkv", "ms", "TFLOP/s", "%gemm", "err/ref", "note")
    print(hdr)
    print("-" * len(hdr))
    gen = torch.Generator(device="cuda")
    for c in cases:
        gen.manual_seed(c["b"] * 7919 + c["sq"] * 31 + c["d"])
        dt = tdt[c["dtype"]]
        # flashtile layout [B, S, H, D]; SDPA takes [B, H, S, D] views of the same memory (no copies).
        q = torch.randn(c["b"], c["sq"], c["hq"], c["d"], device="cuda", dtype=dt, generator=gen)
        k = torch.randn(c["b"], c["sk"], c["hkv"], c["d"], device="cuda", dtype=dt, generator=gen)
        v = torch.randn(c["b"], c["sk"], c["hkv"], c["d"], device="cuda", dtype=dt, generator=gen)
        qt, kt, vt = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        gqa = c["hq"] != c["hkv"]
        if c["causal"] and c["sq"] != c["sk"]:
            # SDPA's is_causal is top-left aligned; flashtile's is bottom-right. Peers get an explicit mask then,
            # which forces them off their fast kernels: such cases compare correctness more than speed.
            i = torch.arange(c["sq"], device="cuda")[:, None]
            j = torch.arange(c["sk"], device="cuda")[None, :]
            mask = j <= i + c["sk"] - c["sq"]
            sdpa_kw = dict(attn_mask=mask, enable_gqa=gqa)
        else:
            sdpa_kw = dict(is_causal=c["causal"], enable_gqa=gqa)

        impls = [(p, PEERS[p]) for p in peers] + [("flashtile:" + p, p) for p in ft_paths]
        outputs = {}
        for name, which in impls:
            row = dict(impl=name, dtype=c["dtype"], d=c["d"], causal=int(c["causal"]), b=c["b"], sq=c["sq"],
                       sk=c["sk"], hq=c["hq"], hkv=c["hkv"], ms="", tflops="", frac_gemm="", check_err="",
                       check_ref="", status="ok", note="")
            try:
                if name.startswith("flashtile:"):
                    fn = (lambda p=which: ft.attention(q, k, v, causal=c["causal"], path=p))
                    out = fn()
                    row["note"] = ft.last_result().kernel
                else:
                    fn, out, row["note"] = sdpa_call(torch, F, sdpa_kernel, getattr(SDPBackend, which), qt, kt, vt,
                                                     sdpa_kw)
                torch.cuda.synchronize()
                outputs[name] = out
                ms = do_bench(fn, warmup=args.warmup, rep=args.rep, return_mode="median")
                tf = flops(c) / (ms * 1e-3) / 1e12
                row.update(ms="%.5f" % ms, tflops="%.2f" % tf, frac_gemm="%.3f" % (tf / ceiling))
            except Exception as e:
                refused = not name.startswith("flashtile:") or isinstance(e, ft.Unsupported)
                row.update(status="unsupported" if refused else "error",
                           note=("%s: %s" % (type(e).__name__, e)).splitlines()[0][:300])
                if name.startswith("flashtile:") and os.environ.get("PEERS_TRACEBACK"):
                    traceback.print_exc()
            rows.append(row)
        # Check every flashtile output against cuDNN's (FA2's, EFFICIENT's where cuDNN refused the case).
        ref_name = next((p for p in ("cudnn", "fa2", "efficient") if p in outputs), None)
        tol = 1e-2 if c["dtype"] == "bf16" else 5e-3
        for row in rows[-len(impls):]:
            if row["impl"].startswith("flashtile:") and row["impl"] in outputs and ref_name:
                err = rel_err(torch, outputs[row["impl"]], outputs[ref_name])
                row["check_err"], row["check_ref"] = "%.2e" % err, ref_name
                if not err <= tol:
                    row["status"] = "WRONG"
                    row["note"] = "rel err %.3g vs %s > %g; %s" % (err, ref_name, tol, row["note"])
            elif row["impl"] in outputs and ref_name and row["impl"] != ref_name:
                row["check_err"] = "%.2e" % rel_err(torch, outputs[row["impl"]], outputs[ref_name])
                row["check_ref"] = ref_name
            print("%-22s %-5s %4d %6s %4d %6d %6d %4d %4d %9s %8s %7s %9s  %s" % (
                row["impl"], row["dtype"], row["d"], "yes" if row["causal"] else "no", row["b"], row["sq"],
                row["sk"], row["hq"], row["hkv"], row["ms"] or "-", row["tflops"] or "-",
                row["frac_gemm"] or "-", row["check_err"] or "-",
                row["note"] if row["status"] == "ok" else row["status"] + ": " + row["note"]), flush=True)
        del q, k, v, qt, kt, vt, outputs
        torch.cuda.empty_cache()

    # Rows from flashtile_bench (e.g. Vulkan paths, host-clock timed), for the table and the plot.
    if args.merge_bench and os.path.exists(args.merge_bench):
        with open(args.merge_bench) as f:
            for r in csv.DictReader(f):
                if r["status"] != "ok" or r["backend"] == "cuda" and ft_paths:
                    continue
                tf = float(r["tflops"])
                rows.append(dict(impl="flashtile:%s" % r["path"], dtype=r["dtype"], d=int(r["head_dim"]),
                                 causal=int(r["causal"]), b=int(r["batch"]), sq=int(r["seqlen_q"]),
                                 sk=int(r["seqlen_k"]), hq=int(r["heads_q"]), hkv=int(r["heads_kv"]),
                                 ms="%.5f" % float(r["ms"]), tflops="%.2f" % tf, frac_gemm="%.3f" % (tf / ceiling),
                                 check_err="", check_ref="", status="ok",
                                 note="flashtile_bench (%s) %s" % (r["timer"], r["kernel"])))

    # The ceiling again at the end: a drop means the GPU throttled or was shared during the run.
    end_ceiling, _ = gemm_ceiling(torch, do_bench)
    env["gemm_bf16_8192_tflops_end"] = round(end_ceiling, 1)
    print("cuBLAS bf16 8192^3 GEMM at the end: %.1f TFLOP/s (start %.1f)" % (end_ceiling, ceiling), flush=True)

    ratios = summarize(rows)
    write_outputs(args.out, rows, ratios, env)
    plot(os.path.join(args.out, "peers.png"), rows, env)
    wrong = [r for r in rows if r["status"] in ("WRONG", "error")]
    if wrong:
        print("peers.py: %d flashtile results wrong or failed" % len(wrong))
        return 1
    return 0


def key(r):
    return (r["dtype"], int(r["d"]), int(r["causal"]), int(r["b"]), int(r["sq"]), int(r["sk"]), int(r["hq"]),
            int(r["hkv"]))


def summarize(rows):
    """Per case: flashtile's best TFLOP/s over the best peer, over cuDNN, over FA2."""
    by = {}
    for r in rows:
        if r["status"] == "ok" and r["tflops"]:
            by.setdefault(key(r), {})[r["impl"]] = float(r["tflops"])
    out = []
    print("\nratios (TFLOP/s of flashtile's best path / the peer's; > 1 means flashtile is faster)")
    print("%-5s %4s %6s %4s %6s %6s %4s %4s  %-20s %8s %-10s %8s %8s %8s" % (
        "dtype", "d", "causal", "B", "Sq", "Sk", "Hq", "Hkv", "flashtile best", "TFLOP/s", "best peer", "/best",
        "/cudnn", "/fa2"))
    for k, impls in by.items():
        ft = {n: t for n, t in impls.items() if n.startswith("flashtile:")}
        peers = {n: t for n, t in impls.items() if not n.startswith("flashtile:")}
        if not ft or not peers:
            continue
        best_ft = max(ft, key=ft.get)
        best_peer = max(peers, key=peers.get)
        ratio = dict(dtype=k[0], d=k[1], causal=k[2], b=k[3], sq=k[4], sk=k[5], hq=k[6], hkv=k[7],
                     flashtile=best_ft, flashtile_tflops=ft[best_ft], best_peer=best_peer,
                     vs_best=ft[best_ft] / peers[best_peer],
                     vs_cudnn=ft[best_ft] / peers["cudnn"] if "cudnn" in peers else None,
                     vs_fa2=ft[best_ft] / peers["fa2"] if "fa2" in peers else None)
        out.append(ratio)
        fmt = lambda x: "-" if x is None else "%.3f" % x  # noqa: E731
        print("%-5s %4d %6s %4d %6d %6d %4d %4d  %-20s %8.1f %-10s %8s %8s %8s" % (
            k[0], k[1], "yes" if k[2] else "no", k[3], k[4], k[5], k[6], k[7], best_ft, ft[best_ft], best_peer,
            fmt(ratio["vs_best"]), fmt(ratio["vs_cudnn"]), fmt(ratio["vs_fa2"])))
    if out:
        geo = lambda xs: math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")  # noqa: E731
        print("geomean: /best %.3f  /cudnn %.3f  /fa2 %.3f" % (
            geo([r["vs_best"] for r in out]), geo([r["vs_cudnn"] for r in out if r["vs_cudnn"]]),
            geo([r["vs_fa2"] for r in out if r["vs_fa2"]])))
    else:
        print("(no case has both a flashtile and a peer result)")
    return out


def write_outputs(folder, rows, ratios, env):
    fields = ["impl", "dtype", "d", "causal", "b", "sq", "sk", "hq", "hkv", "ms", "tflops", "frac_gemm", "check_err",
              "check_ref", "status", "note"]
    with open(os.path.join(folder, "peers.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        for r in rows:
            w.writerow(r)
    with open(os.path.join(folder, "peers.json"), "w") as f:
        json.dump(dict(environment=env, results=rows, ratios=ratios), f, indent=1)
    print("wrote %s/peers.csv and peers.json" % folder)


def plot(path, rows, env):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception as e:
        print("peers.py: no plot (%s)" % e)
        return
    grid_rows = [r for r in rows if r["status"] == "ok" and r["tflops"] and int(r["b"]) * int(r["sq"]) == 16384
                 and r["sq"] == r["sk"] and int(r["hq"]) * int(r["d"]) == 2048]
    dims = sorted({int(r["d"]) for r in grid_rows}) or [64, 128, 256]
    fig, axes = plt.subplots(len(dims), 2, figsize=(12, 3.6 * len(dims)), squeeze=False, sharex=True)
    styles = {"bf16": "-", "f16": "--"}
    impls = sorted({r["impl"] for r in grid_rows}, key=lambda n: (n.startswith("flashtile"), n))
    colors = {n: plt.cm.tab10(i % 10) for i, n in enumerate(impls)}
    for i, d in enumerate(dims):
        for j, causal in enumerate((0, 1)):
            ax = axes[i][j]
            for impl in impls:
                for dt, ls in styles.items():
                    pts = sorted((int(r["sq"]), float(r["tflops"])) for r in grid_rows
                                 if r["impl"] == impl and r["dtype"] == dt and int(r["d"]) == d
                                 and int(r["causal"]) == causal)
                    if pts:
                        ax.plot([p[0] for p in pts], [p[1] for p in pts], ls, marker="o", ms=3, color=colors[impl],
                                label="%s %s" % (impl, dt), lw=2.2 if impl.startswith("flashtile") else 1.2)
            if "gemm_bf16_8192_tflops" in env:
                ax.axhline(env["gemm_bf16_8192_tflops"], color="gray", lw=0.8, ls=":", label="cuBLAS bf16 GEMM")
            ax.set_xscale("log", base=2)
            ax.set_ylim(bottom=0)
            ax.set_title("d=%d, %s" % (d, "causal" if causal else "non-causal"))
            ax.set_ylabel("TFLOP/s")
            ax.grid(True, alpha=0.3)
            if i == len(dims) - 1:
                ax.set_xlabel("seqlen (batch x seqlen = 16384, hidden 2048)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=8)
    fig.suptitle("attention forward on %s, %s (torch %s, cuDNN %s, driver %s)" % (
        env.get("device"), env.get("date"), env.get("torch"), env.get("cudnn"), env.get("driver")), fontsize=10)
    fig.tight_layout(rect=(0, 0.08, 1, 0.96))
    fig.savefig(path, dpi=110)
    print("wrote %s" % path)


if __name__ == "__main__":
    t0 = time.time()
    rc = main()
    print("peers.py: done in %.0f s" % (time.time() - t0))
    sys.exit(rc)
