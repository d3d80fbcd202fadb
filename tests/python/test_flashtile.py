"""Tests of the ctypes binding. Standard library only (numpy and torch tests skip when those are absent).

Run from the repository root: FLASHTILE_LIBRARY=build/libflashtile.so python3 -m unittest discover -s tests/python
"""

import array
import math
import os
import random
import struct
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

import flashtile  # noqa: E402

TOL = {"f32": 1e-5, "f16": 2e-3, "bf16": 1e-2}


def _has(module):
    try:
        __import__(module)
        return True
    except Exception:
        return False


def _torch_cuda():
    try:
        import torch
        return torch.cuda.is_available()
    except Exception:
        return False


def reference(q, k, v, shape_q, shape_k, causal, scale=None):
    """Naive attention in double on flat C-ordered lists. Returns (out flat, lse flat [B, Hq, Sq])."""
    B, Sq, Hq, D = shape_q
    _, Sk, Hkv, _ = shape_k
    scale = 1.0 / math.sqrt(D) if scale is None else scale
    group = Hq // Hkv
    out = [0.0] * (B * Sq * Hq * D)
    lse = [0.0] * (B * Hq * Sq)
    for b in range(B):
        for h in range(Hq):
            hk = h // group
            for i in range(Sq):
                last = i + Sk - Sq if causal else Sk - 1
                qo = ((b * Sq + i) * Hq + h) * D
                if last < 0:
                    lse[(b * Hq + h) * Sq + i] = -math.inf
                    continue
                scores = []
                for j in range(min(last, Sk - 1) + 1):
                    ko = ((b * Sk + j) * Hkv + hk) * D
                    scores.append(scale * sum(q[qo + d] * k[ko + d] for d in range(D)))
                m = max(scores)
                w = [math.exp(s - m) for s in scores]
                total = sum(w)
                for d in range(D):
                    acc = 0.0
                    for j, wj in enumerate(w):
                        acc += wj * v[((b * Sk + j) * Hkv + hk) * D + d]
                    out[qo + d] = acc / total
                lse[(b * Hq + h) * Sq + i] = m + math.log(total)
    return out, lse


def rel_error(ref, got):
    num = den = 0.0
    for r, g in zip(ref, got):
        if math.isnan(g):
            return math.inf
        num += (g - r) ** 2
        den += r * r
    return math.sqrt(num / den) if den else math.sqrt(num)


def lse_error(ref, got):
    worst = 0.0
    for r, g in zip(ref, got):
        if math.isinf(r):
            if not (math.isinf(g) and g < 0):
                return math.inf
            continue
        if math.isnan(g):
            return math.inf
        worst = max(worst, abs(g - r) / (1.0 + abs(r)))
    return worst


def random_values(n, rng):
    return [rng.uniform(-1.0, 1.0) for _ in range(n)]


def numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


class LibraryTest(unittest.TestCase):
    def test_version_and_devices(self):
        self.assertRegex(flashtile.version(), r"^\d+\.\d+\.\d+")
        devs = flashtile.devices()
        self.assertIn("cpu", [d.backend for d in devs])
        cpu = [d for d in devs if d.backend == "cpu"][0]
        self.assertIn("cpu_reference", cpu.paths)
        self.assertEqual(flashtile.unavailable_reason("cpu"), "")
        for b in ("cuda", "vulkan"):
            reason = flashtile.unavailable_reason(b)
            has = any(d.backend == b for d in devs)
            self.assertEqual(reason == "", has, "%s: reason %r, has device %s" % (b, reason, has))
        self.assertTrue(os.path.exists(flashtile.library_path()))

    def test_device_open_errors(self):
        with self.assertRaises(flashtile.InvalidArgument):
            flashtile.Device("no_such_backend")
        for index in ("x", 2 ** 32, -1, 1.5):
            with self.assertRaises(flashtile.InvalidArgument) as ctx:
                flashtile.Device("cpu", index)
            self.assertIn("index", ctx.exception.message)
        with self.assertRaises(flashtile.Error) as ctx:
            flashtile.Device("cpu", 7)
        self.assertNotEqual(ctx.exception.code, 0)
        self.assertTrue(ctx.exception.message)


