// sm90 split-KV decode: the configuration per head dim and the host's plan of a call (the kernel: sm90_decode.cuh).
// Decode is memory-bound: enough stages and CTAs an SM stay resident that ~100-130 KiB of copies are in flight on each
// SM (the H200 needs ~50 KiB an SM to cover its memory latency).
#pragma once

#include "attn/fwd_params.hpp"
#include "attn/sm80_traits.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace flashtile::cuda::sm90 {

struct DecodeShape {
  int d;            // head dim
  int block_n;      // keys a stage
  int stages;       // a multiple of kDecodeConsumers: a stage is always read by the same key group
  int ctas_per_sm;  // resident CTAs an SM (shared memory and registers allow them): the split plan's slots
  int min_blocks;   // __launch_bounds__' minimum (d128: 2 would cap registers at 168 and spill)
  bool q_in_regs;   // Q's fragments held across the loop (else re-read from shared memory each tile)
};
// d256 is not here: its O alone is 128 registers a lane, and with the K and V fragments ptxas spills at 255
// (cuda_sm80's decode kernel takes those calls). d128 takes over 180 registers, and two CTAs of 5 warps need <= 168
// (registers are allocated per sub-partition, 16K each: 3 warps of each; cuda_occupancy.h), so one CTA an SM holds the
// 128 KiB of copies in its own 4 stages of 64 keys (half the boxes and barrier waits of 32-key stages). d64 re-reads
// Q from shared memory: with its fragments held, the paged variants spill at the 128 registers of 3 CTAs an SM.
inline constexpr DecodeShape kDecodeShapes[] = {
    {64, 32, 4, 3, 3, false},
    {128, 64, 4, 1, 1, true},
};
constexpr bool has_decode_shape(int d) {
  for (const DecodeShape& s : kDecodeShapes)
    if (s.d == d) return true;
  return false;
}
constexpr DecodeShape decode_shape(int d) {
  for (const DecodeShape& s : kDecodeShapes)
    if (s.d == d) return s;
  return kDecodeShapes[0];
}

inline constexpr int kDecodeConsumers = 4;                     // consumer warps; one more warp copies
inline constexpr int kDecodeThreads = (kDecodeConsumers + 1) * 32;
inline constexpr int kDecodeRows = 16 * kDecodeConsumers;      // packed rows a CTA (a row block)
inline constexpr int kDecodeMaxSq = 16;
inline constexpr int kDecodeMinTiles = 4;                      // per split: amortizes Q, the merge and the partials
inline constexpr int kDecodeMaxSplits = sm80::kDecodeMaxSplits;  // the combine kernel's bound (sm80's)
// The fewest splits whose waves are this full. 0.97 took 17 splits at B = 64 where one filled 97% (0.50x:
// 2026-12-03_h200_sm90_decode).
inline constexpr double kDecodeWaveFill = 0.9;

// Row groups (warps that split the packed rows 16 each) of a CTA; the other factor of kDecodeConsumers splits keys.
constexpr int decode_row_groups(int rows) {
  const int need = ((rows < kDecodeRows ? rows : kDecodeRows) + 15) / 16;  // no std::min: it would bind a host variable
  return need <= 1 ? 1 : need <= 2 ? 2 : 4;
}

struct DecodePlan {
  int group = 0, rows = 0, row_blocks = 0, splits = 1;
  int grid = 1;                          // persistent CTAs: min(work items, resident slots)
  bool direct = true;                    // one split and no sink: the kernel writes o itself, no combine
  std::int64_t out_rows = 0;             // batch * heads_q * seqlen_q
  std::size_t o_part_bytes = 0, bytes = 0;  // workspace: O partials, then LSE partials (none when direct)
};

inline DecodePlan decode_plan(const FwdParams& p) {
  const DecodeShape s = decode_shape(p.head_dim);
  DecodePlan d;
  d.group = p.heads_q / std::max(1, p.heads_kv);
  d.rows = d.group * p.seqlen_q;
  d.row_blocks = (d.rows + kDecodeRows - 1) / kDecodeRows;
  const sm80::Window w = sm80::window_of(p);
  const std::int64_t keys = w.left < sm80::kUnbounded && std::int64_t(p.seqlen_q) + w.left < p.seqlen_k
                                ? std::int64_t(p.seqlen_q) + w.left + s.block_n
                                : std::int64_t(p.seqlen_k);
  const std::int64_t tiles = (keys + s.block_n - 1) / s.block_n;
  const std::int64_t base = std::max<std::int64_t>(1, std::int64_t(p.batch) * p.heads_kv * d.row_blocks);
  const std::int64_t slots = std::max<std::int64_t>(1, std::int64_t(p.num_sms) * s.ctas_per_sm);
  const std::int64_t most = std::max<std::int64_t>(
      1, std::min<std::int64_t>((tiles + kDecodeMinTiles - 1) / kDecodeMinTiles, kDecodeMaxSplits));
  // The fewest splits that fill the last wave of CTAs; else the fullest.
  auto fill = [&](std::int64_t n) {
    const std::int64_t ctas = base * n, waves = (ctas + slots - 1) / slots;
    return double(ctas) / double(waves * slots);
  };
  std::int64_t best = 1;
  for (std::int64_t n = 1; n <= most; ++n) {
    if (fill(n) > fill(best) + 1e-9) best = n;
    if (fill(n) >= kDecodeWaveFill) {
      best = n;
      break;
    }
  }
  d.splits = int(best);
  d.grid = int(std::min<std::int64_t>(base * d.splits, slots));
  d.direct = d.splits == 1 && p.sinks == nullptr;
  d.out_rows = std::int64_t(p.batch) * p.heads_q * p.seqlen_q;
  if (!d.direct) {
    d.o_part_bytes = (std::size_t(d.splits) * std::size_t(d.out_rows) * std::size_t(p.head_dim) * 4 + 255) / 256 * 256;
    d.bytes = d.o_part_bytes + std::size_t(d.splits) * std::size_t(d.out_rows) * 4;
  }
  return d;
}

// Whether a call has the decode kernel's shape (few query rows, dense or paged K/V, an instantiated head dim).
inline bool use_decode(const FwdParams& p) {
  return p.layout != Layout::Varlen && p.seqlen_q >= 1 && p.seqlen_q <= kDecodeMaxSq && has_decode_shape(p.head_dim);
}

}  // namespace flashtile::cuda::sm90
