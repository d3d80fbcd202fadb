"""Tests of the binding's backward: flashtile.attention_backward / plan_backward on host buffers (standard library
only, against a double-precision reference written here and finite differences of flashtile.attention), and, with
torch, autograd through flashtile.attention (custom ops, torch.compile, opcheck) on the CPU and on CUDA.

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
from test_flashtile import _has, _torch_cuda, numel, random_values, rel_error, torch_scores  # noqa: E402

# Gradients against the exact (double) gradient of the rounded inputs: the forward's bounds (16-bit cases round out,
# dout and the gradients themselves; measured 2e-4 for f16, 1.8e-3 for bf16).
GRAD_TOL = {"f32": 1e-5, "f16": 2e-3, "bf16": 1e-2}


def reference_backward(q, k, v, dout, shape_q, shape_k, causal, scale=None):
    """The exact gradients of attention in double, on flat C-ordered lists: (dq, dk, dv). With GQA, dk and dv sum
    over each group's query heads; rows that see no key contribute nothing."""
    B, Sq, Hq, D = shape_q
    _, Sk, Hkv, _ = shape_k
    scale = 1.0 / math.sqrt(D) if scale is None else scale
    group = Hq // Hkv
    dq = [0.0] * len(q)
    dk = [0.0] * len(k)
    dv = [0.0] * len(v)
    for b in range(B):
        for h in range(Hq):
            hk = h // group
            for i in range(Sq):
                visible = min(i + Sk - Sq, Sk - 1) + 1 if causal else Sk
                if visible <= 0:
                    continue
                qo = ((b * Sq + i) * Hq + h) * D
                kos = [((b * Sk + j) * Hkv + hk) * D for j in range(visible)]
                s = [scale * sum(q[qo + d] * k[ko + d] for d in range(D)) for ko in kos]
                m = max(s)
                w = [math.exp(x - m) for x in s]
                total = sum(w)
                p = [x / total for x in w]
                dp = [sum(dout[qo + d] * v[ko + d] for d in range(D)) for ko in kos]
                delta = sum(pj * dpj for pj, dpj in zip(p, dp))
                for j, ko in enumerate(kos):
                    ds = p[j] * (dp[j] - delta)
                    for d in range(D):
                        dq[qo + d] += scale * ds * k[ko + d]
                        dk[ko + d] += scale * ds * q[qo + d]
                        dv[ko + d] += p[j] * dout[qo + d]
    return dq, dk, dv


def flat(x):
    return x.tolist() if isinstance(x, flashtile.HostArray) else [float(e) for e in x.ravel()]


def host_inputs(dtype, shape_q, shape_k, seed):
    """q, k, v, dout as HostArrays of `dtype` and the values they hold (rounded), flat."""
    rng = random.Random(seed)
    shapes = (shape_q, shape_k, shape_k, shape_q)
    arrays = [flashtile.HostArray.from_floats(random_values(numel(s), rng), s, dtype) for s in shapes]
    return arrays, [a.tolist() for a in arrays]


