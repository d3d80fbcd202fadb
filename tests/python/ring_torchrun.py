"""Ring attention over NCCL from PyTorch, one process per GPU, against flashtile.attention of the whole sequence on
each rank's GPU (forward and autograd backward), both shardings, causal and not:

  torchrun --nproc-per-node 2 tests/python/ring_torchrun.py        (FLASHTILE_LIBRARY=build/libflashtile.so)

The process group is gloo: it only carries the store and the final tally; flashtile makes its own NCCL communicator
(flashtile.distributed.Communicator). Exit 0 when every rank is within tolerance, 1 otherwise, 77 (skip) without 2+
GPUs or without the NCCL transport.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

import flashtile  # noqa: E402
import flashtile.distributed as ftd  # noqa: E402

TOL = {"out": 1e-2, "grad": 2e-2}  # bf16: cases.hpp's out_tolerance and grad_tolerance


def rel(got, want):
    return ((got.float() - want.float()).norm() / want.float().norm().clamp_min(1e-30)).item()


def main():
    if torch.cuda.device_count() < 2:
        print("SKIP: needs 2+ GPUs, %d visible" % torch.cuda.device_count())
        return 77
    why = ftd.nccl_unavailable_reason()
    if why:
        print("SKIP: %s" % why)
        return 77
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", rank)))
    comm = ftd.Communicator()
    failures = 0
    for sharding in ftd.SHARDINGS:
        for causal in (False, True):
            gen = torch.Generator(device="cuda").manual_seed(46)  # the same global tensors on every rank
            B, S, Hq, Hkv, D = 2, 2 * world * 192, 8, 2, 128
            full = {n: torch.randn((B, S, h, D), generator=gen, device="cuda", dtype=torch.bfloat16)
                    for n, h in (("q", Hq), ("k", Hkv), ("v", Hkv), ("dout", Hq))}
            ref_in = [full[n].clone().requires_grad_() for n in ("q", "k", "v")]
            ref_out = flashtile.attention(*ref_in, causal=causal)
            ref_out.backward(full["dout"])
            local = [ftd.shard(full[n], world, rank, sharding).requires_grad_() for n in ("q", "k", "v")]
            out = ftd.ring_attention(*local, comm, sharding=sharding, causal=causal)
            out.backward(ftd.shard(full["dout"], world, rank, sharding))
            errs = [rel(out, ftd.shard(ref_out.detach(), world, rank, sharding))]
            errs += [rel(x.grad, ftd.shard(r.grad, world, rank, sharding)) for x, r in zip(local, ref_in)]
            ok = errs[0] <= TOL["out"] and all(e <= TOL["grad"] for e in errs[1:])
            failures += not ok
            print("rank %d/%d %-10s causal=%-5s out %.2e dq %.2e dk %.2e dv %.2e %s"
                  % (rank, world, sharding, causal, *errs, "OK" if ok else "MISMATCH"), flush=True)
    comm.close()
    total = torch.tensor([failures])
    dist.all_reduce(total)
    dist.destroy_process_group()
    return 0 if total.item() == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
