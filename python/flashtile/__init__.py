"""flashtile: exact attention (FlashAttention forward and backward) on CUDA, Vulkan and the CPU, through the
library's C API.

ctypes only: no compiled extension, no dependency. The shared library is found through, in order, the environment
variable FLASHTILE_LIBRARY (a file), the library a CMake install put this package next to (_library.py, written by
the install), a libflashtile.so next to this package, the repository's build folders when this is the source tree,
then the dynamic loader's own search (libflashtile.so.0 in LD_LIBRARY_PATH or a system library folder).

    out = flashtile.attention(q, k, v, causal=True)                 # PyTorch CUDA tensors [B, S, H, D]: no copies,
    out, lse = flashtile.attention(q, k, v, return_lse=True)        # runs on torch.cuda.current_stream()
    out.sum().backward()                                            # differentiable for torch tensors (autograd,
                                                                    # torch.compile), backward on the current stream
    dq, dk, dv = flashtile.attention_backward(q, k, v, out, lse, dout)   # the gradients, explicitly
    out = flashtile.attention_with_kvcache(q, k_cache, v_cache, block_table, seqlens, k, v)  # decode over a paged
                                                                    # KV cache, appending k, v (int32 tables)
    out = flashtile.attention_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, max_q, max_k)  # packed sequences

Without PyTorch, q, k and v may be buffer-protocol objects (numpy arrays, shaped memoryviews) or HostArray wrappers
around flat buffers (array.array, bytearray) with a shape and dtype: they are uploaded, run on the chosen backend
(CPU or Vulkan; CUDA works too) and the output is downloaded. The torch part (custom ops, autograd) lives in
flashtile/_torch.py, imported on the first torch tensor.

Library errors raise flashtile.Error subclasses that also derive from the matching built-in exception
(InvalidArgument is a ValueError, OutOfMemory a MemoryError...), with .code (the C API's ft_status) and .message.
"""

from __future__ import annotations

import ctypes
import glob
import math
import operator
import os
import struct
import sys
import threading
from collections import namedtuple
from typing import Any, List, Optional, Sequence, Tuple

__all__ = [
    "attention", "attention_backward", "attention_with_kvcache", "attention_varlen", "plan", "plan_backward", "devices", "unavailable_reason", "version", "last_result", "Device", "DeviceInfo",
    "Result", "HostArray", "Error", "InvalidArgument", "ShapeMismatch", "DTypeMismatch", "BadStride",
    "DeviceMismatch", "Aliasing", "Overflow", "Unsupported", "BackendUnavailable", "BackendFailure",
    "OutOfMemory", "InternalError", "library_path",
]

# ---- Errors: one class per ft_status. --------------------------------------------------------------------------


