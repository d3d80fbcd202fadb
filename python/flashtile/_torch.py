"""flashtile for PyTorch tensors: no copies (tensors are wrapped by data_ptr and strides), the current CUDA stream,
autograd and torch.compile.

The forward and the backward are torch.library custom ops, flashtile::attention_fwd -> (out, lse) and
flashtile::attention_bwd -> (dq, dk, dv, dsinks), each with a fake (shapes and dtypes only) so that torch.compile and
torch.export trace them without running them, and attention_fwd has an autograd formula that calls attention_bwd.
The variants are op arguments: window_left/window_right/softcap as scalars, alibi_slopes and sinks as optional
tensors; sinks get a gradient (dsinks) when they require one, alibi_slopes none.
Autograd runs a backward op on the stream its forward ran on, so the gradients are queued on that stream too.
Eager calls skip the ops' dispatch, which costs more host time than a short kernel takes: they run the same bodies
directly (under autograd through _EagerAttention, the same formula), while torch.compile, export and tensor subclasses
(fake tensors, functorch) take the ops.

Imported by flashtile on the first torch tensor it sees; it needs torch >= 2.4 (torch.library.custom_op).
"""

# No `from __future__ import annotations`: custom_op reads the type hints to infer the schema, which older torch
# releases cannot do from strings.
from typing import Optional, Tuple

import torch
from torch import Tensor

from . import (BACKENDS, Device, DeviceMismatch, DTypeMismatch, InvalidArgument, Result, Unsupported, _backward,
               _forward, _kvcache, _load, _options, _scale_value, _varlen, _Variants, _wrap)

if not hasattr(torch.library, "custom_op"):
    raise Unsupported("flashtile: torch %s lacks torch.library.custom_op (torch >= 2.4 needed)" % torch.__version__)

_CUDA_STREAM_LEGACY = 1  # cudaStreamLegacy
_DTYPES = {torch.float16: "f16", torch.bfloat16: "bf16", torch.float32: "f32", torch.int32: "i32"}  # i32: tables


def _dtype(t: Tensor, name: str) -> str:
    if t.dtype not in _DTYPES:
        raise DTypeMismatch("%s: dtype %s is not float16, bfloat16, float32 (or int32 for the serving tables)"
                            % (name, t.dtype))
    return _DTYPES[t.dtype]


def _check_operands(q, others, backend, rank: Optional[int] = 4) -> None:
    """Errors the library can't name in torch's terms, before anything runs (traceable: metadata only). rank None:
    the others only."""
    for n, x in others:
        if not isinstance(x, Tensor):
            raise InvalidArgument("%s: q is a torch tensor, so %s must be one too" % (n, n))
        if x.device != q.device:
            raise DeviceMismatch("%s: on %s, but q is on %s" % (n, x.device, q.device))
    if rank is None:
        return
    if q.dim() != 4:
        raise InvalidArgument("q: needs 4 dimensions [batch, seqlen, heads, head_dim], got %d" % q.dim())
    if q.device.type not in ("cuda", "cpu"):
        raise DeviceMismatch("q: torch device %s is neither cuda nor cpu" % (q.device,))
    allowed = (None, q.device.type, "auto", BACKENDS[q.device.type], BACKENDS["auto"])
    if backend not in allowed:
        raise DeviceMismatch("backend: %r, but the tensors are %s tensors" % (backend, q.device.type.upper()))


def _path_arg(path) -> Optional[str]:
    """The op argument for `path`: a name (custom ops take str, not the C enum), checked when it runs."""
    if path is None or isinstance(path, str):
        return path
    if isinstance(path, int) and not isinstance(path, bool):
        return _load().ft_path_name(path).decode()
    raise InvalidArgument("path: needs a path name such as 'cuda_sm90', got %r" % (path,))


# The current stream's handle without building a torch Stream object (torch's own raw accessor where it has one).
_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)
# Whether functorch transforms (vmap, grad) are active, where torch can say.
_functorch_active = getattr(getattr(torch._C, "_functorch", None), "are_transforms_active", None)