class HostAttentionTest(unittest.TestCase):
    """CPU (and, where present, Vulkan) through host buffers, against the naive reference."""

    backend = "cpu"
    path = None

    def attention(self, *args, f32=False, **kwargs):
        """flashtile.attention on this class's backend and path. f32 is optional on GPU paths (f16/bf16 are
        required): a GPU path refusing an f32 case skips the test with the path's reason instead of failing it."""
        kwargs.setdefault("backend", self.backend)
        kwargs.setdefault("path", self.path)
        try:
            return flashtile.attention(*args, **kwargs)
        except flashtile.Unsupported as e:
            if f32 and self.backend != "cpu":
                self.skipTest("f32 refused on %s: %s" % (self.backend, e))
            raise

    def run_case(self, dtype, shape_q, shape_k, causal, return_lse=True, scale=None, seed=0, kind="hostarray"):
        rng = random.Random(seed)
        vals = [random_values(numel(s), rng) for s in (shape_q, shape_k, shape_k)]
        # Round inputs to the dtype first so that the reference sees what the kernel sees.
        arrays = [flashtile.HostArray.from_floats(x, s, dtype) for x, s in zip(vals, (shape_q, shape_k, shape_k))]
        rounded = [a.tolist() for a in arrays]
        buffer_dtype = None
        if kind == "memoryview":  # shaped memoryviews over bytearrays; 16-bit types as raw bits ('H') + dtype=
            fmt = "f" if dtype == "f32" else "H"
            buffer_dtype = None if dtype == "f32" else dtype
            arrays = [memoryview(a.buffer).cast("B").cast(fmt, list(a.shape)) for a in arrays]
        res = self.attention(*arrays, causal=causal, scale=scale, return_lse=return_lse, dtype=buffer_dtype,
                             f32=dtype == "f32")
        out, lse = res if return_lse else (res, None)
        info = flashtile.last_result()
        self.assertEqual(info.backend, self.backend)
        self.assertFalse(info.reduced_precision)  # never without allow_reduced_precision=True
        if self.path:
            self.assertEqual(info.path, self.path)
        if kind == "memoryview" and dtype == "f32":
            self.assertIsInstance(out, flashtile.HostArray)
        if isinstance(out, flashtile.HostArray):
            got = out.tolist()
            self.assertEqual(out.shape, tuple(shape_q))
            self.assertEqual(out.dtype, dtype)
        else:
            got = list(out.tolist()) if not hasattr(out, "ravel") else [float(x) for x in out.ravel()]
        ref, ref_lse = reference(*rounded, shape_q, shape_k, causal, scale)
        err = rel_error(ref, got)
        self.assertLessEqual(err, TOL[dtype], "%s %s %s causal=%s: rel error %g" % (dtype, shape_q, shape_k, causal, err))
        if return_lse:
            got_lse = lse.tolist() if isinstance(lse, flashtile.HostArray) else [float(x) for x in lse.ravel()]
            self.assertLessEqual(lse_error(ref_lse, got_lse), 1e-4)
        return info

    def test_f32_gqa_ragged(self):
        self.run_case("f32", (2, 13, 4, 64), (2, 19, 2, 64), causal=False)

    def test_f32_causal_more_queries_than_keys(self):
        # Bottom-right causal with Sq > Sk: the first rows see no key (output 0, LSE -inf).
        self.run_case("f32", (1, 9, 2, 64), (1, 5, 1, 64), causal=True)

    def test_f16(self):
        self.run_case("f16", (1, 7, 2, 64), (1, 11, 2, 64), causal=True, seed=1)

    def test_bf16_custom_scale(self):
        self.run_case("bf16", (1, 5, 2, 64), (1, 17, 1, 64), causal=False, scale=0.3, seed=2)

    def test_negative_scale(self):
        # A negative finite scale is valid (it favours the least similar keys), never read as "default".
        self.run_case("f32", (1, 5, 2, 64), (1, 9, 2, 64), causal=True, scale=-0.7, seed=8)
        self.run_case("f16", (1, 4, 2, 64), (1, 6, 1, 64), causal=False, scale=-2.0, seed=9)

    def test_memoryview_inputs(self):
        self.run_case("f32", (1, 6, 2, 64), (1, 6, 2, 64), causal=True, kind="memoryview", return_lse=False, seed=3)
        self.run_case("f16", (1, 3, 1, 64), (1, 8, 1, 64), causal=False, kind="memoryview", seed=4)
        self.run_case("bf16", (1, 3, 2, 64), (1, 8, 1, 64), causal=True, kind="memoryview", seed=7)

    @unittest.skipUnless(_has("numpy"), "numpy is not installed (strided views need its slicing)")
    def test_strided_numpy(self):
        # A non-contiguous view (every other head of a [1, 4, 4, 64] array) is computed right.
        import numpy as np
        rng = np.random.default_rng(5)
        a = rng.standard_normal((1, 4, 4, 64)).astype(np.float32)[:, :, ::2, :]
        k = np.ascontiguousarray(a) * 0.5
        out = self.attention(a, k, k, f32=True)
        flat = [[float(x) for x in np.ascontiguousarray(t).ravel()] for t in (a, k, k)]
        ref, _ = reference(*flat, a.shape, k.shape, False)
        self.assertLessEqual(rel_error(ref, [float(x) for x in out.ravel()]), 1e-5)

    @unittest.skipUnless(_has("numpy"), "numpy is not installed")
    def test_numpy(self):
        import numpy as np
        rng = np.random.default_rng(6)
        q = rng.standard_normal((1, 8, 2, 64)).astype(np.float16)
        k = rng.standard_normal((1, 10, 2, 64)).astype(np.float16)
        v = rng.standard_normal((1, 10, 2, 64)).astype(np.float16)
        out, lse = self.attention(q, k, v, causal=True, return_lse=True)
        self.assertEqual(out.dtype, np.float16)
        self.assertEqual(lse.shape, (1, 2, 8))
        ref, _ = reference(*[[float(x) for x in t.ravel()] for t in (q, k, v)], q.shape, k.shape, True)
        self.assertLessEqual(rel_error(ref, [float(x) for x in out.ravel()]), 2e-3)

    def test_head_dim_100_is_invalid(self):
        q = flashtile.HostArray.from_floats([0.5] * 2 * 100, (1, 2, 1, 100), "f32")
        with self.assertRaises(flashtile.InvalidArgument) as ctx:
            flashtile.attention(q, q, q, backend=self.backend, path=self.path)
        e = ctx.exception
        self.assertIsInstance(e, ValueError)
        self.assertEqual(e.code, 1)
        self.assertIn("head_dim", str(e))

    def test_mismatched_heads(self):
        q = flashtile.HostArray.from_floats([0.5] * 3 * 64, (1, 1, 3, 64), "f32")
        k = flashtile.HostArray.from_floats([0.5] * 2 * 64, (1, 1, 2, 64), "f32")
        with self.assertRaises(flashtile.Error) as ctx:
            flashtile.attention(q, k, k, backend=self.backend, path=self.path)
        self.assertIsInstance(ctx.exception, ValueError)
        self.assertTrue(ctx.exception.message)

    def test_dtype_mismatch(self):
        q = flashtile.HostArray.from_floats([0.5] * 64, (1, 1, 1, 64), "f32")
        k = flashtile.HostArray.from_floats([0.5] * 64, (1, 1, 1, 64), "f16")
        with self.assertRaises(flashtile.Error) as ctx:
            flashtile.attention(q, k, k, backend=self.backend, path=self.path)
        self.assertEqual(ctx.exception.code, flashtile.DTypeMismatch.code)

    def test_bad_inputs_before_the_library(self):
        with self.assertRaises(flashtile.InvalidArgument):
            flashtile.attention([1.0], [1.0], [1.0], backend=self.backend)
        raw = array.array("H", [0] * 64)  # uint16 without dtype: ambiguous (f16 bits or bf16 bits?)
        with self.assertRaises(flashtile.InvalidArgument):
            flashtile.attention(memoryview(raw).cast("B").cast("H", [1, 1, 1, 64]), raw, raw, backend=self.backend)
        with self.assertRaises(flashtile.InvalidArgument):
            flashtile.HostArray(bytearray(10), (1, 1, 1, 64), "f32")
        with self.assertRaises(flashtile.InvalidArgument):
            flashtile.attention(*[flashtile.HostArray.empty((1, 1, 1, 64), "f32")] * 3, path="no_such_path",
                                backend=self.backend)

    def test_forced_path_unavailable(self):
        q = flashtile.HostArray.from_floats([0.5] * 64, (1, 1, 1, 64), "f32")
        other = "vulkan_portable" if self.backend == "cpu" else "cpu_reference"
        with self.assertRaises(flashtile.Error) as ctx:
            flashtile.attention(q, q, q, backend=self.backend, path=other)
        self.assertTrue(ctx.exception.message)


