// sm90 (Hopper) attention backward, FlashAttention-3 style, on the tile framework (tile/tile.cuh).
//
// Work unit: one CTA per (key block of kBlockN keys, kv head, batch), grid (key blocks, Hkv, B), key block fastest.
// It holds its K and V block in shared memory for the whole loop and visits every query block that sees one of its
// keys, for every query head of the GQA group (causal: the blocks wholly above the diagonal are skipped, the crossing
// ones masked). Math (bwd_params.hpp), in the transposed form that keeps keys on wgmma's 64-row side:
//   Sᵀ = K·Qᵀ, Pᵀ = exp2(Sᵀ·scale_log2 − lse2), dPᵀ = V·dOᵀ, dSᵀ = Pᵀ ∘ (dPᵀ − delta),
//   dV += Pᵀ·dO, dK += dSᵀ·Q (A from registers: Pᵀ and dSᵀ are already there), dQ_i = dS·K (dS through shared memory).
// Roles of one CTA:
//  - producer (thread 0 of warpgroup 0): K and V once, then Q, dO, lse2 and delta of each query block by TMA into a
//    kStages-deep ring (full / empty mbarriers), in the consumers' order.
//  - consumers (kConsumers warpgroups): the five products above; dK and dV (f32) stay in registers across the loop and
//    are stored once at the end (Sm90BwdEpilogue: dK times scale; rows >= Sk never written), so they need no atomics.
//    Each writes its part of dS transposed (stmatrix) into a double-buffered tile, and after a named barrier computes
//    its columns of dQ_i from the whole tile, then stages them in f32 for the writer.
//  - dQ writer (thread 32 of warpgroup 0): adds each staged dQ_i into dq_acc by TMA reduce-add (one per 32-column box,
//    performed in L2; rows past Sq land in the scratch's padding), then frees the staging buffer (dq_full / dq_empty).
//    One op a row instead (a plain bulk reduce of a padded row) held every d64 and d128 iteration at the same ~3.8 µs:
//    the TMA unit's cost per op, not bytes. Deterministic launches (dq_sem set) first
//    wait until every lower key block has added into this query block (a counter per query block, in the workspace),
//    and bump it once its own adds have completed: the adds into each row then happen in key-block order.
#pragma once

#include <flashtile/types.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "attn/bwd_params.hpp"
#include "attn/sm90_bwd_traits.hpp"
#include "attn/sm90_mods.cuh"
#include "tile/tile.cuh"