def _device(q: Tensor):
    """(device, wrap kind, stream) for a call on q's device, queued on torch's current stream."""
    if q.is_cuda:
        index = q.device.index if q.device.index is not None else torch.cuda.current_device()
        stream = _raw_stream(index) if _raw_stream else torch.cuda.current_stream(q.device).cuda_stream
        # torch's default stream is the legacy default stream, handle 0; to flashtile a null stream means "your own
        # stream, synchronously". cudaStreamLegacy ((cudaStream_t)1) names the legacy stream for launches: use it so
        # the call stays asynchronous and ordered with torch's work.
        return Device.get("cuda", index), "cuda", stream or _CUDA_STREAM_LEGACY
    return Device.get("cpu", 0), "host", 0


def _wrapped(dev, kind, named):
    # Element strides straight from torch: no copy, whatever the layout (the library checks the head dim's stride).
    return [None if x is None else
            _wrap(kind, dev, x.data_ptr(), _dtype(x, n), x.shape, x.stride(), keep=x)
            for n, x in named]


def _fwd_outputs(q: Tensor, need_lse: bool) -> Tuple[Tensor, Tensor]:
    """out like q (contiguous) and lse f32 [B, Hq, Sq], or an empty lse when none is needed: shared by the op and its
    fake so the two always agree."""
    B, Sq, Hq, _ = q.shape
    lse_shape = (B, Hq, Sq) if need_lse else (0,)
    return q.new_empty(q.shape), q.new_empty(lse_shape, dtype=torch.float32)


def _bwd_outputs(q: Tensor, k: Tensor, v: Tensor, need_dsinks: bool) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
    """dq, dk, dv like q, k, v, and dsinks f32 [Hq] (empty when not wanted): shared by the op and its fake."""
    return (q.new_empty(q.shape), q.new_empty(k.shape), q.new_empty(v.shape),
            q.new_empty((q.shape[2],) if need_dsinks else (0,), dtype=torch.float32))


# The variants as the ops carry them: (window_left, window_right, softcap, alibi_slopes, sinks).
def _variant_args(var: _Variants, q: Tensor):
    tables = dict(var.tables)
    _check_operands(q, [(n, x) for n, x in var.tables], None, rank=None)
    return (int(var.window[0]), int(var.window[1]), float(var.softcap), tables.get("alibi_slopes"), tables.get("sinks"))


def _variant_options(opts, dev, kind, alibi_slopes, sinks):
    """Sets the tables' handles in `opts`; returns the wrapped tables, which must outlive the call."""
    tables = _wrapped(dev, kind, [("alibi_slopes", alibi_slopes), ("sinks", sinks)])
    opts.alibi_slopes, opts.sinks = [None if t is None else t.handle for t in tables]
    return tables


def _run_forward(q, k, v, causal, scale, path, need_lse, reduced, window_left=-1, window_right=-1, softcap=0.0,
                 alibi_slopes=None, sinks=None, run=True):
    dev, kind, stream = _device(q)
    out, lse = _fwd_outputs(q, need_lse)
    tensors = _wrapped(dev, kind, [("q", q), ("k", k), ("v", v), ("out", out), ("lse", lse if need_lse else None)])
    opts = _options(causal, scale, path, stream=stream, reduced=reduced, window=(window_left, window_right),
                    softcap=softcap)
    tables = _variant_options(opts, dev, kind, alibi_slopes, sinks)  # noqa: F841 (kept alive through the call)
    result = _forward(tensors, opts, run=run)
    return (out, lse) if run else result


