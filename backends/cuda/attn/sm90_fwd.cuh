// sm90 (Hopper) attention forward, FlashAttention-3 style, written on the tile framework (tile/tile.cuh).
//
// Work unit: a tile = kBlockM query rows of one (batch, head); varlen builds (Sm90Shape's L) find each batch's rows
// and keys in the packed tensors (Sm90Seq), and its tiles past the sequence's rows have no work. Persistent launch
// (sm90_traits.hpp says when): one CTA per SM, CTA b works through tiles b, b + grid, ... (order: Sm90Scheduler),
// or, with kDynamic, b and then the indices its scheduler (the producer's thread) takes from the launch's atomic
// counter; otherwise one CTA per tile.
// Ring slots and barrier phases count on across a CTA's tiles, so the next tile's Q and first K/V blocks load while
// the consumers still finish the current one (last P·V, epilogue). kQPrefetch double-buffers Q: the next tile's Q
// loads into the other buffer while this tile finishes and stores O through its own.
// Roles of one CTA:
//  - producer warpgroup: one thread issues TMA loads of Q (once the previous tile's last Q·Kᵀ released it, q_empty;
//    kOTma: once its epilogue did, so K0 goes first), then K and V tiles into two kStages-deep rings (in the order
//    the consumers use them: K0, K1, V0, K2, V1, ...); a slot is refilled once every consumer released it (k_empty /
//    v_empty mbarriers).
//  - consumer warpgroups (kSm90Rows query rows each): S = Q·Kᵀ (wgmma, both operands in smem), mask, online softmax in the
//    exp2 domain (Sm90Softmax), O += P·V (wgmma, P from registers, V MN-major in smem; kLazy 4 also l += P's row
//    sums, from an all-ones tile in the same wgmmas). S(n) is issued with P(n-1)·V(n-1), so softmax(n) overlaps the
//    P·V; optionally pingpong (sm90_traits.hpp). kNarrow: a consumer's first block runs only as wide as its rows need
//    it (sm90_first_cols).
//  - epilogue (consumers; sm90_epilogue.cuh): O / l to global with predicated 4-byte stores (rows >= Sq are never written); or, in kOStage builds, into O buffers of
//    their own that a storer thread of the producer warpgroup writes out by TMA (Sm90Epilogue::stage); or, in kOTma builds,
//    through the tile's own Q buffer and one TMA store per consumer (the producer's next Q load waits for it); LSE in
//    natural log.
// K/V blocks are visited from the last to the first, so the masked (causal diagonal / ragged end) blocks come first.
#pragma once

#include "attn/sm90_epilogue.cuh"
#include "attn/sm90_mods.cuh"
#include "attn/sm90_sched.cuh"
#include "attn/sm90_traits.hpp"
#include "tile/tile.cuh"

namespace flashtile::cuda {

template <typename T>
struct Sm90Params {
  CUtensorMap q_map, k_map, v_map;  // boxes of kBlockM (Q) / kBlockN (K, V) rows x 64 columns (one 128B swizzle row)
  T* o;
  float* lse;  // [B, Hq, Sq] or null
  std::int64_t o_sb, o_ss, o_sh;
  const T *q, *k;  // kLazy 3's repair (sm90_redo_s) reads Q and K from global memory
  std::int64_t q_sb, q_ss, q_sh, k_sb, k_ss, k_sh;
  int seqlen_q, seqlen_k, heads_q, group;  // group = Hq / Hkv
  int m_blocks, batch_heads, tiles;         // tiles = m_blocks * batch_heads
  int head_group;                           // tile order (Sm90Scheduler): 0 m-block innermost, else heads per group
  float scale_log2;
  int o_tma;          // Sm90Shape::kOTma builds: 1 when O is TMA-addressable (o_map), else direct stores
  CUtensorMap o_map;  // boxes of kSm90Rows rows x 64 columns
  int* tile_counter;  // Sm90Shape::kDynamic persistent launches: the launch's next tile index (zeroed), else null
  int cluster;        // this launch's cluster size (Sm90Shape::kCluster kernels; sm90_cluster_launch), else 1
  int row_shift;  // Sm90Shape::kShiftRows: m-block m starts at row m * kBlockM - row_shift (whole consumers), else 0
  // Sm90Scheduler's divisors: batch_heads, m_blocks, heads_q, head_group and head_group * m_blocks (1 where unused).
  tile::fastdiv div_bh, div_m, div_heads, div_group, div_per;
  Sm90ModParams mods;  // Sm90Shape::kSinks kernels: the variants (last, so the plain kernels' offsets stay)
  // Varlen kernels (Sm90Shape::kVarlen): sequence b's query rows and keys from cu_q[b], cu_k[b] of the packed q / k
  // (seqlen_q / seqlen_k are then the longest sequence's, which size the grid); lse is [Hq, total_q].
  const std::int32_t *cu_q, *cu_k;
  int total_q, total_k;

