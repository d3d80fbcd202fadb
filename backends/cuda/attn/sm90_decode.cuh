// sm90 split-KV decode (Flash-Decoding) for calls with few query rows, dense or paged K/V: the memory-bound kernel of
// the sm90 path. A work item is (split, kv head x row block, batch); the grid is persistent (at most the resident
// CTAs: decode_plan's slots), each CTA taking items t, t + grid, ... with one producer warp and kDecodeConsumers
// consumer warps, so the 2-4 waves of B >= 16 no longer fill and drain a pipeline each.
//  - producer: one lane moves each tile's K and V with TMA boxes (64 columns x box_rows keys; a paged tile takes one
//    box per page it spans) into 128B-swizzled shared tiles, kStages stages completing on mbarriers, running on into
//    the next item's tiles while the consumers finish the current one. Few large boxes:
//    one 1-D bulk copy per key row (256 bytes) left the copy engine's request rate the limit, at 1.8 TB/s
//    (bench/results/2026-12-03_h200_sm90_decode). Dense rows past Sk arrive as zeros; a paged tile past the sequence
//    reads slots the application owns (NaN in the tests), so the consumers zero those V rows before P·V.
//  - consumers: R row groups x C key groups (R = the packed rows / 16, rounded up to 1, 2 or 4; C = 4 / R). Key group
//    c takes the tiles numbered g = c (mod C), numbered across the CTA's items, with decode_rows.cuh's step
//    (mma.sync: decode has no compute to hide); stages are a multiple of 4, so a stage is always read by one key group
//    and no barrier phase can be passed unseen.
//  - an item's end: the key groups merge through their own shared memory; one split writes the output, several write
//    partials that the shared combine kernel merges (decode_common.cu). Q of the next item loads after that merge.
// Included by sm90_decode_d*.cu.
#pragma once

#include "attn/decode_rows.cuh"
#include "attn/fwd_params.hpp"
#include "attn/sm80_decode.cuh"
#include "attn/sm80_layout.cuh"
#include "attn/sm90_decode.hpp"
#include "attn/sm90_traits.hpp"
#include "tile/gl.cuh"
#include "tile/mbarrier.cuh"
#include "tile/ops.cuh"
#include "tile/tma.cuh"

#include <cuda_runtime.h>

#include <cstdint>
#include <numeric>
#include <string>

namespace flashtile::cuda::sm90 {

// The key groups' hand-off at an item's end: a group's O fragments and (m, l) by lane, for the first key group to
// merge (every lane merges the lanes of its own id: the same rows and columns). Its own memory: the producer is
// already refilling the stages with the next item's tiles.
template <int D>
struct DecodeMerge {
  static constexpr int kSlots = kDecodeConsumers - 1;  // (C - 1) x R <= 3
  float2 o[kSlots][D / 16][4][32];
  float4 ml[kSlots][32];  // m of rows g and g + 8, then this lane's part of their l
};

template <int D, typename T>
struct DecodeSmem {
  static constexpr DecodeShape kShape = decode_shape(D);
  using KV = tile::st<T, kShape.block_n, D>;
  KV k[kShape.stages], v[kShape.stages];
  tile::sp<T, kDecodeRows, D> q;
  DecodeMerge<D> merge;
  tile::mbarrier full[kShape.stages], empty[kShape.stages];
};

// The kernel's parameters: the split plan's (shared with the combine) and K / V's tensor maps, whose boxes hold
// box_rows keys (the tile's keys, or a page's where pages are smaller).
struct DecodeParams {
  sm80::DecodeArgs a;
  CUtensorMap k_map, v_map;
  int box_rows;
  int items, row_blocks;  // the plan's work items (split x kv head x row block x batch) and row blocks
};

// Zeroes rows [first, R) of a swizzled tile (each row's 128-byte segments whole, so the swizzle does not matter), by
// one warp; the writes are generic-proxy: fence_proxy_async before TMA may write the tile again.
template <typename T, int R, int C>
__device__ __forceinline__ void zero_rows(tile::st<T, R, C>& t, int first) {
  using ST = tile::st<T, R, C>;
  char* base = reinterpret_cast<char*>(t.data) + (tile::lane_id() & 7) * 16;  // a lane: one 16-byte chunk of a row
  for (int r = first + (tile::lane_id() >> 3); r < R; r += 4)
#pragma unroll
    for (int b = 0; b < ST::kBlocks; ++b)
      *reinterpret_cast<uint4*>(base + b * ST::kBlockBytes + r * tile::kSwizzleBytes) = make_uint4(0, 0, 0, 0);
}

template <int D>
__device__ __forceinline__ void merge_into(sm80::DecodeAcc<D>& a, const DecodeMerge<D>& mg, int slot, int lane) {
  using namespace tile;
  const float4 x = mg.ml[slot][lane];
  const float mo[2] = {x.x, x.y}, lo[2] = {x.z, x.w};
  float fa[2], fo[2];
#pragma unroll
  for (int hh = 0; hh < 2; ++hh) {
    const float m = a.m.v[0][hh], mx = fmaxf(m, mo[hh]);
    fa[hh] = m == kNegInf ? 0.f : fast_exp2(m - mx);  // a row no group saw stays 0 / -inf
    fo[hh] = mo[hh] == kNegInf ? 0.f : fast_exp2(mo[hh] - mx);
    a.m.v[0][hh] = mx;
    a.l.v[0][hh] = a.l.v[0][hh] * fa[hh] + lo[hh] * fo[hh];
  }
#pragma unroll
  for (int i = 0; i < D / 16; ++i)
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const float2 y = mg.o[slot][i][k][lane];
      float2& o = a.o[i].v[0][0][k];
      o = make_float2(o.x * fa[k & 1] + y.x * fo[k & 1], o.y * fa[k & 1] + y.y * fo[k & 1]);
    }
}