def _run_backward(q, k, v, out, lse, dout, causal, scale, path, deterministic, window_left=-1, window_right=-1,
                  softcap=0.0, alibi_slopes=None, sinks=None, need_dsinks=False, run=True):
    dev, kind, stream = _device(q)
    dq, dk, dv, dsinks = _bwd_outputs(q, k, v, need_dsinks)
    named = [("q", q), ("k", k), ("v", v), ("out", out), ("lse", lse), ("dout", dout), ("dq", dq), ("dk", dk),
             ("dv", dv)]
    opts = _options(causal, scale, path, stream=stream, deterministic=deterministic,
                    window=(window_left, window_right), softcap=softcap)
    tables = _variant_options(opts, dev, kind, alibi_slopes, sinks)
    if need_dsinks:
        tables += _wrapped(dev, kind, [("dsinks", dsinks)])
        opts.dsinks = tables[-1].handle
    result = _backward(_wrapped(dev, kind, named), opts, run=run)
    return (dq, dk, dv, dsinks) if run else result


# ---- The custom ops. Scalars are op arguments (bool, float?, str?) so a compiled graph carries them. ------------


def _fwd_body(q, k, v, causal, scale, path, need_lse, reduced, deterministic, window_left, window_right, softcap,
              alibi_slopes, sinks):
    # deterministic is the backward's: an argument here so that setup_context sees it.
    return _run_forward(q, k, v, causal, scale, path, need_lse, reduced, window_left, window_right, softcap,
                        alibi_slopes, sinks)


@torch.library.custom_op("flashtile::attention_fwd", mutates_args=())
def attention_fwd(q: Tensor, k: Tensor, v: Tensor, causal: bool, scale: Optional[float], path: Optional[str],
                  need_lse: bool, reduced: bool, deterministic: bool, window_left: int, window_right: int,
                  softcap: float, alibi_slopes: Optional[Tensor], sinks: Optional[Tensor]) -> Tuple[Tensor, Tensor]:
    return _fwd_body(q, k, v, causal, scale, path, need_lse, reduced, deterministic, window_left, window_right,
                     softcap, alibi_slopes, sinks)


@attention_fwd.register_fake
def _attention_fwd_fake(q, k, v, causal, scale, path, need_lse, reduced, deterministic, window_left, window_right,
                        softcap, alibi_slopes, sinks):
    return _fwd_outputs(q, need_lse)


@torch.library.custom_op("flashtile::attention_bwd", mutates_args=())
def attention_bwd(q: Tensor, k: Tensor, v: Tensor, out: Tensor, lse: Tensor, dout: Tensor, causal: bool,
                  scale: Optional[float], path: Optional[str], deterministic: bool, window_left: int,
                  window_right: int, softcap: float, alibi_slopes: Optional[Tensor], sinks: Optional[Tensor],
                  need_dsinks: bool) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
    return _run_backward(q, k, v, out, lse, dout, causal, scale, path, deterministic, window_left, window_right,
                         softcap, alibi_slopes, sinks, need_dsinks)


@attention_bwd.register_fake
def _attention_bwd_fake(q, k, v, out, lse, dout, causal, scale, path, deterministic, window_left, window_right,
                        softcap, alibi_slopes, sinks, need_dsinks):
    return _bwd_outputs(q, k, v, need_dsinks)


_SINKS_INPUT = 13  # the index of sinks among attention_fwd's inputs


def _setup_context(ctx, inputs, output) -> None:
    (q, k, v, causal, scale, path, _need_lse, _reduced, deterministic, window_left, window_right, softcap,
     alibi_slopes, sinks) = inputs
    out, lse = output
    ctx.save_for_backward(q, k, v, out, lse, alibi_slopes, sinks)
    ctx.causal, ctx.scale, ctx.path, ctx.deterministic = causal, scale, path, deterministic
    ctx.window, ctx.softcap = (window_left, window_right), softcap
    # No zero tensor for lse's gradient (nothing can use lse: attention() hands it out detached) nor for an unused out.
    ctx.set_materialize_grads(False)