  void set_sched(const Sm90SchedParams& s) {  // host: the scheduler's fields (sm90_sched_tiles, sm90_sched_order)
    tiles = s.tiles, m_blocks = s.m_blocks, batch_heads = s.batch_heads, heads_q = s.heads_q;
    head_group = s.head_group, row_shift = s.row_shift, tile_counter = s.tile_counter;
    div_bh = s.div_bh, div_m = s.div_m, div_heads = s.div_heads, div_group = s.div_group, div_per = s.div_per;
  }
};

// Staged O's buffers (Sm90Shape::kOStage): kB tiles of one consumer's rows; none otherwise.
template <typename T, int D, int kB>
struct Sm90OBufs {
  tile::st<T, kSm90Rows, D> buf[kB];
};
template <typename T, int D>
struct Sm90OBufs<T, D, 0> {};

// kLazy 4's all-ones B columns (tile::mma_AB_rowsum): a K/V block's rows of 64 columns; none otherwise.
template <typename T, int N, bool kOn>
struct Sm90Ones {
  tile::st<T, N, 64> t;
};
template <typename T, int N>
struct Sm90Ones<T, N, false> {};

template <int D, typename T, bool kCausal, Sm90Kind kKind, Sm90Mods kModsBuild = Sm90Mods::off,
          Layout L = Layout::Dense>
struct Sm90Smem {
  using Sh = Sm90Shape<D, kCausal, kKind, kModsBuild, L>;
  tile::st<T, Sh::kBlockM, D> q[Sh::kQBufs];
  tile::st<T, Sh::kBlockN, D> k[Sh::kStages];
  tile::st<T, Sh::kBlockN, D> v[Sh::kStages];
  [[no_unique_address]] Sm90OBufs<T, D, Sh::kOBufs> o;
  // K and V have their own rings: K(n+1) can land while P(n)·V(n) still reads V.
  tile::mbarrier q_full[Sh::kQBufs], q_empty[Sh::kQBufs], k_full[Sh::kStages], v_full[Sh::kStages], k_empty[Sh::kStages], v_empty[Sh::kStages];
  // kDynamic: the scheduler (the producer's thread) writes tile j's index into slot j % 2 before its Q load's arrive
  // on q_full, whose wait makes it visible to the consumers; index tiles (a plain arrive, no load) stops them.
  int sched[2];
  // kOStage: a use of O buffer b completes o_full[b] on its consumer's arrivals (one a thread) (dst: its destination row, head,
  // batch; row < 0 stops the storer); once the TMA store has read it, the storer's arrival completes o_empty[c] of
  // the consumer that writes it next (its own, or the next one in turn where they share one buffer).
  static constexpr int kOB = Sh::kOBufs > 0 ? Sh::kOBufs : 1;
  tile::mbarrier o_full[kOB], o_empty[Sh::kConsumers];
  int o_dst[kOB][3];
  [[no_unique_address]] Sm90Ones<T, Sh::kBlockN, Sh::kLazy == 4> ones;  // past the V ring: mma_AB_rowsum's LBO

  // Every thread: the ones tile (kLazy 4), then thread 0 the barriers; a CTA barrier must follow.
  __device__ __forceinline__ void init(int cluster) {
    if constexpr (Sh::kLazy == 4) {
      tile::fill(ones.t, 1.0f, threadIdx.x, Sh::kThreads);
      tile::fence_proxy_async();  // written by the generic proxy, read by wgmma's async one
    }
    if (threadIdx.x == 0) init_barriers(cluster);
  }