class Error(Exception):
    """A flashtile library error. .code is the ft_status value, .name its name, .message the library's message."""

    code = -1
    name = "error"

    def __init__(self, message: str, code: Optional[int] = None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code


class InvalidArgument(Error, ValueError):
    code, name = 1, "invalid_argument"


class ShapeMismatch(Error, ValueError):
    code, name = 2, "shape_mismatch"


class DTypeMismatch(Error, TypeError):
    code, name = 3, "dtype_mismatch"


class BadStride(Error, ValueError):
    code, name = 4, "bad_stride"


class DeviceMismatch(Error, ValueError):
    code, name = 5, "device_mismatch"


class Aliasing(Error, ValueError):
    code, name = 6, "aliasing"


class Overflow(Error, OverflowError):
    code, name = 7, "overflow"


class Unsupported(Error, NotImplementedError):
    code, name = 8, "unsupported"


class BackendUnavailable(Error, RuntimeError):
    code, name = 9, "backend_unavailable"


class BackendFailure(Error, RuntimeError):
    code, name = 10, "backend_failure"


class OutOfMemory(Error, MemoryError):
    code, name = 11, "out_of_memory"


class InternalError(Error, RuntimeError):
    code, name = 100, "internal"


_ERRORS = {c.code: c for c in (InvalidArgument, ShapeMismatch, DTypeMismatch, BadStride, DeviceMismatch, Aliasing,
                               Overflow, Unsupported, BackendUnavailable, BackendFailure, OutOfMemory,
                               InternalError)}

# ---- Enums (values of include/flashtile/flashtile.h). ------------------------------------------------------------

BACKENDS = {"auto": 0, "cpu": 1, "cuda": 2, "vulkan": 3}
DTYPES = {"f16": 0, "bf16": 1, "f32": 2, "i32": 3}  # i32: the serving layouts' tables
_DTYPE_SIZE = {"f16": 2, "bf16": 2, "f32": 4, "i32": 4}
_DTYPE_FORMAT = {"f16": "e", "bf16": "H", "f32": "f", "i32": "i"}  # struct formats (bf16 as raw uint16 bits)
_VIEW_FORMAT = {"f16": "H", "bf16": "H", "f32": "f", "i32": "i"}  # memoryview.cast can't make 'e': raw bits
_FORMAT_DTYPE = {"e": "f16", "f": "f32", "i": "i32"}
_PATH_DEFAULT = -1
_FLOAT32_MAX = 3.4028234663852886e38
_CUDA_STREAM_LEGACY = 1  # cudaStreamLegacy

# ---- The C structs. ------------------------------------------------------------------------------------------------

_MAX_PATHS = 8


class _DeviceInfo(ctypes.Structure):
    _fields_ = [("backend", ctypes.c_int), ("index", ctypes.c_int), ("software", ctypes.c_int),
                ("num_paths", ctypes.c_int), ("paths", ctypes.c_int * _MAX_PATHS), ("name", ctypes.c_char * 256)]


class _Options(ctypes.Structure):
    _fields_ = [("scale", ctypes.c_float), ("causal", ctypes.c_int), ("path", ctypes.c_int),
                ("cuda_stream", ctypes.c_void_p), ("vk_command_buffer", ctypes.c_void_p),
                ("allow_reduced_precision_accumulation", ctypes.c_int), ("has_scale", ctypes.c_int),
                ("deterministic", ctypes.c_int), ("workspace", ctypes.c_void_p),  # since 0.4.0: backward only
                # since 0.5.0: the variants (dsinks: backward only)
                ("has_window", ctypes.c_int), ("window_left", ctypes.c_int64), ("window_right", ctypes.c_int64),
                ("softcap", ctypes.c_float), ("alibi_slopes", ctypes.c_void_p), ("sinks", ctypes.c_void_p),
                ("dsinks", ctypes.c_void_p)]


class _Result(ctypes.Structure):
    _fields_ = [("backend", ctypes.c_int), ("path", ctypes.c_int), ("asynchronous", ctypes.c_int),
                ("path_name", ctypes.c_char * 32), ("kernel", ctypes.c_char * 128), ("note", ctypes.c_char * 512),
                ("reduced_precision", ctypes.c_int), ("workspace_bytes", ctypes.c_uint64)]


DeviceInfo = namedtuple("DeviceInfo", "backend index name software paths")
# reduced_precision: the kernel accumulated O in f16 (allowed by allow_reduced_precision=True). workspace_bytes: the
# scratch a backward path needs (plan_backward), 0 for the forward.
Result = namedtuple("Result", "backend path kernel note asynchronous reduced_precision workspace_bytes",
                    defaults=(False, 0))

# ---- Loading the library. ------------------------------------------------------------------------------------------

_SONAME = "libflashtile.so.0"
_lib = None
_lib_path = None
_lib_lock = threading.Lock()


def _candidates() -> List[str]:
    out = []
    env = os.environ.get("FLASHTILE_LIBRARY")
    if env:
        return [env]  # explicit: only that file, so a wrong setting fails loudly instead of loading another build
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        from . import _library  # written by `cmake --install`: the library installed with this package
        out.append(os.path.normpath(os.path.join(here, _library.RELATIVE_PATH)))
    except ImportError:
        pass
    out += sorted(glob.glob(os.path.join(here, "libflashtile.so*")))
    root = os.path.dirname(os.path.dirname(here))  # python/flashtile -> repository root
    if os.path.exists(os.path.join(root, "include", "flashtile", "version.hpp")):
        for pattern in ("build/libflashtile.so", "build*/libflashtile.so", "build*/*/libflashtile.so"):
            out += sorted(glob.glob(os.path.join(root, pattern)), key=os.path.getmtime, reverse=True)
    out.append(_SONAME)  # a bare name: the dynamic loader searches LD_LIBRARY_PATH and the system folders
    return out


def _declare(lib) -> None:
    c_int, c_size, c_vp, c_i64p = ctypes.c_int, ctypes.c_size_t, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int64)
    tensor_pp = ctypes.POINTER(c_vp)
    sigs = {
        "ft_version": (ctypes.c_char_p, []),
        "ft_last_error": (ctypes.c_char_p, []),
        "ft_backend_name": (ctypes.c_char_p, [c_int]),
        "ft_dtype_name": (ctypes.c_char_p, [c_int]),
        "ft_path_name": (ctypes.c_char_p, [c_int]),
        "ft_status_name": (ctypes.c_char_p, [c_int]),
        "ft_parse_path": (c_int, [ctypes.c_char_p, ctypes.POINTER(c_int)]),
        "ft_device_count": (c_int, [ctypes.POINTER(c_int)]),
        "ft_device_list_info": (c_int, [c_int, ctypes.POINTER(_DeviceInfo)]),
        "ft_backend_unavailable_reason": (c_int, [c_int, ctypes.c_char_p, c_size]),
        "ft_device_open": (c_int, [c_int, c_int, tensor_pp]),
        "ft_device_destroy": (None, [c_vp]),
        "ft_device_info_get": (c_int, [c_vp, ctypes.POINTER(_DeviceInfo)]),
        "ft_device_sync": (c_int, [c_vp]),
        "ft_tensor_create": (c_int, [c_vp, c_int, c_int, c_i64p, tensor_pp]),
        "ft_tensor_wrap_cuda": (c_int, [c_vp, c_vp, c_int, c_int, c_i64p, c_i64p, tensor_pp]),
        "ft_tensor_wrap_vulkan": (c_int, [c_vp, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint64, c_int, c_int,
                                          c_i64p, c_i64p, tensor_pp]),
        "ft_tensor_wrap_host": (c_int, [c_vp, c_vp, c_int, c_int, c_i64p, c_i64p, tensor_pp]),
        "ft_tensor_destroy": (None, [c_vp]),
        "ft_tensor_extent_bytes": (c_int, [c_vp, ctypes.POINTER(c_size)]),
        "ft_tensor_upload": (c_int, [c_vp, c_vp, c_size]),
        "ft_tensor_download": (c_int, [c_vp, c_vp, c_size]),
        "ft_attention_forward": (c_int, [c_vp, c_vp, c_vp, c_vp, c_vp, ctypes.POINTER(_Options),
                                         ctypes.POINTER(_Result)]),
        "ft_attention_plan": (c_int, [c_vp, c_vp, c_vp, c_vp, c_vp, ctypes.POINTER(_Options),
                                      ctypes.POINTER(_Result)]),
        "ft_attention_backward": (c_int, [c_vp] * 9 + [ctypes.POINTER(_Options), ctypes.POINTER(_Result)]),
        "ft_attention_backward_plan": (c_int, [c_vp] * 9 + [ctypes.POINTER(_Options), ctypes.POINTER(_Result)]),
        "ft_attention_with_kvcache": (c_int, [c_vp] * 9 + [ctypes.POINTER(_Options), ctypes.POINTER(_Result)]),
        "ft_attention_with_kvcache_plan": (c_int, [c_vp] * 9 + [ctypes.POINTER(_Options), ctypes.POINTER(_Result)]),
        "ft_attention_varlen": (c_int, [c_vp] * 7 + [ctypes.c_int64, ctypes.c_int64, ctypes.POINTER(_Options),
                                                    ctypes.POINTER(_Result)]),
        "ft_attention_varlen_plan": (c_int, [c_vp] * 7 + [ctypes.c_int64, ctypes.c_int64, ctypes.POINTER(_Options),
                                                         ctypes.POINTER(_Result)]),
    }
    for name, (res, args) in sigs.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args


def _load():
    global _lib, _lib_path
    if _lib is not None:
        return _lib
    with _lib_lock:
        if _lib is not None:
            return _lib
        tried = []
        for path in _candidates():
            if path != _SONAME and not os.path.exists(path):
                tried.append(path + " (missing)")
                continue
            try:
                lib = ctypes.CDLL(path)
                _declare(lib)
            except (OSError, AttributeError) as e:
                tried.append("%s (%s)" % (path, e))
                continue
            _lib, _lib_path = lib, path
            return lib
        raise BackendUnavailable("flashtile: libflashtile.so not found; set FLASHTILE_LIBRARY to its path. Tried: " +
                                 ("; ".join(tried) or "nothing (no build folder found)"))


def library_path() -> str:
    """The path of the shared library in use (loading it if needed)."""
    _load()
    return _lib_path


def _check(status: int) -> None:
    if status != 0:
        msg = _lib.ft_last_error().decode("utf-8", "replace")
        cls = _ERRORS.get(status, Error)
        raise cls(msg or _lib.ft_status_name(status).decode(), status)


