"""Tests of flashtile.distributed (ring attention): the sharding helpers and the simulated ring on host buffers
(CPU device, standard library only) against flashtile.attention / attention_backward of the whole sequence. The
NCCL ring needs torch.distributed and 2+ GPUs: tests/python/ring_torchrun.py, run with torchrun (skipped here with
the reason).

Run from the repository root, as ctest does:
  FLASHTILE_LIBRARY=build/libflashtile.so python3 -m unittest discover -s tests/python -p 'test_*.py' -v
"""

import os
import random
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

import flashtile  # noqa: E402
import flashtile.distributed as ftd  # noqa: E402
from test_flashtile import _has, lse_error, random_values, rel_error  # noqa: E402


class ShardingTest(unittest.TestCase):
    def test_positions(self):
        self.assertEqual(ftd.positions(2, 1, "contiguous", 3), [3, 4, 5])
        self.assertEqual(ftd.positions(3, 1, "zigzag", 4), [2, 3, 8, 9])  # chunks 1 and 4 of six
        with self.assertRaisesRegex(flashtile.InvalidArgument, "even local length"):
            ftd.positions(3, 0, "zigzag", 5)
        with self.assertRaisesRegex(flashtile.InvalidArgument, "sharding: must be"):
            ftd.positions(2, 0, "striped", 4)

    def test_shard_unshard_round_trip(self):
        rows = list(range(24))
        for world in (1, 2, 3, 4):
            for sharding in ftd.SHARDINGS:
                parts = [ftd.shard(rows, world, r, sharding, dim=0) for r in range(world)]
                self.assertEqual(sorted(x for p in parts for x in p), rows)
                self.assertEqual(ftd.unshard(parts, sharding, dim=0), rows)
        with self.assertRaisesRegex(flashtile.InvalidArgument, "divisible by 10"):
            ftd.shard(rows, 5, 0, "zigzag", dim=0)


def _split_rows(values, seq, width):
    return [values[i * width:(i + 1) * width] for i in range(seq)]


class SimulatedRingTest(unittest.TestCase):
    """B = 1 so that dim 1's rows are contiguous runs of H*D values."""

    def check(self, world, sharding, causal, heads=2, heads_kv=1, dim=16, local=6):
        rng = random.Random(46 + world)
        seq = world * local
        shape_q, shape_k = (1, seq, heads, dim), (1, seq, heads_kv, dim)
        vals = {n: random_values(seq * h * dim, rng) for n, h in (("q", heads), ("k", heads_kv), ("v", heads_kv),
                                                                  ("dout", heads))}
        whole = {n: flashtile.HostArray.from_floats(v, shape_q if n in ("q", "dout") else shape_k, "f32")
                 for n, v in vals.items()}
        out, lse = flashtile.attention(whole["q"], whole["k"], whole["v"], causal=causal, return_lse=True,
                                       backend="cpu")
        dq, dk, dv = flashtile.attention_backward(whole["q"], whole["k"], whole["v"], out, lse, whole["dout"],
                                                  causal=causal, backend="cpu")

        def shards(name, h):
            rows = _split_rows(vals[name], seq, h * dim)
            return [flashtile.HostArray.from_floats([x for row in ftd.shard(rows, world, r, sharding, dim=0)
                                                     for x in row], (1, local, h, dim), "f32") for r in range(world)]

        q, k, v, do = shards("q", heads), shards("k", heads_kv), shards("v", heads_kv), shards("dout", heads)
        outs, lses = ftd.ring_attention_simulated(q, k, v, sharding, causal=causal)
        self.assertTrue(flashtile.last_result().note.startswith("ring: %d ranks, %s" % (world, sharding)))
        grads = ftd.ring_attention_backward_simulated(q, k, v, outs, lses, do, sharding, causal=causal)

        def joined(parts, h):
            rows = ftd.unshard([_split_rows(p.tolist(), local, h * dim) for p in parts], sharding, dim=0)
            return [x for row in rows for x in row]

        self.assertLess(rel_error(out.tolist(), joined(outs, heads)), 1e-5)
        ring_lse = ftd.unshard([[p.tolist()[h * local:(h + 1) * local] for p in lses] for h in range(heads)][0],
                               sharding, dim=0)
        self.assertLess(lse_error(lse.tolist()[:seq], ring_lse), 1e-5)  # head 0
        for want, got, h in ((dq, grads[0], heads), (dk, grads[1], heads_kv), (dv, grads[2], heads_kv)):
            self.assertLess(rel_error(want.tolist(), joined(got, h)), 1e-5)

    def test_zigzag_causal(self):
        for world in (1, 2, 3):
            with self.subTest(world=world):
                self.check(world, "zigzag", True)

    def test_contiguous(self):
        for causal in (False, True):
            with self.subTest(causal=causal):
                self.check(4, "contiguous", causal, local=5)


class NcclTest(unittest.TestCase):
    def test_nccl_ring(self):
        if not _has("torch"):
            self.skipTest("needs torch.distributed and 2+ GPUs: torchrun --nproc-per-node 2 "
                          "tests/python/ring_torchrun.py")
        import torch
        if torch.cuda.device_count() < 2:
            self.skipTest("needs 2+ GPUs (%d visible): torchrun --nproc-per-node 2 tests/python/ring_torchrun.py"
                          % torch.cuda.device_count())
        self.skipTest("multi-process: run torchrun --nproc-per-node %d tests/python/ring_torchrun.py"
                      % torch.cuda.device_count())

    def test_unavailable_reason_is_a_string(self):
        self.assertIsInstance(ftd.nccl_unavailable_reason(), str)


if __name__ == "__main__":
    unittest.main()
