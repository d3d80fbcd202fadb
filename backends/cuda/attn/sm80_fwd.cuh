// sm80 forward kernel family: FlashAttention-2 style, one CTA per (query tile, query head, batch), 4 warps of
// Traits::kRows query rows each (kSm80FwdShapes: 32 where every K and V fragment read from shared memory should feed
// two 16-row mma tiles). K/V tiles stream through cp.async double buffering in XOR-swizzled shared memory;
// S = Q·Kᵀ and O += P·V run on mma.sync m16n8k16 (f16/bf16 in, f32 accumulate); the softmax is online, in exp2 with
// the scale folded in (scale_log2). Runs on sm_80 .. sm_90. Included only by the instantiation files.
// Layout L (fwd_params.hpp) picks how a CTA finds its sequence: dense as before; varlen rows from cu_seqlens; paged
// K/V rows through the block table (sm80_layout.cuh). Lengths, masks and causal alignment are per sequence.
// Mods (the variant instantiation, sm80_mods.cuh): window, softcap, ALiBi and sinks by cheap runtime checks of the
// params, causality folded into the window (Causal is false there); the key loop covers only the tiles the rows'
// windows touch. Plain calls run Mods = false, whose loop holds none of it.
#pragma once

#include "attn/fwd_params.hpp"
#include "attn/sm80_layout.cuh"
#include "attn/sm80_mods.cuh"
#include "attn/sm80_traits.hpp"
#include "tile/ops.cuh"
#include "tile/sm80/ops_any.cuh"

#include <cuda_runtime.h>

#include <cstdint>
#include <limits>