class ArgumentTest(unittest.TestCase):
    """Bad arguments raise the binding's own errors (flashtile.Error subclasses) naming the argument."""

    def setUp(self):
        self.q = flashtile.HostArray.from_floats([0.25] * 2 * 64, (1, 2, 1, 64), "f32")

    def assert_invalid(self, needle, fn, *args, **kwargs):
        with self.assertRaises(flashtile.InvalidArgument) as ctx:
            fn(*args, **kwargs)
        e = ctx.exception
        self.assertIsInstance(e, flashtile.Error)
        self.assertEqual(e.code, flashtile.InvalidArgument.code)
        self.assertIn(needle, e.message)
        return e

    def test_non_finite_scale(self):
        for bad in (float("nan"), float("inf"), -float("inf"), 1e39):  # 1e39: beyond float32, an infinity there
            e = self.assert_invalid("scale", flashtile.attention, self.q, self.q, self.q, scale=bad, backend="cpu")
            self.assertIn("finite", e.message)

    def test_scale_not_a_number(self):
        for bad in ("abc", "0.5", b"1", True, [0.5], object()):
            self.assert_invalid("scale", flashtile.attention, self.q, self.q, self.q, scale=bad, backend="cpu")

    def test_scale_default_and_explicit(self):
        # 1/sqrt(64) explicitly gives the default's result; zero and negative scales are valid values of their own.
        default = flashtile.attention(self.q, self.q, self.q, backend="cpu", return_lse=True)[1].tolist()
        explicit = flashtile.attention(self.q, self.q, self.q, backend="cpu", scale=0.125, return_lse=True)[1].tolist()
        self.assertEqual(default, explicit)
        # Two equal keys: lse = log(2) + scale * |q|^2 = log(2) + scale * 4.
        for scale in (0.0, -0.5, 0.125):
            _, lse = flashtile.attention(self.q, self.q, self.q, backend="cpu", scale=scale, return_lse=True)
            for got in lse.tolist():
                self.assertAlmostEqual(got, math.log(2.0) + scale * 4.0, places=5)

    def test_library_rejects_nan_scale(self):
        # Past the binding's own check: the C API itself refuses NaN (it no longer means "default").
        dev = flashtile.Device.get("cpu")
        t = [flashtile._create(dev, "f32", (1, 2, 1, 64)) for _ in range(4)]
        for has_scale in (0, 1):
            opts = flashtile._options(False, None, None)
            opts.has_scale, opts.scale = has_scale, float("nan")
            with self.assertRaises(flashtile.InvalidArgument) as ctx:
                flashtile._forward(t + [None], opts)
            self.assertIn("options.scale", ctx.exception.message)

    def test_unknown_dtype(self):
        raw = memoryview(bytearray(2 * 64 * 8)).cast("d", [1, 2, 1, 64])
        self.assert_invalid("dtype", flashtile.attention, raw, raw, raw, dtype="f64", backend="cpu")
        self.assert_invalid("dtype", flashtile.attention, self.q, self.q, self.q, dtype=16, backend="cpu")
        self.assert_invalid("dtype", flashtile.HostArray, bytearray(8), (1, 1, 1, 1), "f64")
        self.assert_invalid("dtype", flashtile.HostArray.empty, (1, 1, 1, 64), "f64")
        self.assert_invalid("dtype", flashtile.HostArray.from_floats, [0.0], (1, 1, 1, 1), "f64")

    def test_unknown_backend_and_path(self):
        self.assert_invalid("backend", flashtile.attention, self.q, self.q, self.q, backend="tpu")
        self.assert_invalid("path", flashtile.attention, self.q, self.q, self.q, backend="cpu", path="no_such")