  // A full barrier completes on the producer's one arrival (and its TMA bytes: clustered, both CTAs' halves), an
  // empty one on every consumer thread, and clustered also on each consumer warp of the peer (whose producer
  // refills this stage's other half in both CTAs).
  __device__ __forceinline__ void init_barriers(int cluster) {
    const int kv_releases = kSm90WgThreads * Sh::kConsumers + (cluster - 1) * tile::warpgroup::kWarps * Sh::kConsumers;
    for (int i = 0; i < Sh::kQBufs; ++i) {
      tile::init(q_full[i], 1);
      tile::init(q_empty[i], kSm90WgThreads * Sh::kConsumers);
    }
    for (int s = 0; s < Sh::kStages; ++s) {
      tile::init(k_full[s], 1);
      tile::init(v_full[s], 1);
      tile::init(k_empty[s], kv_releases);
      tile::init(v_empty[s], kv_releases);
    }
    for (int b = 0; b < Sh::kOBufs; ++b) tile::init(o_full[b], kSm90WgThreads);
    for (int c = 0; c < (Sh::kOStage ? Sh::kConsumers : 0); ++c) tile::init(o_empty[c], 1);
    tile::fence_barrier_init();
  }
};

// Number of keys (from key 0) that query rows before row_end see.
template <bool kCausal>
__device__ __forceinline__ int sm90_keys_to(int row_end, int sq, int sk) {
  return kCausal ? min(sk, max(0, min(sq, row_end) + sk - sq)) : sk;
}
// Number of K/V blocks that query rows before row_end see (0: none of them sees a key).
template <int N, bool kCausal>
__device__ __forceinline__ int sm90_kv_blocks_to(int row_end, int sq, int sk) {
  return (sm90_keys_to<kCausal>(row_end, sq, sk) + N - 1) / N;
}
// Sm90Shape::kNarrow: how many keys of the tile's first block (visit order: the highest, from key0) the rows row0..
// row0 + 63 of one consumer see, in 1..N. Its Q·Kᵀ then runs that narrow, rounded up to 16: the masks cover every
// column past it, since no warp of the consumer then sees the block's last key.
template <int N, bool kCausal>
__device__ __forceinline__ int sm90_first_cols(int row0, int key0, int sq, int sk) {
  return min(N, max(1, sm90_keys_to<kCausal>(row0 + kSm90Rows, sq, sk) - key0));
}
// Sm90Shape::kOwnBlocks: how many of its tile's n_blocks blocks (the first ones in visit order: the highest keys)
// consumer c skips, because they are masked for all its rows (causal) or its rows are all past Sq. It keeps at
// least one, so that every path issues the same wgmmas (rows past Sq come out unused, rows without keys masked).
// Rows before row 0 (shifted rows, kShift) count as past Sq.
template <int N, bool kCausal, bool kShift>
__device__ __forceinline__ int sm90_skipped_blocks(int tile_row0, int c, int sq, int sk, int n_blocks) {
  const int row0 = tile_row0 + c * kSm90Rows;
  if (row0 >= sq || (kShift && row0 < 0)) return n_blocks - 1;
  return n_blocks - max(1, sm90_kv_blocks_to<N, kCausal>(row0 + kSm90Rows, sq, sk));
}
// The blocks consumer c skips (kOwnBlocks builds, else none): released unread from ring position g0 on, in the
// producer's order (K(i), then V(i), which loads after K(i + 1); it refills a stage once every consumer released it).
// The caller's loop then starts past them, on the ring positions and key blocks it would have reached without the
// skip.
template <int N, int S, bool kCausal, typename Smem>
__device__ __forceinline__ int sm90_skip_blocks(unsigned g0, Smem& sm, int tile_row0, int c, int sq, int sk,
                                                int n_blocks) {
  if constexpr (!Smem::Sh::kOwnBlocks) return 0;
  const int n = sm90_skipped_blocks<N, kCausal, Smem::Sh::kShiftRows>(tile_row0, c, sq, sk, n_blocks);
  for (unsigned g = g0; g < g0 + n; ++g) {
    tile::wait(sm.k_full[g % S], (g / S) & 1);
    tile::arrive(sm.k_empty[g % S]);
    tile::wait(sm.v_full[g % S], (g / S) & 1);
    tile::arrive(sm.v_empty[g % S]);
  }
  return n;
}

// kLazy 3's repair after P overflowed (a block far past a row's reference, S gone): the warp's 16 rows of
// S = Q·Kᵀ for keys key0.. again, by mma.sync from global memory, 8 keys at a time. Not wgmma: ptxas serializes
// every wgmma of a kernel where only some paths issue one. Rows of tile u outside [0, Sq) (shifted rows) give zeros.
template <int D, Layout L, typename T, int NW>
__device__ __forceinline__ void sm90_redo_s(tile::rt_fl<16, NW>& s, const Sm90Params<T>& p, const Sm90Tile& u,
                                            int consumer, int warp, int key0) {
  const Sm90Seq sq = sm90_seq<L>(p, u.batch);
  const int lane = tile::lane_id(), g = lane >> 2, c = 2 * (lane & 3), row = u.row0 + consumer * kSm90Rows + warp * 16 + g;
  const T* q0 = p.q + sq.b * p.q_sb + u.head * p.q_sh + static_cast<std::int64_t>(sq.q0 + row) * p.q_ss + c;
  const T* q8 = q0 + 8 * p.q_ss;
  const T* k = p.k + sq.b * p.k_sb + u.head / p.group * p.k_sh + static_cast<std::int64_t>(sq.k0) * p.k_ss + c;
  const int rows = L == Layout::Varlen ? sq.sq : p.seqlen_q;  // read here (dense): as vk below
  const bool v0 = row >= 0 && row < rows, v8 = row + 8 >= 0 && row + 8 < rows;
  auto pair = [](bool valid, const T* at) { return valid ? *reinterpret_cast<const std::uint32_t*>(at) : 0u; };
  // An m16n8k16 at a time, fragments straight from memory: few registers beside s and O.
#pragma unroll
  for (int j = 0; j < NW / 8; ++j) {
    float2 c0{0.0f, 0.0f}, c1{0.0f, 0.0f};
    const int key = key0 + 8 * j + g;
    const T* kr = k + static_cast<std::int64_t>(key) * p.k_ss;
    const bool vk = key < sm90_seq<L>(p, u.batch).sk;  // read here: a held copy changed the plain kernels' code
#pragma unroll 1
    for (int kd = 0; kd < D; kd += 16) {
      const std::uint32_t a[4] = {pair(v0, q0 + kd), pair(v8, q8 + kd), pair(v0, q0 + kd + 8), pair(v8, q8 + kd + 8)};
      tile::mma_16816<T>(c0, c1, a, pair(vk, kr + kd), pair(vk, kr + kd + 8), c0, c1);
    }
    s.v[0][j / 2][2 * (j % 2)] = c0, s.v[0][j / 2][2 * (j % 2) + 1] = c1;
  }
}

// Online softmax of one warp's 16 rows in the exp2 domain. Maxima are kept on raw scores; m_use = max·scale·log2e
// with -inf (no key seen yet) replaced by 0, so exp2(s·scale·log2e - m_use) is one FFMA + ex2 and never NaN;
// corr = exp2(min(old m_use - new m_use, 0)): m_use only grows once a row has keys, and the min caps the step from
// the stand-in 0 to a row's first max, which overflowed to inf (0 · inf = NaN in l) when that max was below -128.
// O and l are still 0 there, so any finite corr is right. l stays per lane and is reduced over the quad at the end.
// Lazy rescaling: m_use moves only on a row's first key or when the row max passes it by more than kSm90LazyLog2, so P stays
// <= 2^kSm90LazyLog2 and l >= 1, and corr is exactly 1 in most blocks; `rescale` (warp-uniform) says whether any row
// of the warp moved, i.e. whether O needs the multiply by corr.
// kLazy 3 checks no maxima at all once every row of the warp has a reference: the block exponentiates against it, and
// the lanes' block sums of P (the FADDs run anyway) bound each P. Sums <= 2^kSm90LazyLog2: done. Sums to
// kSm90LazyRedoPow take the max of P, move the reference past 2^kSm90LazyLog2 and scale P by corr. Larger ones (up to
// inf: a block past its reference by 2^128 has lost P) set `lost`; once the P·V in flight completes, `retry` has the
// warp's S computed again (sm90_redo_s) for the exact path. Not inside step: P's registers are free only after
// that P·V, and d64 spilled 18-26 bytes with the repair there.
// kLazy 4 is kLazy 3 with l from the P·V: its wgmmas run 8 columns wider, against an all-ones tile past the V ring
// (tile::mma_AB_rowsum), so l is summed on the tensor cores from the very P that O uses, and no FADD runs a score. The
// fast check is then whether any P >= 2 (its exponent's top bit: one OR a pair, tile::any_abs_ge2), against a
// reference kBias above the row max, which is kLazy 3's bound of 2^8 over the max; past it the same move or retry.
// The exact path checks the lanes' parts of the row maxima first: while every row of the warp has a reference that no lane's
// max passes by more than kSm90LazyLog2 (one vote), the block exponentiates against it with no shuffles and no corr.
// m_run then goes stale, which only the move rule reads: a row moves when this block passes the reference, which
// puts this block's max above every skipped one.
template <int N, bool kCausal, int kLazy, Sm90Mods kModsBuild = Sm90Mods::off>
struct Sm90Softmax {
  static constexpr bool kMods = sm90_mods_loop(kModsBuild);
  static constexpr int kPolyEvery = sm90_poly_every(kModsBuild, kLazy);  // exp2s' pairs through poly_exp2 (0: none)
  int seqlen_k, last0;  // row row0 + r of this warp sees keys j <= last0 + r (causal: last0 = row0 + Sk - Sq)
  float scale_log2;
  tile::rv_fl_rows<16> m_run{{{tile::kNegInf, tile::kNegInf}}}, m_use{{{0.0f, 0.0f}}}, l_run{{{0.0f, 0.0f}}}, corr;
  bool rescale = true;
  bool ref_all = false;  // kLazy 3: every row of the warp has a reference (false at a tile's first block)
  // kPeaks: whether every row of the warp has met its ALiBi peak (Sm90RowMods::peak_seen), else always.
  static constexpr bool kPeaks = sm90_alibi_order(kCausal, kModsBuild);
  bool peaked = !kPeaks;
  // kLazy 4 sets a reference kBias above its row max, so that the fast check's P < 2 is P < 2^kSm90LazyBits against
  // the max, as kLazy 3's sums check; a move (P >= kMovePow) puts it kBias above the block's max again.
  static constexpr float kBias = kLazy == 4 ? kSm90LazyLog2 - 1.0f : 0.0f;
  static constexpr float kMovePow = kLazy == 4 ? 1.0f : kSm90LazyPow;
  __device__ static float biased(float m) {  // a row max (exp2 domain) as a reference; no add where kBias is 0
    if constexpr (kLazy == 4) return m + kBias;
    return m;
  }
  bool lost = false;     // kLazy 3/4: the last step's P overflowed; its S must be computed again (retry)
  int lost_key0 = 0;

