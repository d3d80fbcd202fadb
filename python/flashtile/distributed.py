"""flashtile.distributed: ring attention (context parallelism) through the library's C API.

Each rank holds a shard of the sequence; K/V blocks travel around a ring of GPUs over NCCL while each computes
attention on what it holds, and the partial results merge exactly through their log-sum-exps (the backward passes
dK/dV around the ring the same way). Sharding: "contiguous" (rank r holds rows [r*S/N, (r+1)*S/N)) or "zigzag" (2N
chunks, rank r holds chunks r and 2N-1-r, which balances causal work; S divisible by 2N).

    import torch.distributed as dist, flashtile.distributed as ftd
    comm = ftd.Communicator()                        # NCCL, one rank per GPU, id broadcast through the default store
    q = ftd.shard(q_full, comm.world_size, comm.rank, "zigzag")      # this rank's rows (dim 1 of [B, S, H, D])
    out = ftd.ring_attention(q, k, v, comm, sharding="zigzag", causal=True)   # differentiable (autograd)
    out_full = ftd.unshard(gathered_outs, "zigzag")  # the ranks' shards back into one sequence

Without GPUs: positions() and shard()/unshard() (any sequence type, torch tensors too), and ring_attention_simulated()
on host buffers: N simulated ranks on the CPU device, the same algorithm with device copies for messages.
"""

from __future__ import annotations

import ctypes
from typing import List, Optional, Sequence

from . import (HostArray, InvalidArgument, Result, _check, _create, _finish, _load, _options, _Options, _Result,
               _scale_value, _Tensor)

__all__ = ["SHARDINGS", "positions", "shard", "unshard", "nccl_unavailable_reason", "Communicator", "ring_attention",
           "ring_attention_backward", "ring_attention_simulated", "ring_attention_backward_simulated"]

SHARDINGS = ("contiguous", "zigzag")  # values of the C API's ft_sharding, in order
_NCCL_UNIQUE_ID_BYTES = 128  # FT_NCCL_UNIQUE_ID_BYTES
_declared = set()


def _lib():
    lib = _load()
    if id(lib) in _declared:
        return lib
    c_int, c_vp, c_i64 = ctypes.c_int, ctypes.c_void_p, ctypes.c_int64
    opts, res = ctypes.POINTER(_Options), ctypes.POINTER(_Result)
    arr = ctypes.POINTER(c_vp)
    sigs = {
        "ft_shard_sequence": [c_vp, c_vp, c_int, c_int, c_int],
        "ft_unshard_sequence": [c_vp, c_vp, c_int, c_int, c_int],
        "ft_ring_positions": [c_int, c_int, c_int, c_i64, ctypes.POINTER(c_i64)],
        "ft_ring_attention_forward_simulated": [c_int, c_int, arr, arr, arr, arr, arr, opts, res],
        "ft_ring_attention_backward_simulated": [c_int, c_int] + [arr] * 9 + [opts, res],
        "ft_nccl_unique_id": [ctypes.c_char_p],
        "ft_nccl_comm_init": [c_int, c_int, ctypes.c_char_p, c_vp, ctypes.POINTER(c_vp)],
        "ft_nccl_comm_destroy": [c_vp],
        "ft_ring_attention_forward": [c_vp, c_int, c_vp, c_vp, c_vp, c_vp, c_vp, opts, res],
        "ft_ring_attention_backward": [c_vp, c_int] + [c_vp] * 9 + [opts, res],
    }
    for name, args in sigs.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = c_int, args
    lib.ft_nccl_unavailable_reason.restype, lib.ft_nccl_unavailable_reason.argtypes = ctypes.c_char_p, []
    _declared.add(id(lib))
    return lib


def _sharding_id(sharding: str) -> int:
    if sharding not in SHARDINGS:
        raise InvalidArgument("sharding: must be 'contiguous' or 'zigzag', got %r" % (sharding,))
    return SHARDINGS.index(sharding)


def positions(world_size: int, rank: int, sharding: str, local_len: int) -> List[int]:
    """The global position of each of a rank's local_len rows (the library's ring_positions)."""
    out = (ctypes.c_int64 * max(int(local_len), 1))()
    _check(_lib().ft_ring_positions(int(world_size), int(rank), _sharding_id(sharding), int(local_len), out))
    return list(out[:int(local_len)])


