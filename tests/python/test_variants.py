"""Tests of the variants through the binding (window_size, softcap, alibi_slopes, sinks, and dsinks from the backward):
on host buffers against a double-precision reference written here (standard library only) and its finite
differences, through the dense, paged and varlen entry points; with torch (CPU tensors), against a float64 torch
reference, autograd (sinks get their gradient), opcheck and torch.compile(fullgraph=True).

Run from the repository root, as ctest does:
  FLASHTILE_LIBRARY=build/libflashtile.so python3 -m unittest discover -s tests/python -p 'test_*.py' -v
"""

import math
import os
import random
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

import flashtile  # noqa: E402
from test_flashtile import _has, _torch_cuda, lse_error, numel, random_values, rel_error  # noqa: E402


def reference(q, k, v, shape_q, shape_k, causal=False, window=(-1, -1), softcap=0.0, slopes=None, sinks=None):
    """(out, lse) in double on flat C-ordered lists, straight from the definitions. slopes: [Hq] or [B][Hq]."""
    B, Sq, Hq, D = shape_q
    _, Sk, Hkv, _ = shape_k
    scale, group = 1.0 / math.sqrt(D), Hq // Hkv
    out, lse = [0.0] * (B * Sq * Hq * D), [0.0] * (B * Hq * Sq)
    for b in range(B):
        for h in range(Hq):
            hk = h // group
            for i in range(Sq):
                diag = i + Sk - Sq
                s = {}
                for j in range(Sk):
                    if (causal and j > diag) or (window[0] >= 0 and j < diag - window[0]) or \
                            (window[1] >= 0 and j > diag + window[1]):
                        continue
                    qo, ko = ((b * Sq + i) * Hq + h) * D, ((b * Sk + j) * Hkv + hk) * D
                    x = scale * sum(q[qo + d] * k[ko + d] for d in range(D))
                    if softcap > 0:
                        x = softcap * math.tanh(x / softcap)
                    if slopes is not None:
                        slope = slopes[b][h] if isinstance(slopes[0], list) else slopes[h]
                        x -= slope * abs(diag - j)
                    s[j] = x
                m = max(list(s.values()) + ([sinks[h]] if sinks is not None else []), default=-math.inf)
                if m == -math.inf:
                    lse[(b * Hq + h) * Sq + i] = -math.inf
                    continue
                w = {j: math.exp(x - m) for j, x in s.items()}
                total = sum(w.values()) + (math.exp(sinks[h] - m) if sinks is not None else 0.0)
                for d in range(D):
                    out[((b * Sq + i) * Hq + h) * D + d] = sum(
                        wj * v[((b * Sk + j) * Hkv + hk) * D + d] for j, wj in w.items()) / total
                lse[(b * Hq + h) * Sq + i] = m + math.log(total)
    return out, lse


def f32(values, shape):
    return flashtile.HostArray.from_floats(values, shape, "f32")


# Each variant alone and combined: (window, softcap, alibi, sinks).
VARIANTS = [((2, 1), 0.0, False, False), ((0, 0), 0.0, False, False), ((-1, 3), 0.0, False, False),
            (None, 0.8, False, False), (None, 0.0, True, False), (None, 0.0, False, True),
            ((3, 0), 0.8, True, True)]