def _grads(ctx, dout, backward_op):
    """The gradients of the forward's 14 inputs, through backward_op (the custom op, or its body for eager calls)."""
    if dout is None:  # out took no part in the loss
        return (None,) * 14
    q, k, v, out, lse, alibi_slopes, sinks = ctx.saved_tensors
    if lse.dim() != 3:
        raise InvalidArgument("lse: the forward ran without one (no input required grad then); nothing to "
                              "differentiate")
    if dout.stride(-1) != 1:  # autograd gives gradients any strides (an expanded sum has stride 0); the head dim
        dout = dout.contiguous()  # must be contiguous
    need_dsinks = sinks is not None and ctx.needs_input_grad[_SINKS_INPUT]
    dq, dk, dv, dsinks = backward_op(q, k, v, out, lse, dout, ctx.causal, ctx.scale, ctx.path, ctx.deterministic,
                                     ctx.window[0], ctx.window[1], ctx.softcap, alibi_slopes, sinks, need_dsinks)
    # alibi_slopes get no gradient (as in FlashAttention); sinks get dsinks when they require one.
    return (dq, dk, dv) + (None,) * 10 + (dsinks if need_dsinks else None,)


attention_fwd.register_autograd(lambda ctx, dout, _dlse: _grads(ctx, dout, attention_bwd),
                                setup_context=_setup_context)


class _EagerAttention(torch.autograd.Function):
    """attention_fwd's autograd for eager calls: the same bodies and formula, without the ops' dispatch. forward
    takes ctx itself: a separate setup_context would make every apply() bind its arguments through inspect."""

    @staticmethod
    def forward(ctx, *inputs):
        output = _fwd_body(*inputs)
        _setup_context(ctx, inputs, output)
        return output

    @staticmethod
    def backward(ctx, dout, _dlse):
        return _grads(ctx, dout, _run_backward)


def _eager(*xs) -> bool:
    """Whether a call can skip the custom ops: plain tensors, outside torch.compile and functorch transforms."""
    if torch.compiler.is_compiling() or (_functorch_active is not None and _functorch_active()):
        return False
    return all(x is None or type(x) is Tensor for x in xs)


# ---- What flashtile's entry points call for torch tensors. ------------------------------------------------------


def attention(q, k, v, causal, scale, return_lse, backend, path, reduced, deterministic, var):
    _check_operands(q, (("k", k), ("v", v)), backend)
    variants = _variant_args(var, q)
    sinks = variants[4]
    grad = torch.is_grad_enabled() and (q.requires_grad or k.requires_grad or v.requires_grad or
                                        (sinks is not None and sinks.requires_grad))
    # lse costs a little on some kernels: compute it only when asked for or when autograd will need it.
    args = (q, k, v, bool(causal), _scale_value(scale), _path_arg(path), bool(return_lse) or grad, bool(reduced),
            bool(deterministic), *variants)
    if not _eager(q, k, v, variants[3], sinks):
        out, lse = attention_fwd(*args)
    elif grad:
        out, lse = _EagerAttention.apply(*args)
    else:
        out, lse = _fwd_body(*args)
    return (out, lse.detach()) if return_lse else out


def _check_backward(q, k, v, out, lse, dout, backend) -> None:
    if lse is None:
        raise InvalidArgument("lse: required: the forward's f32 log-sum-exp [batch, heads_q, seqlen_q] "
                              "(attention(..., return_lse=True))")
    _check_operands(q, (("k", k), ("v", v), ("out", out), ("lse", lse), ("dout", dout)), backend)


def attention_backward(q, k, v, out, lse, dout, causal, scale, backend, path, deterministic, var):
    _check_backward(q, k, v, out, lse, dout, backend)
    variants = _variant_args(var, q)
    need_dsinks = variants[4] is not None
    backward_op = _run_backward if _eager(q, k, v, out, lse, dout, variants[3], variants[4]) else attention_bwd
    dq, dk, dv, dsinks = backward_op(q, k, v, out, lse, dout, bool(causal), _scale_value(scale), _path_arg(path),
                                     bool(deterministic), *variants, need_dsinks)
    return (dq, dk, dv, dsinks) if need_dsinks else (dq, dk, dv)