class HostBackwardTest(unittest.TestCase):
    """attention_backward on the CPU with host buffers, against reference_backward."""

    backend = "cpu"

    def run_case(self, dtype, shape_q, shape_k, causal, scale=None, seed=0, deterministic=False):
        (q, k, v, dout), vals = host_inputs(dtype, shape_q, shape_k, seed)
        out, lse = flashtile.attention(q, k, v, causal=causal, scale=scale, return_lse=True, backend=self.backend)
        grads = flashtile.attention_backward(q, k, v, out, lse, dout, causal=causal, scale=scale,
                                             backend=self.backend, deterministic=deterministic)
        info = flashtile.last_result()
        self.assertEqual(info.backend, self.backend)
        self.assertEqual(info.path, "cpu_reference")
        refs = reference_backward(*vals, shape_q, shape_k, causal, scale)
        for name, got, ref, shape in zip(("dq", "dk", "dv"), grads, refs, (shape_q, shape_k, shape_k)):
            self.assertIsInstance(got, flashtile.HostArray)
            self.assertEqual((got.shape, got.dtype), (tuple(shape), dtype))
            err = rel_error(ref, got.tolist())
            self.assertLessEqual(err, GRAD_TOL[dtype], "%s %s %s %s causal=%s: %s rel error %g" % (
                dtype, shape_q, shape_k, scale, causal, name, err))
        return grads

    def test_single_row_and_key(self):
        self.run_case("f32", (1, 1, 1, 64), (1, 1, 1, 64), causal=False)
        self.run_case("f32", (1, 1, 1, 64), (1, 1, 1, 64), causal=True, seed=1)

    def test_odd_causal_square(self):
        self.run_case("f32", (1, 17, 2, 64), (1, 17, 2, 64), causal=True, seed=2)

    def test_fewer_queries_than_keys_gqa(self):
        self.run_case("f32", (2, 5, 4, 32), (2, 17, 2, 32), causal=False, seed=3)
        self.run_case("f32", (1, 5, 4, 32), (1, 17, 1, 32), causal=True, seed=4)

    def test_more_queries_than_keys_causal(self):
        # Bottom-right causal with Sq > Sk: the first 12 rows see no key and must give zero dq.
        dq, _, _ = self.run_case("f32", (1, 17, 2, 16), (1, 5, 1, 16), causal=True, seed=5)
        first = dq.tolist()[:12 * 2 * 16]
        self.assertEqual(first, [0.0] * len(first))

    def test_more_queries_than_keys(self):
        self.run_case("f32", (1, 17, 3, 16), (1, 1, 1, 16), causal=False, seed=6)

    def test_scale(self):
        self.run_case("f32", (1, 6, 2, 32), (1, 9, 2, 32), causal=True, scale=0.3, seed=7)
        self.run_case("f32", (1, 6, 2, 32), (1, 9, 1, 32), causal=False, scale=-0.8, seed=8)

    def test_f16_and_bf16(self):
        self.run_case("f16", (1, 7, 2, 64), (1, 11, 2, 64), causal=True, seed=9)
        self.run_case("bf16", (1, 11, 4, 64), (1, 7, 2, 64), causal=False, seed=10)

    def test_deterministic_accepted(self):
        a = self.run_case("f32", (1, 9, 2, 32), (1, 13, 1, 32), causal=True, seed=11, deterministic=True)
        b = self.run_case("f32", (1, 9, 2, 32), (1, 13, 1, 32), causal=True, seed=11, deterministic=False)
        for x, y in zip(a, b):  # the CPU reference is always deterministic: identical bits either way
            self.assertEqual(bytes(x.buffer), bytes(y.buffer))
        self.assertEqual(flashtile._options(False, None, None, deterministic=True).deterministic, 1)

    def test_memoryview_inputs(self):
        # Shaped f32 memoryviews, as numpy arrays would come: outputs are HostArrays.
        shape_q, shape_k = (1, 4, 2, 16), (1, 6, 2, 16)
        (q, k, v, dout), vals = host_inputs("f32", shape_q, shape_k, 12)
        views = [memoryview(a.buffer).cast("B").cast("f", list(a.shape)) for a in (q, k, v, dout)]
        out, lse = flashtile.attention(*views[:3], causal=True, return_lse=True, backend=self.backend)
        lse_view = memoryview(lse.buffer).cast("B").cast("f", list(lse.shape))
        grads = flashtile.attention_backward(*views[:3], out, lse_view, views[3], causal=True, backend=self.backend)
        for got, ref in zip(grads, reference_backward(*vals, shape_q, shape_k, True)):
            self.assertLessEqual(rel_error(ref, got.tolist()), GRAD_TOL["f32"])

    def test_finite_differences(self):
        # Independent of reference_backward: d(sum(out * dout))/dx by central differences of flashtile.attention.
        shape_q, shape_k = (1, 5, 2, 8), (1, 7, 1, 8)
        (q, k, v, dout), vals = host_inputs("f32", shape_q, shape_k, 13)
        out, lse = flashtile.attention(q, k, v, causal=True, return_lse=True, backend=self.backend)
        grads = [g.tolist() for g in flashtile.attention_backward(q, k, v, out, lse, dout, causal=True,
                                                                  backend=self.backend)]
        eps = 1e-2

        def loss(qkv):
            arrays = [flashtile.HostArray.from_floats(x, s, "f32") for x, s in zip(qkv, (shape_q, shape_k, shape_k))]
            o = flashtile.attention(*arrays, causal=True, backend=self.backend).tolist()
            return sum(a * b for a, b in zip(o, vals[3]))

        rng = random.Random(14)
        for which in range(3):
            for idx in rng.sample(range(len(vals[which])), 6):
                plus = [list(x) for x in vals[:3]]
                minus = [list(x) for x in vals[:3]]
                plus[which][idx] += eps
                minus[which][idx] -= eps
                fd = (loss(plus) - loss(minus)) / (2 * eps)
                self.assertAlmostEqual(grads[which][idx], fd, delta=2e-3 + 1e-2 * abs(fd),
                                       msg="input %d element %d" % (which, idx))

    def test_plan_backward(self):
        (q, k, v, dout), _ = host_inputs("f32", (1, 3, 2, 16), (1, 4, 2, 16), 15)
        out, lse = flashtile.attention(q, k, v, return_lse=True, backend=self.backend)
        r = flashtile.plan_backward(q, k, v, out, lse, dout, backend=self.backend, deterministic=True)
        self.assertIsInstance(r, flashtile.Result)
        self.assertEqual((r.backend, r.path), (self.backend, "cpu_reference"))
        self.assertIsInstance(r.workspace_bytes, int)
        self.assertGreaterEqual(r.workspace_bytes, 0)
        self.assertFalse(r.asynchronous)