namespace flashtile::cuda {

template <typename T>
struct Sm90BwdParams {
  CUtensorMap q_map, k_map, v_map, do_map;  // boxes of kBlockM (Q, dO) / kBlockN (K, V) rows x 64 columns
  CUtensorMap dq_map;                        // dq_acc as f32 [B·Hq·sq_pad, D], boxes of kBlockM rows x 32 columns
  T *dk, *dv;
  std::int64_t dk_sb, dk_ss, dk_sh, dv_sb, dv_ss, dv_sh;
  const float *lse2, *delta;  // [B, Hq, sq_pad] (bwd_scratch)
  float* dq_acc;              // [B, Hq, sq_pad, D]
  int* dq_sem;                // deterministic: [B, Hq, m_blocks] key blocks added so far (zeroed), else null
  int seqlen_q, seqlen_k, heads_q, group, m_blocks, sq_pad;  // group = Hq / Hkv
  float scale, scale_log2;
  Sm90ModParams mods;  // kMods kernels: the variants (window, softcap, ALiBi; sinks act through lse alone)
};

// The scheduler role: this CTA's key block and the query blocks it visits, iteration it = (head of the group, block).
struct Sm90BwdWork {
  int n_block, key0, head_kv, batch, group, m_first, m_count, iters;
  __device__ __forceinline__ int head(int it) const { return head_kv * group + it / m_count; }
  __device__ __forceinline__ int m(int it) const { return m_first + it % m_count; }
};
template <int M, int N, bool kCausal, bool kMods, typename P>
__device__ __forceinline__ Sm90BwdWork sm90_bwd_work(const P& p) {
  Sm90BwdWork w;
  w.n_block = static_cast<int>(blockIdx.x), w.key0 = w.n_block * N;
  w.head_kv = static_cast<int>(blockIdx.y), w.batch = static_cast<int>(blockIdx.z), w.group = p.group;
  if constexpr (kMods) {
    // The query blocks of the rows that see a key of this block; those wholly outside the windows are skipped.
    const Sm90Span r = sm90_window_rows(p.mods, w.key0, min(w.key0 + N, p.seqlen_k) - 1, p.seqlen_q, p.seqlen_k);
    w.m_first = r.lo / M;
    w.m_count = r.hi > r.lo ? (r.hi - 1) / M - w.m_first + 1 : 0;
  } else {
    // Causal: row i sees key j <= i + Sk − Sq, so rows before key0 − (Sk − Sq) see none of this block.
    const int first_row = kCausal ? max(0, w.key0 - (p.seqlen_k - p.seqlen_q)) : 0;
    w.m_first = first_row / M;
    w.m_count = max(0, p.m_blocks - w.m_first);
  }
  w.iters = w.group * w.m_count;
  return w;
}

// dQ_i staged in f32 as the TMA boxes of dq_map: D / 32 boxes of M rows x 128 bytes, each row's 16-byte chunks
// swizzled (chunk j of row r at j ^ (r % 8)), so a warp's 8-byte stores of 8 rows take their minimum two wavefronts.
template <int M, int D>
struct alignas(tile::kSwizzleAtomBytes) Sm90BwdDqStage {
  static constexpr int kBoxCols = tile::kF32BoxCols, kBoxes = D / kBoxCols, kChunk = 16;
  float data[kBoxes][M][kBoxCols];

  // A warp's 16 x C row tile at rows r0.. (a multiple of 16), columns c0.. (a multiple of 32). A lane's rows are
  // g and g + 8 (g = lane / 4), both swizzled by g; chunk 4(j % 2) + 2h + t / 2 of base tile j's half h (t = lane % 4)
  // has no carries, so its XOR with g splits into a per-lane part and four per-(j % 2, h) offsets: no per-element
  // address arithmetic (which spilled d128 and d256).
  template <int C>
  __device__ __forceinline__ void store(const tile::rt_fl<16, C>& t, int r0, int c0) {
    namespace tl = flashtile::tile;
    constexpr int kRow = tl::kSwizzleBytes, kBox = M * kRow;
    const int lane = tl::lane_id(), g = lane >> 2, q = lane & 3;
    char* base = reinterpret_cast<char*>(data) + c0 / kBoxCols * kBox + (r0 + g) * kRow +
                 ((q >> 1) ^ (g & 1)) * kChunk + (q & 1) * 2 * static_cast<int>(sizeof(float));
    tl::each<tl::rt_fl<16, C>>([&](int, int j, int k) {
      const int hi = (4 * (j % 2) + 2 * (k >> 1)) ^ (g & 6);
      *reinterpret_cast<float2*>(base + j / 2 * kBox + (k & 1) * 8 * kRow + hi * kChunk) = t.v[0][j][k];
    });
  }
  __device__ const float* box(int b) const { return data[b][0]; }
};

template <int D, typename T, bool kCausal>
struct Sm90BwdSmem {
  using Sh = Sm90BwdShape<D, kCausal>;
  static constexpr int M = Sh::kBlockM, N = Sh::kBlockN, S = Sh::kStages;
  using KTile = tile::st<T, N, D>;
  using QTile = tile::st<T, M, D>;
  KTile k, v;
  QTile q[S], dout[S];
  tile::st<T, M, N> ds[2];  // dS (query rows, key columns): iteration it writes ds[it % 2] while ds[(it + 1) % 2] may be read
  Sm90BwdDqStage<M, D> dq;
  alignas(16) float lse2[S][M];
  alignas(16) float delta[S][M];
  tile::mbarrier kv_full, full[S], empty[S], dq_full, dq_empty;