class PackagingTest(unittest.TestCase):
    def test_pyproject_version_is_the_library_version(self):
        # python/pyproject.toml takes its version from include/flashtile/version.hpp, as the library does.
        root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
        sys.path.insert(0, os.path.join(root, "python", "_build"))
        try:
            import flashtile_build
        finally:
            sys.path.pop(0)
        self.assertEqual(flashtile_build.version(), flashtile.version())


class HostCopyRouteTest(HostAttentionTest):
    """The same cases on the CPU through the route GPU devices take: owned tensors, upload, run, download."""

    def setUp(self):
        flashtile._host_zero_copy = False

    def tearDown(self):
        flashtile._host_zero_copy = True


def _vulkan_devices():
    try:
        return [d for d in flashtile.devices() if d.backend == "vulkan"]
    except Exception:
        return []


def _why_no_vulkan():
    try:
        return flashtile.unavailable_reason("vulkan") or "no Vulkan device"
    except Exception as e:  # the library itself is missing: LibraryTest fails with the details
        return str(e)


@unittest.skipUnless(_vulkan_devices(), "no Vulkan device: %s" % _why_no_vulkan())
class VulkanHostAttentionTest(HostAttentionTest):
    """The same cases on the first Vulkan device, on its default path."""

    backend = "vulkan"

    def test_forced_path_unavailable(self):
        pass  # covered on the CPU; a Vulkan device may lack any given path