// Work item t of the launch: split innermost (the splits of one kv head run together and share nothing but Q),
// then kv head x row block, then batch.
struct DecodeItem {
  int split, hk, rb, b;
};
__device__ __forceinline__ DecodeItem decode_item(int t, int splits, int heads_kv, int row_blocks) {
  const int split = t % splits, y = t / splits % (heads_kv * row_blocks);
  return {split, y % heads_kv, y / heads_kv, t / splits / (heads_kv * row_blocks)};
}

template <int D, ElemType E, Layout L, bool Mods>
__global__ void __launch_bounds__(kDecodeThreads, decode_shape(D).min_blocks)
    decode_kernel(const __grid_constant__ DecodeParams dp) {
  using namespace tile;
  using T = std::conditional_t<E == ElemType::F16, half, bf16>;
  using Smem = DecodeSmem<D, T>;
  constexpr DecodeShape kS = Smem::kShape;
  constexpr int kN = kS.block_n, kStages = kS.stages;
  static_assert(kStages % kDecodeConsumers == 0, "a stage must belong to one key group for every R");
  // The resident CTAs the split plan counts on fit an SM's 228 KiB (1 KiB of it reserved a CTA).
  static_assert(kS.ctas_per_sm * (sizeof(Smem) + 1024) <= kSm90SmemLimit + 1024, "decode CTAs an SM do not fit");
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  Smem& sm = *reinterpret_cast<Smem*>(smem_raw);
  const sm80::DecodeArgs& a = dp.a;

  const FwdParams& p = a.p;
  const int w = warp::index(), lane = lane_id();
  const int R = decode_row_groups(a.rows), C = kDecodeConsumers / R;
  const int rg = w % R, kg = w / R;  // consumers' roles (the producer's w is kDecodeConsumers)

  if (threadIdx.x == 0) {
#pragma unroll
    for (int s = 0; s < kStages; ++s) {
      init(sm.full[s], 1);
      init(sm.empty[s], R);
    }
    fence_barrier_init();
  }
  __syncthreads();

  // Tiles are numbered across the CTA's items (g): stage g % kStages, phase g / kStages, key group g % C; so the
  // barriers' phases run on from item to item and a stage still belongs to one key group.
  if (w == kDecodeConsumers) {  // ---- producer: one lane (paged: a lane a box), running ahead into the next item's tiles ----
    // Paged: lane j issues the tile's j-th box, its page looked up before the stage's wait, all lanes' lookups in one
    // load: one lane looking up each box's page in turn, after the previous box's copy, left pages of 16 keys at half
    // the copy rate (bench/results/2026-12-03_h200_sm90_decode_persistent).
    const int boxes = L == Layout::Paged ? kN / dp.box_rows : 1;
    if (lane >= boxes) return;
    prefetch(&dp.k_map);
    prefetch(&dp.v_map);
    int g = 0;
    for (int t = blockIdx.x; t < dp.items; t += gridDim.x) {
      const DecodeItem it = decode_item(t, a.splits, p.heads_kv, dp.row_blocks);
      const std::int32_t* bt = L == Layout::Paged ? p.block_table + it.b * p.block_table_sb : nullptr;
      const sm80::DecodeRows<Mods> r = sm80::decode_rows<Mods>(p, it.b, it.hk, a.group, a.rows, it.rb * kDecodeRows,
                                                               sm80::seq_span<L>(p, it.b).sk);
      const sm80::TileRange tr = sm80::split_tiles<kN>(r, it.split, a.splits);
      for (int i = tr.begin; i < tr.end; ++i, ++g) {
        const int s = g % kStages;
        const std::int64_t n0 = std::int64_t(i) * kN;
        auto copy = [&](int r0, int row, int outer) {
#pragma unroll
          for (int cb = 0; cb < Smem::KV::kBlocks; ++cb) {
            tma_load_4d(sm.k[s].block_addr(cb, r0), &dp.k_map, sm.full[s].addr(), cb * 64, row, it.hk, outer);
            tma_load_4d(sm.v[s].block_addr(cb, r0), &dp.v_map, sm.full[s].addr(), cb * 64, row, it.hk, outer);
          }
        };
        int r0 = 0, row = int(n0), outer = it.b;  // dense: rows of batch b (past Sk: zeros)
        if constexpr (L == Layout::Paged) {
          // The page holding this lane's box (one past the sequence reads the last key's page; its V rows are zeroed
          // by the consumers), its slot a multiple of the box.
          r0 = lane * dp.box_rows;
          const sm80::PageSlot ps = sm80::page_slot(p, bt, sm80::imin(n0 + r0, r.sk - 1));
          row = int(ps.slot) / dp.box_rows * dp.box_rows;
          outer = int(ps.page);
        }
        wait(sm.empty[s], ((g / kStages) & 1) ^ 1);
        if (lane == 0) arrive_expect_tx(sm.full[s], 2 * Smem::KV::kBytes);
        __syncwarp(boxes >= 32 ? ~0u : (1u << boxes) - 1u);  // the expected bytes before any box's completion
        copy(r0, row, outer);
      }
    }
    return;
  }

  // ---- consumers: per item, Q's packed rows (16 bytes a thread), then the item's tiles of this key group ----
  int g0 = 0;  // the item's first tile number
  for (int t = blockIdx.x; t < dp.items; t += gridDim.x) {
    const DecodeItem it = decode_item(t, a.splits, p.heads_kv, dp.row_blocks);
    const std::int64_t sk = sm80::seq_span<L>(p, it.b).sk;
    const sm80::DecodeRows<Mods> r =
        sm80::decode_rows<Mods>(p, it.b, it.hk, a.group, a.rows, it.rb * kDecodeRows + rg * 16, sk);
    const sm80::TileRange tr = sm80::split_tiles<kN>(r, it.split, a.splits);
    const int n = tr.end > tr.begin ? tr.end - tr.begin : 0;
    // Q is rewritten once every warp has its fragments of the last item (with key groups, the merge's barrier did it).
    if (C == 1 && t != int(blockIdx.x)) named_sync(1, kDecodeConsumers * 32);
    {
      const std::int64_t Sq = p.seqlen_q;
      const T* gq = static_cast<const T*>(p.q) + it.b * p.q_sb + std::int64_t(it.hk) * a.group * p.q_sh;
      constexpr int kChunks = D / 8;
      for (int idx = threadIdx.x; idx < R * 16 * kChunks; idx += kDecodeConsumers * 32) {
        const int i = idx / kChunks, c = (idx % kChunks) * 8, pr = it.rb * kDecodeRows + i;
        uint4 x = make_uint4(0, 0, 0, 0);
        if (pr < a.rows) x = *reinterpret_cast<const uint4*>(gq + pr / Sq * p.q_sh + pr % Sq * p.q_ss + c);
        *reinterpret_cast<uint4*>(sm.q.row(i) + c) = x;
      }
    }
    named_sync(1, kDecodeConsumers * 32);
    rt<T, 16, 16> qr[decode_shape(D).q_in_regs ? D / 16 : 1];
    if constexpr (decode_shape(D).q_in_regs) {
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk) load(qr[kk], sm.q, rg * 16, kk * 16);
    }
    auto q = [&](int kk) {
      if constexpr (decode_shape(D).q_in_regs) {
        return qr[kk];
      } else {
        rt<T, 16, 16> qt;
        load(qt, sm.q, rg * 16, kk * 16);
        return qt;
      }
    };
    sm80::DecodeAcc<D> acc;
    init(acc);
    // This key group's tiles: numbers g = kg (mod C) in [g0, g0 + n), tile g + shift of the sequence.
    const int shift = tr.begin - g0;
    for (int g = g0 + (kg - g0 % C + C) % C; g < g0 + n; g += C) {
      const int s = g % kStages;
      wait(sm.full[s], (g / kStages) & 1);
      const std::int64_t n0 = std::int64_t(g + shift) * kN;
      const bool past = L == Layout::Paged && n0 + kN > r.sk;  // P is 0 there, but 0 * NaN is not
      if (past) {
        zero_rows(sm.v[s], int(r.sk - n0));
        __syncwarp();
      }
      sm80::decode_step<D, kN, Mods, T>(acc, q, sm.k[s], sm.v[s], n0, r, p);
      if (past) fence_proxy_async();  // the zeros before TMA's next writes to the stage
      __syncwarp();
      if (lane == 0) arrive(sm.empty[s]);
    }
    g0 += n;

    // ---- the item's end: key groups 1.. hand their rows to group 0 in the merge's own memory (the producer is
    // refilling the stages); the next item's Q barrier keeps them from overwriting it before group 0 has read it ----
    if (C > 1) {
      if (kg > 0) {
        const int slot = (kg - 1) * R + rg;
#pragma unroll
        for (int i = 0; i < D / 16; ++i)
#pragma unroll
          for (int k = 0; k < 4; ++k) sm.merge.o[slot][i][k][lane] = acc.o[i].v[0][0][k];
        sm.merge.ml[slot][lane] = make_float4(acc.m.v[0][0], acc.m.v[0][1], acc.l.v[0][0], acc.l.v[0][1]);
      }
      named_sync(1, kDecodeConsumers * 32);
      if (kg > 0) continue;
      for (int c = 1; c < C; ++c) merge_into(acc, sm.merge, (c - 1) * R + rg, lane);
    }
    sm80::decode_store<D, Mods, T>(acc, r, p, a.o_part, a.lse_part, t % a.splits);
  }
}