def version() -> str:
    return _load().ft_version().decode()


def _dtype_name(dtype, arg: str = "dtype") -> str:
    """dtype checked against the names the library knows, as an InvalidArgument naming `arg` otherwise."""
    if isinstance(dtype, str) and dtype in DTYPES:
        return dtype
    raise InvalidArgument("%s: unknown dtype %r (one of %s)" % (arg, dtype, ", ".join(DTYPES)))


def _real_number(value, name: str, what: str) -> float:
    """float(value), or an InvalidArgument naming `name` (bools and strings are not numbers here)."""
    if isinstance(value, (bool, str, bytes)):
        raise InvalidArgument("%s: needs %s, got %r" % (name, what, value))
    try:
        return float(value)
    except (TypeError, ValueError):
        raise InvalidArgument("%s: needs %s, got %r" % (name, what, value)) from None


def _scale_value(scale) -> Optional[float]:
    """None (the default, 1/sqrt(head_dim)) or a finite float; anything else is an InvalidArgument naming scale."""
    if scale is None:
        return None
    value = _real_number(scale, "scale", "a real number or None")
    # The library takes a 32-bit float: values beyond its range would arrive as infinities.
    if not math.isfinite(value) or abs(value) > _FLOAT32_MAX:
        raise InvalidArgument("scale: must be finite (as a 32-bit float), got %r" % (scale,))
    return value


def _window_value(window_size) -> Tuple[int, int]:
    """(left, right) from FlashAttention's window_size: None or (-1, -1) is no window, -1 is unbounded on that side.
    The library names values below -1 (options.window_left / window_right)."""
    if window_size is None:
        return (-1, -1)
    out = None
    try:
        if not isinstance(window_size, (str, bytes)) and len(window_size) == 2:
            # Plain ints first: what torch.compile traces (operator.index only for other integer types).
            out = tuple(None if isinstance(x, bool) else x if isinstance(x, int) else operator.index(x)
                        for x in window_size)
    except TypeError:
        out = None
    if out is None or None in out:
        raise InvalidArgument("window_size: needs (left, right), two integers (-1: unbounded on that side), got %r"
                              % (window_size,))
    if any(not -2 ** 63 <= x < 2 ** 63 for x in out):
        raise Overflow("window_size: %r exceeds the int64 range" % (window_size,))
    return out


def _softcap_value(softcap) -> float:
    """0 (off) or a real number; the library names values that are negative or not finite (options.softcap)."""
    value = _real_number(softcap, "softcap", "a real number (0: off)")
    if math.isfinite(value) and abs(value) > _FLOAT32_MAX:  # would arrive as an infinity
        raise InvalidArgument("softcap: must be finite (as a 32-bit float), got %r" % (softcap,))
    return value


def _backend_id(backend) -> int:
    if backend is None:
        return BACKENDS["auto"]
    if isinstance(backend, int):
        return backend
    try:
        return BACKENDS[str(backend).lower()]
    except KeyError:
        raise InvalidArgument("backend: unknown name %r (one of %s)" % (backend, ", ".join(BACKENDS))) from None


def _index(index) -> int:
    try:
        value = None if isinstance(index, bool) else operator.index(index)
    except TypeError:
        value = None
    if value is None or not 0 <= value < 2 ** 31:  # the C API's int
        raise InvalidArgument("index: needs a device index in [0, 2^31), got %r" % (index,))
    return value


def _path_id(path) -> int:
    if path is None:
        return _PATH_DEFAULT
    if isinstance(path, int):
        return path
    lib = _load()
    out = ctypes.c_int()
    _check(lib.ft_parse_path(str(path).encode(), ctypes.byref(out)))
    return out.value


def _info(raw: _DeviceInfo) -> DeviceInfo:
    lib = _load()
    paths = [lib.ft_path_name(raw.paths[i]).decode() for i in range(raw.num_paths)]
    return DeviceInfo(lib.ft_backend_name(raw.backend).decode(), raw.index, raw.name.decode("utf-8", "replace"),
                      bool(raw.software), paths)


def devices() -> List[DeviceInfo]:
    """All devices of all built backends, in the order backend='auto' considers them."""
    lib = _load()
    n = ctypes.c_int()
    _check(lib.ft_device_count(ctypes.byref(n)))
    out = []
    for i in range(n.value):
        raw = _DeviceInfo()
        _check(lib.ft_device_list_info(i, ctypes.byref(raw)))
        out.append(_info(raw))
    return out


def unavailable_reason(backend) -> str:
    """Why a backend has no device here ('' when it has one)."""
    lib = _load()
    buf = ctypes.create_string_buffer(1024)
    _check(lib.ft_backend_unavailable_reason(_backend_id(backend), buf, len(buf)))
    return buf.value.decode("utf-8", "replace")


class Device:
    """An open flashtile device. Devices are cached: Device.get(backend, index) returns the same object."""

    _cache = {}
    _cache_lock = threading.Lock()

    def __init__(self, backend="auto", index: int = 0):
        lib = _load()
        handle = ctypes.c_void_p()
        _check(lib.ft_device_open(_backend_id(backend), _index(index), ctypes.byref(handle)))
        self._handle = handle
        raw = _DeviceInfo()
        _check(lib.ft_device_info_get(handle, ctypes.byref(raw)))
        self.info = _info(raw)

    @classmethod
    def get(cls, backend="auto", index: int = 0) -> "Device":
        # Per call on the hot path (every torch call asks): a device opened before is found under the arguments as
        # given, without their checks or the lock.
        if type(backend) is str and type(index) is int:
            dev = cls._cache.get((backend, index))
            if dev is not None:
                return dev
        key = (_backend_id(backend), _index(index))
        with cls._cache_lock:
            dev = cls._cache.get(key)
            if dev is None:
                dev = cls._cache[key] = cls(backend, index)
            if type(backend) is str and type(index) is int:
                cls._cache[(backend, index)] = dev
            return dev

    @property
    def backend(self) -> str:
        return self.info.backend

    def sync(self) -> None:
        _check(_lib.ft_device_sync(self._handle))

    def __del__(self):
        if getattr(self, "_handle", None) and _lib is not None:
            _lib.ft_device_destroy(self._handle)
            self._handle = None

    def __repr__(self):
        return "flashtile.Device(%s #%d %r, paths=%s)" % (self.info.backend, self.info.index, self.info.name,
                                                          self.info.paths)