  // Mask the score block starting at key key0, fold it into (m, l); leaves exp2(s·scale·log2e - m_use) in s. NW: the
  // block's width (kNarrow's first blocks: less than N). mp: kMods, the tile's Sm90RowMods (last0 is then the
  // diagonal of the warp's first row); Sm90NoMods otherwise.
  // It may instead set `lost` (never at a tile's first block), leaving s to retry.
  template <int NW, typename MP = Sm90NoMods>
  __device__ __forceinline__ void step(tile::rt_fl<16, NW>& s, int key0, const MP& mp = {}) {
    namespace tl = flashtile::tile;
    mask(s, key0, mp);
    // kPeaks: the lazy reference holds only past the rows' ALiBi peaks; before them, the exact path's maxima.
    const bool lazy = ref_all && peaked;
    if constexpr (kPeaks) peaked = peaked || mp.peak_seen(key0, last0);
    if (lazy) {
      tl::exp2_fma_row<kPolyEvery>(s, s, scale_log2, m_use);
      // The fast check. kLazy 4: every P < 2 (2^8 past the row max, the reference sitting kBias above it), by one
      // OR a pair. kLazy 3: the lane's block sums of P (which l needs anyway) <= 2^8. bound: this lane's bound on
      // each row's P past the check, the block sum (kLazy 3) or max (kLazy 4).
      tile::rv_fl_rows<16> bound;
      bool fast;
      if constexpr (kLazy == 4) {
        fast = !__any_sync(0xffffffffu, tl::any_abs_ge2(s));
      } else {
        const tile::rv_fl_rows<16> zero{{{0.0f, 0.0f}}};
        tl::row_sum_partial(bound, s, zero);
        fast = __all_sync(0xffffffffu, bound.v[0][0] <= kSm90LazyPow && bound.v[0][1] <= kSm90LazyPow);
      }
      if (fast) {
        rescale = false;
        if constexpr (kLazy == 3) tl::add(l_run, l_run, bound);
        return;
      }
      if constexpr (kLazy == 4) tl::row_max_partial(bound, s);
      const bool redo_s = !(bound.v[0][0] <= kSm90LazyRedoPow && bound.v[0][1] <= kSm90LazyRedoPow);  // NaN too
      if (!__any_sync(0xffffffffu, redo_s)) {
        tile::rv_fl_rows<16> pm = bound;
        if constexpr (kLazy == 3) tl::row_max_partial(pm, s);
        bool mv = false;
#pragma unroll
        for (int i = 0; i < 2; ++i) {
          const float top = tl::quad_max(pm.v[0][i]);  // the row's block max as P: 2^(its exponent)
          const float mu = top > kMovePow ? biased(m_use.v[0][i] + __log2f(top)) : m_use.v[0][i];
          mv |= mu != m_use.v[0][i];
          corr.v[0][i] = tl::fast_exp2(m_use.v[0][i] - mu);
          m_use.v[0][i] = mu;
        }
        rescale = __any_sync(0xffffffffu, mv);
        tl::mul_row(s, s, corr);
        if constexpr (kLazy == 3) {
          tl::mul(l_run, l_run, corr);
          tl::row_sum_partial(l_run, s, l_run);
        }
        return;
      }
      lost = true, lost_key0 = key0;
      return;
    }
    exact(s);
  }