// ---- host side of one instantiation (explicitly instantiated in sm90_decode_d*.cu) ----------------------------------
// K / V's maps: dense [B, Sk, Hkv, D]; paged [num_pages, page_size, Hkv, D] in boxes of at most a page.
template <typename T>
std::string decode_maps(DecodeParams& dp, const FwdParams& p, int block_n) {
  const bool paged = p.layout == Layout::Paged;
  dp.box_rows = paged ? std::gcd(block_n, p.page_size) : block_n;
  const int outer = paged ? p.num_pages : p.batch, rows = paged ? p.page_size : p.seqlen_k;
  tile::gl4<T> k, v;
  std::string why = tile::make_gl4(k, static_cast<T*>(const_cast<void*>(p.k)), outer, rows, p.heads_kv, p.head_dim,
                                   p.k_sb, p.k_ss, p.k_sh, dp.box_rows);
  if (why.empty())
    why = tile::make_gl4(v, static_cast<T*>(const_cast<void*>(p.v)), outer, rows, p.heads_kv, p.head_dim, p.v_sb,
                         p.v_ss, p.v_sh, dp.box_rows);
  dp.k_map = k.map, dp.v_map = v.map;
  return why;
}

template <int D, ElemType E, Layout L, bool Mods>
cudaError_t decode_launch(const FwdParams& p) {
  using T = std::conditional_t<E == ElemType::F16, tile::half, tile::bf16>;
  const DecodePlan d = decode_plan(p);
  constexpr int kSmem = int(sizeof(DecodeSmem<D, T>));
  auto* kernel = decode_kernel<D, E, L, Mods>;
  if (cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
      e != cudaSuccess)
    return e;
  auto* ws = static_cast<unsigned char*>(p.workspace);
  DecodeParams dp{};
  dp.a = {p, d.splits, d.group, d.rows, true, d.direct ? nullptr : reinterpret_cast<float*>(ws),
          d.direct ? nullptr : reinterpret_cast<float*>(ws + d.o_part_bytes)};
  if (!decode_maps<T>(dp, p, decode_shape(D).block_n).empty()) return cudaErrorInvalidValue;  // supports checked it
  dp.items = d.splits * p.heads_kv * d.row_blocks * p.batch, dp.row_blocks = d.row_blocks;
  kernel<<<unsigned(d.grid), kDecodeThreads, kSmem, static_cast<cudaStream_t>(p.stream)>>>(dp);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  return d.direct ? cudaSuccess : sm80::combine_launch(dp.a, d.out_rows);
}

#define FLASHTILE_SM90_DECODE_INSTANTIATE(D, E, L, M) \
  template cudaError_t decode_launch<D, ElemType::E, Layout::L, M>(const FwdParams&);

}  // namespace flashtile::cuda::sm90