namespace flashtile::cuda::sm80 {

template <ElemType E>
struct Elem {
  using type = tile::bf16;
};
template <>
struct Elem<ElemType::F16> {
  using type = tile::half;
};

// The kernel's whole input: the backend's params plus what the launch layer derived from them.
struct KernelArgs {
  FwdParams p;
  bool aligned16;  // sm80::aligned16(p): the cp.async / 32-bit-store path
};

// Shared memory of one CTA: the Q tile and kStages K and V tiles, in the framework's swizzled layout.
template <int D, class T, bool Causal = false>
struct Smem {
  using Tr = Traits<D, Causal>;
  tile::st<T, Tr::kBlockM, D> q;
  tile::st<T, Tr::kBlockN, D> k[Tr::kStages];
  tile::st<T, Tr::kBlockN, D> v[Tr::kStages];
};
static_assert(sizeof(Smem<128, tile::bf16>) == Traits<128>::kSmemBytes && sizeof(Smem<256, tile::half>) ==
              Traits<256>::kSmemBytes && sizeof(Smem<64, tile::bf16>) == Traits<64>::kSmemBytes &&
              sizeof(Smem<64, tile::bf16, true>) == Traits<64, true>::kSmemBytes,
              "Traits::kSmemBytes must match the shared tiles");

template <int D, ElemType E, bool Causal, Layout L, bool Mods>
__global__ void __launch_bounds__(Traits<D, Causal>::kThreads) fwd_kernel(const __grid_constant__ KernelArgs args) {
  using namespace tile;
  using Tr = Traits<D, Causal>;
  using T = typename Elem<E>::type;
  constexpr int kM = Tr::kBlockM, kN = Tr::kBlockN, kT = Tr::kThreads, kR = Tr::kRows, kRT = kR / 16;
  const FwdParams& p = args.p;
  const bool al = args.aligned16;

  extern __shared__ __align__(1024) unsigned char smem_raw[];
  Smem<D, T, Causal>& sm = *reinterpret_cast<Smem<D, T, Causal>*>(smem_raw);

  const int tid = threadIdx.x, w = warp::index();
  // Causal: launch the longest (last) query tiles first so the tail of the grid is short.
  const int m_tile = Causal ? int(gridDim.x) - 1 - int(blockIdx.x) : int(blockIdx.x);
  const int h = blockIdx.y, b = blockIdx.z;
  const int hk = h / (p.heads_q / p.heads_kv);  // GQA/MQA: a group of query heads shares one kv head
  const SeqSpan seq = seq_span<L>(p, b);
  const std::int64_t Sq = seq.sq, Sk = seq.sk;
  const std::int64_t q0 = std::int64_t(m_tile) * kM;
  const std::int64_t diag = Sk - Sq;  // bottom-right causal: row i sees keys j <= i + diag
  if constexpr (L == Layout::Varlen) {
    if (q0 >= Sq) return;  // the grid covers the longest sequence; whole CTA, before any barrier
  }

  // Varlen tensors are one packed batch ([1, total, H, D]); a paged cache's pages are not per batch.
  const int bq = L == Layout::Varlen ? 0 : b, bk = L == Layout::Dense ? b : 0;
  const T* gq = static_cast<const T*>(p.q) + bq * p.q_sb + h * p.q_sh + (seq.q_off + q0) * p.q_ss;
  const T* gk = static_cast<const T*>(p.k) + bk * p.k_sb + hk * p.k_sh + seq.k_off * p.k_ss;
  const T* gv = static_cast<const T*>(p.v) + bk * p.v_sb + hk * p.v_sh + seq.k_off * p.v_ss;
  T* go = static_cast<T*>(p.o) + bq * p.o_sb + h * p.o_sh + seq.q_off * p.o_ss;
  const std::int32_t* bt = L == Layout::Paged ? p.block_table + b * p.block_table_sb : nullptr;

  // Keys this tile needs: all, (causal) up to the diagonal of its last valid row, or (Mods) the tiles its rows'
  // windows touch. Fully masked K tiles are never loaded.
  std::int64_t key_end = Sk;
  if constexpr (Causal) key_end = imin(Sk, imin(q0 + kM, Sq) + diag);
  TileRange tiles{0, key_end > 0 ? int((key_end + kN - 1) / kN) : 0};
  [[maybe_unused]] const ModState md = Mods ? make_mods(p, b, h) : ModState{};
  if constexpr (Mods) tiles = row_tiles<kN>(md.win, q0, imin(q0 + kM, Sq), diag, Sk);
  const int t_begin = tiles.begin, t_end = tiles.end;

  auto load_kv = [&](int j) {
    const std::int64_t n0 = std::int64_t(j) * kN;
    const int valid = int(imin(Sk - n0, kN));
    if constexpr (L == Layout::Paged) {
      load_kv_paged(sm.k[j % Tr::kStages], sm.v[j % Tr::kStages], gk, gv, p, bt, n0, valid, tid, kT, al);
    } else {
      tile::sm80::load_rows<kT>(sm.k[j % Tr::kStages], gk + n0 * p.k_ss, p.k_ss, valid, tid, al);
      tile::sm80::load_rows<kT>(sm.v[j % Tr::kStages], gv + n0 * p.v_ss, p.v_ss, valid, tid, al);
    }
  };

  tile::sm80::load_rows<kT>(sm.q, gq, p.q_ss, int(imin(Sq - q0, kM)), tid, al);
  if (t_begin < t_end) load_kv(t_begin);
  cp_async_commit();
  cp_async_wait<0>();
  __syncthreads();

  // Plain calls keep scores raw: row maxima on them, the scale folded into the exp2's FFMA (exp2_fma_row). Exact for
  // a positive scale; a negative one runs on -Q with -scale (the same products, the max of the flipped scores; Q
  // flipped once in shared memory), a zero one on the least normal scale, whose products leave exp2 exactly 1 and
  // masked -inf scores -inf.
  const bool neg_q = !Mods && p.scale_log2 < 0.f;
  const float scale2 = p.scale_log2 > 0.f ? p.scale_log2 : neg_q ? -p.scale_log2 : std::numeric_limits<float>::min();
  if (neg_q) {  // uniform across the CTA
    tile::sm80::neg<kT>(sm.q, tid);
    __syncthreads();
  }

  // This warp's kR query rows as A operands, one kR x 16 register tile per 16 head-dim columns, where the shape keeps
  // them in registers (else re-read from shared memory each K tile: the register budget).
  rt<T, kR, 16> qr[Tr::kQInRegs ? D / 16 : 1];
  if constexpr (Tr::kQInRegs) {
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) load(qr[kk], sm.q, w * kR, kk * 16);
  }

