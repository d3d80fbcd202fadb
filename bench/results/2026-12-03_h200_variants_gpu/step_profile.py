"""Where a short fwd+bwd step's time goes: torch.profiler over flashtile's autograd op vs SDPA cuDNN, d128 S512."""
import sys, os, time
sys.path.insert(0, os.path.join(os.getcwd(), "python"))
import torch, torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
import flashtile as ft
from torch.profiler import profile, ProfilerActivity
for (B, S, causal) in [(32, 512, False), (16, 1024, True), (4, 4096, True)]:
    H, D = 16, 128
    q, k, v, do = (torch.randn(B, S, H, D, device="cuda", dtype=torch.bfloat16) for _ in range(4))
    qg, kg, vg = (x.detach().requires_grad_() for x in (q, k, v))
    def ft_step():
        o = ft.attention(qg, kg, vg, causal=causal)
        return torch.autograd.grad(o, (qg, kg, vg), do)
    qt, kt, vt = (x.transpose(1, 2).detach().requires_grad_() for x in (q, k, v))
    def cd_step():
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            o = F.scaled_dot_product_attention(qt, kt, vt, is_causal=causal)
        return torch.autograd.grad(o, (qt, kt, vt), do.transpose(1, 2))
    for name, fn in [("flashtile", ft_step), ("cudnn", cd_step)]:
        for _ in range(20): fn()
        torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(50): fn()
        torch.cuda.synchronize()
        wall = (time.perf_counter() - t) / 50 * 1e3
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(10): fn()
            torch.cuda.synchronize()
        print("\n==== %s B=%d S=%d causal=%d: wall %.3f ms/step" % (name, B, S, causal, wall))
        print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=12, max_name_column_width=60))
    print("flashtile fwd kernel (with lse):", ft.plan(q, k, v, causal=causal, return_lse=True).kernel, "; without:", ft.plan(q, k, v, causal=causal).kernel)
