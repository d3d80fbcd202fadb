# One forward call shape for ncu (an ncu run times its launches): flashtile's sm80 path or FA2 (PyTorch SDPA), bf16
# non-causal, B 4 x 4096, 2048 / d heads. Usage: python3 bench/tools/fwd_call.py ft|fa2 D
import sys
import torch
sys.path.insert(0, "python")
import flashtile
from torch.nn.attention import SDPBackend, sdpa_kernel
d = int(sys.argv[2])
q, k, v = (torch.randn(4, 4096, 2048 // d, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
if sys.argv[1] == "fa2":
    qt, kt, vt = (x.transpose(1, 2) for x in (q, k, v))
    with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
        for _ in range(4):
            torch.nn.functional.scaled_dot_product_attention(qt, kt, vt)
else:
    for _ in range(4):
        flashtile.attention(q, k, v, causal=False, path="cuda_sm80")
torch.cuda.synchronize()