  rt_fl<kR, 16> o[D / 16];  // output accumulator, kR rows x D, in 16-column pieces
#pragma unroll
  for (int i = 0; i < D / 16; ++i) zero(o[i]);
  rv_fl_rows<kR> m, l;  // running row max of scaled scores (log2 units); this lane's share of the row sum
  fill(m, kNegInf);
  fill(l, 0.f);
  const std::int64_t row0 = q0 + w * kR;  // first query row of this warp

  for (int j = t_begin; j < t_end; ++j) {
    if (j > t_begin) {
      cp_async_wait<0>();  // tile j landed ...
      __syncthreads();     // ... and every warp finished tile j-1, whose stage the next prefetch overwrites
    }
    if (j + 1 < t_end) {
      load_kv(j + 1);
      cp_async_commit();
    }
    const auto& sk = sm.k[j % Tr::kStages];
    const auto& sv = sm.v[j % Tr::kStages];
    const std::int64_t n0 = std::int64_t(j) * kN;
    // Causal: a tile wholly past this warp's last row's diagonal adds nothing to its rows (the CTA's other warps may
    // need it; the barriers above are every thread's).
    if constexpr (Causal) {
      if (n0 > row0 + kR - 1 + diag) continue;
    }

    // ---- S = Q·Kᵀ (kR x kN per warp), K read 16 head-dim columns at a time, each fragment used by every row tile
    rt_fl<kR, kN> s;
    zero(s);
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      rt<T, kN, 16> kt;
      load_b(kt, sk, 0, kk * 16);
      if constexpr (Tr::kQInRegs) {
        mma_ABt(s, qr[kk], kt, s);
      } else {
        rt<T, kR, 16> qt;
        load(qt, sm.q, w * kR, kk * 16);
        mma_ABt(s, qt, kt, s);
      }
    }

    // ---- Mods: scores into the exp2 domain; mask only tiles that cross Sk, the diagonal or the window ----
    bool need_mask = n0 + kN > Sk;
    if constexpr (Mods) {
      need_mask = need_mask || crosses_window<kM, kN>(md.win, n0, q0, diag);
      mod_scores(s, md, int(n0 - row0 - diag), int(imin(Sk - n0, kN)), need_mask);
    }
    if constexpr (Causal) need_mask = need_mask || n0 + kN - 1 > row0 + diag;  // this warp's first row's diagonal
    if (!Mods && need_mask) {
      map(s, [=](int r, int c, float x) {
        const std::int64_t key = n0 + c;
        bool visible = key < Sk;
        if constexpr (Causal) visible = visible && key <= row0 + r + diag;
        return visible ? x : kNegInf;
      });
    }

    // ---- online softmax (m in the exp2 domain; plain calls' scores raw until the exp2) ----
    rv_fl_rows<kR> m_new, m_use, alpha;
    if constexpr (Mods) {
      row_max(m_new, s, m);
    } else {
      row_max(m_new, s);
      vec_apply(m_new, m, m_new, [=](float a, float b) { return fmaxf(a, b * scale2); });
    }
    // a row with no visible key yet keeps base 0: avoids (-inf) - (-inf)
    vec_apply(m_use, m_new, m_new, [](float a, float) { return a == kNegInf ? 0.f : a; });
    sub(alpha, m, m_use);
    exp2(alpha, alpha);  // exp2(-inf) = 0 rescales an empty history to 0
    m = m_new;
    if constexpr (Mods) exp2_sub_row(s, s, m_use);
    else exp2_fma_row(s, s, scale2, m_use);
    mul(l, l, alpha);
    row_sum_partial(l, s, l);
#pragma unroll
    for (int i = 0; i < D / 16; ++i) mul_row(o[i], o[i], alpha);