  // After a lost step: redo(s, key0) computes the block's scores again, then the exact path (else nothing).
  template <int NW, typename Redo, typename MP = Sm90NoMods>
  __device__ __forceinline__ void retry(tile::rt_fl<16, NW>& s, Redo&& redo, const MP& mp = {}) {
    if (!lost) return;
    lost = false;
    redo(s, lost_key0);
    mask(s, lost_key0, mp);
    exact(s);
  }

  // Scores past seqlen_k, and causal scores past the diagonal, to -inf (kMods: the variants' scores and masks).
  template <int NW, typename MP>
  __device__ __forceinline__ void mask(tile::rt_fl<16, NW>& s, int key0, const MP& mp) const {
    namespace tl = flashtile::tile;
    if constexpr (kMods) {
      mp.apply(s, key0, last0, seqlen_k);
      return;
    }
    if (key0 + NW > seqlen_k || (kCausal && key0 + NW - 1 > last0)) {  // warp-uniform
      if constexpr (kCausal) {  // row r sees columns c < seqlen_k - key0 and c <= last0 + r - key0
        const int row = tl::lane_id() >> 2, end = seqlen_k - key0;
        int lim[1][2];
#pragma unroll
        for (int h = 0; h < 2; ++h) lim[0][h] = min(end, last0 + row + 8 * h - key0 + 1);
        tl::mask_cols(s, lim);
      } else {  // the ragged last block (mask_cols here cost d128 non-causal 2-3% at 8k/16k)
        tl::map(s, [&](int, int col, float x) { return key0 + col < seqlen_k ? x : tl::kNegInf; });
      }
    }
  }

  // The row maxima's path (until every row has a reference, and after a repair).
  template <int NW>
  __device__ __forceinline__ void exact(tile::rt_fl<16, NW>& s) {
    namespace tl = flashtile::tile;
    const tile::rv_fl_rows<16> m_old = m_run;
    {
      tile::rv_fl_rows<16> mx;
      tl::row_max_partial(mx, s);
      bool keep = true;
#pragma unroll
      for (int i = 0; i < 2; ++i)
        keep &= m_old.v[0][i] != tl::kNegInf && fmaf(mx.v[0][i], scale_log2, -m_use.v[0][i]) <= kSm90LazyLog2 - kBias;
      if (__all_sync(0xffffffffu, keep)) {
        rescale = false;
        tl::exp2_fma_row<kPolyEvery>(s, s, scale_log2, m_use);
        if constexpr (kLazy < 4) tl::row_sum_partial(l_run, s, l_run);
        return;
      }
#pragma unroll
      for (int i = 0; i < 2; ++i) m_run.v[0][i] = fmaxf(m_old.v[0][i], tl::quad_max(mx.v[0][i]));
    }
    bool moved = false;
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      float mu = m_run.v[0][i] == tl::kNegInf ? 0.0f : biased(m_run.v[0][i] * scale_log2);
      {
        const bool first = m_old.v[0][i] == tl::kNegInf;
        mu = first || mu > m_use.v[0][i] + kSm90LazyLog2 ? mu : m_use.v[0][i];
        moved |= !first && mu != m_use.v[0][i];  // first key: O and l are still 0
      }
      corr.v[0][i] = tl::fast_exp2(fminf(m_use.v[0][i] - mu, 0.0f));
      m_use.v[0][i] = mu;
    }
    rescale = __any_sync(0xffffffffu, moved);
    ref_all = __all_sync(0xffffffffu, m_run.v[0][0] != tl::kNegInf && m_run.v[0][1] != tl::kNegInf);
    tl::exp2_fma_row<kPolyEvery>(s, s, scale_log2, m_use);
    if constexpr (kLazy < 4) {
      tl::mul(l_run, l_run, corr);
      tl::row_sum_partial(l_run, s, l_run);
    }
  }

  // l for the epilogue: this lane's parts (l_run; quad_sum completes them), or (kLazy 4) the P·V's whole row sums of P
  // (e, tile::mma_AB_rowsum).
  __device__ __forceinline__ tile::rv_fl_rows<16> row_l(const tile::rt_rowsum& e) const {
    if constexpr (kLazy == 4) return tile::row_sums(e);
    return l_run;
  }
  // O (and kLazy 4's row sums with it) times corr where a row's reference moved.
  template <int D>
  __device__ __forceinline__ void rescale_o(tile::rt_fl<16, D>& o, tile::rt_rowsum& e) const {
    if (!rescale) return;
    tile::mul_row(o, o, corr);
    if constexpr (kLazy == 4) tile::mul_row(e, corr);
  }
};

// O (+)= P·V of ring stage st (acc false: O = P·V); kLazy 4 also l (+)= P's row sums, from the same wgmmas against
// the ones tile (tile::mma_AB_rowsum).
template <typename Smem, int D, typename P>
__device__ __forceinline__ void sm90_pv(Smem& sm, int st, tile::rt_fl<16, D>& o, tile::rt_rowsum& l, const P& p,
                                        bool acc) {
  if constexpr (Smem::Sh::kLazy == 4) tile::mma_AB_rowsum(o, l, p, sm.v[st], sm.ones.t, acc);
  else tile::mma_AB(o, p, sm.v[st], acc);
}

// This launch's cluster size: compile-time where the kernel is built for clusters alone (or none).
template <typename Sh, typename P>
__device__ __forceinline__ int sm90_cluster(const P& p) {
  return Sh::kClusterAlways ? Sh::kCluster : Sh::kCluster > 1 ? p.cluster : 1;
}