class HostBackwardCopyRouteTest(HostBackwardTest):
    """The same on the CPU through the route GPU devices take: owned tensors, upload, run, download."""

    def setUp(self):
        flashtile._host_zero_copy = False

    def tearDown(self):
        flashtile._host_zero_copy = True


class BackwardArgumentTest(unittest.TestCase):
    """Each backward argument's errors name it, and a rejected call writes nothing."""

    def setUp(self):
        self.shape_q, self.shape_k = (1, 3, 2, 16), (1, 5, 1, 16)
        (self.q, self.k, self.v, self.dout), _ = host_inputs("f32", self.shape_q, self.shape_k, 20)
        self.out, self.lse = flashtile.attention(self.q, self.k, self.v, return_lse=True, backend="cpu")

    def args(self, **replace):
        names = ("q", "k", "v", "out", "lse", "dout")
        return [replace.get(n, getattr(self, n)) for n in names]

    def assert_error(self, cls, needle, *args, **kwargs):
        kwargs.setdefault("backend", "cpu")
        with self.assertRaises(cls) as ctx:
            flashtile.attention_backward(*args, **kwargs)
        self.assertIn(needle, ctx.exception.message)
        return ctx.exception

    def test_lse_missing(self):
        e = self.assert_error(flashtile.InvalidArgument, "lse", *self.args(lse=None))
        self.assertIn("return_lse", e.message)

    def test_lse_misshaped(self):
        wrong = flashtile.HostArray.empty((1, 2, 4), "f32")  # seqlen_q 4 instead of 3
        self.assert_error(flashtile.Error, "lse", *self.args(lse=wrong))
        self.assert_error(flashtile.InvalidArgument, "lse", *self.args(lse=flashtile.HostArray.empty((2, 3), "f32")))

    def test_lse_dtype(self):
        wrong = flashtile.HostArray.empty((1, 2, 3), "f16")
        e = self.assert_error(flashtile.DTypeMismatch, "lse", *self.args(lse=wrong))
        self.assertIsInstance(e, TypeError)

    def test_dout_shape(self):
        self.assert_error(flashtile.ShapeMismatch, "dout",
                          *self.args(dout=flashtile.HostArray.empty((1, 3, 2, 8), "f32")))
        self.assert_error(flashtile.InvalidArgument, "dout",
                          *self.args(dout=flashtile.HostArray.empty((3, 2, 16), "f32")))

    def test_dtype_mismatch(self):
        self.assert_error(flashtile.DTypeMismatch, "dout",
                          *self.args(dout=flashtile.HostArray.empty(self.shape_q, "f16")))
        self.assert_error(flashtile.DTypeMismatch, "out",
                          *self.args(out=flashtile.HostArray.empty(self.shape_q, "bf16")))

    def test_forward_arguments_checked(self):
        # The forward's rules hold in the backward: k's heads must divide q's, scale must be finite.
        kv3 = flashtile.HostArray.empty((1, 5, 3, 16), "f32")
        self.assert_error(flashtile.Error, "heads", *self.args(k=kv3, v=kv3))
        self.assert_error(flashtile.InvalidArgument, "scale", *self.args(), scale=float("nan"))
        self.assert_error(flashtile.InvalidArgument, "path", *self.args(), path="no_such")
        self.assert_error(flashtile.InvalidArgument, "q", *self.args(q=[1.0]))

    def test_gradient_tensors_checked(self):
        # dq, dk and dv come from the binding; the C API still checks them (shape, aliasing), naming each.
        dev = flashtile.Device.get("cpu")
        t = {n: flashtile._create(dev, "f32", s) for n, s in
             (("q", self.shape_q), ("k", self.shape_k), ("v", self.shape_k), ("out", self.shape_q),
              ("dout", self.shape_q), ("dq", self.shape_q), ("dk", self.shape_k), ("dv", self.shape_k))}
        t["lse"] = flashtile._create(dev, "f32", (1, 2, 3))
        order = ("q", "k", "v", "out", "lse", "dout", "dq", "dk", "dv")
        opts = flashtile._options(False, None, None)
        flashtile._backward([t[n] for n in order], opts)  # the right tensors run
        bad = dict(t, dq=flashtile._create(dev, "f32", self.shape_k))
        with self.assertRaises(flashtile.ShapeMismatch) as ctx:
            flashtile._backward([bad[n] for n in order], opts)
        self.assertIn("dq", ctx.exception.message)
        bad = dict(t, dk=t["k"])
        with self.assertRaises(flashtile.Aliasing) as ctx:
            flashtile._backward([bad[n] for n in order], opts)
        self.assertIn("dk", ctx.exception.message)

    def test_plan_backward_checks_too(self):
        with self.assertRaises(flashtile.InvalidArgument) as ctx:
            flashtile.plan_backward(*self.args(lse=None), backend="cpu")
        self.assertIn("lse", ctx.exception.message)