class _Tensor:
    """An ft_tensor handle, destroyed with the object. Views keep `keep` (the memory's owner) alive."""

    def __init__(self, handle: ctypes.c_void_p, keep: Any = None):
        self.handle, self.keep = handle, keep

    def __del__(self):
        if getattr(self, "handle", None) and _lib is not None:
            _lib.ft_tensor_destroy(self.handle)
            self.handle = None


_I64_ARRAYS = [ctypes.c_int64 * n for n in range(9)]  # the array types of the ranks a call has (built once)


def _i64(values: Sequence[int]):
    n = len(values)
    array = _I64_ARRAYS[n] if n < len(_I64_ARRAYS) else ctypes.c_int64 * n
    try:
        return array(*values)  # ints (torch.Size, tuples)
    except TypeError:
        return array(*[int(x) for x in values])


def _create(dev: Device, dtype: str, shape: Sequence[int]) -> _Tensor:
    h = ctypes.c_void_p()
    _check(_lib.ft_tensor_create(dev._handle, DTYPES[dtype], len(shape), _i64(shape), ctypes.byref(h)))
    return _Tensor(h)


def _wrap(kind: str, dev: Device, ptr: int, dtype: str, shape, strides, keep=None) -> _Tensor:
    h = ctypes.c_void_p()
    fn = _lib.ft_tensor_wrap_cuda if kind == "cuda" else _lib.ft_tensor_wrap_host
    _check(fn(dev._handle, ptr, DTYPES[dtype], len(shape), _i64(shape), _i64(strides), ctypes.byref(h)))
    return _Tensor(h, keep)


_tls = threading.local()


def last_result() -> Optional[Result]:
    """The Result (backend, path, kernel, note, asynchronous, reduced_precision, workspace_bytes) of this thread's
    most recent attention() or attention_backward() call (for torch tensors: the most recent that ran eagerly)."""
    return getattr(_tls, "result", None)


def _options(causal: bool, scale: Optional[float], path, stream: int = 0, command_buffer: int = 0,
             reduced: bool = False, deterministic: bool = False, window: Tuple[int, int] = (-1, -1),
             softcap: float = 0.0) -> _Options:
    """ft_options; the variants' tables (alibi_slopes, sinks, dsinks) are tensor handles the caller sets."""
    o = _Options()
    if tuple(window) != (-1, -1):
        o.has_window, (o.window_left, o.window_right) = 1, window
    o.softcap = softcap
    o.allow_reduced_precision_accumulation = 1 if reduced else 0
    o.deterministic = 1 if deterministic else 0
    value = _scale_value(scale)
    o.has_scale, o.scale = (0, 0.0) if value is None else (1, value)
    o.causal = 1 if causal else 0
    o.path = _path_id(path)
    o.cuda_stream = stream or None
    o.vk_command_buffer = command_buffer or None
    return o


def _to_result(r: _Result) -> Result:
    return Result(_lib.ft_backend_name(r.backend).decode(), r.path_name.decode(), r.kernel.decode("utf-8", "replace"),
                  r.note.decode("utf-8", "replace"), bool(r.asynchronous), bool(r.reduced_precision),
                  int(r.workspace_bytes))


def _forward(tensors, opts: _Options, run: bool = True) -> Result:
    q, k, v, o, lse = tensors
    res = _Result()
    fn = _lib.ft_attention_forward if run else _lib.ft_attention_plan
    _check(fn(q.handle, k.handle, v.handle, o.handle, lse.handle if lse is not None else None, ctypes.byref(opts),
              ctypes.byref(res)))
    return _finish(res, run)


def _backward(tensors, opts: _Options, run: bool = True) -> Result:
    """ft_attention_backward (or its plan) on _Tensors q, k, v, out, lse, dout, dq, dk, dv."""
    res = _Result()
    fn = _lib.ft_attention_backward if run else _lib.ft_attention_backward_plan
    _check(fn(*[t.handle for t in tensors], ctypes.byref(opts), ctypes.byref(res)))
    return _finish(res, run)


class _Variants:
    """The variants of one host call: window and softcap go into ft_options as values; alibi_slopes and sinks are
    extra host operands, appended after the call's own, whose tensors bind() puts into ft_options."""

    def __init__(self, window_size=None, softcap=0.0, alibi_slopes=None, sinks=None):
        self.window, self.softcap = _window_value(window_size), _softcap_value(softcap)
        self.tables = [(n, x) for n, x in (("alibi_slopes", alibi_slopes), ("sinks", sinks)) if x is not None]

    def operands(self) -> list:
        return [_table_operand(x, n, "f32") for n, x in self.tables]

    def bind(self, opts: _Options, tensors: list, own: int) -> list:
        """tensors: the call's `own` operands, then the tables, then its outputs; returns them without the tables."""
        n = len(self.tables)
        for (name, _), t in zip(self.tables, tensors[own:own + n]):
            setattr(opts, name, t.handle)
        return tensors[:own] + tensors[own + n:]


def _handles(tensors) -> list:
    return [t.handle if t is not None else None for t in tensors]


def _kvcache(tensors, opts: _Options, run: bool = True) -> Result:
    """ft_attention_with_kvcache (or its plan) on _Tensors q, k_cache, v_cache, block_table, seqlens, out, lse,
    k_new, v_new (lse, k_new, v_new may be None)."""
    res = _Result()
    fn = _lib.ft_attention_with_kvcache if run else _lib.ft_attention_with_kvcache_plan
    _check(fn(*_handles(tensors), ctypes.byref(opts), ctypes.byref(res)))
    return _finish(res, run)


def _varlen(tensors, max_seqlen_q: int, max_seqlen_k: int, opts: _Options, run: bool = True) -> Result:
    """ft_attention_varlen (or its plan) on _Tensors q, k, v, out, lse, cu_seqlens_q, cu_seqlens_k (lse may be
    None)."""
    res = _Result()
    fn = _lib.ft_attention_varlen if run else _lib.ft_attention_varlen_plan
    _check(fn(*_handles(tensors), max_seqlen_q, max_seqlen_k, ctypes.byref(opts), ctypes.byref(res)))
    return _finish(res, run)


def _finish(res: _Result, run: bool) -> Result:
    result = _to_result(res)
    if run:
        _tls.result = result
    return result


# ---- Host buffers. -------------------------------------------------------------------------------------------------