class HostVariantTest(unittest.TestCase):
    """flashtile.attention and attention_backward with variants on host buffers (the CPU device)."""

    backend = "cpu"

    def setUp(self):
        self.rng = random.Random(43)

    def inputs(self, shape_q, shape_k):
        q = random_values(numel(shape_q), self.rng)
        k, v = random_values(numel(shape_k), self.rng), random_values(numel(shape_k), self.rng)
        return [2.0 * x for x in q], k, v  # larger scores, so softcap bends them

    def variant_kwargs(self, variant, Hq):
        window, softcap, alibi, sinks = variant
        slopes = [2.0 ** (-8.0 * (h + 1) / Hq) for h in range(Hq)] if alibi else None
        sink_values = [self.rng.gauss(0.0, 1.5) for _ in range(Hq)] if sinks else None
        return dict(window_size=window, softcap=softcap, alibi_slopes=slopes, sinks=sink_values)

    @staticmethod
    def ref_kwargs(kw):
        return dict(window=kw["window_size"] or (-1, -1), softcap=kw["softcap"], slopes=kw["alibi_slopes"],
                    sinks=kw["sinks"])

    def test_forward_each_variant(self):
        for shape_q, shape_k, causal in (((1, 5, 2, 8), (1, 9, 1, 8), False), ((2, 9, 4, 8), (2, 6, 2, 8), True)):
            q, k, v = self.inputs(shape_q, shape_k)
            for variant in VARIANTS:
                kw = self.variant_kwargs(variant, shape_q[2])
                out, lse = flashtile.attention(f32(q, shape_q), f32(k, shape_k), f32(v, shape_k), causal=causal,
                                               return_lse=True, backend=self.backend, **kw)
                ref, ref_lse = reference(q, k, v, shape_q, shape_k, causal, **self.ref_kwargs(kw))
                what = "%s causal=%s %s" % (shape_q, causal, variant)
                self.assertLessEqual(rel_error(ref, out.tolist()), 1e-5, what)
                self.assertLessEqual(lse_error(ref_lse, lse.tolist()), 1e-5, what)

    def test_tables_as_buffers_and_per_batch_slopes(self):
        shape_q, shape_k = (2, 4, 2, 8), (2, 7, 2, 8)
        q, k, v = self.inputs(shape_q, shape_k)
        slopes = [[0.5, 0.25], [0.125, 1.0]]  # [B, Hq]
        sinks = [0.3, -0.7]
        out = flashtile.attention(f32(q, shape_q), f32(k, shape_k), f32(v, shape_k), backend=self.backend,
                                  alibi_slopes=f32([x for r in slopes for x in r], (2, 2)), sinks=f32(sinks, (2,)))
        ref, _ = reference(q, k, v, shape_q, shape_k, slopes=slopes, sinks=sinks)
        self.assertLessEqual(rel_error(ref, out.tolist()), 1e-5)
        nested = flashtile.attention(f32(q, shape_q), f32(k, shape_k), f32(v, shape_k), backend=self.backend,
                                     alibi_slopes=slopes, sinks=sinks)  # lists of floats
        self.assertEqual(nested.tolist(), out.tolist())

    def test_backward_finite_differences(self):
        """dq, dk, dv (and dsinks with sinks) against central differences of the double reference."""
        shape_q, shape_k = (1, 4, 2, 8), (1, 3, 1, 8)  # Sq > Sk, causal: row 0 sees no key (only the sink)
        for variant in VARIANTS[0], VARIANTS[3], VARIANTS[5], VARIANTS[6]:
            q, k, v = self.inputs(shape_q, shape_k)
            kw = self.variant_kwargs(variant, shape_q[2])
            dout = random_values(numel(shape_q), self.rng)
            out, lse = flashtile.attention(f32(q, shape_q), f32(k, shape_k), f32(v, shape_k), causal=True,
                                           return_lse=True, backend=self.backend, **kw)
            grads = flashtile.attention_backward(f32(q, shape_q), f32(k, shape_k), f32(v, shape_k), out, lse,
                                                 f32(dout, shape_q), causal=True, backend=self.backend, **kw)
            self.assertEqual(len(grads), 4 if kw["sinks"] else 3, "dsinks comes back exactly when sinks are given")
            args = [q, k, v] + ([kw["sinks"]] if kw["sinks"] else [])

            def loss(xs):
                rk = self.ref_kwargs(kw)
                if kw["sinks"]:
                    rk["sinks"] = xs[3]
                o, _ = reference(xs[0], xs[1], xs[2], shape_q, shape_k, True, **rk)
                return sum(a * b for a, b in zip(o, dout))

            for which, (x, g) in enumerate(zip(args, grads)):
                got = g.tolist()
                self.assertEqual(len(got), len(x))
                for i in range(len(x)):
                    xs = [list(a) for a in args]
                    xs[which][i] = x[i] + 1e-4
                    up = loss(xs)
                    xs[which][i] = x[i] - 1e-4
                    fd = (up - loss(xs)) / 2e-4
                    self.assertLessEqual(abs(fd - got[i]), 1e-4 * max(1.0, abs(fd)),
                                         "%s tensor %d element %d: fd %g, got %g" % (variant, which, i, fd, got[i]))

    def test_dsinks_formula(self):
        """dsinks = -sum_{b, i} exp(sink - lse) * rowsum(dout * out), summed over a batch of 2."""
        shape_q, shape_k = (2, 3, 2, 8), (2, 5, 2, 8)
        q, k, v = self.inputs(shape_q, shape_k)
        sinks, dout = [0.4, -1.2], random_values(numel(shape_q), self.rng)
        out, lse = flashtile.attention(f32(q, shape_q), f32(k, shape_k), f32(v, shape_k), return_lse=True,
                                       backend=self.backend, window_size=(1, 1), sinks=sinks)
        *_, dsinks = flashtile.attention_backward(f32(q, shape_q), f32(k, shape_k), f32(v, shape_k), out, lse,
                                                  f32(dout, shape_q), backend=self.backend, window_size=(1, 1),
                                                  sinks=sinks)
        o, l = out.tolist(), lse.tolist()
        B, Sq, Hq, D = shape_q
        for h in range(Hq):
            want = 0.0
            for b in range(B):
                for i in range(Sq):
                    row = ((b * Sq + i) * Hq + h) * D
                    delta = sum(dout[row + d] * o[row + d] for d in range(D))
                    want -= math.exp(sinks[h] - l[(b * Hq + h) * Sq + i]) * delta
            self.assertAlmostEqual(dsinks.tolist()[h], want, delta=1e-5 * max(1.0, abs(want)))

    def test_varlen_and_paged(self):
        """The variants per sequence: varlen (two sequences) and a paged cache (one sequence) against the reference."""
        kw = dict(window_size=(2, 0), softcap=0.8, sinks=[0.2, -0.4])
        lens_q, lens_k, Hq, Hkv, D = (3, 2), (5, 4), 2, 1, 8
        qs = [self.inputs((1, lq, Hq, D), (1, lk, Hkv, D)) for lq, lk in zip(lens_q, lens_k)]
        cu_q, cu_k = [0, 3, 5], [0, 5, 9]
        q = [x for s in qs for x in s[0]]
        k = [x for s in qs for x in s[1]]
        v = [x for s in qs for x in s[2]]
        out = flashtile.attention_varlen(f32(q, (5, Hq, D)), f32(k, (9, Hkv, D)), f32(v, (9, Hkv, D)), cu_q, cu_k, 3,
                                         5, causal=True, backend=self.backend, **kw).tolist()
        for b, (lq, lk) in enumerate(zip(lens_q, lens_k)):
            ref, _ = reference(qs[b][0], qs[b][1], qs[b][2], (1, lq, Hq, D), (1, lk, Hkv, D), True,
                               window=kw["window_size"], softcap=kw["softcap"], sinks=kw["sinks"])
            got = out[cu_q[b] * Hq * D:cu_q[b + 1] * Hq * D]
            self.assertLessEqual(rel_error(ref, got), 1e-5, "varlen sequence %d" % b)
        # One sequence of 5 keys in page 1 of a 2-page cache (page size 16).
        qd, kd, vd = qs[0]
        k_cache, v_cache = [0.0] * (2 * 16 * Hkv * D), [0.0] * (2 * 16 * Hkv * D)
        k_cache[16 * D:16 * D + len(kd)], v_cache[16 * D:16 * D + len(vd)] = kd, vd
        paged = flashtile.attention_with_kvcache(f32(qd, (1, 3, Hq, D)), f32(k_cache, (2, 16, Hkv, D)),
                                                 f32(v_cache, (2, 16, Hkv, D)), [[1]], [5], causal=True,
                                                 backend=self.backend, **kw)
        ref, _ = reference(qd, kd, vd, (1, 3, Hq, D), (1, 5, Hkv, D), True, window=kw["window_size"],
                           softcap=kw["softcap"], sinks=kw["sinks"])
        self.assertLessEqual(rel_error(ref, paged.tolist()), 1e-5, "paged")

    def test_bad_variant_arguments(self):
        shape = (1, 3, 2, 8)
        q = f32(random_values(numel(shape), self.rng), shape)

        def call(**kw):
            return flashtile.attention(q, q, q, backend=self.backend, **kw)

        for bad in ((1,), (1, 2, 3), "ab", (1.5, 0), (True, 0), 4):
            with self.assertRaises(flashtile.InvalidArgument, msg=repr(bad)) as ctx:
                call(window_size=bad)
            self.assertIn("window_size", ctx.exception.message)
        with self.assertRaises(flashtile.InvalidArgument) as ctx:
            call(window_size=(-2, 0))  # the library's rule
        self.assertIn("options.window_left", ctx.exception.message)
        for bad in ("x", True, None, 1e39):
            with self.assertRaises(flashtile.InvalidArgument, msg=repr(bad)) as ctx:
                call(softcap=bad)
            self.assertIn("softcap", ctx.exception.message)
        for bad in (-1.0, float("nan"), float("inf")):
            with self.assertRaises(flashtile.InvalidArgument, msg=repr(bad)) as ctx:
                call(softcap=bad)
            self.assertIn("options.softcap", ctx.exception.message)
        with self.assertRaises(flashtile.ShapeMismatch) as ctx:
            call(sinks=[0.1, 0.2, 0.3])
        self.assertIn("options.sinks", ctx.exception.message)
        with self.assertRaises(flashtile.ShapeMismatch) as ctx:
            call(alibi_slopes=[0.5])
        self.assertIn("options.alibi_slopes", ctx.exception.message)
        with self.assertRaises(flashtile.DTypeMismatch) as ctx:
            call(sinks=flashtile.HostArray.from_floats([0.1, 0.2], (2,), "f16"))
        self.assertIn("options.sinks: dtype must be f32", ctx.exception.message)