def _vulkan_devices():
    try:
        return [d for d in flashtile.devices() if d.backend == "vulkan"]
    except Exception:
        return []


@unittest.skipUnless(_vulkan_devices(), "no Vulkan device")
class VulkanBackwardTest(unittest.TestCase):
    """The portable path runs the backward; the cooperative-matrix paths, where a device has them, refuse it."""

    def test_portable_matches_the_reference(self):
        shape_q, shape_k = (1, 17, 2, 64), (1, 30, 1, 64)
        (q, k, v, dout), vals = host_inputs("f16", shape_q, shape_k, 30)
        out, lse = flashtile.attention(q, k, v, causal=True, return_lse=True, backend="vulkan")
        grads = flashtile.attention_backward(q, k, v, out, lse, dout, causal=True, backend="vulkan",
                                             path="vulkan_portable")
        self.assertEqual(flashtile.last_result().path, "vulkan_portable")
        refs = reference_backward(*vals, shape_q, shape_k, True)
        for name, got, ref in zip(("dq", "dk", "dv"), grads, refs):
            self.assertLessEqual(rel_error(ref, got.tolist()), GRAD_TOL["f16"], name)

    def test_coopmat_paths_name_the_reason(self):
        (q, k, v, dout), _ = host_inputs("f16", (1, 4, 1, 64), (1, 4, 1, 64), 31)
        out, lse = flashtile.attention(q, k, v, return_lse=True, backend="vulkan")
        paths = [p for d in _vulkan_devices() for p in d.paths if p != "vulkan_portable"]
        if not paths:
            self.skipTest("no cooperative-matrix path on this Vulkan device")
        with self.assertRaises(flashtile.Unsupported) as ctx:
            flashtile.attention_backward(q, k, v, out, lse, dout, backend="vulkan", path=paths[0])
        self.assertIn("backward", ctx.exception.message)


# ---- torch. -------------------------------------------------------------------------------------------------------


