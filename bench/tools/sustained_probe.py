#!/usr/bin/env python3
"""Why one launch is faster than back-to-back launches (d128 non-causal 16k ran at 705 TFLOP/s in one launch under
ncu, 614-643 back to back; cuDNN 685 against 606-614). Under torch.profiler (CUPTI kernel
timestamps, no replay), each of flashtile (Python binding, sm90) and cuDNN (PyTorch SDPA) runs one launch after a
second of idle, then N launches back to back (FlashAttention-2 through SDPA too); per kernel: its duration and the gap before it. If the back-to-back
kernels take longer than the isolated one, the kernel itself slows under load (clock, power, heat); if they take the
same time, the loss is in the gaps between launches.

    FLASHTILE_LIBRARY=.bundle/libflashtile.so python3 bench/tools/sustained_probe.py [--cell D,S,CAUSAL] [--n 30]

Prints one line per implementation and phase: kernel count, median / first / last duration (ms), median gap (us),
TFLOP/s from the median duration and from the span of the whole run; with nvidia-smi on the PATH, the SM clock
(MHz), power (W), temperature (C) and the active clock-event reasons (hex mask: 0x4 power cap, 0x20/0x40 thermal)
sampled every 20 ms during each phase: mean and last sample; and with pynvml, the energy of each phase (J a launch,
TFLOP/J, mean W), which is what bounds a power-capped run."""
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))


def arg(name, default):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


d, s, causal = (int(x) for x in arg("--cell", "128,16384,0").split(","))
n = int(arg("--n", "30"))
b, h = 16384 // s, 2048 // d
flops = 4.0 * b * h * s * s * d / (2.0 if causal else 1.0)
q, k, v = (torch.randn(b, s, h, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))


def run_cudnn():
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        torch.nn.functional.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                                         is_causal=bool(causal))


def run_fa2():
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        torch.nn.functional.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                                         is_causal=bool(causal))


impls = [("cudnn", run_cudnn, ("cudnn", "fmha", "sdpa", "flash")), ("fa2", run_fa2, ("flash",))]
try:
    import flashtile

    impls.insert(0, ("flashtile", lambda: flashtile.attention(q, k, v, causal=bool(causal)), ("sm90_fwd",)))
except Exception as e:  # the binding or the library missing: cuDNN alone
    print(f"flashtile unavailable: {e}")


class Sampler:
    """nvidia-smi in the background, every 20 ms; samples(t0, t1) gives those taken between two time.time()s."""
    FIELDS = "timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active"

    def __init__(self):
        try:
            self.p = subprocess.Popen(["nvidia-smi", f"--query-gpu={self.FIELDS}", "--format=csv,noheader,nounits",
                                       "-lms", "20"], stdout=subprocess.PIPE, text=True)
        except OSError:
            self.p = None
        self.rows = None

    def samples(self, t0, t1):
        if self.p is None:
            return []
        if self.rows is None:
            self.p.terminate()
            self.rows = []
            for line in self.p.communicate()[0].splitlines():
                f = [x.strip() for x in line.split(",")]
                try:
                    t = datetime.datetime.strptime(f[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
                    self.rows.append((t, float(f[1]), float(f[2]), float(f[3]), f[4]))
                except (ValueError, IndexError):
                    pass
        return [r for r in self.rows if t0 <= r[0] <= t1]


def energy_mj():
    """The GPU's energy counter (mJ since the driver loaded; NVML through pynvml, which torch uses), or None."""
    try:
        import pynvml
        pynvml.nvmlInit()
        return pynvml.nvmlDeviceGetTotalEnergyConsumption(pynvml.nvmlDeviceGetHandleByIndex(0))
    except Exception:
        return None


def describe(rows):
    if not rows:
        return "no clock samples"
    mean = lambda i: statistics.mean(r[i] for r in rows)
    last = rows[-1]
    return (f"{len(rows)} samples: mean {mean(1):.0f} MHz {mean(2):.0f} W {mean(3):.0f} C; last {last[1]:.0f} MHz "
            f"{last[2]:.0f} W {last[3]:.0f} C reasons {last[4]}")


def kernels(prof, keys):
    """(start us, duration us) of the kernels whose names contain one of keys, in start order."""
    path = os.path.join(tempfile.mkdtemp(), "trace.json")
    prof.export_chrome_trace(path)
    events = json.load(open(path))
    events = events["traceEvents"] if isinstance(events, dict) else events
    out = [(e["ts"], e["dur"]) for e in events
           if e.get("cat") == "kernel" and any(x in e.get("name", "").lower() for x in keys)]
    return sorted(out)


sampler = Sampler()
time.sleep(0.5)  # nvidia-smi's first sample
lines = []
for name, fn, keys in impls:
    t_end = time.time() + 0.3  # warm-up: clocks settle, libraries load
    while time.time() < t_end:
        fn()
    torch.cuda.synchronize()
    for phase, count, idle in (("isolated", 1, 1.0), ("back-to-back", n, 0.0)):
        time.sleep(idle)
        t0, e0 = time.time(), energy_mj()
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            for _ in range(count):
                fn()
            torch.cuda.synchronize()
        window, e1 = (t0, time.time()), energy_mj()
        ks = kernels(prof, keys)
        if not ks:
            print(f"{name:9s} {phase:12s} no matching kernels")
            continue
        durs = [x[1] / 1e3 for x in ks]
        gaps = [ks[i][0] - (ks[i - 1][0] + ks[i - 1][1]) for i in range(1, len(ks))]
        span = (ks[-1][0] + ks[-1][1] - ks[0][0]) / 1e6
        med = statistics.median(durs)
        lines.append((f"{name:9s} {phase:12s}", window))
        print(f"{name:9s} {phase:12s} kernels {len(ks):3d}  median {med:.3f} ms  first {durs[0]:.3f}  last "
              f"{durs[-1]:.3f}  gap {statistics.median(gaps) if gaps else 0:.1f} us  {flops / med / 1e9:.1f} TFLOP/s "
              f"(span {flops * len(ks) / span / 1e12:.1f})", flush=True)
        # The whole phase, gaps included; the counter updates too coarsely for one launch (single launches read anywhere in 460-630 J).
        if len(ks) >= 20 and e0 is not None and e1 is not None and e1 > e0:
            print(f"  energy {(e1 - e0) / 1e3 / len(ks):.3f} J a launch, {flops * len(ks) / ((e1 - e0) / 1e3) / 1e12:.2f} "
                  f"TFLOP/J, {(e1 - e0) / 1e3 / (window[1] - window[0]):.0f} W over the phase", flush=True)
        if len(durs) >= 20:  # the slope: every tenth kernel's duration (ms)
            print("  every 10th: " + " ".join(f"{x:.3f}" for x in durs[::10]), flush=True)
for label, (t0, t1) in lines:
    print(f"{label} {describe(sampler.samples(t0, t1))}")