    // ---- O += P·V: the S accumulator, converted, is P's A operand; V read as K x 16 col tiles, each fragment used by
    // every row tile ----
    rt<T, kR, kN> pt;
    copy(pt, s);
#pragma unroll
    for (int i = 0; i < D / 16; ++i) {
      rt<T, kN, 16, layout::col> vt;
      load(vt, sv, 0, i * 16);
      mma_AB(o[i], pt, vt, o[i]);
    }
  }

  // ---- epilogue: normalize, store rows < Sq, LSE (natural log); rows that saw no key give 0 and -inf ----
  rv_fl_rows<kR> inv;
#pragma unroll
  for (int i = 0; i < kRT; ++i)
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      float& li = l.v[i][hh];
      li = quad_sum(li);
      float f = 1.f;
      if constexpr (Mods) {
        if (md.sink2 != kNegInf) f = fold_sink(m.v[i][hh], li, md.sink2);
      }
      inv.v[i][hh] = li == 0.f ? 0.f : f / li;  // == 0, not > 0: NaN in l stays NaN
    }
  const int valid_rows = int(imax(0, imin(Sq - row0, kR)));
#pragma unroll
  for (int i = 0; i < D / 16; ++i) {
    mul_row(o[i], o[i], inv);
    tile::sm80::store_rows(go + row0 * p.o_ss + i * 16, p.o_ss, o[i], valid_rows, al);
  }
  if (p.lse != nullptr && (lane_id() & 3) == 0) {
#pragma unroll
    for (int i = 0; i < kRT; ++i)
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const int r = 16 * i + (lane_id() >> 2) + hh * 8;
        // Varlen: [Hq, total_q].
        const std::int64_t at = L == Layout::Varlen ? std::int64_t(h) * p.total_q + seq.q_off + row0 + r
                                                    : (std::int64_t(b) * p.heads_q + h) * Sq + row0 + r;
        if (r < valid_rows) p.lse[at] = l.v[i][hh] == 0.f ? kNegInf : (m.v[i][hh] + __log2f(l.v[i][hh])) * kLn2;
      }
  }
}

// ---- host side of one instantiation (explicitly instantiated in sm80_fwd_d*.cu, sm80_serve_d*.cu) ----------------
template <int D, ElemType E, bool Causal, Layout L, bool Mods>
cudaError_t launch(const FwdParams& p) {
  using Tr = Traits<D, Causal>;
  constexpr int kSmem = int(Tr::kSmemBytes);
  auto* kernel = fwd_kernel<D, E, Causal, L, Mods>;
  if (cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem); e != cudaSuccess)
    return e;
  const dim3 grid(unsigned((p.seqlen_q + Tr::kBlockM - 1) / Tr::kBlockM), unsigned(p.heads_q), unsigned(p.batch));
  if (grid.x == 0) return cudaSuccess;  // varlen with no query rows at all
  kernel<<<grid, Tr::kThreads, kSmem, static_cast<cudaStream_t>(p.stream)>>>(KernelArgs{p, aligned16(p)});
  return cudaGetLastError();
}

// Whether this build holds a binary the current device can load (cudaErrorInvalidDeviceFunction / NoKernelImage
// otherwise).
template <int D, ElemType E, bool Causal, Layout L, bool Mods>
cudaError_t probe() {
  cudaFuncAttributes attr{};
  return cudaFuncGetAttributes(&attr, fwd_kernel<D, E, Causal, L, Mods>);
}

#define FLASHTILE_SM80_INSTANTIATE(D, E, C, L, M)                                \
  template cudaError_t launch<D, ElemType::E, C, Layout::L, M>(const FwdParams&); \
  template cudaError_t probe<D, ElemType::E, C, Layout::L, M>();

}  // namespace flashtile::cuda::sm80