  // Thread 0; a CTA barrier must follow. full / kv_full: the producer's arrival and its bytes; empty / dq_full:
  // every consumer thread; dq_empty: the writer.
  __device__ __forceinline__ void init() {
    tile::init(kv_full, 1);
    for (int s = 0; s < S; ++s) {
      tile::init(full[s], 1);
      tile::init(empty[s], kSm90WgThreads * Sh::kConsumers);
    }
    tile::init(dq_full, kSm90WgThreads * Sh::kConsumers);
    tile::init(dq_empty, 1);
    tile::fence_barrier_init();
  }
};

// The producer role (one thread): K and V of the key block, then each iteration's Q, dO, lse2 and delta into ring
// stage it % S once the consumers released its previous use. Rows past Sq / Sk arrive as zeros (TMA bounds); lse2 and
// delta rows past Sq are scratch padding, which the consumers ignore.
template <typename Sh, typename Smem, typename T>
__device__ __forceinline__ void sm90_bwd_produce(Smem& sm, const Sm90BwdParams<T>& p, const Sm90BwdWork& w) {
  namespace tl = flashtile::tile;
  constexpr int M = Sh::kBlockM, S = Sh::kStages;
  constexpr std::uint32_t kVecBytes = M * sizeof(float);
  tl::arrive_expect_tx(sm.kv_full, 2 * Smem::KTile::kBytes);
  tl::load_async(sm.k, &p.k_map, sm.kv_full, w.key0, w.head_kv, w.batch);
  tl::load_async(sm.v, &p.v_map, sm.kv_full, w.key0, w.head_kv, w.batch);
  for (int it = 0; it < w.iters; ++it) {
    const int s = it % S, h = w.head(it), row = w.m(it) * M;
    tl::wait(sm.empty[s], ((it / S) & 1) ^ 1);
    tl::arrive_expect_tx(sm.full[s], 2 * Smem::QTile::kBytes + 2 * kVecBytes);
    tl::load_async(sm.q[s], &p.q_map, sm.full[s], row, h, w.batch);
    tl::load_async(sm.dout[s], &p.do_map, sm.full[s], row, h, w.batch);
    const std::int64_t at = (static_cast<std::int64_t>(w.batch) * p.heads_q + h) * p.sq_pad + row;
    tl::load_bulk(sm.lse2[s], p.lse2 + at, kVecBytes, sm.full[s]);
    tl::load_bulk(sm.delta[s], p.delta + at, kVecBytes, sm.full[s]);
  }
}

// The dQ writer role (one thread): each staged dQ_i added into dq_acc; see the header comment for the deterministic
// order.
template <typename Sh, bool kMods, typename Smem, typename T>
__device__ __forceinline__ void sm90_bwd_write_dq(Smem& sm, const Sm90BwdParams<T>& p, const Sm90BwdWork& w) {
  namespace tl = flashtile::tile;
  constexpr int M = Sh::kBlockM;
  for (int it = 0; it < w.iters; ++it) {
    const int m = w.m(it);
    const std::int64_t bh = static_cast<std::int64_t>(w.batch) * p.heads_q + w.head(it);
    int* sem = p.dq_sem != nullptr ? p.dq_sem + bh * p.m_blocks + m : nullptr;
    tl::wait(sm.dq_full, it & 1);
    // Causal too: a key block that sees a query block has every lower key block seeing it, so n_block came before.
    // Windows: the key blocks that see a query block are contiguous from the one of its rows' lowest key.
    if (sem != nullptr) {
      int before = w.n_block;
      if constexpr (kMods)
        before -= sm90_window_keys(p.mods, m * M, m * M + M, p.seqlen_q, p.seqlen_k).lo / Sh::kBlockN;
      tl::wait_flag(sem, before);
    }
    const int row = static_cast<int>(bh * p.sq_pad) + m * M;
    for (int b = 0; b < decltype(sm.dq)::kBoxes; ++b) tl::reduce_add_box(&p.dq_map, sm.dq.box(b), b * tl::kF32BoxCols, row);
    tl::store_commit();
    if (sem != nullptr) {
      tl::store_done<0>();  // the adds performed, not only their reads of shared memory
      tl::add_flag(sem, 1);
    } else {
      tl::store_wait<0>();
    }
    tl::arrive(sm.dq_empty);
  }
}

// Pᵀ and dSᵀ from Sᵀ and dPᵀ (one warp's 16 keys x M queries). Keys past Sk, queries past Sq and (causal) pairs
// above the diagonal get P = 0, hence dS = 0; the scratch's lse2 / delta past Sq are never read into a value.
// kMods: the variants' scores (scores) and masks (probs' mods), from the kernel's Sm90ModParams where it lies; valid_k
// then holds the lane's keys themselves.
template <int M, bool kCausal, bool kMods = false>
struct Sm90BwdGrads {
  float scale_log2;
  int valid_k[2];  // this lane's two keys (rows g, g + 8): the first query column each sees (causal), or past M if none
  int lane_col;    // the lane's first column in a base tile (2 · (lane % 4))