def plan(q, k, v, causal, scale, return_lse, backend, path, reduced, var) -> Result:
    _check_operands(q, (("k", k), ("v", v)), backend)
    return _run_forward(q, k, v, causal, scale, _path_arg(path), bool(return_lse), reduced, *_variant_args(var, q),
                        run=False)


def plan_backward(q, k, v, out, lse, dout, causal, scale, backend, path, deterministic, var) -> Result:
    _check_backward(q, k, v, out, lse, dout, backend)
    variants = _variant_args(var, q)
    return _run_backward(q, k, v, out, lse, dout, causal, scale, _path_arg(path), deterministic, *variants,
                         need_dsinks=variants[4] is not None, run=False)


# ---- The serving layouts: eager calls on the current stream (no custom op: the append mutates the caches). -------


def _check_serving(q, others, backend, rank: int, layout: str) -> None:
    for n, x in others:
        if x is not None and not isinstance(x, Tensor):
            raise InvalidArgument("%s: q is a torch tensor, so %s must be one too" % (n, n))
        if x is not None and x.device != q.device:
            raise DeviceMismatch("%s: on %s, but q is on %s" % (n, x.device, q.device))
    if q.dim() != rank:
        raise InvalidArgument("q: needs %d dimensions %s, got %d" % (rank, layout, q.dim()))
    if q.device.type not in ("cuda", "cpu"):
        raise DeviceMismatch("q: torch device %s is neither cuda nor cpu" % (q.device,))
    if backend not in (None, q.device.type, "auto", BACKENDS[q.device.type], BACKENDS["auto"]):
        raise DeviceMismatch("backend: %r, but the tensors are %s tensors" % (backend, q.device.type.upper()))


def attention_with_kvcache(q, k_cache, v_cache, block_table, seqlens, k, v, causal, scale, return_lse, backend,
                           path, var):
    named = [("k_cache", k_cache), ("v_cache", v_cache), ("block_table", block_table), ("seqlens", seqlens),
             ("k", k), ("v", v)]
    _check_serving(q, named, backend, 4, "[batch, seqlen, heads, head_dim]")
    dev, kind, stream = _device(q)
    B, Sq, Hq, _ = q.shape
    out = q.new_empty(q.shape)
    lse = q.new_empty((B, Hq, Sq), dtype=torch.float32) if return_lse else None
    tensors = _wrapped(dev, kind, [("q", q), ("k_cache", k_cache), ("v_cache", v_cache), ("block_table", block_table),
                                   ("seqlens", seqlens), ("out", out), ("lse", lse), ("k", k), ("v", v)])
    opts = _options(causal, _scale_value(scale), _path_arg(path), stream=stream, window=var.window,
                    softcap=var.softcap)
    tables = _variant_options(opts, dev, kind, *_variant_args(var, q)[3:])  # noqa: F841 (alive through the call)
    _kvcache(tensors, opts)
    return (out, lse) if return_lse else out


def attention_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, causal, scale, return_lse,
                     backend, path, var):
    named = [("k", k), ("v", v), ("cu_seqlens_q", cu_seqlens_q), ("cu_seqlens_k", cu_seqlens_k)]
    _check_serving(q, named, backend, 3, "[total_q, heads, head_dim]")
    dev, kind, stream = _device(q)
    out = q.new_empty(q.shape)
    lse = q.new_empty((q.shape[1], q.shape[0]), dtype=torch.float32) if return_lse else None
    tensors = _wrapped(dev, kind, [("q", q), ("k", k), ("v", v), ("out", out), ("lse", lse),
                                   ("cu_seqlens_q", cu_seqlens_q), ("cu_seqlens_k", cu_seqlens_k)])
    opts = _options(causal, _scale_value(scale), _path_arg(path), stream=stream, window=var.window,
                    softcap=var.softcap)
    tables = _variant_options(opts, dev, kind, *_variant_args(var, q)[3:])  # noqa: F841 (alive through the call)
    _varlen(tensors, max_seqlen_q, max_seqlen_k, opts)
    return (out, lse) if return_lse else out