class HostArray:
    """A shaped, typed view of a host buffer: `buffer` (anything with the buffer protocol), a C-contiguous `shape`
    and a dtype ('f16', 'bf16' or 'f32'). For formats memoryview can't name (bf16), or flat buffers (array.array)."""

    def __init__(self, buffer, shape: Sequence[int], dtype: str):  # dtype 'i32' too: the serving tables
        dtype = _dtype_name(dtype)
        self.buffer, self.shape, self.dtype = buffer, tuple(int(s) for s in shape), dtype
        n = 1
        for s in self.shape:
            n *= s
        nbytes = memoryview(buffer).nbytes
        if nbytes != n * _DTYPE_SIZE[dtype]:
            raise InvalidArgument("buffer: %d bytes, but shape %s of %s needs %d" % (nbytes, list(self.shape), dtype,
                                                                                      n * _DTYPE_SIZE[dtype]))

    @classmethod
    def empty(cls, shape: Sequence[int], dtype: str) -> "HostArray":
        dtype = _dtype_name(dtype)
        n = 1
        for s in shape:
            n *= int(s)
        return cls(bytearray(n * _DTYPE_SIZE[dtype]), shape, dtype)

    @classmethod
    def from_floats(cls, values: Sequence[float], shape: Sequence[int], dtype: str) -> "HostArray":
        """Round Python floats to `dtype` (nearest even) into a new buffer."""
        return cls(bytearray(_pack(values, _dtype_name(dtype))), shape, dtype)

    @classmethod
    def from_ints(cls, values: Sequence[int], shape: Sequence[int]) -> "HostArray":
        """An i32 array (block_table, seqlens, cu_seqlens) of Python ints."""
        return cls(bytearray(_pack([int(x) for x in values], "i32")), shape, "i32")

    def view(self) -> memoryview:
        """A memoryview of the elements with this array's shape: 'f' for f32, 'H' (raw bits) for f16 and bf16."""
        return memoryview(self.buffer).cast("B").cast(_VIEW_FORMAT[self.dtype], list(self.shape))

    def tolist(self) -> List[float]:
        """The elements as Python floats, flat, in C order."""
        return _unpack(memoryview(self.buffer).cast("B"), self.dtype)

    def __repr__(self):
        return "flashtile.HostArray(shape=%s, dtype=%s)" % (list(self.shape), self.dtype)


def _f32_bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def float_to_bf16(x: float) -> int:
    """Round a float to bf16 (nearest even), as its 16 bits."""
    u = _f32_bits(x)
    if (u & 0x7F800000) == 0x7F800000 and (u & 0x007FFFFF):
        return (u >> 16) | 0x40  # NaN stays NaN
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) & 0xFFFF


def bf16_to_float(b: int) -> float:
    return struct.unpack("<f", struct.pack("<I", (b & 0xFFFF) << 16))[0]


def _pack(values: Sequence[float], dtype: str) -> bytes:
    if dtype == "bf16":
        return struct.pack("<%dH" % len(values), *[float_to_bf16(x) for x in values])
    return struct.pack("<%d%s" % (len(values), _DTYPE_FORMAT[dtype]), *values)


def _unpack(raw: memoryview, dtype: str) -> List[float]:
    n = raw.nbytes // _DTYPE_SIZE[dtype]
    if dtype == "bf16":
        return [bf16_to_float(b) for b in struct.unpack("<%dH" % n, raw)]
    return list(struct.unpack("<%d%s" % (n, _DTYPE_FORMAT[dtype]), raw))