  __device__ __forceinline__ Sm90BwdGrads(float sl2, int key, int sq, int sk) : scale_log2(sl2) {
    lane_col = 2 * (flashtile::tile::lane_id() & 3);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int kk = key + 8 * h;
      valid_k[h] = kMods ? kk : kk >= sk ? (1 << 30) : kCausal ? kk - (sk - sq) : 0;  // query index, not yet minus m0
    }
  }

  // kMods: ALiBi's distances of this lane's elements, i + off − key for query column col = col + m0 + off − key, as
  // the lane's part of this iteration per key plus a constant an element (per-element values would be
  // loop-invariant, which ptxas holds in registers). f(j, k, d of .x; .y's is d + 1).
  template <typename F>
  __device__ __forceinline__ void each_distance(int m0, int off, F&& f) const {
    const float base[2] = {static_cast<float>(lane_col + m0 + off - valid_k[0]),
                           static_cast<float>(lane_col + m0 + off - valid_k[1])};
    tile::each<tile::rt_fl<16, M>>(
        [&](int, int j, int k) { f(j, k, base[k & 1] + static_cast<float>(16 * j + ((k & 2) ? 8 : 0))); });
  }

  // kMods: Sᵀ's raw scores to the variants' (as the forward's Sm90RowMods), before probs. slope: ALiBi's of this
  // iteration's query head on raw scores (0 off); off = Sk − Sq.
  __device__ __forceinline__ void scores(tile::rt_fl<16, M>& s, int m0, int off, float slope,
                                         const Sm90ModParams& mp) const {
    namespace tl = flashtile::tile;
    if (mp.cap_exp2 != 0.0f) {
      const float in = mp.cap_exp2, out = mp.cap_raw;
      tl::each<tl::rt_fl<16, M>>([&](int, int j, int k) {
        float2& x = s.v[0][j][k];
        x = make_float2(tl::tanh_exp2(x.x * in, out), tl::tanh_exp2(x.y * in, out));
      });
    }
    if (slope != 0.0f)
      each_distance(m0, off, [&](int j, int k, float d) {
        float2& x = s.v[0][j][k];
        x = make_float2(fmaf(-slope, fabsf(d), x.x), fmaf(-slope, fabsf(d + 1.0f), x.y));
      });
  }

  // kMods with softcap: dSᵀ times tanh' = 1 − t², t taken back from P (pr): log2 P + lse2 is the score times
  // scale·log2 e, plus ALiBi's term the capped score cap_raw · t. A tile of t (or of tanh') held from scores to here
  // spilled d128; P = 0 gives 0 (t = ±inf or NaN: the max with 0).
  __device__ __forceinline__ void cap_grads(tile::rt_fl<16, M>& ds, const tile::rt_fl<16, M>& pr, const float* lse2,
                                            int m0, int off, float slope, const Sm90ModParams& mp) const {
    namespace tl = flashtile::tile;
    const float to_raw = 1.0f / scale_log2, inv_cap = 1.0f / mp.cap_raw;
    each_distance(m0, off, [&](int j, int k, float d) {
      const int col = 16 * j + lane_col + ((k & 2) ? 8 : 0);
      const float2 l = *reinterpret_cast<const float2*>(lse2 + col), p = pr.v[0][j][k];
      auto dcap = [&](float pe, float le, float de) {
        const float t = fmaf((__log2f(pe) + le), to_raw, slope * fabsf(de)) * inv_cap;
        return fmaxf(fmaf(-t, t, 1.0f), 0.0f);
      };
      float2& x = ds.v[0][j][k];
      x = make_float2(x.x * dcap(p.x, l.x, d), x.y * dcap(p.y, l.y, d + 1.0f));
    });
  }