def torch_scores(q, k, v, causal, scale=None):
    """For [B, S, H, D] tensors, in their dtype: the scaled scores [B, Hq, Sq, Sk] (-inf past the bottom-right causal
    diagonal) and v as [B, Hq, Sk, D] (GQA by repeat_interleave)."""
    import torch
    qf, kf, vf = (x.transpose(1, 2) for x in (q, k, v))  # [B, H, S, D]
    rep = q.shape[2] // k.shape[2]
    kf, vf = kf.repeat_interleave(rep, dim=1), vf.repeat_interleave(rep, dim=1)
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    s = torch.matmul(qf, kf.transpose(-1, -2)) * scale
    if causal:
        Sq, Sk = q.shape[1], k.shape[1]
        i = torch.arange(Sq, device=q.device)[:, None]
        j = torch.arange(Sk, device=q.device)[None, :]
        s = s.masked_fill(j > i + Sk - Sq, float("-inf"))
    return s, vf


def torch_reference(q, k, v, causal, scale=None):
    """Attention in float64 with torch, for [B, S, H, D] tensors (GQA, bottom-right causal). Returns (out, lse)."""
    import torch
    s, vf = torch_scores(q.double(), k.double(), v.double(), causal, scale)
    lse = torch.logsumexp(s, dim=-1)
    p = torch.softmax(s, dim=-1).nan_to_num(0.0)
    return torch.matmul(p, vf).transpose(1, 2), lse


@unittest.skipUnless(_has("torch"), "torch is not installed")
class TorchCpuTest(unittest.TestCase):
    """torch CPU tensors run on the CPU device through wrapped host memory (no copies), strides included."""

    def test_bf16_gqa_causal_strided(self):
        import torch
        g = torch.Generator().manual_seed(0)
        q = torch.randn(2, 4, 9, 64, generator=g).to(torch.bfloat16).transpose(1, 2)  # [B, S, H, D] view
        k = torch.randn(2, 13, 2, 64, generator=g).to(torch.bfloat16)
        v = torch.randn(2, 13, 2, 64, generator=g).to(torch.bfloat16)
        out, lse = flashtile.attention(q, k, v, causal=True, return_lse=True)
        self.assertEqual(flashtile.last_result().backend, "cpu")
        self.assertEqual(out.shape, q.shape)
        self.assertEqual(out.dtype, torch.bfloat16)
        ref, ref_lse = torch_reference(q, k, v, True)
        self.assertLessEqual(((out.double() - ref).norm() / ref.norm()).item(), 1e-2)
        self.assertLessEqual((lse.double() - ref_lse).abs().max().item(), 1e-4)

    def test_f32_scale(self):
        import torch
        q = torch.randn(1, 5, 2, 32)
        out = flashtile.attention(q, q, q, scale=0.25)
        ref, _ = torch_reference(q, q, q, False, 0.25)
        self.assertLessEqual(((out.double() - ref).norm() / ref.norm()).item(), 1e-5)

    def test_mixed_inputs_rejected(self):
        import torch
        q = torch.randn(1, 5, 2, 32)
        with self.assertRaises(flashtile.InvalidArgument):
            flashtile.attention(q, memoryview(bytearray(4 * 5 * 2 * 32)), q)


