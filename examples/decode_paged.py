"""A decode loop over a paged KV cache, as examples/decode_paged.cpp: each step appends one token's k and v to every
sequence through flashtile.attention_with_kvcache, then advances seqlens; the last step is checked against a direct
softmax. Runs on the CPU through host arrays (no numpy or torch needed); with torch, pass torch tensors instead
(int32 tables) and the call runs on their device and the current stream.

    FLASHTILE_LIBRARY=build/libflashtile.so python3 examples/decode_paged.py
"""

import math
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

import flashtile  # noqa: E402

B, H, HKV, D, PAGE, PAGES_PER_SEQ, STEPS = 2, 4, 2, 64, 16, 4, 20
ROW = HKV * D


def main() -> int:
    rng = random.Random(1)
    prompt = [7, 30]
    # Sequence b owns pages b, b + B, b + 2B, ...: interleaved, as an allocator handing out free pages would.
    table = [[p * B + b for p in range(PAGES_PER_SEQ)] for b in range(B)]
    shape = (B * PAGES_PER_SEQ, PAGE, HKV, D)
    keys = [[rng.gauss(0, 1) for _ in range(n * ROW)] for n in prompt]
    vals = [[rng.gauss(0, 1) for _ in range(n * ROW)] for n in prompt]
    kc, vc = [0.0] * (shape[0] * PAGE * ROW), [0.0] * (shape[0] * PAGE * ROW)
    for b, n in enumerate(prompt):  # the prefill, written here directly
        for j in range(n):
            at = (table[b][j // PAGE] * PAGE + j % PAGE) * ROW
            kc[at:at + ROW] = keys[b][j * ROW:(j + 1) * ROW]
            vc[at:at + ROW] = vals[b][j * ROW:(j + 1) * ROW]
    # The caches are written in place by every step's append: keep the same arrays for the whole loop.
    k_cache = flashtile.HostArray.from_floats(kc, shape, "f32")
    v_cache = flashtile.HostArray.from_floats(vc, shape, "f32")

    seqlens = list(prompt)
    for _ in range(STEPS):
        q = [rng.gauss(0, 1) for _ in range(B * H * D)]
        kn = [rng.gauss(0, 1) for _ in range(B * ROW)]
        vn = [rng.gauss(0, 1) for _ in range(B * ROW)]
        out = flashtile.attention_with_kvcache(
            flashtile.HostArray.from_floats(q, (B, 1, H, D), "f32"), k_cache, v_cache, table, seqlens,
            flashtile.HostArray.from_floats(kn, (B, 1, HKV, D), "f32"),
            flashtile.HostArray.from_floats(vn, (B, 1, HKV, D), "f32"), causal=True, backend="cpu")
        for b in range(B):  # the call wrote the new key into the cache; the caller advances seqlens
            keys[b] += kn[b * ROW:(b + 1) * ROW]
            vals[b] += vn[b * ROW:(b + 1) * ROW]
            seqlens[b] += 1

    got, err = out.tolist(), 0.0
    for b in range(B):
        for h in range(H):
            hk, n = h // (H // HKV), seqlens[b]
            s = [sum(q[(b * H + h) * D + d] * keys[b][j * ROW + hk * D + d] for d in range(D)) / math.sqrt(D)
                 for j in range(n)]
            m = max(s)
            w = [math.exp(x - m) for x in s]
            total = sum(w)
            for d in range(D):
                want = sum(w[j] * vals[b][j * ROW + hk * D + d] for j in range(n)) / total
                err = max(err, abs(want - got[(b * H + h) * D + d]))
    r = flashtile.last_result()
    print("%d decode steps, path %s (%s), sequences now hold %s keys, max error %.2e" %
          (STEPS, r.path, r.kernel, seqlens, err))
    return 0 if err < 1e-4 else 1


if __name__ == "__main__":
    sys.exit(main())