// The producer role (one thread of the producer warpgroup): Q and the K/V blocks of this CTA's tiles by TMA, each
// into its buffer or ring stage once the consumers released its previous use; with kDynamic also the scheduler's
// hand-out (the tile indices in sm.sched). blocks_of(tile): the Sm90Blocks it visits, the highest first.
template <typename Smem, typename T, typename Sched, typename BlocksOf>
__device__ __forceinline__ void sm90_produce(Smem& sm, const Sm90Params<T>& p, const Sched& sched,
                                             BlocksOf&& blocks_of) {
  namespace tl = flashtile::tile;
  using Sh = typename Smem::Sh;
  constexpr int M = Sh::kBlockM, N = Sh::kBlockN, S = Sh::kStages, D = Sh::kHeadDim;
  constexpr std::uint32_t kKVBytes = N * D * sizeof(T);
  // Clustered: this CTA's half of each block (rows half.., the maps' boxes), multicast into both CTAs.
  const bool clustered = sm90_cluster<Sh>(p) > 1;
  const int half = clustered ? static_cast<int>(tl::cluster_rank()) * (N / 2) : 0;
  // Ring position g (counted over all tiles of this CTA) uses stage g % S once its previous use was released.
  // row: the key in the tensor (varlen: past the sequence's k0), b: the tensor's batch index (Sm90Seq).
  auto load = [&](auto& tiles, tl::mbarrier* full, tl::mbarrier* empty, const CUtensorMap* map, unsigned g,
                  int row, const Sm90Tile& tt, int b) {
    const int s = g % S;
    tl::wait(empty[s], ((g / S) & 1) ^ 1);
    tl::arrive_expect_tx(full[s], kKVBytes);
    if (clustered) tl::load_async_multicast(tiles[s], map, full[s], row + half, tt.head / p.group, b, half, 0x3);
    else tl::load_async(tiles[s], map, full[s], row, tt.head / p.group, b);
  };
  unsigned kv = 0;  // unsigned: see the consumers' wait_k
  int j = 0, tn = 0;
  for (int t = blockIdx.x; t < p.tiles; t = Sh::kDynamic ? tn : t + gridDim.x) {
    if constexpr (Sh::kDynamic) tn = sched.next(t);
    const Sm90Tile tt = sched.tile(t);
    const Sm90Blocks range = blocks_of(tt);
    const int n_blocks = range.n, key_base = range.key0;  // key_base: the lowest block's first key
    auto key_of = [&](int it) {  // the first key of the block at visit position it (sm90_block_key's order)
      return Sh::kAlibiOrder ? sm90_block_key<N>(range, it) : (n_blocks - 1 - it) * N + key_base;
    };
    if (n_blocks == 0) continue;  // no keys: the consumers write it without loads
    const Sm90Seq seq = sm90_seq<Sh::kLayout>(p, tt.batch);
    const int qb = j % Sh::kQBufs;
    if (Sh::kOTma) load(sm.k, sm.k_full, sm.k_empty, &p.k_map, kv, seq.k0 + key_of(0), tt, seq.b);
    tl::wait(sm.q_empty[qb], ((j / Sh::kQBufs) & 1) ^ 1);
    sched.publish(sm, j, t);
    tl::arrive_expect_tx(sm.q_full[qb], tl::st<T, M, D>::kBytes);
    tl::load_async(sm.q[qb], &p.q_map, sm.q_full[qb], seq.q0 + sm90_q_row<Sh::kShiftRows>(tt.row0), tt.head, seq.b);
    // In the order the consumers use them: K0, K1, V0, K2, V1, ... (key blocks last first)
    for (int it = 0; it <= n_blocks; ++it) {
      if (it < n_blocks && (!Sh::kOTma || it > 0))
        load(sm.k, sm.k_full, sm.k_empty, &p.k_map, kv + it, seq.k0 + key_of(it), tt, seq.b);
      if (it > 0) load(sm.v, sm.v_full, sm.v_empty, &p.v_map, kv + it - 1, seq.k0 + key_of(it - 1), tt, seq.b);
    }
    kv += n_blocks;
    ++j;
  }
  if constexpr (Sh::kDynamic) sched.stop(sm, j);
}