  // s (Sᵀ) becomes Pᵀ. mask: the block crosses the diagonal or the last key (per-key limits); queries past Sq always.
  // One select an element either way: a second, masked copy of the loop spilled.
  // kMods (mp; off = Sk − Sq): row i sees key kk from i = kk − off − right to kk − off + left.
  template <typename MP = Sm90NoMods>
  __device__ __forceinline__ void probs(tile::rt_fl<16, M>& s, const float* lse2, int m0, int valid_q,
                                        bool mask, int sk = 0, int off = 0, const MP& mp = {}) const {
    namespace tl = flashtile::tile;
    int lo[2], span[2];  // a key's valid columns: lo <= col < valid_q, as one unsigned compare col - lo < span
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      if constexpr (kMods) {
        const int kk = valid_k[h];
        const int first = kk >= sk ? (1 << 30) : mp.window_right >= 0 ? kk - off - mp.window_right : 0;
        const int end = mp.window_left >= 0 ? kk - off + mp.window_left + 1 : 1 << 30;
        lo[h] = first - m0;
        span[h] = max(min(valid_q, end - m0) - lo[h], 0);
      } else {
        lo[h] = mask ? valid_k[h] - m0 : 0;
        span[h] = max(valid_q - lo[h], 0);
      }
    }
    tl::each<tl::rt_fl<16, M>>([&](int, int j, int k) {
      const int col = 16 * j + lane_col + ((k & 2) ? 8 : 0);
      const float2 l = *reinterpret_cast<const float2*>(lse2 + col);
      const unsigned at = static_cast<unsigned>(col - lo[k & 1]), n = static_cast<unsigned>(span[k & 1]);
      float2& x = s.v[0][j][k];
      x.x = at < n ? tl::fast_exp2(fmaf(x.x, scale_log2, -l.x)) : 0.0f;
      x.y = at + 1 < n ? tl::fast_exp2(fmaf(x.y, scale_log2, -l.y)) : 0.0f;
    });
  }

  // dp (dPᵀ) becomes dSᵀ = Pᵀ ∘ (dPᵀ − delta); delta past Sq reads as 0 (its P is 0 already).
  __device__ __forceinline__ void grads(tile::rt_fl<16, M>& dp, const tile::rt_fl<16, M>& pr, const float* delta,
                                        int valid_q) const {
    namespace tl = flashtile::tile;
    tl::each<tl::rt_fl<16, M>>([&](int, int j, int k) {
      const int col = 16 * j + lane_col + ((k & 2) ? 8 : 0);
      const float2 d = *reinterpret_cast<const float2*>(delta + col);
      float2& x = dp.v[0][j][k];
      x.x = pr.v[0][j][k].x * (x.x - (col < valid_q ? d.x : 0.0f));
      x.y = pr.v[0][j][k].y * (x.y - (col + 1 < valid_q ? d.y : 0.0f));
    });
  }
};

// The epilogue role: a consumer warp's 16 rows of dK (times scale) and dV, rows >= Sk never written.
template <typename Sh, typename T>
struct Sm90BwdEpilogue {
  const Sm90BwdParams<T>& p;
  const Sm90BwdWork& w;
  int key_row0, dim0;  // the warp's first key (in the block) and the consumer's first dK/dV column