class _HostOperand:
    """A host operand, normalized: a C-ordered memoryview of bytes plus shape, element strides and dtype."""

    def __init__(self, x, name: str, dtype: Optional[str]):
        self.obj = x
        if isinstance(x, HostArray):
            mv = memoryview(x.buffer).cast("B")
            self.dtype, self.shape = x.dtype, x.shape
            self.strides = _contiguous(self.shape)
            self.bytes_view = mv
            self.base_view = mv
            return
        try:
            mv = memoryview(x)
        except TypeError:
            raise InvalidArgument("%s: needs a torch tensor, a buffer-protocol object (numpy array, shaped "
                                  "memoryview) or a flashtile.HostArray; got %s" % (name, type(x).__name__)) from None
        fmt = mv.format.lstrip("@=<")
        if dtype is None:
            dtype = _FORMAT_DTYPE.get(fmt)
            if dtype is None:
                raise InvalidArgument("%s: buffer format %r is not f16 ('e') or f32 ('f'); for 16-bit data held "
                                      "as uint16 bits pass dtype='f16' or 'bf16', or use flashtile.HostArray"
                                      % (name, fmt))
        size = _DTYPE_SIZE[dtype]
        if mv.itemsize != size:
            raise DTypeMismatch("%s: items of %d bytes, but %s needs %d" % (name, mv.itemsize, dtype, size))
        if any(s % size for s in mv.strides):
            raise BadStride("%s: byte strides %s are not multiples of the element size %d" %
                            (name, list(mv.strides), size))
        self.dtype, self.shape = dtype, tuple(mv.shape)
        self.strides = tuple(s // size for s in mv.strides)
        self.base_view = mv
        self.bytes_view = mv.cast("B") if mv.c_contiguous else memoryview(mv.tobytes())

    @property
    def contiguous(self) -> bool:
        return tuple(self.strides) == _contiguous(self.shape)


def _contiguous(shape: Sequence[int]) -> Tuple[int, ...]:
    out, acc = [], 1
    for s in reversed(shape):
        out.append(acc)
        acc *= int(s)
    return tuple(reversed(out))


def _numpy_module(x):
    if type(x).__module__ == "numpy":
        import numpy  # present: x is one of its arrays
        return numpy
    return None


def _host_pointer(view: memoryview) -> Optional[Tuple[int, Any]]:
    """The address of a writable, C-contiguous buffer and the ctypes object keeping it exported; None otherwise."""
    if view.readonly or not view.c_contiguous or view.nbytes == 0:
        return None
    arr = (ctypes.c_char * view.nbytes).from_buffer(view)
    return ctypes.addressof(arr), arr


# The CPU device reads and writes host buffers in place; False forces the upload/download route other devices take
# (the tests use it to cover that route without a GPU).
_host_zero_copy = True



def _host_outputs(like, specs) -> list:
    """New host arrays for `specs` [(shape, dtype)]: numpy arrays when `like` is one (numpy has no bf16), else
    HostArrays."""
    np_mod = _numpy_module(like)
    objs = []
    for shape, dt in specs:
        if np_mod is not None and dt != "bf16":
            objs.append(np_mod.empty(shape, dtype=np_mod.float16 if dt == "f16" else np_mod.float32))
        else:
            objs.append(HostArray.empty(shape, dt))
    return objs


def _bytes_of(obj) -> memoryview:
    return memoryview(obj.buffer if isinstance(obj, HostArray) else obj).cast("B")


def _host_run(ops, outs, backend, call, run: bool = True, inout=()) -> Result:
    """call([_Tensor...]) for host operands `ops` (_HostOperand) and new host outputs `outs` ((obj, shape, dtype), or
    None for an absent one), on the backend's device: the CPU reads and writes the host memory in place, other
    devices get uploads and downloads (none of either when not `run`). `inout`: (index, name) of the ops the call
    writes too (the caches an append writes), downloaded back into the caller's buffers."""
    dev = Device.get("auto" if backend is None else backend, 0)
    on_cpu = dev.backend == "cpu" and _host_zero_copy
    for i, name in inout:  # written in place: the caller's buffer must take the bytes back as they are laid out
        if ops[i].bytes_view.readonly or not ops[i].base_view.c_contiguous:
            raise InvalidArgument("%s: the call writes the appended keys into it, so it must be a writable, "
                                  "C-contiguous buffer" % name)
    tensors = []
    for op in ops:
        ptr = _host_pointer(op.base_view if not isinstance(op.obj, HostArray) else op.bytes_view) if on_cpu else None
        if ptr is not None:  # zero copy: the CPU device reads the caller's memory through its strides
            tensors.append(_wrap("host", dev, ptr[0], op.dtype, op.shape, op.strides, keep=ptr[1]))
        else:
            t = _create(dev, op.dtype, op.shape)
            if run:
                buf = (ctypes.c_char * op.bytes_view.nbytes).from_buffer_copy(op.bytes_view)
                _check(_lib.ft_tensor_upload(t.handle, buf, op.bytes_view.nbytes))
            tensors.append(t)
    out_tensors = []
    for spec in outs:
        if spec is None:
            out_tensors.append(None)
        elif on_cpu:
            ptr = _host_pointer(_bytes_of(spec[0]))
            out_tensors.append(_wrap("host", dev, ptr[0], spec[2], spec[1], _contiguous(spec[1]), keep=ptr[1]))
        else:
            out_tensors.append(_create(dev, spec[2], spec[1]))
    result = call(tensors + out_tensors)
    if run and not on_cpu:
        back = [(t, _bytes_of(spec[0])) for t, spec in zip(out_tensors, outs) if t is not None]
        back += [(tensors[i], ops[i].bytes_view) for i, _ in inout]
        for t, view in back:
            dst = (ctypes.c_char * view.nbytes).from_buffer(view)
            _check(_lib.ft_tensor_download(t.handle, dst, view.nbytes))
            del dst
    del tensors, out_tensors  # release the buffer exports before handing the outputs back
    return result


def _require_rank(op: _HostOperand, name: str, rank: int, what: str) -> None:
    if len(op.shape) != rank:
        raise InvalidArgument("%s: needs %d dimensions %s, got shape %s" % (name, rank, what, list(op.shape)))


_BSHD = "[batch, seqlen, heads, head_dim]"


def _host_attention(q, k, v, causal, scale, return_lse, backend, path, dtype, var, reduced=False):
    ops = [_HostOperand(x, n, dtype) for x, n in ((q, "q"), (k, "k"), (v, "v"))]
    oq = ops[0]
    _require_rank(oq, "q", 4, _BSHD)
    B, Sq, Hq = oq.shape[0], oq.shape[1], oq.shape[2]
    specs = [(oq.shape, oq.dtype), ((B, Hq, Sq), "f32")][:2 if return_lse else 1]
    objs = _host_outputs(q, specs)
    outs = [(obj, shape, dt) for obj, (shape, dt) in zip(objs, specs)] + [None] * (2 - len(specs))
    opts = _options(causal, scale, path, reduced=reduced, window=var.window, softcap=var.softcap)
    _host_run(ops + var.operands(), outs, backend, lambda t: _forward(var.bind(opts, t, 3), opts))
    return tuple(objs) if return_lse else objs[0]


def _host_backward(args, causal, scale, backend, path, dtype, deterministic, var, run=True):
    names = ("q", "k", "v", "out", "lse", "dout")
    if args[4] is None:
        raise InvalidArgument("lse: required: the forward's f32 log-sum-exp [batch, heads_q, seqlen_q] "
                              "(attention(..., return_lse=True))")
    ops = [_HostOperand(x, n, None if n == "lse" else dtype) for x, n in zip(args, names)]
    for op, n in zip(ops, names):
        _require_rank(op, n, 3, "[batch, heads_q, seqlen_q]") if n == "lse" else _require_rank(op, n, 4, _BSHD)
    specs = [(ops[i].shape, ops[0].dtype) for i in (0, 1, 2)]  # dq like q, dk like k, dv like v; dtype of q
    with_dsinks = any(n == "sinks" for n, _ in var.tables)
    if with_dsinks:
        specs.append(((ops[0].shape[2],), "f32"))  # dsinks [Hq]
    objs = _host_outputs(args[0], specs)
    opts = _options(causal, scale, path, deterministic=deterministic, window=var.window, softcap=var.softcap)

    def call(t):  # t: q, k, v, out, lse, dout, [tables,] dq, dk, dv, [dsinks]
        t = var.bind(opts, t, 6)
        if with_dsinks:
            opts.dsinks = t[9].handle
        return _backward(t[:9], opts, run)

    result = _host_run(ops + var.operands(), [(obj, shape, dt) for obj, (shape, dt) in zip(objs, specs)], backend,
                       call, run)
    return tuple(objs) if run else result


def _table_operand(x, name: str, dtype: str):
    """A table: a (nested) list of numbers becomes a HostArray of `dtype` ('i32': block_table, seqlens, cu_seqlens;
    'f32': alibi_slopes, sinks); anything else goes through _HostOperand (the library names a wrong dtype)."""
    if isinstance(x, (list, tuple)):
        rows = [list(r) if isinstance(r, (list, tuple)) else None for r in x]
        if x and all(r is not None for r in rows):
            if len({len(r) for r in rows}) != 1:
                raise InvalidArgument("%s: rows of different lengths" % name)
            values, shape = [v for r in rows for v in r], (len(rows), len(rows[0]))
        else:
            values, shape = list(x), (len(x),)
        convert = int if dtype == "i32" else float
        x = HostArray(bytearray(_pack([convert(v) for v in values], dtype)), shape, dtype)
    return _HostOperand(x, name, None)


def _i32_operand(x, name: str):
    return _table_operand(x, name, "i32")


def _host_kvcache(q, k_cache, v_cache, block_table, seqlens, k, v, causal, scale, return_lse, backend, path, dtype,
                  var, run=True):
    named = (("q", q), ("k_cache", k_cache), ("v_cache", v_cache))
    ops = [_HostOperand(x, n, dtype) for n, x in named]
    ops += [_i32_operand(block_table, "block_table"), _i32_operand(seqlens, "seqlens")]
    _require_rank(ops[0], "q", 4, _BSHD)
    B, Sq, Hq = ops[0].shape[0], ops[0].shape[1], ops[0].shape[2]
    specs = [(ops[0].shape, ops[0].dtype), ((B, Hq, Sq), "f32")][:2 if return_lse else 1]
    objs = _host_outputs(q, specs)
    outs = [(obj, shape, dt) for obj, (shape, dt) in zip(objs, specs)] + [None] * (2 - len(specs))
    if (k is None) != (v is None):
        raise InvalidArgument("%s: k and v (the keys to append) come together" % ("v" if k is not None else "k"))
    appending = k is not None
    if appending:
        ops += [_HostOperand(k, "k", dtype), _HostOperand(v, "v", dtype)]
    opts = _options(causal, scale, path, window=var.window, softcap=var.softcap)

    def call(t):  # t: q, k_cache, v_cache, block_table, seqlens, [k, v,] [tables,] out, lse
        t = var.bind(opts, t, 7 if appending else 5)
        new = t[5:7] if appending else [None, None]
        outputs = t[7:9] if appending else t[5:7]
        return _kvcache(t[:5] + list(outputs) + list(new), opts, run)

    result = _host_run(ops + var.operands(), outs, backend, call, run,
                       inout=((1, "k_cache"), (2, "v_cache")) if appending and run else ())
    if not run:
        return result
    return tuple(objs) if return_lse else objs[0]


def _host_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, causal, scale, return_lse,
                 backend, path, dtype, var, run=True):
    ops = [_HostOperand(x, n, dtype) for n, x in (("q", q), ("k", k), ("v", v))]
    ops += [_i32_operand(cu_seqlens_q, "cu_seqlens_q"), _i32_operand(cu_seqlens_k, "cu_seqlens_k")]
    _require_rank(ops[0], "q", 3, "[total_q, heads, head_dim]")
    T, Hq = ops[0].shape[0], ops[0].shape[1]
    specs = [(ops[0].shape, ops[0].dtype), ((Hq, T), "f32")][:2 if return_lse else 1]
    objs = _host_outputs(q, specs)
    outs = [(obj, shape, dt) for obj, (shape, dt) in zip(objs, specs)] + [None] * (2 - len(specs))
    opts = _options(causal, scale, path, window=var.window, softcap=var.softcap)

    def call(t):  # t: q, k, v, cu_seqlens_q, cu_seqlens_k, [tables,] out, lse
        t = var.bind(opts, t, 5)
        return _varlen(t[:3] + t[5:7] + t[3:5], max_seqlen_q, max_seqlen_k, opts, run)

    result = _host_run(ops + var.operands(), outs, backend, call, run)
    if not run:
        return result
    return tuple(objs) if return_lse else objs[0]


