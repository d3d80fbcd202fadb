#!/usr/bin/env python3
"""Train a small GPT with flashtile's attention (forward and backward through torch autograd), or with PyTorch's
scaled_dot_product_attention, on synthetic but learnable tokens; --compare runs both from the same initial weights
on the same batches and prints the largest loss difference and both throughputs.

    FLASHTILE_LIBRARY=build/libflashtile.so python3 examples/train_gpt.py --compare            # H200: ~2 x 300 steps
    python3 examples/train_gpt.py --attn flashtile --head-dim 128 --compile --steps 100
    python3 examples/train_gpt.py --compare --device cpu --layers 1 --d-model 64 --head-dim 32 --seq 64 --batch 2 \\
        --steps 30 --vocab 64                                                                # a smoke test, no GPU

The data: each sequence is a walk of a fixed random Markov chain (every token has a few likely successors) over its
first half, repeated in its second half. The first half teaches the chain (loss toward its entropy), the second half
rewards attention that finds and copies the earlier occurrence (loss toward 0), so the loss falls clearly and only a
working attention backward gets it there. The same --seed gives the same chain, batches and initial weights.
"""

import argparse
import copy
import math
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--attn", choices=("flashtile", "sdpa"), default="flashtile")
    p.add_argument("--compare", action="store_true", help="run flashtile and sdpa from the same weights and data")
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--layers", type=int, default=6)
    p.add_argument("--d-model", type=int, default=1024)
    p.add_argument("--head-dim", type=int, default=64, help="64: d_model/64 heads (16 at 1024); 128: 8 heads")
    p.add_argument("--seq", type=int, default=2048)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--vocab", type=int, default=1024)
    p.add_argument("--lr", type=float, default=6e-4)
    p.add_argument("--precision", choices=("autocast", "bf16"), default="autocast",
                   help="autocast: f32 weights, bf16 autocast; bf16: bf16 weights")
    p.add_argument("--compile", action="store_true", help="torch.compile(model, fullgraph=True)")
    p.add_argument("--warmup", type=int, default=5, help="steps left out of the throughput")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="cuda")
    args = p.parse_args(argv)
    if args.d_model % args.head_dim:
        p.error("--d-model must be a multiple of --head-dim")
    if args.seq % 2:
        p.error("--seq must be even (a walk and its repetition)")
    if args.steps <= args.warmup:
        p.error("--steps must exceed --warmup")
    return args


def make_data(torch, args, pool=256):
    """A pool of sequences [pool, seq + 1] from a seeded random Markov chain, each walk repeated once."""
    g = torch.Generator().manual_seed(args.seed)
    V, fanout = args.vocab, 4
    successors = torch.randint(0, V, (V, fanout), generator=g)
    weights = torch.rand(V, fanout, generator=g) ** 2 + 0.05  # uneven: some successors far likelier
    half = (args.seq + 1 + 1) // 2
    walk = torch.empty(pool, half, dtype=torch.long)
    walk[:, 0] = torch.randint(0, V, (pool,), generator=g)
    for t in range(1, half):
        choice = torch.multinomial(weights[walk[:, t - 1]], 1, generator=g).squeeze(1)
        walk[:, t] = successors[walk[:, t - 1], choice]
    return torch.cat([walk, walk], dim=1)[:, :args.seq + 1]


def make_model(torch, args, attention):
    nn, F = torch.nn, torch.nn.functional
    heads = args.d_model // args.head_dim

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            d = args.d_model
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d, bias=False), nn.Linear(d, d, bias=False)
            self.fc, self.out = nn.Linear(d, 4 * d, bias=False), nn.Linear(4 * d, d, bias=False)

        def forward(self, x):
            B, S, d = x.shape
            q, k, v = self.qkv(self.ln1(x)).view(B, S, 3, heads, args.head_dim).unbind(2)  # [B, S, H, D] each
            x = x + self.proj(attention(q, k, v).reshape(B, S, d))
            return x + self.out(F.gelu(self.fc(self.ln2(x))))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(args.vocab, args.d_model)
            self.pos = nn.Parameter(torch.zeros(args.seq, args.d_model))
            self.blocks = nn.ModuleList(Block() for _ in range(args.layers))
            self.ln = nn.LayerNorm(args.d_model)
            for name, p in self.named_parameters():
                if p.dim() == 2:
                    std = 0.02 / math.sqrt(2 * args.layers) if name.endswith(("proj.weight", "out.weight")) else 0.02
                    nn.init.normal_(p, std=std)

        def forward(self, idx, targets):
            x = self.tok(idx) + self.pos[: idx.shape[1]]
            for block in self.blocks:
                x = block(x)
            logits = self.ln(x) @ self.tok.weight.t()  # tied output embedding
            return F.cross_entropy(logits.float().view(-1, args.vocab), targets.reshape(-1))

    return GPT()