  template <typename Acc>
  __device__ __forceinline__ void store(Acc& dk, const Acc& dv) const {
    namespace tl = flashtile::tile;
    const int row0 = w.key0 + key_row0, valid = p.seqlen_k - row0;
    if (valid <= 0) return;
    tl::mul(dk, dk, p.scale);
    tl::store(p.dk + w.batch * p.dk_sb + w.head_kv * p.dk_sh + static_cast<std::int64_t>(row0) * p.dk_ss + dim0, p.dk_ss,
              dk, valid);
    tl::store(p.dv + w.batch * p.dv_sb + w.head_kv * p.dv_sh + static_cast<std::int64_t>(row0) * p.dv_ss + dim0, p.dv_ss,
              dv, valid);
  }
};

// kMods: the variants' build (window, softcap, ALiBi: Sm90BwdGrads' scores, the query blocks of sm90_bwd_work).
template <int D, typename T, bool kCausal, bool kMods>
__global__ void __launch_bounds__(Sm90BwdShape<D, kCausal>::kThreads, 1)
    sm90_bwd_kernel(const __grid_constant__ Sm90BwdParams<T> p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900 && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  namespace tl = flashtile::tile;
  using Sh = Sm90BwdShape<D, kCausal>;
  constexpr int M = Sh::kBlockM, N = Sh::kBlockN, S = Sh::kStages;
  extern __shared__ char smem_raw[];
  auto& sm = *reinterpret_cast<Sm90BwdSmem<D, T, kCausal>*>((reinterpret_cast<std::uintptr_t>(smem_raw) + 1023) &
                                                            ~std::uintptr_t{1023});
  const int wg = tl::warp_uniform(tl::warpgroup::index());
  const Sm90BwdWork w = sm90_bwd_work<M, N, kCausal, kMods>(p);
  if (threadIdx.x == 0) sm.init();
  __syncthreads();

  if (wg == 0) {  // ---------------------------------------------------------------------- producer and dQ writer
    tl::setmaxnreg_dec<Sh::kProducerRegs>();
    if (threadIdx.x == 0) sm90_bwd_produce<Sh>(sm, p, w);
    if (threadIdx.x == tl::warp::kThreads) sm90_bwd_write_dq<Sh, kMods>(sm, p, w);
    return;
  }
  // ------------------------------------------------------------------------------------------------- consumers
  tl::setmaxnreg_inc<Sh::kConsumerRegs>();
  const int c = wg - 1, warp = tl::warpgroup::warp_in_scope();
  const int key_row0 = Sh::kSplitKeys ? c * kSm90Rows : 0;  // the consumer's rows of the K/V block
  const int dim0 = Sh::kSplitKeys ? 0 : c * Sh::kDimsPerWg;   // its dK / dV columns
  const int dq0 = c * Sh::kDqCols;                            // its dQ columns
  const bool writes_ds = Sh::kSplitKeys || c == 0;            // split by dims: every consumer has all of dS
  const Sm90BwdGrads<M, kCausal, kMods> grads{p.scale_log2, w.key0 + key_row0 + warp * 16 + (tl::lane_id() >> 2),
                                              p.seqlen_q, p.seqlen_k};
  // Blocks with a key past Sk or (causal) a pair above the diagonal take the masks: keys past the last row's reach.
  const bool ragged_keys = w.key0 + N > p.seqlen_k;
  tl::rt_fl<16, Sh::kDimsPerWg> dk, dv;
  tl::rt_fl<16, M> s, dp;
  tl::rt<T, 16, M> p16, ds16;
  tl::rt_fl<16, Sh::kDqCols> dq;
  tl::zero(dk), tl::zero(dv);
  tl::wait(sm.kv_full, 0);
  for (int it = 0; it < w.iters; ++it) {
    const int st = it % S, m0 = w.m(it) * M, valid_q = p.seqlen_q - m0;
    const bool mask = ragged_keys || (kCausal && m0 + p.seqlen_k - p.seqlen_q < w.key0 + N - 1);
    tl::wait(sm.full[st], (it / S) & 1);
    tl::fence();
    tl::mma_ABt(s, sm.k, key_row0, sm.q[st], false);  // Sᵀ = K·Qᵀ
    tl::commit();
    tl::mma_ABt(dp, sm.v, key_row0, sm.dout[st], false);  // dPᵀ = V·dOᵀ
    tl::commit();
    tl::wait<1>();
    tl::fence_operand(s);
    if constexpr (kMods) {  // ALiBi's slope of this query head
      const int off = p.seqlen_k - p.seqlen_q;
      grads.scores(s, m0, off, sm90_alibi_slope(p.mods, w.batch, w.head(it)), p.mods);
      grads.probs(s, sm.lse2[st], m0, valid_q, true, p.seqlen_k, off, p.mods);
    } else {
      grads.probs(s, sm.lse2[st], m0, valid_q, mask);  // overlaps dPᵀ's wgmmas
    }
    tl::wait<0>();
    tl::fence_operand(dp);
    grads.grads(dp, s, sm.delta[st], valid_q);
    if constexpr (kMods)
      if (p.mods.cap_exp2 != 0.0f)
        grads.cap_grads(dp, s, sm.lse2[st], m0, p.seqlen_k - p.seqlen_q, sm90_alibi_slope(p.mods, w.batch, w.head(it)),
                        p.mods);
    tl::copy(p16, s);
    tl::copy(ds16, dp);
    tl::fence();
    tl::mma_AB(dv, p16, sm.dout[st], dim0, true);  // dV += Pᵀ·dO
    tl::mma_AB(dk, ds16, sm.q[st], dim0, true);    // dK += dSᵀ·Q
    tl::commit();
    tl::st<T, M, N>& ds = sm.ds[it % 2];
    if (writes_ds) tl::store_transposed(ds, ds16, 0, key_row0 + warp * 16);
    tl::fence_proxy_async();  // dS written by the generic proxy, read by wgmma's async one
    tl::wait<0>();  // before dQ's accumulator is live: P and dS registers free
    tl::fence_operand(dv, dk, p16, ds16);
    tl::arrive(sm.empty[st]);  // Q, dO, lse2, delta of this stage read
    tl::named_sync(kSm90BwdBarDs, kSm90WgThreads * Sh::kConsumers);
    tl::fence();
    tl::mma_AB(dq, ds, 0, sm.k, dq0, false);  // dQ_i = dS·K (its columns)
    tl::commit();
    tl::wait<0>();
    tl::fence_operand(dq);
    tl::wait(sm.dq_empty, (it & 1) ^ 1);
    sm.dq.store(dq, warp * 16, dq0);
    tl::fence_proxy_async();  // staged by the generic proxy, read by the bulk reduce
    tl::arrive(sm.dq_full);
  }
  const Sm90BwdEpilogue<Sh, T> epi{p, w, key_row0 + warp * 16, dim0};
  epi.store(dk, dv);
#endif
}