def _max_seqlen(value, name: str) -> int:
    try:
        out = None if isinstance(value, bool) else operator.index(value)
    except TypeError:
        out = None
    if out is None:
        raise InvalidArgument("%s: needs an integer, got %r" % (name, value))
    return out


# ---- PyTorch tensors: flashtile/_torch.py. ---------------------------------------------------------------------------


def _is_torch(x) -> bool:
    # torch is never imported here: a torch tensor means torch is loaded. isinstance against torch.Tensor (not a
    # look at the type's module) is what torch.compile traces without a graph break.
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.Tensor)


def _torch_part():
    from . import _torch  # registers the custom ops on first use
    return _torch


# ---- The entry points. ---------------------------------------------------------------------------------------------


def attention(q, k, v, causal: bool = False, scale: Optional[float] = None, return_lse: bool = False,
              backend: Optional[str] = None, path: Optional[str] = None, dtype: Optional[str] = None,
              allow_reduced_precision: bool = False, deterministic: bool = False, *, window_size=None,
              softcap: float = 0.0, alibi_slopes=None, sinks=None):
    """softmax(q·kᵀ·scale)·v, exact, for q [B, Sq, Hq, D], k and v [B, Sk, Hkv, D] (Hq a multiple of Hkv).

    causal: bottom-right aligned when Sq != Sk. scale: default 1/sqrt(D). return_lse: also return the f32 log-sum-exp
    [B, Hq, Sq] (natural log). backend: 'cpu', 'cuda', 'vulkan' or None (the tensors' device for torch tensors,
    'auto' for host buffers). path: force a kernel path ('cuda_sm90', 'vulkan_portable', ...). dtype: for host buffers
    whose format doesn't say (bf16 as uint16). allow_reduced_precision: paths may accumulate O in f16 where faster
    (Options::allow_reduced_precision_accumulation; today vulkan_coopmat2 with f16). last_result() tells which path
    and kernel ran, and whether it used reduced precision.

    For torch tensors the call is differentiable: out's gradient flows to q, k and v through attention_backward on
    the current stream (deterministic: its run-to-run bit-identical mode), and torch.compile traces it as the custom
    ops flashtile::attention_fwd / attention_bwd. The returned lse carries no gradient (it is detached). sinks that
    require grad get theirs (dsinks); alibi_slopes get none.

    Variants (FlashAttention's semantics; any combination, with GQA, Sq != Sk and causal): window_size=(left, right)
    lets row i see keys j with i + Sk - Sq - left <= j <= i + Sk - Sq + right (-1: unbounded on that side; None or
    (-1, -1): no window). softcap > 0: each score becomes softcap * tanh(score / softcap) (scale applied first).
    alibi_slopes: f32 [Hq] or [B, Hq]: score -= slope * |i + Sk - Sq - j|. sinks: f32 [Hq], a logit per head that
    joins every row's softmax denominator (and lse) and carries no value. alibi_slopes and sinks are of q's kind
    (torch tensors on q's device, or host buffers / lists of floats). A path without kernels for a variant is passed
    over with the reason (last_result().note).
    """
    _scale_value(scale)  # argument errors before any conversion or upload
    var = _Variants(window_size, softcap, alibi_slopes, sinks)
    if dtype is not None:
        dtype = _dtype_name(dtype)
    if _is_torch(q):
        return _torch_part().attention(q, k, v, causal, scale, return_lse, backend, path, allow_reduced_precision,
                                       deterministic, var)
    _load()
    return _host_attention(q, k, v, causal, scale, return_lse, backend, path, dtype, var,
                           reduced=allow_reduced_precision)


