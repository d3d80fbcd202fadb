"""The serving layouts from Python: attention_with_kvcache (a paged KV cache, with an append) and attention_varlen
(packed sequences), on the CPU through host arrays against the pure-Python reference, bad input, and the same calls on
torch tensors where torch (and CUDA) are present.
"""

import os
import random
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

import flashtile  # noqa: E402
from test_flashtile import _has, _torch_cuda, lse_error, reference, rel_error  # noqa: E402

PAGE = 16


def randoms(rng, n):
    return [rng.gauss(0.0, 1.0) for _ in range(n)]


def paged_problem(rng, seqlens, sq, s_new, hq, hkv, d, pages):
    """Random keys per sequence, laid into shuffled pages (the spare pages NaN). Returns the flat lists and the table."""
    B, row = len(seqlens), hkv * d
    per = max(1, max((n + s_new + PAGE - 1) // PAGE for n in seqlens))
    order = list(range(pages))
    rng.shuffle(order)
    table = [order[b * per:(b + 1) * per] for b in range(B)]
    keys = [randoms(rng, (n + s_new) * row) for n in seqlens]
    vals = [randoms(rng, (n + s_new) * row) for n in seqlens]
    kc = [float("nan")] * (pages * PAGE * row)
    vc = list(kc)
    for b, n in enumerate(seqlens):
        for j in range(n):
            at = (table[b][j // PAGE] * PAGE + j % PAGE) * row
            kc[at:at + row] = keys[b][j * row:(j + 1) * row]
            vc[at:at + row] = vals[b][j * row:(j + 1) * row]
    new_k = [x for b, n in enumerate(seqlens) for x in keys[b][n * row:]]
    new_v = [x for b, n in enumerate(seqlens) for x in vals[b][n * row:]]
    q = randoms(rng, B * sq * hq * d)
    return q, kc, vc, table, keys, vals, new_k, new_v


class PagedKvCache(unittest.TestCase):
    def check(self, seqlens, sq, s_new, causal, hq=4, hkv=2, d=8):
        rng = random.Random(len(seqlens) * 100 + sq * 10 + s_new)
        B = len(seqlens)
        pages = B * max(1, max((n + s_new + PAGE - 1) // PAGE for n in seqlens)) + 2  # 2 spare pages, NaN
        q, kc, vc, table, keys, vals, new_k, new_v = paged_problem(rng, seqlens, sq, s_new, hq, hkv, d, pages)
        cshape = (pages, PAGE, hkv, d)
        k_cache = flashtile.HostArray.from_floats(kc, cshape, "f32")
        v_cache = flashtile.HostArray.from_floats(vc, cshape, "f32")
        args = [flashtile.HostArray.from_floats(q, (B, sq, hq, d), "f32"), k_cache, v_cache, table, list(seqlens)]
        if s_new:
            args += [flashtile.HostArray.from_floats(x, (B, s_new, hkv, d), "f32") for x in (new_k, new_v)]
        out, lse = flashtile.attention_with_kvcache(*args, causal=causal, return_lse=True, backend="cpu")
        self.assertEqual(flashtile.last_result().path, "cpu_reference")
        got, got_lse = out.tolist(), lse.tolist()
        for b, n in enumerate(seqlens):
            keys_b = n + s_new
            qb = q[b * sq * hq * d:(b + 1) * sq * hq * d]
            want, want_lse = reference(qb, keys[b], vals[b], (1, sq, hq, d), (1, keys_b, hkv, d), causal)
            if keys_b == 0:  # no key at all: 0 and -inf
                want, want_lse = [0.0] * len(want), [float("-inf")] * len(want_lse)
            self.assertLess(rel_error(want, got[b * sq * hq * d:(b + 1) * sq * hq * d]), 1e-5, "sequence %d" % b)
            self.assertLess(lse_error(want_lse, got_lse[b * hq * sq:(b + 1) * hq * sq]), 1e-5, "sequence %d" % b)
        # The append: the new keys now in their slots.
        after, row = k_cache.tolist(), hkv * d
        for b, n in enumerate(seqlens):
            for j in range(n, n + s_new):
                at = (table[b][j // PAGE] * PAGE + j % PAGE) * row
                self.assertEqual(after[at:at + row], [float(x) for x in
                                                      flashtile.HostArray.from_floats(keys[b][j * row:(j + 1) * row],
                                                                                      (row,), "f32").tolist()])

    def test_decode(self):
        self.check([0, 17, 40], 1, 0, False)

    def test_decode_append(self):
        self.check([3, 16, 31], 1, 1, True)

    def test_chunk_append_causal(self):
        self.check([20, 5], 4, 3, True)

    def test_through_uploads(self):
        """The route devices other than the CPU take: uploads, and the caches downloaded back after an append."""
        flashtile._host_zero_copy = False
        try:
            self.check([5, 9], 2, 2, True)
        finally:
            flashtile._host_zero_copy = True


class Varlen(unittest.TestCase):
    def check(self, lq, lk, causal, hq=4, hkv=1, d=8):
        rng = random.Random(sum(lq) * 7 + sum(lk))
        cq, ck = [0], [0]
        for a, b in zip(lq, lk):
            cq.append(cq[-1] + a)
            ck.append(ck[-1] + b)
        q, k, v = randoms(rng, cq[-1] * hq * d), randoms(rng, ck[-1] * hkv * d), randoms(rng, ck[-1] * hkv * d)
        H = flashtile.HostArray.from_floats
        out, lse = flashtile.attention_varlen(H(q, (cq[-1], hq, d), "f32"), H(k, (ck[-1], hkv, d), "f32"),
                                              H(v, (ck[-1], hkv, d), "f32"), cq, ck, max(lq), max(lk), causal=causal,
                                              return_lse=True, backend="cpu")
        got, got_lse = out.tolist(), lse.tolist()
        qrow, krow = hq * d, hkv * d
        for b in range(len(lq)):
            sq, sk = lq[b], lk[b]
            if sq == 0:
                continue
            want, want_lse = reference(q[cq[b] * qrow:cq[b + 1] * qrow], k[ck[b] * krow:ck[b + 1] * krow],
                                       v[ck[b] * krow:ck[b + 1] * krow], (1, sq, hq, d), (1, sk, hkv, d), causal)
            self.assertLess(rel_error(want, got[cq[b] * qrow:cq[b + 1] * qrow]), 1e-5, "sequence %d" % b)
            mine = [got_lse[h * cq[-1] + cq[b] + i] for h in range(hq) for i in range(sq)]  # lse is [Hq, total_q]
            self.assertLess(lse_error(want_lse, mine), 1e-5, "sequence %d" % b)

    def test_odd_lengths(self):
        self.check([1, 17, 30], [1, 17, 30], True)

    def test_sq_ne_sk_and_empty(self):
        self.check([5, 0, 3], [9, 4, 0], False)

    def test_causal_gqa(self):
        self.check([6, 2], [3, 11], True, hq=4, hkv=2)


class BadInput(unittest.TestCase):
    def setUp(self):
        H = flashtile.HostArray
        self.q = H.from_floats([0.5] * 8, (1, 1, 1, 8), "f32")
        self.kc = H.from_floats([0.25] * (2 * PAGE * 8), (2, PAGE, 1, 8), "f32")
        self.vc = H.from_floats([0.75] * (2 * PAGE * 8), (2, PAGE, 1, 8), "f32")

    def test_block_table_entry_out_of_range(self):
        with self.assertRaises(flashtile.InvalidArgument) as e:
            flashtile.attention_with_kvcache(self.q, self.kc, self.vc, [[2]], [3], backend="cpu")
        self.assertIn("cache.block_table: entry [0, 0] = 2 is not a page", e.exception.message)

    def test_seqlens_beyond_the_pages(self):
        with self.assertRaises(flashtile.InvalidArgument) as e:
            flashtile.attention_with_kvcache(self.q, self.kc, self.vc, [[1]], [PAGE + 1], backend="cpu")
        self.assertIn("cache.seqlens: sequence 0 holds 17 keys", e.exception.message)

    def test_k_without_v(self):
        with self.assertRaises(flashtile.InvalidArgument) as e:
            flashtile.attention_with_kvcache(self.q, self.kc, self.vc, [[1]], [3], k=self.q)
        self.assertIn("v: k and v", e.exception.message)

    def test_append_into_a_read_only_cache(self):
        ro = flashtile.HostArray(bytes(self.kc.buffer), self.kc.shape, "f32")
        new = flashtile.HostArray.from_floats([1.0] * 8, (1, 1, 1, 8), "f32")
        with self.assertRaises(flashtile.InvalidArgument) as e:
            flashtile.attention_with_kvcache(self.q, ro, self.vc, [[1]], [3], new, new, backend="cpu")
        self.assertIn("k_cache: the call writes the appended keys into it", e.exception.message)

    def test_table_dtype(self):
        table = flashtile.HostArray.from_floats([1.0], (1, 1), "f32")
        with self.assertRaises(flashtile.DTypeMismatch) as e:
            flashtile.attention_with_kvcache(self.q, self.kc, self.vc, table, [3], backend="cpu")
        self.assertIn("cache.block_table: dtype must be i32, got f32", e.exception.message)

    def test_ragged_table(self):
        with self.assertRaises(flashtile.InvalidArgument) as e:
            flashtile.attention_with_kvcache(self.q, self.kc, self.vc, [[1], [0, 1]], [3, 3], backend="cpu")
        self.assertIn("block_table: rows of different lengths", e.exception.message)

    def test_varlen_cu_seqlens(self):
        H = flashtile.HostArray
        q = H.from_floats([0.5] * 16, (2, 1, 8), "f32")
        k = H.from_floats([0.5] * 16, (2, 1, 8), "f32")
        cases = [([1, 2], [0, 2], "must start at 0", flashtile.InvalidArgument),
                 ([0, 1], [0, 2], "ends at 1, but the packed tensor has 2 rows", flashtile.ShapeMismatch),
                 ([0, 2], [0, 2], "sequence 0 has 2 rows, more than the maximum given (1)", flashtile.InvalidArgument)]
        for cq, ck, needle, cls in cases:
            with self.subTest(cq=cq), self.assertRaises(cls) as e:
                flashtile.attention_varlen(q, k, k, cq, ck, 1, 2, backend="cpu")
            self.assertIn(needle, e.exception.message)

    def test_varlen_max_seqlen(self):
        q = flashtile.HostArray.from_floats([0.5] * 8, (1, 1, 8), "f32")
        with self.assertRaises(flashtile.InvalidArgument) as e:
            flashtile.attention_varlen(q, q, q, [0, 1], [0, 1], "1", 1)
        self.assertIn("max_seqlen_q: needs an integer", e.exception.message)
        with self.assertRaises(flashtile.InvalidArgument) as e:
            flashtile.attention_varlen(q, q, q, [0, 1], [0, 1], 1, -2, backend="cpu")
        self.assertIn("lengths.max_seqlen_k: must be in [0, 2^31 - 1], got -2", e.exception.message)

    def test_scale(self):
        with self.assertRaises(flashtile.InvalidArgument) as e:
            flashtile.attention_varlen(self.q, self.q, self.q, [0, 1], [0, 1], 1, 1, scale=float("nan"))
        self.assertIn("scale", e.exception.message)


@unittest.skipUnless(_has("torch"), "torch is not installed")
class Torch(unittest.TestCase):
    """The same calls on torch tensors: CPU tensors through the CPU device, CUDA tensors on the current stream."""

    def devices(self):
        return ["cpu"] + (["cuda"] if _torch_cuda() else [])

    def test_paged_append_matches_dense(self):
        import torch
        for device in self.devices():
            with self.subTest(device=device):
                g = torch.Generator().manual_seed(0)
                q = torch.randn(2, 1, 4, 64, generator=g).to(device, torch.float16)
                kc = torch.randn(5, PAGE, 2, 64, generator=g).to(device, torch.float16)
                vc = torch.randn(5, PAGE, 2, 64, generator=g).to(device, torch.float16)
                kn = torch.randn(2, 1, 2, 64, generator=g).to(device, torch.float16)
                vn = torch.randn(2, 1, 2, 64, generator=g).to(device, torch.float16)
                table = torch.tensor([[3, 0], [4, 1]], dtype=torch.int32, device=device)
                seqlens = torch.tensor([5, 17], dtype=torch.int32, device=device)
                try:
                    out = flashtile.attention_with_kvcache(q, kc, vc, table, seqlens, kn, vn, causal=True)
                except flashtile.Unsupported as e:
                    self.skipTest("%s: %s" % (device, e.message))
                for b, n in enumerate([6, 18]):
                    pages = table[b].long()
                    k = kc[pages].reshape(-1, 2, 64)[:n].unsqueeze(0)
                    v = vc[pages].reshape(-1, 2, 64)[:n].unsqueeze(0)
                    want = flashtile.attention(q[b:b + 1].contiguous(), k.contiguous(), v.contiguous(), causal=True)
                    torch.testing.assert_close(out[b:b + 1], want, atol=2e-3, rtol=2e-3)

    def test_varlen_matches_dense(self):
        import torch
        for device in self.devices():
            with self.subTest(device=device):
                g = torch.Generator().manual_seed(1)
                q = torch.randn(20, 4, 64, generator=g).to(device, torch.float16)
                k = torch.randn(20, 4, 64, generator=g).to(device, torch.float16)
                cu = torch.tensor([0, 3, 20], dtype=torch.int32, device=device)
                try:
                    out = flashtile.attention_varlen(q, k, k, cu, cu, 17, 17, causal=True)
                except flashtile.Unsupported as e:
                    self.skipTest("%s: %s" % (device, e.message))
                for a, b in ((0, 3), (3, 20)):
                    want = flashtile.attention(q[a:b].unsqueeze(0), k[a:b].unsqueeze(0), k[a:b].unsqueeze(0),
                                               causal=True)
                    torch.testing.assert_close(out[a:b].unsqueeze(0), want, atol=2e-3, rtol=2e-3)

    def test_int64_tables_are_refused(self):
        import torch
        q = torch.zeros(1, 1, 1, 8)
        kc = torch.zeros(1, PAGE, 1, 8)
        with self.assertRaises(flashtile.DTypeMismatch) as e:
            flashtile.attention_with_kvcache(q, kc, kc, torch.zeros(1, 1, dtype=torch.int64),
                                             torch.ones(1, dtype=torch.int32))
        self.assertIn("block_table: dtype torch.int64", e.exception.message)


if __name__ == "__main__":
    unittest.main()