class HostVariantCopyRouteTest(HostVariantTest):
    """The same through uploads and downloads (the route every device but the CPU takes)."""

    def setUp(self):
        super().setUp()
        flashtile._host_zero_copy = False

    def tearDown(self):
        flashtile._host_zero_copy = True


# ---- torch (CPU tensors). ------------------------------------------------------------------------------------------


def torch_reference(q, k, v, causal=False, window=(-1, -1), softcap=0.0, slopes=None, sinks=None):
    """out of attention with the variants, in q's dtype, differentiable (float64 inputs: the reference)."""
    import torch
    B, Sq, Hq, D = q.shape
    Sk, Hkv = k.shape[1], k.shape[2]
    qf, kf, vf = (x.transpose(1, 2) for x in (q, k, v))
    kf, vf = kf.repeat_interleave(Hq // Hkv, dim=1), vf.repeat_interleave(Hq // Hkv, dim=1)
    s = torch.matmul(qf, kf.transpose(-1, -2)) / math.sqrt(D)
    if softcap > 0:
        s = softcap * torch.tanh(s / softcap)
    i = torch.arange(Sq, device=q.device).view(-1, 1)
    j = torch.arange(Sk, device=q.device).view(1, -1)
    rel = j - (i + Sk - Sq)  # key minus diagonal
    if slopes is not None:  # [Hq] or [B, Hq]
        s = s - slopes.to(s.dtype).view(B if slopes.dim() == 2 else 1, Hq, 1, 1) * rel.abs().to(s.dtype)
    hidden = torch.zeros(Sq, Sk, dtype=torch.bool, device=q.device)
    if causal:
        hidden |= rel > 0
    if window[0] >= 0:
        hidden |= rel < -window[0]
    if window[1] >= 0:
        hidden |= rel > window[1]
    s = s.masked_fill(hidden, -math.inf)
    if sinks is not None:  # a column that joins the denominator and carries no value
        col = sinks.to(s.dtype).view(1, Hq, 1, 1).expand(B, Hq, Sq, 1)
        p = torch.softmax(torch.cat([s, col], dim=-1), dim=-1)[..., :Sk]
    else:
        p = torch.softmax(s, dim=-1).nan_to_num(0.0)  # rows with no key: 0
    return torch.matmul(p, vf).transpose(1, 2)


@unittest.skipUnless(_has("torch"), "torch is not installed")
class TorchVariantTest(unittest.TestCase):
    """The variants on torch CPU tensors: forward, autograd (dsinks), opcheck, torch.compile."""

    def setUp(self):
        import torch
        self.torch = torch
        self.gen = torch.Generator().manual_seed(43)

    def randn(self, *shape):
        return self.torch.randn(*shape, generator=self.gen, dtype=self.torch.float32)

    def rel(self, a, b):
        a, b = a.double(), b.double()
        return ((a - b).norm() / b.norm().clamp_min(1e-30)).item()

    def case(self, B=2, Sq=9, Sk=13, Hq=4, Hkv=2, D=16):
        q, k, v = self.randn(B, Sq, Hq, D) * 2, self.randn(B, Sk, Hkv, D), self.randn(B, Sk, Hkv, D)
        slopes = self.torch.tensor([2.0 ** (-8.0 * (h + 1) / Hq) for h in range(Hq)])
        sinks = self.randn(Hq)
        return q, k, v, slopes, sinks

    def test_forward_and_autograd(self):
        torch = self.torch
        for causal, window, softcap, alibi, with_sinks in ((False, (3, 2), 0.0, False, False),
                                                           (True, (-1, -1), 1.5, False, True),
                                                           (True, (4, 0), 0.0, True, True),
                                                           (False, (-1, -1), 0.0, False, True)):
            q, k, v, slopes, sinks = self.case()
            leaves = [x.clone().requires_grad_(True) for x in (q, k, v, sinks)]
            kw = dict(window_size=window, softcap=softcap, alibi_slopes=slopes if alibi else None,
                      sinks=leaves[3] if with_sinks else None)
            out = flashtile.attention(*leaves[:3], causal=causal, **kw)
            dout = self.randn(*out.shape)
            (out * dout).sum().backward()
            wide = [x.detach().double().requires_grad_(True) for x in (q, k, v, sinks)]
            ref = torch_reference(*wide[:3], causal=causal, window=window, softcap=softcap,
                                  slopes=slopes.double() if alibi else None, sinks=wide[3] if with_sinks else None)
            (ref * dout.double()).sum().backward()
            what = "causal=%s window=%s softcap=%s alibi=%s sinks=%s" % (causal, window, softcap, alibi, with_sinks)
            self.assertLessEqual(self.rel(out.detach(), ref.detach()), 1e-5, what)
            for name, got, want in zip(("dq", "dk", "dv"), leaves, wide):
                self.assertLessEqual(self.rel(got.grad, want.grad), 1e-4, name + " " + what)
            if with_sinks:
                self.assertLessEqual(self.rel(leaves[3].grad, wide[3].grad), 1e-4, "dsinks " + what)
            else:
                self.assertIsNone(leaves[3].grad)

    def test_explicit_backward_returns_dsinks(self):
        q, k, v, _, sinks = self.case()
        out, lse = flashtile.attention(q, k, v, causal=True, return_lse=True, sinks=sinks, window_size=(5, 0))
        dout = self.randn(*out.shape)
        grads = flashtile.attention_backward(q, k, v, out, lse, dout, causal=True, sinks=sinks, window_size=(5, 0))
        self.assertEqual(len(grads), 4)
        self.assertEqual(tuple(grads[3].shape), (q.shape[2],))
        leaf = sinks.clone().requires_grad_(True)
        (flashtile.attention(q, k, v, causal=True, sinks=leaf, window_size=(5, 0)) * dout).sum().backward()
        self.assertLessEqual(self.rel(grads[3], leaf.grad), 1e-6)
        self.assertEqual(len(flashtile.attention_backward(q, k, v, out, lse, dout, causal=True)), 3)
        r = flashtile.plan_backward(q, k, v, out, lse, dout, causal=True, sinks=sinks, window_size=(5, 0))
        self.assertEqual(r.path, "cpu_reference")
        self.assertEqual(flashtile.plan(q, k, v, softcap=2.0, sinks=sinks).path, "cpu_reference")

    def test_serving_layouts(self):
        torch = self.torch
        q, k, v, slopes, sinks = self.case(B=1, Sq=3, Sk=5, Hq=2, Hkv=1, D=16)
        kw = dict(window_size=(2, 0), softcap=1.5, alibi_slopes=slopes, sinks=sinks)
        dense = flashtile.attention(q, k, v, causal=True, **kw)
        cu_q, cu_k = torch.tensor([0, 3], dtype=torch.int32), torch.tensor([0, 5], dtype=torch.int32)
        varlen = flashtile.attention_varlen(q[0], k[0], v[0], cu_q, cu_k, 3, 5, causal=True, **kw)
        self.assertLessEqual(self.rel(varlen, dense[0]), 1e-6)
        k_cache, v_cache = torch.zeros(1, 16, 1, 16), torch.zeros(1, 16, 1, 16)
        k_cache[0, :5], v_cache[0, :5] = k[0], v[0]
        paged = flashtile.attention_with_kvcache(q, k_cache, v_cache, torch.zeros(1, 1, dtype=torch.int32),
                                                 torch.tensor([5], dtype=torch.int32), causal=True, **kw)
        self.assertLessEqual(self.rel(paged, dense), 1e-6)

    def test_errors(self):
        q, k, v, _, sinks = self.case()
        with self.assertRaises(flashtile.ShapeMismatch) as ctx:
            flashtile.attention(q, k, v, sinks=sinks[:3])
        self.assertIn("options.sinks", ctx.exception.message)
        with self.assertRaises(flashtile.InvalidArgument) as ctx:
            flashtile.attention(q, k, v, sinks=[0.0] * 4)  # torch q: the tables must be torch tensors too
        self.assertIn("sinks", ctx.exception.message)
        with self.assertRaises(flashtile.InvalidArgument) as ctx:
            flashtile.attention(q, k, v, window_size=(1, 2, 3))
        self.assertIn("window_size", ctx.exception.message)

    def test_opcheck(self):
        torch = self.torch
        if not hasattr(torch.library, "opcheck"):
            self.skipTest("torch.library.opcheck needs torch >= 2.4")
        q, k, v, slopes, sinks = self.case(B=1, Sq=7, Sk=10)
        leaves = [x.requires_grad_(True) for x in (q, k, v, sinks)]
        fwd_args = (*leaves[:3], True, None, None, True, False, False, 4, 0, 1.5, slopes, leaves[3])
        torch.library.opcheck(torch.ops.flashtile.attention_fwd.default, fwd_args)
        out, lse = torch.ops.flashtile.attention_fwd(*fwd_args)
        bwd_args = (q.detach(), k.detach(), v.detach(), out.detach(), lse.detach(), torch.randn_like(out), True, None,
                    None, False, 4, 0, 1.5, slopes, sinks.detach(), True)
        torch.library.opcheck(torch.ops.flashtile.attention_bwd.default, bwd_args)

    def test_compile_fullgraph(self):
        torch = self.torch
        q, k, v, slopes, sinks = self.case()

        def f(a, b, c, s):
            return flashtile.attention(a, b, c, causal=True, window_size=(4, 0), softcap=1.5, alibi_slopes=slopes,
                                       sinks=s)

        eager_leaves = [x.clone().requires_grad_(True) for x in (q, k, v, sinks)]
        eager = f(*eager_leaves)
        eager.square().sum().backward()
        torch._dynamo.reset()
        leaves = [x.clone().requires_grad_(True) for x in (q, k, v, sinks)]
        compiled = torch.compile(f, fullgraph=True, backend="aot_eager")(*leaves)
        compiled.square().sum().backward()
        self.assertLessEqual(self.rel(compiled.detach(), eager.detach()), 1e-6)
        for a, b in zip(leaves, eager_leaves):
            self.assertLessEqual(self.rel(a.grad, b.grad), 1e-5)


@unittest.skipUnless(_torch_cuda(), "torch with CUDA is not available")
class TorchCudaVariantTest(unittest.TestCase):
    """The variants through autograd on CUDA tensors (the GPU backward kernels, dsinks included), eager and under
    torch.compile, against the double reference."""

    def test_autograd_each_variant(self):
        import torch
        gen = torch.Generator(device="cuda").manual_seed(5)
        B, Sq, Sk, Hq, Hkv, D = 2, 200, 333, 8, 2, 128
        for causal, window, softcap, alibi, with_sinks, dtype in (
                (False, (-1, -1), 0.0, False, True, torch.bfloat16), (True, (-1, -1), 0.0, False, True, torch.float16),
                (True, (64, 0), 20.0, True, True, torch.bfloat16), (False, (30, 40), 5.0, True, False, torch.float16)):
            q, k, v = (torch.randn(B, S, H, D, device="cuda", generator=gen).to(dtype)
                       for S, H in ((Sq, Hq), (Sk, Hkv), (Sk, Hkv)))
            slopes = torch.tensor([2.0 ** (-8.0 * (h + 1) / Hq) for h in range(Hq)], device="cuda")
            sinks = torch.randn(Hq, device="cuda", generator=gen)
            dout = torch.randn(B, Sq, Hq, D, device="cuda", generator=gen).to(dtype)
            what = "causal=%s window=%s softcap=%s alibi=%s sinks=%s %s" % (causal, window, softcap, alibi,
                                                                         with_sinks, dtype)
            wide = [x.detach().double().requires_grad_(True) for x in (q, k, v, sinks)]
            ref = torch_reference(*wide[:3], causal=causal, window=window, softcap=softcap,
                                  slopes=slopes.double() if alibi else None, sinks=wide[3] if with_sinks else None)
            (ref * dout.double()).sum().backward()

            def f(q, k, v, sinks):
                return flashtile.attention(q, k, v, causal=causal, window_size=window, softcap=softcap,
                                           alibi_slopes=slopes if alibi else None,
                                           sinks=sinks if with_sinks else None)
            for mode in ("eager", "compiled"):
                leaves = [x.detach().clone().requires_grad_(True) for x in (q, k, v, sinks)]
                if mode == "compiled":
                    torch._dynamo.reset()
                    out = torch.compile(f, fullgraph=True, backend="aot_eager")(*leaves)
                else:
                    out = f(*leaves)
                (out * dout).sum().backward()
                self.assertEqual(flashtile.last_result().backend, "cuda")
                self.assertLessEqual(rel(out.detach(), ref.detach()), 2e-2, "out %s %s" % (mode, what))
                for name, got, want in zip(("dq", "dk", "dv"), leaves, wide):
                    self.assertLessEqual(rel(got.grad, want.grad), 3e-2, "%s %s %s" % (name, mode, what))
                if with_sinks:
                    self.assertLessEqual(rel(leaves[3].grad, wide[3].grad), 3e-2, "dsinks %s %s" % (mode, what))
                else:
                    self.assertIsNone(leaves[3].grad)


def rel(a, b):
    a, b = a.double().cpu(), b.double().cpu()
    return ((a - b).norm() / b.norm().clamp_min(1e-30)).item()


if __name__ == "__main__":
    unittest.main()