def math_attention(q, k, v, causal, scale=None):
    """Differentiable attention in torch ops, in the inputs' dtype, for [B, S, H, D] tensors (GQA by
    repeat_interleave, bottom-right causal). Every row must see a key (Sq <= Sk when causal)."""
    import torch
    s, vf = torch_scores(q, k, v, causal, scale)
    return torch.matmul(torch.softmax(s, dim=-1), vf).transpose(1, 2)


def grads_of(fn, q, k, v, dout):
    """(out, dq, dk, dv) of fn on fresh leaves copied from q, k, v."""
    leaves = [x.detach().clone().requires_grad_(True) for x in (q, k, v)]
    out = fn(*leaves)
    out.backward(dout)
    return (out.detach(),) + tuple(x.grad for x in leaves)


def rel(a, b):
    return ((a.double() - b.double()).norm() / b.double().norm().clamp_min(1e-30)).item()


class _TorchAutogradCases:
    """Autograd through flashtile.attention, shared by the CPU and CUDA classes (self.device, self.dtypes)."""

    def randn(self, *shape, dtype=None):
        import torch
        return torch.randn(*shape, generator=self.gen, device=self.device, dtype=dtype or torch.float32).to(
            dtype or self.dtypes[0])

    def check_grads(self, dtype, B, Sq, Sk, Hq, Hkv, D, causal, scale=None):
        import torch
        q, k, v = self.randn(B, Sq, Hq, D, dtype=dtype), self.randn(B, Sk, Hkv, D, dtype=dtype), \
            self.randn(B, Sk, Hkv, D, dtype=dtype)
        dout = self.randn(B, Sq, Hq, D, dtype=dtype)
        got = grads_of(lambda a, b, c: flashtile.attention(a, b, c, causal=causal, scale=scale), q, k, v, dout)
        # The reference in float32 (float64 on the CPU) from the same inputs; the same math in the inputs' dtype says
        # how much error that dtype alone brings: flashtile may have at most twice that, plus a floor.
        wide = torch.float64 if self.device == "cpu" else torch.float32
        ref = grads_of(lambda a, b, c: math_attention(a, b, c, causal, scale), *(x.to(wide) for x in (q, k, v, dout)))
        low = grads_of(lambda a, b, c: math_attention(a, b, c, causal, scale), q, k, v, dout)
        floor = {torch.float32: 1e-5, torch.float16: 1e-3, torch.bfloat16: 4e-3}[dtype]
        for name, g, r, lo in zip(("out", "dq", "dk", "dv"), got, ref, low):
            self.assertEqual((g.shape, g.dtype), (r.shape, dtype), name)
            self.assertTrue(torch.isfinite(g).all().item(), name)
            err, bound = rel(g, r), 2 * rel(lo, r) + floor
            self.assertLessEqual(err, bound, "%s %s B%d Sq%d Sk%d Hq%d Hkv%d D%d causal=%s: rel error %g > %g (%s)" % (
                name, dtype, B, Sq, Sk, Hq, Hkv, D, causal, err, bound, flashtile.last_result()))

    def test_grads(self):
        for dtype in self.dtypes:
            self.check_grads(dtype, 2, self.S, self.S, 4, 4, self.D, causal=False)
            self.check_grads(dtype, 1, self.S, self.S, 4, 4, self.D, causal=True)

    def test_grads_gqa_ragged(self):
        for dtype in self.dtypes:
            self.check_grads(dtype, 1, 17, self.S + 3, 8, 2, self.D, causal=True)  # Sq < Sk, causal
            self.check_grads(dtype, 2, self.S + 3, 17, 4, 1, self.D, causal=False, scale=0.2)  # Sq > Sk

    def test_lse_detached_and_no_grad_path(self):
        import torch
        q = self.randn(1, 9, 2, self.D).requires_grad_(True)
        out, lse = flashtile.attention(q, q, q, return_lse=True)
        self.assertTrue(out.requires_grad)
        self.assertFalse(lse.requires_grad)  # lse carries no gradient
        self.assertEqual(tuple(lse.shape), (1, 2, 9))
        with torch.no_grad():
            self.assertFalse(flashtile.attention(q, q, q).requires_grad)

    def test_expanded_and_strided_dout(self):
        # out.sum() hands back a gradient of stride 0; a transposed layout gives a non-contiguous q.
        import torch
        q = self.randn(1, 4, 16, self.D).transpose(1, 2).requires_grad_(True)  # stored [B, H, S, D]
        flashtile.attention(q, q, q, causal=True).float().sum().backward()
        ref = q.detach().clone().requires_grad_(True)
        math_attention(ref, ref, ref, True).float().sum().backward()
        self.assertLessEqual(rel(q.grad, ref.grad), 2e-2 if q.dtype != torch.float32 else 1e-4)

    def test_explicit_backward_matches_autograd(self):
        q, k, v = self.randn(1, 11, 4, self.D), self.randn(1, 13, 2, self.D), self.randn(1, 13, 2, self.D)
        dout = self.randn(1, 11, 4, self.D)
        out, lse = flashtile.attention(q, k, v, causal=True, return_lse=True)
        explicit = flashtile.attention_backward(q, k, v, out, lse, dout, causal=True, deterministic=True)
        auto = grads_of(lambda a, b, c: flashtile.attention(a, b, c, causal=True, deterministic=True), q, k, v, dout)
        for e, a in zip(explicit, auto[1:]):
            self.assertLessEqual(rel(e, a), 1e-6)
        r = flashtile.plan_backward(q, k, v, out, lse, dout, causal=True)
        self.assertEqual(r.backend, self.device)
        self.assertIsInstance(r.workspace_bytes, int)

    def test_backward_errors_name_the_argument(self):
        q = self.randn(1, 5, 2, self.D)
        out, lse = flashtile.attention(q, q, q, return_lse=True)
        with self.assertRaises(flashtile.InvalidArgument) as ctx:
            flashtile.attention_backward(q, q, q, out, None, out)
        self.assertIn("lse", ctx.exception.message)
        with self.assertRaises(flashtile.Error) as ctx:
            flashtile.attention_backward(q, q, q, out, lse[:, :, :4], out)
        self.assertIn("lse", ctx.exception.message)
        with self.assertRaises(flashtile.Error) as ctx:
            flashtile.attention_backward(q, q, q, out, lse, out[:, :4])
        self.assertIn("dout", ctx.exception.message)

    def test_opcheck(self):
        import torch
        if not hasattr(torch.library, "opcheck"):
            self.skipTest("torch.library.opcheck needs torch >= 2.4")
        q, k, v = self.randn(1, 9, 4, self.D), self.randn(1, 12, 2, self.D), self.randn(1, 12, 2, self.D)
        fwd_args = (q.requires_grad_(True), k.requires_grad_(True), v.requires_grad_(True), True, None, None, True,
                    False, False, -1, -1, 0.0, None, None)  # no variants (test_variants.py has them)
        torch.library.opcheck(torch.ops.flashtile.attention_fwd.default, fwd_args)
        out, lse = torch.ops.flashtile.attention_fwd(*fwd_args)
        bwd_args = (q.detach(), k.detach(), v.detach(), out.detach(), lse.detach(), torch.randn_like(out), True,
                    0.3, None, False, -1, -1, 0.0, None, None, False)
        torch.library.opcheck(torch.ops.flashtile.attention_bwd.default, bwd_args)

    def test_compile_fullgraph(self):
        import torch
        model = _tiny_model(torch, self.D).to(self.device, self.dtypes[0])
        x = self.randn(2, 24, 4 * self.D)
        eager = [p.detach().clone() for p in model.parameters()]
        model(x).float().square().mean().backward()
        eager_grads = [p.grad.detach().clone() for p in model.parameters()]
        model.zero_grad(set_to_none=True)
        torch._dynamo.reset()
        compiled = torch.compile(model, fullgraph=True, backend=self.compile_backend)
        y = compiled(x)
        y.float().square().mean().backward()
        self.assertLessEqual(rel(y, model(x)), 1e-2)
        for p, g, before in zip(model.parameters(), eager_grads, eager):
            self.assertTrue(torch.equal(p.detach(), before))
            self.assertLessEqual(rel(p.grad, g), 5e-2)