@unittest.skipUnless(_torch_cuda(), "needs torch with CUDA (torch.cuda.is_available() is false or torch is absent)")
class TorchCudaTest(unittest.TestCase):
    def setUp(self):
        import torch
        cuda = [d for d in flashtile.devices() if d.backend == "cuda"]
        if not cuda:
            self.skipTest("flashtile has no CUDA device: %s" % flashtile.unavailable_reason("cuda"))
        self.torch = torch

    def torch_ref(self, q, k, v, causal, scale=None):
        return torch_reference(q, k, v, causal, scale)

    def check(self, dtype, B, Sq, Sk, Hq, Hkv, D, causal, layout="bshd"):
        torch = self.torch
        gen = torch.Generator(device="cuda").manual_seed(B * 1000 + Sq + Sk + D)

        def make(S, H):
            if layout == "bhsd":  # stored [B, H, S, D], viewed as [B, S, H, D]: non-contiguous, no copy
                return torch.randn(B, H, S, D, device="cuda", dtype=dtype, generator=gen).transpose(1, 2)
            return torch.randn(B, S, H, D, device="cuda", dtype=dtype, generator=gen)

        q, k, v = make(Sq, Hq), make(Sk, Hkv), make(Sk, Hkv)
        out, lse = flashtile.attention(q, k, v, causal=causal, return_lse=True)
        torch.cuda.synchronize()
        ref, ref_lse = self.torch_ref(q, k, v, causal)
        err = ((out.double() - ref).norm() / ref.norm()).item()
        tol = {torch.bfloat16: 1e-2, torch.float16: 2e-3, torch.float32: 1e-5}[dtype]
        self.assertLessEqual(err, tol, "rel error %g (%s)" % (err, flashtile.last_result()))
        finite = torch.isfinite(ref_lse)
        self.assertTrue(torch.equal(torch.isfinite(lse), finite))
        self.assertLessEqual((lse.double()[finite] - ref_lse[finite]).abs().max().item(), 1e-3)
        self.assertEqual(flashtile.last_result().backend, "cuda")
        self.assertTrue(flashtile.last_result().asynchronous)

    def test_bf16(self):
        self.check(self.torch.bfloat16, 2, 257, 257, 8, 8, 128, causal=False)
        self.check(self.torch.bfloat16, 2, 257, 257, 8, 8, 128, causal=True)

    def test_f16_gqa_ragged(self):
        self.check(self.torch.float16, 1, 100, 333, 8, 2, 64, causal=True)

    def test_non_contiguous_layout(self):
        self.check(self.torch.bfloat16, 2, 130, 130, 4, 4, 128, causal=True, layout="bhsd")

    def test_runs_on_current_stream(self):
        torch = self.torch
        q = torch.randn(1, 512, 4, 128, device="cuda", dtype=torch.bfloat16)
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())  # q was made on the default stream
        with torch.cuda.stream(s):
            out = flashtile.attention(q, q, q)
        s.synchronize()
        ref, _ = self.torch_ref(q, q, q, False)
        self.assertLessEqual(((out.double() - ref).norm() / ref.norm()).item(), 1e-2)

    def test_error_leaves_no_output(self):
        torch = self.torch
        q = torch.randn(1, 4, 2, 100, device="cuda", dtype=torch.bfloat16)
        with self.assertRaises(flashtile.InvalidArgument):
            flashtile.attention(q, q, q)


if __name__ == "__main__":
    unittest.main()