// ------------------------------------------------------------------------------------------------ host half
inline void sm90_bwd_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw Error(ErrorCode::BackendFailure, std::string("cuda_sm90 bwd: ") + what + ": " + cudaGetErrorString(e));
}

// Preprocess, the main kernel, the dQ convert: all on p.f.stream, nothing allocated (p.workspace carries the scratch
// and, past it, the counters).
template <int D, typename T, bool kCausal, bool kMods>
void sm90_bwd_run(const BwdParams& bp) {
  using Sh = Sm90BwdShape<D, kCausal>;
  static_assert(sizeof(Sm90BwdSmem<D, T, kCausal>) + 1024 <= Sh::kSmemBytes, "smem budget");
  static_assert(Sh::kRowPad == kSm90BwdRowPad, "scratch rows padded to the query block");
  const FwdParams& f = bp.f;
  const BwdScratch s = bwd_scratch(bp, kSm90BwdRowPad);
  Sm90BwdParams<T> p{};
  auto map = [](CUtensorMap& m, const void* ptr, int b, int len, int h, std::int64_t sb, std::int64_t ss,
                std::int64_t sh, int rows, const char* name) {
    tile::gl4<T> g;
    const std::string why = tile::make_gl4(g, static_cast<T*>(const_cast<void*>(ptr)), b, len, h, D, sb, ss, sh, rows);
    if (!why.empty()) throw Error(ErrorCode::BackendFailure, std::string("cuda_sm90 bwd: ") + name + ": " + why);
    m = g.map;
  };
  map(p.q_map, f.q, f.batch, f.seqlen_q, f.heads_q, f.q_sb, f.q_ss, f.q_sh, Sh::kBlockM, "q");
  map(p.do_map, bp.dout, f.batch, f.seqlen_q, f.heads_q, bp.do_sb, bp.do_ss, bp.do_sh, Sh::kBlockM, "dout");
  map(p.k_map, f.k, f.batch, f.seqlen_k, f.heads_kv, f.k_sb, f.k_ss, f.k_sh, Sh::kBlockN, "k");
  map(p.v_map, f.v, f.batch, f.seqlen_k, f.heads_kv, f.v_sb, f.v_ss, f.v_sh, Sh::kBlockN, "v");
  p.dk = static_cast<T*>(bp.dk), p.dv = static_cast<T*>(bp.dv);
  p.dk_sb = bp.dk_sb, p.dk_ss = bp.dk_ss, p.dk_sh = bp.dk_sh, p.dv_sb = bp.dv_sb, p.dv_ss = bp.dv_ss, p.dv_sh = bp.dv_sh;
  p.lse2 = s.lse2, p.delta = s.delta, p.dq_acc = s.dq_acc;
  const std::int64_t acc_rows = static_cast<std::int64_t>(f.batch) * f.heads_q * s.sq_pad;
  if (const std::string why = tile::make_f32_map(p.dq_map, s.dq_acc, acc_rows, D, Sh::kBlockM); !why.empty())
    throw Error(ErrorCode::BackendFailure, "cuda_sm90 bwd: dq_acc: " + why);
  p.seqlen_q = f.seqlen_q, p.seqlen_k = f.seqlen_k, p.heads_q = f.heads_q, p.group = f.heads_q / f.heads_kv;
  p.m_blocks = (f.seqlen_q + Sh::kBlockM - 1) / Sh::kBlockM;
  p.sq_pad = static_cast<int>(s.sq_pad);
  p.scale = f.scale, p.scale_log2 = f.scale_log2;
  if constexpr (kMods) p.mods = sm90_mod_params(f);
  const auto stream = static_cast<cudaStream_t>(f.stream);
  bwd_preprocess(bp, s);
  if (bp.deterministic) {
    p.dq_sem = reinterpret_cast<int*>(static_cast<unsigned char*>(bp.workspace) + bwd_scratch_bytes(bp, kSm90BwdRowPad));
    sm90_bwd_check(cudaMemsetAsync(p.dq_sem, 0, sm90_bwd_sem_bytes(bp), stream), "dq counters");
  }
  auto kernel = &sm90_bwd_kernel<D, T, kCausal, kMods>;
  sm90_bwd_check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Sh::kSmemBytes),
                 "cudaFuncSetAttribute");
  const dim3 grid((f.seqlen_k + Sh::kBlockN - 1) / Sh::kBlockN, f.heads_kv, f.batch);
  kernel<<<grid, Sh::kThreads, Sh::kSmemBytes, stream>>>(p);
  sm90_bwd_check(cudaGetLastError(), "kernel launch");
  bwd_convert_dq(bp, s);
}

// Causality and the variants (FwdParams::has_variant) as template flags (instantiated per head dim in
// sm90_bwd_d{64,128,256}.cu).
template <int D, typename T>
void sm90_bwd_dispatch(const BwdParams& p) {
  const bool mods = p.f.has_variant();
  if (p.f.causal) mods ? sm90_bwd_run<D, T, true, true>(p) : sm90_bwd_run<D, T, true, false>(p);
  else mods ? sm90_bwd_run<D, T, false, true>(p) : sm90_bwd_run<D, T, false, false>(p);
}

}  // namespace flashtile::cuda
