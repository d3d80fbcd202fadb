// sm90 forward: the scheduler role (Sm90Scheduler), which tiles a CTA works on and in which order, and where a tile's
// sequence lives (Sm90Seq: dense or varlen); the scheduler's host half is in sm90_run.cuh (sm90_sched_tiles,
// sm90_sched_order).
#pragma once

#include "attn/sm90_traits.hpp"
#include "tile/tile.cuh"

namespace flashtile::cuda {

struct Sm90Tile {
  int row0, head, batch;  // row0: the tile's first query row (< 0 with shifted rows: those rows are skipped)
};

// Where tile rows of one sequence live: b, the tensors' batch index; q0 / k0, its first query row and key in the
// packed varlen tensors (0 when dense); sq / sk, its query rows and keys. Varlen offsets come from device tables the
// host never reads: each is clamped into [0, total], so hostile tables give wrong numbers for their sequence, never
// an access outside the tensors (TMA clips the rest).
struct Sm90Seq {
  int b, q0, k0, sq, sk;
};
template <Layout L, typename P>
__device__ __forceinline__ Sm90Seq sm90_seq(const P& p, int batch) {
  if constexpr (L == Layout::Varlen) {
    const int q0 = min(max(p.cu_q[batch], 0), p.total_q), k0 = min(max(p.cu_k[batch], 0), p.total_k);
    const int q1 = min(max(p.cu_q[batch + 1], q0), p.total_q), k1 = min(max(p.cu_k[batch + 1], k0), p.total_k);
    return {0, q0, k0, min(q1 - q0, p.seqlen_q), k1 - k0};
  } else {
    return {batch, 0, 0, p.seqlen_q, p.seqlen_k};
  }
}

// What the scheduler reads of the launch. The kernel's Sm90Params carries the same fields in its own places (moving
// one would move the kernel's parameter offsets), and its scheduler reads them there: a copy into this struct made
// ptxas emit different code (up to 128 bytes more a kernel).
struct Sm90SchedParams {
  int tiles, m_blocks, batch_heads, heads_q;
  int head_group;     // tile order: 0 m-block innermost, else heads per group
  int row_shift;      // Sm90Shape::kShiftRows: m-block m starts at row m * kBlockM - row_shift, else 0
  int* tile_counter;  // Sm90Shape::kDynamic persistent launches: the launch's next tile index (zeroed), else null
  tile::fastdiv div_bh, div_m, div_heads, div_group, div_per;  // batch_heads, m_blocks, heads_q, head_group, both
};

// The scheduler role: which tiles a CTA works on, in which order. Persistent launches (one CTA per SM): CTA b takes
// tiles b, b + grid, ..., or, with kDynamic, b and then the indices its producer thread takes from the launch's
// atomic counter and hands to the consumers through sm.sched; otherwise one CTA per tile.
template <typename Sh, bool kCausal_, typename P = Sm90SchedParams>
struct Sm90Scheduler {
  static constexpr bool kCausal = kCausal_;
  const P& p;  // Sm90SchedParams' fields

  // Tile t of the launch. head_group 0 (non-causal, short causal): the m-block innermost, so CTAs running together
  // share K/V in L2. head_group g > 0: (batch, head) pairs in groups of g, m-blocks outermost within a group,
  // so the longest tiles of a group go first (persistent causal launches: Sm90Config::persistent_group, or all
  // pairs); g = batch_heads hands out the longest tiles of all heads first. Causal visits m-blocks last (longest)
  // first.
  __device__ __forceinline__ Sm90Tile tile(int t) const {
    // Divisions by fastdiv divisors: a run-time one costs ~25 instructions per use.
    const int m_blocks = p.m_blocks, batch_heads = p.batch_heads, head_group = p.head_group;
    int m, bh;
    if (head_group >= batch_heads) {  // one group: kept apart, the persistent short kernel lost 2-5% without
      m = p.div_bh.div(t);
      bh = t - m * batch_heads;
    } else if (head_group > 0) {
      const int g = p.div_per.div(t), first = g * head_group, r = t - g * head_group * m_blocks;
      const int n = min(head_group, batch_heads - first);  // the last group may be smaller
      m = n == head_group ? p.div_group.div(r) : r / n;
      bh = first + r - m * n;
    } else {
      bh = p.div_m.div(t);
      m = t - bh * m_blocks;
    }
    if (kCausal_) m = m_blocks - 1 - m;
    const int batch = p.div_heads.div(bh);
    return {m * Sh::kBlockM - (Sh::kShiftRows ? p.row_shift : 0), bh - batch * p.heads_q, batch};
  }

  // kDynamic, the producer's thread: the tile after t, the launch's next index from its counter (one CTA per tile,
  // no counter: t + grid). The atomic's result is awaited only where it is used.
  __device__ __forceinline__ int next(int t) const {
    return p.tile_counter != nullptr ? atomicAdd(p.tile_counter, 1) + static_cast<int>(gridDim.x)
                                     : t + static_cast<int>(gridDim.x);
  }
  // kDynamic, the producer's thread: tile t is the CTA's j-th with keys; written before its Q load's arrive on
  // q_full, whose wait makes it visible to the consumers.
  template <typename Smem>
  __device__ __forceinline__ void publish(Smem& sm, int j, int t) const {
    if constexpr (Sh::kDynamic) sm.sched[j & 1] = t;
  }
  // kDynamic, the producer's thread, after the CTA's last tile (j tiles done): index `tiles` in slot j and a plain
  // arrive on q_full (no load) stop the consumers, once they have released Q buffer j's last use.
  template <typename Smem>
  __device__ __forceinline__ void stop(Smem& sm, int j) const {
    tile::wait(sm.q_empty[j % Sh::kQBufs], ((j / Sh::kQBufs) & 1) ^ 1);
    sm.sched[j & 1] = p.tiles;
    tile::arrive(sm.q_full[j % Sh::kQBufs]);
  }
  // kDynamic, the consumers: the CTA's j-th tile with keys, once its Q landed; warp_uniform, as it feeds the wgmma
  // descriptors.
  template <typename Smem>
  __device__ __forceinline__ int take(Smem& sm, int j) const {
    tile::wait(sm.q_full[j % Sh::kQBufs], (j / Sh::kQBufs) & 1);
    return tile::warp_uniform(sm.sched[j & 1]);
  }
};

}  // namespace flashtile::cuda