// kModsBuild: plain, or one of the variants' builds (Sm90Mods): sinks in the epilogue (Sm90Shape::kSinks), and where
// the build runs the variants' loop (Sm90Shape::kMods) the key blocks a tile's window touches, the variants' scores
// and masks (Sm90RowMods). L: dense, or varlen (each tile's sequence from Sm90Seq; tiles past its rows have no keys).
template <int D, typename T, bool kCausal, Sm90Kind kKind, Sm90Mods kModsBuild, Layout L = Layout::Dense>
__global__ void __launch_bounds__(Sm90Shape<D, kCausal, kKind, kModsBuild, L>::kThreads, 1)
    sm90_fwd_kernel(const __grid_constant__ Sm90Params<T> p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900 && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  namespace tl = flashtile::tile;
  using Sh = Sm90Shape<D, kCausal, kKind, kModsBuild, L>;
  constexpr bool kMods = Sh::kMods;
  constexpr int M = Sh::kBlockM, N = Sh::kBlockN, S = Sh::kStages;
  extern __shared__ char smem_raw[];
  auto& sm = *reinterpret_cast<Sm90Smem<D, T, kCausal, kKind, kModsBuild, L>*>(
      (reinterpret_cast<std::uintptr_t>(smem_raw) + 1023) & ~std::uintptr_t{1023});

  const int wg = tl::warp_uniform(tl::warpgroup::index());
  const Sm90Scheduler<Sh, kCausal, Sm90Params<T>> sched{p};
  auto blocks_of = [&](const Sm90Tile& u) {
    if constexpr (kMods) return sm90_window_blocks<N>(p.mods, u.row0, u.row0 + M, p.seqlen_q, p.seqlen_k);
    else if constexpr (Sh::kVarlen) {
      const Sm90Seq q = sm90_seq<L>(p, u.batch);
      return Sm90Blocks{0, u.row0 < q.sq ? sm90_kv_blocks_to<N, kCausal>(u.row0 + M, q.sq, q.sk) : 0};
    } else return Sm90Blocks{0, sm90_kv_blocks_to<N, kCausal>(u.row0 + M, p.seqlen_q, p.seqlen_k)};
  };

  const int cluster = sm90_cluster<Sh>(p);
  sm.init(cluster);
  Sh::kCluster > 1 ? tl::cluster_sync() : __syncthreads();  // clustered: the peer's barriers too

  if (wg == 0) {  // ---------------------------------------------------------------------------------- producer
    tl::setmaxnreg_dec<Sh::kProducerRegs>();
    if (threadIdx.x == 0) sm90_produce(sm, p, sched, blocks_of);
    if constexpr (Sh::kOStage) if (threadIdx.x == 32 && p.o_tma) sm90_store_staged_o(sm, &p.o_map);
    return;
  }
  // ------------------------------------------------------------------------------------------------- consumers
  tl::setmaxnreg_inc<Sh::kConsumerRegs>();
  const int c = wg - 1, w = tl::warpgroup::warp_in_scope(), lane = tl::lane_id();
  const std::uint32_t peer = cluster > 1 ? tl::cluster_rank() ^ 1u : 0u;  // clustered: releases reach it too
  auto release = [&](tl::mbarrier& b) { tl::arrive(b); if (cluster > 1 && lane == 0) tl::arrive_remote(b, peer); };
  tl::rt_fl<16, N> s_acc;
  tl::rt_fl<16, D> o_acc;
  tl::rt_rowsum l_acc;  // kLazy 4: l from the P·V (tile::mma_AB_rowsum)
  tl::rt<T, 16, N> p_reg;
  tl::zero(o_acc);
  int j = 0;  // this CTA's tiles with keys so far (Q buffer and phase; kOStage: O buffer uses)
  int band = c * kSm90Rows;  // this consumer's rows of the tile's Q buffer (sm90_q_band)
  const Sm90Epilogue<Sh, T, Sm90Params<T>> epi{p, c, w, lane};
  // A lambda around Sm90Epilogue::store that holds j only where staged O uses it: without it the staged kernels' loop
  // counters came out in another order (and their SASS with them), with j always in it the others' did.
  auto epilogue = [&](int t, const Sm90Tile& tt, tl::rv_fl_rows<16> l, const tl::rv_fl_rows<16>& m_use, int qb) {
    if constexpr (Sh::kOStage) epi.store(sched, t, tt, sm, qb, j, o_acc, l, m_use);
    else epi.store(sched, t, tt, sm, qb, 0, o_acc, l, m_use);
  };
  // Tiles whose rows see no key (causal with Sq > Sk, windows) get O = 0 and LSE = -inf (or the sink) up front;
  // producer and loop skip them. Elsewhere neither scan runs: each would cost every tile its index divisions again.
  const bool keyless = kMods || Sh::kVarlen || (kCausal && p.seqlen_q > p.seqlen_k);
  if (keyless)
    for (int t = blockIdx.x; t < p.tiles; t += gridDim.x)
      if (const Sm90Tile u = sched.tile(t); blocks_of(u).n == 0) epilogue(t, u, {}, {}, -1);
  auto next = [&](int t) {  // this CTA's next tile with keys, from t on
    while (keyless && t < p.tiles && blocks_of(sched.tile(t)).n == 0) t += gridDim.x;
    return t;
  };
  // Waits stay outside the fence..commit windows: ptxas then needs no extra warpgroup syncs around the wgmmas. g: ring
  // position (K/V blocks counted over the CTA's tiles; unsigned: % S, / S an AND, a shift); j: its tiles with keys.
  auto wait_q = [&](int j) { tl::wait(sm.q_full[j % Sh::kQBufs], (j / Sh::kQBufs) & 1); };
  auto wait_k = [&](unsigned g) { tl::wait(sm.k_full[g % S], (g / S) & 1); };
  auto wait_v = [&](unsigned g) { tl::wait(sm.v_full[g % S], (g / S) & 1); };
  auto qk = [&](unsigned g, int q) {  // issue S = Q·K(g)ᵀ
    tl::mma_ABt(s_acc, sm.q[q], Sh::kShiftRows ? band : c * kSm90Rows, sm.k[g % S], false);
    tl::commit();
  };
  unsigned kv = 0;  // ring position of this tile's first block
  int t = Sh::kDynamic ? sched.take(sm, 0) : next(blockIdx.x);
  for (; t < p.tiles; ++j) {
    // kMods: the next tile found after this one (its scan's registers free then; the plain kernels' code stays).
    const int tn = Sh::kDynamic || kMods ? 0 : next(t + gridDim.x);
    const Sm90Tile tt = sched.tile(t);
    const Sm90Blocks range = blocks_of(tt);
    const int n_all = range.n, qb = j % Sh::kQBufs;
    if constexpr (Sh::kShiftRows) band = sm90_q_band<Sh::kConsumers>(tt.row0, c);
    // The tile's sequence where each use needs it (sm90_seq: dense, the launch's lengths): one held across the loop's
    // waits stays in a register where the plain kernels read the parameter again.
    auto seq = [&] { return sm90_seq<L>(p, tt.batch); };
    Sm90Softmax<N, kCausal, Sh::kLazy, kModsBuild> sfx{seq().sk, tt.row0 + c * kSm90Rows + w * 16 + seq().sk - seq().sq, p.scale_log2};
    // What the softmax's masks take: the tile's variants (kMods), or nothing (a member of the softmax changed the
    // plain kernels' code).
    const auto mp = sm90_row_mods<kModsBuild>(p.mods, tt.batch, tt.head);
    wait_q(j);
    const int skip = sm90_skip_blocks<N, S, kCausal>(kv, sm, tt.row0, c, seq().sq, seq().sk, n_all);
    const int n_blocks = n_all - skip;  // kOwnBlocks: the first blocks (visit order) its rows do not need, skipped
    const int key_base = range.key0;  // the lowest block's first key (key0 of block it: + (n_blocks - 1 - it) * N)
    auto key_of = [&](int it) {  // the first key of the block at visit position it (sm90_block_key's order)
      return Sh::kAlibiOrder ? sm90_block_key<N>(range, it) : (n_blocks - 1 - it) * N + key_base;
    };
    kv += skip;
    // Pingpong: turns at issuing wgmmas (Sm90Bar's turns); consumer 1 lets 0 go first, skips its last hand-back.
    constexpr int kPair = 2 * kSm90WgThreads;
    auto turn_begin = [&] { if (Sh::kPingpong) tl::named_sync(kSm90BarTurn0 + c, kPair); };
    auto turn_end = [&](bool last) { if (Sh::kPingpong && !(last && c == 1)) tl::named_arrive(kSm90BarTurn1 - c, kPair); };
    if (Sh::kPingpong && c == 1) tl::named_arrive(kSm90BarTurn0, kPair);
    auto pv = [&](unsigned g) {  // issue O += P·V(g); the tile's first block overwrites O (no zeroing between tiles)
      sm90_pv(sm, g % S, o_acc, l_acc, p_reg, g != kv);
      tl::commit();
    };
    // S(it) has landed in registers: release K(it), and Q after the tile's last Q·Kᵀ (the next Q may load).
    auto qk_done = [&](int it) {
      tl::fence_operand(s_acc);
      release(sm.k_empty[(kv + it) % S]);
      if (!Sh::kOTma && it == n_blocks - 1) tl::arrive(sm.q_empty[qb]);
    };
    auto pv_done = [&](int it) {  // P(it)·V(it) has landed: O readable, P's registers free
      tl::fence_operand(o_acc, p_reg);
      if constexpr (Sh::kLazy == 4) tl::fence_operand(l_acc);
      release(sm.v_empty[(kv + it) % S]);
    };

    // S(it) and P(it-1)·V(it-1) in flight together; softmax(it) overlaps the P·V.
    // kNarrow: the first block as narrow as this consumer needs it, where that is less than N: each width a path of
    // its own, with its own S tile (tile/wgmma.cuh's with_width: else ptxas serializes the kernel's wgmmas).
    constexpr int kStep = Sh::kNarrow > 0 ? Sh::kNarrow : 16;
    const int cols =
        Sh::kNarrow > 0 ? sm90_first_cols<N, kCausal>(tt.row0 + c * kSm90Rows, (n_blocks - 1) * N + key_base, seq().sq, seq().sk) : N;
    if (Sh::kNarrow > 0 && cols <= N - kStep) {
      tl::with_width<N - kStep, kStep>(cols, [&](auto w) {
        tl::rt_fl<16, w()> s;
        wait_k(kv);
        turn_begin();
        tl::fence();
        tl::mma_ABt_w<w()>(s, sm.q[qb], Sh::kShiftRows ? band : c * kSm90Rows, sm.k[kv % S], false);
        tl::commit();
        turn_end(false);
        tl::wait<0>();
        tl::fence_operand(s);
        qk_done(0);
        sfx.step(s, key_of(0), mp);
        tl::copy_zero_pad(p_reg, s);
      });
    } else {
      wait_k(kv);
      turn_begin();
      tl::fence();
      qk(kv, qb);
      turn_end(false);
      tl::wait<0>();
      qk_done(0);
      sfx.step(s_acc, key_of(0), mp);
      tl::copy(p_reg, s_acc);
    }
    for (int it = 1; it < n_blocks; ++it) {
      wait_k(kv + it);
      wait_v(kv + it - 1);
      turn_begin();
      tl::fence();
      qk(kv + it, qb);
      pv(kv + it - 1);
      turn_end(false);
      tl::wait<1>();
      qk_done(it);
      sfx.step(s_acc, key_of(it), mp);
      tl::wait<0>();
      pv_done(it - 1);
      sfx.retry(s_acc, [&](auto& s, int k0) { sm90_redo_s<D, L>(s, p, sched.tile(t), c, w, k0); }, mp);
      sfx.rescale_o(o_acc, l_acc);
      tl::copy(p_reg, s_acc);
    }
    wait_v(kv + n_blocks - 1);
    turn_begin();
    tl::fence();
    pv(kv + n_blocks - 1);
    turn_end(true);
    tl::wait<0>();
    pv_done(n_blocks - 1);
    kv += n_blocks;
    epilogue(t, tt, sfx.row_l(l_acc), sfx.m_use, qb);
    if constexpr (Sh::kOTma) tl::arrive(sm.q_empty[qb]);  // after the store read Q's buffer
    t = Sh::kDynamic ? sched.take(sm, j + 1) : kMods ? next(t + gridDim.x) : tn;  // after the epilogue: with kOTma its q_empty arrival lets Q(j + 1) load
  }
  if constexpr (Sh::kOStage) epi.stop(sm, j, o_acc);
  // Stay until the peer's last releases reached this CTA (exited producer threads count as arrived).
  if constexpr (Sh::kCluster > 1) tl::cluster_sync();
#endif
}

}  // namespace flashtile::cuda