def _tiny_model(torch, head_dim):
    class Block(torch.nn.Module):
        """One causal self-attention layer through flashtile.attention, as a model would use it."""

        def __init__(self, heads=4):
            super().__init__()
            self.heads, width = heads, heads * head_dim
            self.qkv = torch.nn.Linear(width, 3 * width)
            self.proj = torch.nn.Linear(width, width)

        def forward(self, x):
            B, S, _ = x.shape
            q, k, v = self.qkv(x).view(B, S, 3, self.heads, -1).unbind(2)
            y = flashtile.attention(q, k, v, causal=True)
            return x + self.proj(y.reshape(B, S, -1))

    torch.manual_seed(0)
    return Block()


@unittest.skipUnless(_has("torch"), "torch is not installed")
class TorchCpuAutogradTest(_TorchAutogradCases, unittest.TestCase):
    """Autograd on torch CPU tensors: the CPU backend (f32; the reference in float64)."""

    device, S, D, compile_backend = "cpu", 33, 32, "aot_eager"

    def setUp(self):
        import torch
        self.dtypes = (torch.float32,)
        self.gen = torch.Generator().manual_seed(0)


def _cuda_backward_skip_reason():
    """Why the CUDA autograd tests cannot run here, or '' when they can."""
    if not _torch_cuda():
        return "needs torch with CUDA (torch.cuda.is_available() is false or torch is absent)"
    try:
        if not [d for d in flashtile.devices() if d.backend == "cuda"]:
            return "flashtile has no CUDA device: %s" % flashtile.unavailable_reason("cuda")
        import torch
        # Distinct tensors: out may not overlap q (the forward's aliasing rule holds in the backward too).
        q, k, v, out, dout = (torch.zeros(1, 128, 2, 128, device="cuda", dtype=torch.bfloat16) for _ in range(5))
        lse = torch.zeros(1, 2, 128, device="cuda")
        flashtile.plan_backward(q, k, v, out, lse, dout, causal=True)
    except flashtile.Unsupported as e:
        return "flashtile's CUDA backend has no backward for bf16 d128 here: %s" % e
    except Exception as e:
        return "%s: %s" % (type(e).__name__, e)
    return ""