def attention_fn(torch, name):
    if name == "flashtile":
        import flashtile

        def flashtile_attention(q, k, v):  # [B, S, H, D] in and out, no copies
            return flashtile.attention(q, k, v, causal=True)
        return flashtile_attention

    def sdpa_attention(q, k, v):  # SDPA takes [B, H, S, D]
        y = torch.nn.functional.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2),
                                                             v.transpose(1, 2), is_causal=True)
        return y.transpose(1, 2)
    return sdpa_attention


def train(torch, args, name, init_state, data):
    """Train from init_state with attention `name`: (losses per step, tokens/s after the warm-up)."""
    device = torch.device(args.device)
    model = make_model(torch, args, attention_fn(torch, name))
    model.load_state_dict(init_state)
    model.to(device)
    if args.precision == "bf16":
        model.to(torch.bfloat16)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.1,
                            fused=device.type == "cuda")
    run = torch.compile(model, fullgraph=True) if args.compile else model
    order = torch.Generator().manual_seed(args.seed + 1)  # the same batches for every run
    cuda = device.type == "cuda"
    losses, start = [], None
    for step in range(args.steps):
        if step == args.warmup:
            if cuda:
                torch.cuda.synchronize(device)
            start = time.perf_counter()
        rows = torch.randint(0, data.shape[0], (args.batch,), generator=order)
        batch = data[rows].to(device, non_blocking=True)
        for group in opt.param_groups:  # linear warm-up over the first 30 steps, then constant
            group["lr"] = args.lr * min(1.0, (step + 1) / 30)
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=args.precision == "autocast"):
            loss = run(batch[:, :-1], batch[:, 1:])
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        losses.append(loss.detach())
        if step % 10 == 0 or step == args.steps - 1:
            print("%-9s step %4d  loss %.4f" % (name, step, loss.item()), flush=True)
    if cuda:
        torch.cuda.synchronize(device)
    tokens_per_s = (args.steps - args.warmup) * args.batch * args.seq / (time.perf_counter() - start)
    print("%-9s %.0f tokens/s (steps %d-%d)" % (name, tokens_per_s, args.warmup, args.steps - 1), flush=True)
    return [x.item() for x in losses], tokens_per_s


def main(argv=None):
    args = parse_args(argv)
    import torch  # after argument parsing: --help works without torch

    torch.manual_seed(args.seed)
    data = make_data(torch, args)
    init_state = copy.deepcopy(make_model(torch, args, None).state_dict())  # one set of initial weights for all
    heads = args.d_model // args.head_dim
    print("GPT: %d layers, d_model %d, %d heads of %d, seq %d, batch %d, vocab %d, %s, %s%s, %d steps" % (
        args.layers, args.d_model, heads, args.head_dim, args.seq, args.batch, args.vocab, args.device,
        args.precision, ", compiled" if args.compile else "", args.steps), flush=True)
    names = ("flashtile", "sdpa") if args.compare else (args.attn,)
    runs = {name: train(torch, args, name, init_state, data) for name in names}
    if args.compare:
        (fl, ft), (sl, st) = runs["flashtile"], runs["sdpa"]
        diffs = [abs(a - b) for a, b in zip(fl, sl)]
        worst = max(range(len(diffs)), key=diffs.__getitem__)
        print()
        print("| attention | tokens/s | first loss | final loss |")
        print("|---|---:|---:|---:|")
        print("| flashtile | %.0f | %.4f | %.4f |" % (ft, fl[0], fl[-1]))
        print("| sdpa | %.0f | %.4f | %.4f |" % (st, sl[0], sl[-1]))
        print()
        print("largest |loss difference|: %.4g (step %d of %d); flashtile/sdpa throughput %.3f" % (
            diffs[worst], worst, len(diffs), ft / st))


if __name__ == "__main__":
    main()