def attention_backward(q, k, v, out, lse, dout, *, causal: bool = False, scale: Optional[float] = None,
                       backend: Optional[str] = None, path: Optional[str] = None, dtype: Optional[str] = None,
                       deterministic: bool = False, window_size=None, softcap: float = 0.0, alibi_slopes=None,
                       sinks=None):
    """The gradients (dq, dk, dv) of attention(q, k, v) given its output `out`, its `lse` (return_lse=True; f32
    [B, Hq, Sq], required) and dout = dloss/dout, with the forward's causal and scale. dq is shaped like q, dk and dv
    like k and v (with GQA summed over each group's query heads), all in q's dtype. Takes what attention() takes:
    torch tensors (new torch tensors, queued on the current stream; not differentiable themselves) or host buffers
    (new HostArrays, or numpy arrays for numpy f16/f32 inputs). deterministic: bit-identical gradients run to run.
    Rows that saw no key get zero gradients.

    The variants (window_size, softcap, alibi_slopes, sinks) must be the forward's. With sinks, the result is
    (dq, dk, dv, dsinks): dsinks f32 [Hq] = dloss/dsinks = -sum over batches and rows of exp(sink - lse) *
    rowsum(dout * out); without sinks it stays (dq, dk, dv)."""
    _scale_value(scale)
    var = _Variants(window_size, softcap, alibi_slopes, sinks)
    if dtype is not None:
        dtype = _dtype_name(dtype)
    if _is_torch(q):
        return _torch_part().attention_backward(q, k, v, out, lse, dout, causal, scale, backend, path, deterministic,
                                                var)
    _load()
    return _host_backward((q, k, v, out, lse, dout), causal, scale, backend, path, dtype, deterministic, var)


def plan(q, k, v, causal: bool = False, scale: Optional[float] = None, return_lse: bool = False,
         backend: Optional[str] = None, path: Optional[str] = None, allow_reduced_precision: bool = False, *,
         window_size=None, softcap: float = 0.0, alibi_slopes=None, sinks=None) -> Result:
    """The Result attention() would give for torch tensors q, k, v (and the variants), without running anything."""
    _load()
    var = _Variants(window_size, softcap, alibi_slopes, sinks)
    if not _is_torch(q):
        raise InvalidArgument("q: plan() takes torch tensors; for host buffers call attention() and last_result()")
    return _torch_part().plan(q, k, v, causal, scale, return_lse, backend, path, allow_reduced_precision, var)


def plan_backward(q, k, v, out, lse, dout, *, causal: bool = False, scale: Optional[float] = None,
                  backend: Optional[str] = None, path: Optional[str] = None, dtype: Optional[str] = None,
                  deterministic: bool = False, window_size=None, softcap: float = 0.0, alibi_slopes=None,
                  sinks=None) -> Result:
    """The Result attention_backward() would give (path, kernel, why faster paths were passed over, and
    workspace_bytes: the scratch it needs), without running anything. Takes what attention_backward() takes."""
    _scale_value(scale)
    var = _Variants(window_size, softcap, alibi_slopes, sinks)
    if dtype is not None:
        dtype = _dtype_name(dtype)
    _load()
    if _is_torch(q):
        return _torch_part().plan_backward(q, k, v, out, lse, dout, causal, scale, backend, path, deterministic, var)
    return _host_backward((q, k, v, out, lse, dout), causal, scale, backend, path, dtype, deterministic, var,
                          run=False)


def attention_with_kvcache(q, k_cache, v_cache, block_table, seqlens, k=None, v=None, *, causal: bool = False,
                           scale: Optional[float] = None, return_lse: bool = False, backend: Optional[str] = None,
                           path: Optional[str] = None, dtype: Optional[str] = None, window_size=None,
                           softcap: float = 0.0, alibi_slopes=None, sinks=None):
    """Attention of q [B, Sq, Hq, D] over a paged KV cache: k_cache and v_cache [num_pages, page_size, Hkv, D]
    (page_size a multiple of 16), block_table int32 [B, pages_per_seq] (key j of sequence b lives in page
    block_table[b, j // page_size], slot j % page_size), seqlens int32 [B] (the keys each sequence holds).

    k and v [B, S_new, Hkv, D], when given, are first written into the cache at positions seqlens[b] ..
    seqlens[b] + S_new - 1 (in place: the caches must be writable), then attended over with the rest; seqlens is not
    changed (advance it yourself). causal: bottom-right per sequence. Returns out like q (and the f32 lse [B, Hq, Sq]
    with return_lse=True). Torch tensors: on q's device and the current stream, no copies, not differentiable, a
    graph break under torch.compile. Host buffers: as attention() takes them; the tables may also be lists of ints.
    The variants as attention() takes them, per sequence (Sk: the keys sequence b holds after the append).
    """
    _scale_value(scale)
    var = _Variants(window_size, softcap, alibi_slopes, sinks)
    if dtype is not None:
        dtype = _dtype_name(dtype)
    if _is_torch(q):
        return _torch_part().attention_with_kvcache(q, k_cache, v_cache, block_table, seqlens, k, v, causal, scale,
                                                    return_lse, backend, path, var)
    _load()
    return _host_kvcache(q, k_cache, v_cache, block_table, seqlens, k, v, causal, scale, return_lse, backend, path,
                         dtype, var)


def attention_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q: int, max_seqlen_k: int, *,
                     causal: bool = False, scale: Optional[float] = None, return_lse: bool = False,
                     backend: Optional[str] = None, path: Optional[str] = None, dtype: Optional[str] = None,
                     window_size=None, softcap: float = 0.0, alibi_slopes=None, sinks=None):
    """Attention over a packed batch: q [total_q, Hq, D], k and v [total_k, Hkv, D]; sequence b's rows are
    q[cu_seqlens_q[b]:cu_seqlens_q[b+1]] and its keys k[cu_seqlens_k[b]:cu_seqlens_k[b+1]] (int32 [B + 1], from 0,
    non-decreasing). max_seqlen_q and max_seqlen_k: at least every sequence's length. causal: bottom-right per
    sequence. Returns out like q (and the f32 lse [Hq, total_q] with return_lse=True). Takes what
    attention_with_kvcache() takes, the variants too (per sequence; ALiBi's [B, Hq] slopes: one row a sequence)."""
    _scale_value(scale)
    var = _Variants(window_size, softcap, alibi_slopes, sinks)
    max_seqlen_q = _max_seqlen(max_seqlen_q, "max_seqlen_q")
    max_seqlen_k = _max_seqlen(max_seqlen_k, "max_seqlen_k")
    if dtype is not None:
        dtype = _dtype_name(dtype)
    if _is_torch(q):
        return _torch_part().attention_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
                                              causal, scale, return_lse, backend, path, var)
    _load()
    return _host_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, causal, scale, return_lse,
                        backend, path, dtype, var)