_CUDA_SKIP = _cuda_backward_skip_reason()


@unittest.skipIf(_CUDA_SKIP, _CUDA_SKIP)
class TorchCudaAutogradTest(_TorchAutogradCases, unittest.TestCase):
    """Autograd on CUDA tensors (bf16, f16) against PyTorch's math attention in float32."""

    device, S, D, compile_backend = "cuda", 257, 128, "inductor"

    def setUp(self):
        import torch
        self.dtypes = (torch.bfloat16, torch.float16)
        self.gen = torch.Generator(device="cuda").manual_seed(0)

    def test_head_dim_64(self):
        import torch
        self.check_grads(torch.bfloat16, 2, 200, 200, 16, 16, 64, causal=True)
        self.check_grads(torch.float16, 1, 130, 300, 8, 1, 64, causal=False)

    def test_backward_on_current_stream(self):
        # Forward and backward queued on a side stream: autograd runs the backward on the forward's stream.
        import torch
        q = self.randn(2, 512, 8, 128)
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            leaf = q.detach().clone().requires_grad_(True)
            flashtile.attention(leaf, leaf, leaf, causal=True).float().sum().backward()
            self.assertTrue(flashtile.last_result().asynchronous)
        s.synchronize()
        ref = q.detach().float().clone().requires_grad_(True)
        math_attention(ref, ref, ref, True).sum().backward()
        self.assertLessEqual(rel(leaf.grad, ref.grad), 2e-2)

    def test_deterministic(self):
        q, k, v = self.randn(1, 1000, 8, 128), self.randn(1, 1000, 2, 128), self.randn(1, 1000, 2, 128)
        dout = self.randn(1, 1000, 8, 128)
        runs = [grads_of(lambda a, b, c: flashtile.attention(a, b, c, causal=True, deterministic=True),
                         q, k, v, dout) for _ in range(3)]
        for other in runs[1:]:
            for a, b in zip(runs[0], other):
                self.assertTrue(bool((a == b).all().item()))


if __name__ == "__main__":
    unittest.main()