def _rows(seq_len: int, world_size: int, rank: int, sharding: str) -> List[int]:
    parts = world_size * (2 if sharding == "zigzag" else 1)
    if world_size < 1 or seq_len % parts:
        raise InvalidArgument("seq_len: %d must be divisible by %d for %s sharding over %d ranks"
                              % (seq_len, parts, sharding, world_size))
    return positions(world_size, rank, sharding, seq_len // world_size)


def shard(x, world_size: int, rank: int, sharding: str = "zigzag", dim: int = 1):
    """This rank's rows of x along `dim` (torch tensors: index_select, a new tensor; Python sequences: dim 0, a
    list)."""
    if hasattr(x, "index_select"):
        import torch
        idx = torch.tensor(_rows(x.shape[dim], world_size, rank, sharding), device=x.device)
        return x.index_select(dim, idx)
    if dim != 0:
        raise InvalidArgument("dim: Python sequences shard along dim 0")
    return [x[i] for i in _rows(len(x), world_size, rank, sharding)]


def unshard(parts: Sequence, sharding: str = "zigzag", dim: int = 1):
    """The whole sequence from every rank's shard, in rank order (the inverse of shard)."""
    world = len(parts)
    if world == 0:
        raise InvalidArgument("parts: needs one shard per rank")
    if hasattr(parts[0], "index_select"):
        import torch
        local = parts[0].shape[dim]
        order = [p for r in range(world) for p in positions(world, r, sharding, local)]
        inverse = torch.empty(len(order), dtype=torch.long)
        inverse[torch.tensor(order)] = torch.arange(len(order))
        return torch.cat(list(parts), dim).index_select(dim, inverse.to(parts[0].device))
    if dim != 0:
        raise InvalidArgument("dim: Python sequences unshard along dim 0")
    local = len(parts[0])
    out = [None] * (local * world)
    for r, p in enumerate(parts):
        for i, pos in enumerate(positions(world, r, sharding, local)):
            out[pos] = p[i]
    return out


def nccl_unavailable_reason() -> str:
    """'' when this library has the NCCL transport and libnccl loads; otherwise why not."""
    return _lib().ft_nccl_unavailable_reason().decode()


# ---- The simulated ring on host buffers (CPU device): what CI checks without GPUs. --------------------------------

def _upload(dev, a: HostArray) -> _Tensor:
    t = _create(dev, a.dtype, a.shape)
    raw = memoryview(a.buffer).cast("B")
    buf = (ctypes.c_char * raw.nbytes).from_buffer_copy(raw)
    _check(_load().ft_tensor_upload(t.handle, buf, raw.nbytes))
    return t


def _download(t: _Tensor, shape, dtype) -> HostArray:
    out = HostArray.empty(shape, dtype)
    raw = memoryview(out.buffer).cast("B")
    buf = (ctypes.c_char * raw.nbytes).from_buffer(out.buffer)
    _check(_load().ft_tensor_download(t.handle, buf, raw.nbytes))
    return out


def _array(tensors: Sequence[_Tensor]):
    return (ctypes.c_void_p * len(tensors))(*[t.handle for t in tensors])


def _require_shards(named) -> int:
    world = len(named[0][1])
    for name, xs in named:
        if len(xs) != world or not all(isinstance(x, HostArray) for x in xs):
            raise InvalidArgument("%s: needs one HostArray per rank (%d ranks)" % (name, world))
    return world


def ring_attention_simulated(q: Sequence[HostArray], k: Sequence[HostArray], v: Sequence[HostArray],
                             sharding: str = "zigzag", causal: bool = False, scale: Optional[float] = None):
    """The ring over len(q) simulated ranks on the CPU device: rank r's shards are q[r], k[r], v[r] (HostArrays
    [B, S/N, H, D]). Returns ([out per rank], [lse per rank])."""
    from . import Device
    _scale_value(scale)
    world = _require_shards([("q", q), ("k", k), ("v", v)])
    dev = Device.get("cpu", 0)
    tq, tk, tv = ([_upload(dev, a) for a in xs] for xs in (q, k, v))
    B, L, H, _ = q[0].shape
    to = [_create(dev, q[0].dtype, q[0].shape) for _ in range(world)]
    tl = [_create(dev, "f32", (B, H, L)) for _ in range(world)]
    res = _Result()
    _check(_lib().ft_ring_attention_forward_simulated(world, _sharding_id(sharding), _array(tq), _array(tk),
                                                      _array(tv), _array(to), _array(tl),
                                                      ctypes.byref(_options(causal, scale, None)), ctypes.byref(res)))
    _finish(res, True)
    return ([_download(t, q[0].shape, q[0].dtype) for t in to], [_download(t, (B, H, L), "f32") for t in tl])


def ring_attention_backward_simulated(q, k, v, out, lse, dout, sharding: str = "zigzag", causal: bool = False,
                                      scale: Optional[float] = None):
    """The simulated ring's backward (out and lse from ring_attention_simulated): ([dq], [dk], [dv]) per rank."""
    from . import Device
    _scale_value(scale)
    world = _require_shards([("q", q), ("k", k), ("v", v), ("out", out), ("lse", lse), ("dout", dout)])
    dev = Device.get("cpu", 0)
    ins = [[_upload(dev, a) for a in xs] for xs in (q, k, v, out, lse, dout)]
    grads = [[_create(dev, like.dtype, like.shape) for like in xs] for xs in (q, k, v)]
    res = _Result()
    _check(_lib().ft_ring_attention_backward_simulated(world, _sharding_id(sharding), *[_array(x) for x in ins],
                                                       *[_array(g) for g in grads],
                                                       ctypes.byref(_options(causal, scale, None)), ctypes.byref(res)))
    _finish(res, True)
    return tuple([_download(t, like.shape, like.dtype) for t, like in zip(g, xs)] for g, xs in zip(grads, (q, k, v)))


# ---- Over NCCL, for torch CUDA tensors. ----------------------------------------------------------------------------

class Communicator:
    """An NCCL communicator for the ring, one rank per GPU: rank 0 makes the unique id (ncclGetUniqueId), which
    reaches the other ranks through a torch.distributed store (default: the default process group's), then every
    rank joins (ncclCommInitRank) on its CUDA device (default: torch.cuda.current_device()). The library's NCCL is
    the application's when it loaded one first (torch does)."""

    _instances = 0  # a store key per communicator made in this process

    def __init__(self, rank: Optional[int] = None, world_size: Optional[int] = None, store=None, device=None):
        import torch
        import torch.distributed as dist
        from . import Device
        self.rank = dist.get_rank() if rank is None else int(rank)
        self.world_size = dist.get_world_size() if world_size is None else int(world_size)
        if store is None:
            store = dist.distributed_c10d._get_default_store()
        index = torch.cuda.current_device() if device is None else torch.device(device).index
        key = "flashtile/ring/%d" % Communicator._instances
        Communicator._instances += 1
        lib = _lib()
        if self.rank == 0:
            uid = ctypes.create_string_buffer(_NCCL_UNIQUE_ID_BYTES)
            _check(lib.ft_nccl_unique_id(uid))
            store.set(key, uid.raw)
        raw = store.get(key)  # blocks until rank 0 has set it
        self.device = Device.get("cuda", index)
        self._comm = ctypes.c_void_p()
        _check(lib.ft_nccl_comm_init(self.world_size, self.rank, raw, self.device._handle, ctypes.byref(self._comm)))

    def close(self) -> None:
        if getattr(self, "_comm", None):
            _check(_lib().ft_nccl_comm_destroy(self._comm))
            self._comm = None

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown: the library may be gone
            pass


def _ring_call(comm: Communicator, fn, named, sharding: str, causal: bool, scale) -> Result:
    from ._torch import _device, _wrapped
    dev, kind, stream = _device(named[0][1])
    res = _Result()
    handles = [t.handle if t is not None else None for t in _wrapped(dev, kind, named)]
    _check(fn(comm._comm, _sharding_id(sharding), *handles, ctypes.byref(_options(causal, scale, None, stream=stream)),
              ctypes.byref(res)))
    return _finish(res, True)


def _forward(q, k, v, comm, sharding, causal, scale):
    import torch
    B, L, H, _ = q.shape
    out, lse = torch.empty_like(q), q.new_empty((B, H, L), dtype=torch.float32)
    _ring_call(comm, _lib().ft_ring_attention_forward,
               [("q", q), ("k", k), ("v", v), ("out", out), ("lse", lse)], sharding, causal, scale)
    return out, lse


def ring_attention_backward(q, k, v, out, lse, dout, comm: Communicator, sharding: str = "zigzag",
                            causal: bool = False, scale: Optional[float] = None):
    """The ring's gradients (dq, dk, dv) of this rank's shards, from the ring forward's out and lse."""
    import torch
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    _ring_call(comm, _lib().ft_ring_attention_backward,
               [("q", q), ("k", k), ("v", v), ("out", out), ("lse", lse), ("dout", dout.contiguous()), ("dq", dq),
                ("dk", dk), ("dv", dv)], sharding, causal, scale)
    return dq, dk, dv


def _function():
    import torch

    class RingAttention(torch.autograd.Function):
        @staticmethod
        def forward(ctx, q, k, v, comm, sharding, causal, scale):
            out, lse = _forward(q, k, v, comm, sharding, causal, scale)
            ctx.save_for_backward(q, k, v, out, lse)
            ctx.ring = (comm, sharding, causal, scale)
            ctx.mark_non_differentiable(lse)
            return out, lse

        @staticmethod
        def backward(ctx, dout, _dlse):
            q, k, v, out, lse = ctx.saved_tensors
            dq, dk, dv = ring_attention_backward(q, k, v, out, lse, dout, *ctx.ring)
            return dq, dk, dv, None, None, None, None

    return RingAttention


def ring_attention(q, k, v, comm: Communicator, sharding: str = "zigzag", causal: bool = False,
                   scale: Optional[float] = None, return_lse: bool = False):
    """This rank's part of ring attention over NCCL: q, k, v its shards [B, S/N, H, D] (torch CUDA tensors on the
    communicator's device; the same shapes on every rank). Differentiable: the backward runs the ring backward.
    Runs on torch's current stream and returns when done."""
    _scale_value(scale)
    _sharding_id(sharding)
    out, lse = _function().apply(q, k, v, comm, sharding, causal, scale)
    return (out, lse) if return_lse else out
