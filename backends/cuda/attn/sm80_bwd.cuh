// sm80 backward kernel family: FlashAttention-2 style, on mma.sync m16n8k16 (f16/bf16 in, f32 accumulate), cp.async
// and ldmatrix, for sm_80 .. sm_90. Included only by the instantiation files.
//
// bwd_kernel: one CTA per (key block, kv head, batch). It keeps the block's K and V in shared memory and loops over
// the query heads of its GQA group and, per head, the query blocks that can see the block (causal: from the first row
// whose diagonal reaches it). Each step recomputes Sᵀ = K·Qᵀ and Pᵀ = exp2(Sᵀ·scale·log2e − lse2) from the forward's
// lse, dPᵀ = V·dOᵀ, dSᵀ = Pᵀ ∘ (dPᵀ − Δ), and accumulates dV += Pᵀ·dO and dK += dSᵀ·Q in f32 registers, so dK and
// dV need no atomics and come out the same every run. Working transposed (keys as the mma's rows) puts a warp's keys
// on the rows of its accumulators. dQ += dS·K goes to the f32 accumulator by atomics unless the call is deterministic.
// bwd_dq_kernel (deterministic only): one CTA per (64 query rows, query head, batch) loops over the key blocks,
// recomputing S and dP, and writes its dQ rows plainly: no float atomics, a fixed summation order.
// Mods (the variant instantiation; window, softcap, ALiBi, causality folded into the window): both kernels visit only
// the blocks the windows touch and compute P and dS in one pass from the raw S and dP (sm80_mods.cuh's mod_p_ds), so
// softcap's tanh' is at hand when dS is formed.
#pragma once

#include "attn/bwd_params.hpp"
#include "attn/sm80_fwd.cuh"  // Elem, imin, imax
#include "attn/sm80_mods.cuh"
#include "attn/sm80_traits.hpp"
#include "tile/ops.cuh"
#include "tile/sm80/ops_any.cuh"

#include <cuda_runtime.h>

#include <cstdint>

namespace flashtile::cuda::sm80 {

struct BwdArgs {
  BwdParams p;
  BwdScratch s;
  bool aligned16;  // sm80::aligned16(p): the cp.async / 32-bit-store path
};

template <int D, class T>
struct BwdSmem {
  using Tr = BwdTraits<D>;
  tile::st<T, Tr::kBlockM, D> q[Tr::kQStages];
  tile::st<T, Tr::kBlockM, D> dout;
  tile::st<T, Tr::kBlockN, D> k, v;
  tile::st<T, Tr::kBlockN, Tr::kDsCols> ds[Tr::kDsTiles];  // [0] dSᵀ, [1] Pᵀ (split warps): keys x queries
  float lse2[Tr::kQStages][Tr::kBlockM];
  float delta[Tr::kBlockM];
};
static_assert(sizeof(BwdSmem<64, tile::bf16>) == BwdTraits<64>::kSmemBytes &&
              sizeof(BwdSmem<128, tile::half>) == BwdTraits<128>::kSmemBytes &&
              sizeof(BwdSmem<256, tile::bf16>) == BwdTraits<256>::kSmemBytes,
              "BwdTraits::kSmemBytes must match the shared tiles");

template <int D, class T>
struct DqSmem {
  using Tr = BwdTraits<D>;
  tile::st<T, Tr::kDqBlockM, D> q, dout;
  tile::st<T, Tr::kDqBlockN, D> k[Tr::kDqStages], v[Tr::kDqStages];
};
static_assert(sizeof(DqSmem<128, tile::bf16>) == BwdTraits<128>::kDqSmemBytes &&
              sizeof(DqSmem<64, tile::bf16>) == BwdTraits<64>::kDqSmemBytes &&
              sizeof(DqSmem<256, tile::half>) == BwdTraits<256>::kDqSmemBytes,
              "BwdTraits::kDqSmemBytes must match the shared tiles");

// d = A·Bᵀ over the head dim, A = 16 rows of sa from ra, B = W rows of sb from rb (both read as row tiles).
template <int W, class T, int RA, int RB, int D>
__device__ __forceinline__ void mma_rows(tile::rt_fl<16, W>& d, const tile::st<T, RA, D>& sa, int ra,
                                         const tile::st<T, RB, D>& sb, int rb) {
  tile::zero(d);
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) {
    tile::rt<T, 16, 16> a;
    tile::rt<T, W, 16> b;
    tile::load(a, sa, ra, kk * 16);
    tile::load(b, sb, rb, kk * 16);
    tile::mma_ABt(d, a, b, d);
  }
}
// The same with A's fragments already in registers.
template <int W, class T, int RB, int D>
__device__ __forceinline__ void mma_rows(tile::rt_fl<16, W>& d, const tile::rt<T, 16, 16> (&a)[D / 16],
                                         const tile::st<T, RB, D>& sb, int rb) {
  tile::zero(d);
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) {
    tile::rt<T, W, 16> b;
    tile::load(b, sb, rb, kk * 16);
    tile::mma_ABt(d, a[kk], b, d);
  }
}

// acc[i] += a · s[all rows][c0 + 16i ..]: one 16-column piece of B at a time (dV, dK, dQ).
template <int N, class T, int K, int SR, int SC>
__device__ __forceinline__ void mma_cols(tile::rt_fl<16, 16> (&acc)[N], const tile::rt<T, 16, K>& a,
                                         const tile::st<T, SR, SC>& s, int c0) {
  static_assert(K == SR, "a's columns run over all of s's rows");
#pragma unroll
  for (int i = 0; i < N; ++i) {
    tile::rt<T, K, 16, tile::layout::col> b;
    tile::load(b, s, 0, c0 + 16 * i);
    tile::mma_AB(acc[i], a, b, acc[i]);
  }
}

// Zeroes P where the key is not visible from the query: past Sk, past Sq (zero-filled rows), causal above the diagonal.
// kKeyRows: the tile's rows are keys (Pᵀ in bwd_kernel), else queries (P in bwd_dq_kernel).
template <bool kKeyRows, bool Causal, int W>
__device__ __forceinline__ void mask_p(tile::rt_fl<16, W>& p, std::int64_t row0, std::int64_t col0, std::int64_t Sq,
                                       std::int64_t Sk) {
  tile::map(p, [=](int r, int c, float x) {
    const std::int64_t key = kKeyRows ? row0 + r : col0 + c, q = kKeyRows ? col0 + c : row0 + r;
    bool visible = key < Sk && q < Sq;
    if constexpr (Causal) visible = visible && key <= q + Sk - Sq;
    return visible ? x : 0.f;  // a select, not a product: x may be inf where the key is masked
  });
}

template <int D, ElemType E, bool Causal, bool Mods>
__global__ void __launch_bounds__(BwdTraits<D>::kThreads) bwd_kernel(const __grid_constant__ BwdArgs args) {
  using namespace tile;
  using namespace tile::sm80;
  using Tr = BwdTraits<D>;
  using T = typename Elem<E>::type;
  constexpr int kM = Tr::kBlockM, kN = Tr::kBlockN, kT = Tr::kThreads;
  constexpr int kSM = kM / Tr::kSplit, kKD = D / Tr::kSplit, kQD = D / Tr::kDqSplit;  // per-warp shares
  const BwdParams& p = args.p;
  const FwdParams& f = p.f;
  const BwdScratch& sc = args.s;
  const bool al = args.aligned16, atomics = !p.deterministic;

  extern __shared__ __align__(1024) unsigned char smem_raw[];
  BwdSmem<D, T>& sm = *reinterpret_cast<BwdSmem<D, T>*>(smem_raw);

  const int tid = threadIdx.x, w = warp::index();
  const int kg = w % Tr::kKeyGroups, part = w / Tr::kKeyGroups;  // this warp's 16 keys; its share of rows / columns
  const int hk = blockIdx.y, b = blockIdx.z, group = f.heads_q / f.heads_kv;
  const std::int64_t Sq = f.seqlen_q, Sk = f.seqlen_k, diag = Sk - Sq;
  const std::int64_t n0 = std::int64_t(blockIdx.x) * kN, kw0 = n0 + 16 * kg;  // block's and warp's first key
  // Query blocks that see this key block: causal rows i < n0 - diag see none of it; (Mods) rows whose windows reach it.
  const int n_m = int((Sq + kM - 1) / kM);
  int m_first = Causal ? (n0 - diag >= Sq ? n_m : int(imax(n0 - diag, 0) / kM)) : 0, m_end = n_m;
  [[maybe_unused]] ModState md;
  if constexpr (Mods) {
    md = make_mods(f, b, hk * group);
    const std::int64_t i_lo = imax(0, n0 - diag - md.win.right), i_hi = imin(Sq - 1, n0 + kN - 1 - diag + md.win.left);
    m_first = i_hi < i_lo ? 0 : int(i_lo / kM);
    m_end = i_hi < i_lo ? 0 : int(i_hi / kM) + 1;
  }
  const int n_mb = m_end - m_first, n_it = group * n_mb;  // steps: (query head of the group, query block)
  auto head = [&](int it) { return hk * group + it / n_mb; };
  auto row0 = [&](int it) { return std::int64_t(m_first + it % n_mb) * kM; };
  auto vec_at = [&](int it) { return (std::int64_t(b) * f.heads_q + head(it)) * sc.sq_pad + row0(it); };

  const T* gq = static_cast<const T*>(f.q) + b * f.q_sb;
  const T* gdo = static_cast<const T*>(p.dout) + b * p.do_sb;
  auto load_q = [&](int it) {
    const std::int64_t m0 = row0(it);
    const int valid = int(imin(Sq - m0, kM));
    load_rows<kT>(sm.q[it % Tr::kQStages], gq + head(it) * f.q_sh + m0 * f.q_ss, f.q_ss, valid, tid, al);
    load_vec<kT>(sm.lse2[it % Tr::kQStages], sc.lse2 + vec_at(it), valid, tid);
  };
  auto load_do = [&](int it) {
    const std::int64_t m0 = row0(it);
    const int valid = int(imin(Sq - m0, kM));
    load_rows<kT>(sm.dout, gdo + head(it) * p.do_sh + m0 * p.do_ss, p.do_ss, valid, tid, al);
    load_vec<kT>(sm.delta, sc.delta + vec_at(it), valid, tid);
  };
  auto load_next = [&](int it) {  // what is single-buffered, once every warp is done with step it - 1's
    load_do(it);
    if constexpr (Tr::kQStages == 1) load_q(it);
    cp_async_commit();
  };

  if (n_it > 0) {  // a block no query row sees loads nothing and writes zeros
    const int valid_keys = int(imin(Sk - n0, kN));
    load_rows<kT>(sm.k, static_cast<const T*>(f.k) + b * f.k_sb + hk * f.k_sh + n0 * f.k_ss, f.k_ss, valid_keys, tid,
                  al);
    load_rows<kT>(sm.v, static_cast<const T*>(f.v) + b * f.v_sb + hk * f.v_sh + n0 * f.v_ss, f.v_ss, valid_keys, tid,
                  al);
    load_q(0);
    load_do(0);
    cp_async_commit();
  }

  rt_fl<16, 16> dk[kKD / 16], dv[kKD / 16];  // this warp's 16 keys x kKD head-dim columns (from part * kKD)
#pragma unroll
  for (int i = 0; i < kKD / 16; ++i) zero(dk[i]), zero(dv[i]);

  for (int it = 0; it < n_it; ++it) {
    cp_async_wait<0>();  // step it's tiles landed ...
    __syncthreads();     // ... and every warp is done with step it - 1 (its Q stage, dSᵀ, Pᵀ)
    if (Tr::kQStages == 2 && it + 1 < n_it) {
      load_q(it + 1);
      cp_async_commit();
    }
    const auto& sq = sm.q[it % Tr::kQStages];
    const std::int64_t m0 = row0(it), q0 = m0 + part * kSM;  // block's and warp's first query row

    // ---- Pᵀ: this warp's 16 keys x kSM queries ----
    rt_fl<16, kSM> s, dp;
    mma_rows(s, sm.k, 16 * kg, sq, part * kSM);
    rv_fl_cols<kSM> vec;
    load(vec, &sm.lse2[it % Tr::kQStages][part * kSM]);
    rt<T, 16, kSM> p16, ds16;
    if constexpr (Mods) {  // ---- Pᵀ and dSᵀ = Pᵀ ∘ (V·dOᵀ − Δ) · tanh', one pass over the raw Sᵀ and dPᵀ ----
      mma_rows(dp, sm.v, 16 * kg, sm.dout, part * kSM);
      rv_fl_cols<kSM> dvec;
      load(dvec, &sm.delta[part * kSM]);
      md.slope2 = alibi_slope2(f, b, head(it));
      mod_p_ds<true>(s, dp, vec, dvec, md, int(kw0 - q0 - diag), int(imin(Sk - kw0, 16)), int(imin(Sq - q0, kSM)));
      copy(p16, s);
      if constexpr (Tr::kOwn) mma_cols(dv, p16, sm.dout, 0);
    } else {
      exp2_fma_col(s, s, f.scale_log2, vec);
      bool need_mask = n0 + kN > Sk || m0 + kM > Sq;
      if constexpr (Causal) need_mask = need_mask || n0 + kN - 1 > m0 + diag;
      if (need_mask) mask_p<true, Causal>(s, kw0, q0, Sq, Sk);
      copy(p16, s);
      if constexpr (Tr::kOwn) mma_cols(dv, p16, sm.dout, 0);

      // ---- dSᵀ = Pᵀ ∘ (V·dOᵀ − Δ) ----
      mma_rows(dp, sm.v, 16 * kg, sm.dout, part * kSM);
      load(vec, &sm.delta[part * kSM]);
      sub_col(dp, dp, vec);
      mul(dp, dp, s);
    }
    copy(ds16, dp);
    if constexpr (Tr::kOwn) {
      mma_cols(dk, ds16, sq, 0);
    } else {
      store(sm.ds[1], p16, 16 * kg, part * kSM);
    }
    if (!Tr::kOwn || atomics) store(sm.ds[0], ds16, 16 * kg, part * kSM);
    __syncthreads();  // dSᵀ (and Pᵀ) complete; own warps are done with dO
    if (Tr::kOwn && it + 1 < n_it) load_next(it + 1);

    if constexpr (!Tr::kOwn) {  // dV += Pᵀ·dO, dK += dSᵀ·Q over every query row of the block
      rt<T, 16, kM> a;
      load(a, sm.ds[1], 16 * kg, 0);
      mma_cols(dv, a, sm.dout, part * kKD);
      load(a, sm.ds[0], 16 * kg, 0);
      mma_cols(dk, a, sq, part * kKD);
    }

    // ---- dQ += dS·K: warps over 16-row groups x kQD columns, f32 atomics ----
    if (atomics) {
      const int rg = w % Tr::kRowGroups, c0 = (w / Tr::kRowGroups) * kQD;
      rt<T, kN, 16, layout::col> dst;
      rt<T, 16, kN> a;
      load(dst, sm.ds[0], 0, 16 * rg);
      transpose(a, dst);
      float* acc = sc.dq_acc + (vec_at(it) + 16 * rg) * D + c0;
      const int valid_rows = int(imin(Sq - m0 - 16 * rg, 16));
#pragma unroll
      for (int i = 0; i < kQD / 16; ++i) {
        rt_fl<16, 16> dq[1];
        zero(dq[0]);
        mma_cols(dq, a, sm.k, c0 + 16 * i);
        atomic_add(acc + 16 * i, D, dq[0], valid_rows);
      }
    }
    if (!Tr::kOwn && it + 1 < n_it) {
      __syncthreads();  // every warp is done with dO (and a single Q stage)
      load_next(it + 1);
    }
  }

  // ---- epilogue: dK = scale · dSᵀ·Q, dV; keys >= Sk are not written. Blocks no query sees write zeros. ----
  const int wkeys = int(imax(0, imin(Sk - kw0, 16)));
  T* gdk = static_cast<T*>(p.dk) + b * p.dk_sb + hk * p.dk_sh + kw0 * p.dk_ss + part * kKD;
  T* gdv = static_cast<T*>(p.dv) + b * p.dv_sb + hk * p.dv_sh + kw0 * p.dv_ss + part * kKD;
#pragma unroll
  for (int i = 0; i < kKD / 16; ++i) {
    mul(dk[i], dk[i], f.scale);
    store_rows(gdk + 16 * i, p.dk_ss, dk[i], wkeys, al);
    store_rows(gdv + 16 * i, p.dv_ss, dv[i], wkeys, al);
  }
}

template <int D, ElemType E, bool Causal, bool Mods>
__global__ void __launch_bounds__(BwdTraits<D>::kDqThreads) bwd_dq_kernel(const __grid_constant__ BwdArgs args) {
  using namespace tile;
  using namespace tile::sm80;
  using Tr = BwdTraits<D>;
  using T = typename Elem<E>::type;
  constexpr int kM = Tr::kDqBlockM, kN = Tr::kDqBlockN, kT = Tr::kDqThreads, kS = Tr::kDqStages;
  const BwdParams& p = args.p;
  const FwdParams& f = p.f;
  const BwdScratch& sc = args.s;
  const bool al = args.aligned16;

  extern __shared__ __align__(1024) unsigned char smem_raw[];
  DqSmem<D, T>& sm = *reinterpret_cast<DqSmem<D, T>*>(smem_raw);

  const int tid = threadIdx.x, w = warp::index();
  const int m_tile = Causal ? int(gridDim.x) - 1 - int(blockIdx.x) : int(blockIdx.x);  // longest tiles first
  const int h = blockIdx.y, b = blockIdx.z, hk = h / (f.heads_q / f.heads_kv);
  const std::int64_t Sq = f.seqlen_q, Sk = f.seqlen_k, diag = Sk - Sq;
  const std::int64_t q0 = std::int64_t(m_tile) * kM, row0 = q0 + 16 * w;  // block's and warp's first row
  const T* gk = static_cast<const T*>(f.k) + b * f.k_sb + hk * f.k_sh;
  const T* gv = static_cast<const T*>(f.v) + b * f.v_sb + hk * f.v_sh;

  std::int64_t key_end = Sk;  // causal: up to the diagonal of the block's last valid row; Mods: the windows' tiles
  if constexpr (Causal) key_end = imin(Sk, imin(q0 + kM, Sq) + diag);
  TileRange tiles{0, key_end > 0 ? int((key_end + kN - 1) / kN) : 0};
  [[maybe_unused]] const ModState md = Mods ? make_mods(f, b, h) : ModState{};
  if constexpr (Mods) tiles = row_tiles<kN>(md.win, q0, imin(q0 + kM, Sq), diag, Sk);
  const int t_begin = tiles.begin, t_end = tiles.end;
  auto load_kv = [&](int j) {
    const std::int64_t n0 = std::int64_t(j) * kN;
    const int valid = int(imin(Sk - n0, kN));
    load_rows<kT>(sm.k[j % kS], gk + n0 * f.k_ss, f.k_ss, valid, tid, al);
    load_rows<kT>(sm.v[j % kS], gv + n0 * f.v_ss, f.v_ss, valid, tid, al);
  };
  const int valid_q = int(imin(Sq - q0, kM));
  load_rows<kT>(sm.q, static_cast<const T*>(f.q) + b * f.q_sb + h * f.q_sh + q0 * f.q_ss, f.q_ss, valid_q, tid, al);
  load_rows<kT>(sm.dout, static_cast<const T*>(p.dout) + b * p.do_sb + h * p.do_sh + q0 * p.do_ss, p.do_ss, valid_q,
                tid, al);
  if (t_begin < t_end) load_kv(t_begin);
  cp_async_commit();

  // This warp's rows' lse2 and Δ; rows >= Sq get +inf and 0, so their P and dS are exactly 0.
  const std::int64_t vec0 = (std::int64_t(b) * f.heads_q + h) * sc.sq_pad;
  rv_fl_rows<16> lse2, delta;
#pragma unroll
  for (int hh = 0; hh < 2; ++hh) {
    const std::int64_t r = row0 + (lane_id() >> 2) + 8 * hh;
    lse2.v[0][hh] = r < Sq ? sc.lse2[vec0 + r] : -kNegInf;
    delta.v[0][hh] = r < Sq ? sc.delta[vec0 + r] : 0.f;
  }
  cp_async_wait<0>();
  __syncthreads();
  rt<T, 16, 16> qr[Tr::kDqInRegs ? D / 16 : 1], dor[Tr::kDqInRegs ? D / 16 : 1];
  if constexpr (Tr::kDqInRegs) {
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) load(qr[kk], sm.q, 16 * w, 16 * kk), load(dor[kk], sm.dout, 16 * w, 16 * kk);
  }

  rt_fl<16, 16> dq[D / 16];
#pragma unroll
  for (int i = 0; i < D / 16; ++i) zero(dq[i]);
  for (int j = t_begin; j < t_end; ++j) {
    if (j > t_begin) {
      cp_async_wait<0>();  // tile j landed ...
      __syncthreads();     // ... and every warp finished tile j - 1, whose stage the next prefetch overwrites
    }
    if (j + 1 < t_end) {
      load_kv(j + 1);
      cp_async_commit();
    }
    const auto &sk = sm.k[j % kS], &sv = sm.v[j % kS];
    const std::int64_t n0 = std::int64_t(j) * kN;
    rt_fl<16, kN> s, dp;
    if constexpr (Tr::kDqInRegs) mma_rows(s, qr, sk, 0);
    else mma_rows(s, sm.q, 16 * w, sk, 0);
    if constexpr (Mods) {
      if constexpr (Tr::kDqInRegs) mma_rows(dp, dor, sv, 0);
      else mma_rows(dp, sm.dout, 16 * w, sv, 0);
      mod_p_ds<false>(s, dp, lse2, delta, md, int(n0 - row0 - diag), int(imin(Sk - n0, kN)), int(imin(Sq - row0, 16)));
    } else {
      exp2_fma_row(s, s, f.scale_log2, lse2);
      bool need_mask = n0 + kN > Sk;
      if constexpr (Causal) need_mask = need_mask || n0 + kN - 1 > q0 + diag;
      if (need_mask) mask_p<false, Causal>(s, row0, n0, Sq, Sk);
      if constexpr (Tr::kDqInRegs) mma_rows(dp, dor, sv, 0);
      else mma_rows(dp, sm.dout, 16 * w, sv, 0);
      sub_row(dp, dp, delta);
      mul(dp, dp, s);
    }
    rt<T, 16, kN> ds16;
    copy(ds16, dp);
    mma_cols(dq, ds16, sk, 0);
  }
  // dq_acc holds dQ / scale (the convert pass scales); rows >= Sq are not written.
  float* acc = sc.dq_acc + (vec0 + row0) * D;
  const int valid_rows = int(imax(0, imin(Sq - row0, 16)));
#pragma unroll
  for (int i = 0; i < D / 16; ++i) store(acc + 16 * i, D, dq[i], valid_rows);
}

// ---- host side of one instantiation (explicitly instantiated in sm80_bwd_d*.cu) -------------------------------------
template <class K>
cudaError_t launch_kernel(K* kernel, dim3 grid, int threads, std::size_t smem, const BwdArgs& args) {
  if (grid.x == 0 || grid.y == 0 || grid.z == 0) return cudaSuccess;  // an empty problem: nothing to do
  if (cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
      e != cudaSuccess)
    return e;
  kernel<<<grid, threads, smem, static_cast<cudaStream_t>(args.p.f.stream)>>>(args);
  return cudaGetLastError();
}

// The main kernel, then (deterministic) the dQ kernel, on p.f.stream; the preprocess and convert passes around them
// are the launch layer's.
template <int D, ElemType E, bool Causal, bool Mods>
cudaError_t bwd_launch(const BwdParams& p, const BwdScratch& s) {
  using Tr = BwdTraits<D>;
  const BwdArgs args{p, s, aligned16(p)};
  const FwdParams& f = p.f;
  const dim3 grid(unsigned((f.seqlen_k + Tr::kBlockN - 1) / Tr::kBlockN), unsigned(f.heads_kv), unsigned(f.batch));
  cudaError_t e = launch_kernel(bwd_kernel<D, E, Causal, Mods>, grid, Tr::kThreads, Tr::kSmemBytes, args);
  if (e != cudaSuccess || !p.deterministic) return e;
  const dim3 dq_grid(unsigned((f.seqlen_q + Tr::kDqBlockM - 1) / Tr::kDqBlockM), unsigned(f.heads_q),
                     unsigned(f.batch));
  return launch_kernel(bwd_dq_kernel<D, E, Causal, Mods>, dq_grid, Tr::kDqThreads, Tr::kDqSmemBytes, args);
}

template <int D, ElemType E, bool Causal, bool Mods>
cudaError_t bwd_probe() {
  cudaFuncAttributes attr{};
  return cudaFuncGetAttributes(&attr, bwd_kernel<D, E, Causal, Mods>);
}

#define FLASHTILE_SM80_BWD_INSTANTIATE(D, E, C, M)                                            \
  template cudaError_t bwd_launch<D, ElemType::E, C, M>(const BwdParams&, const BwdScratch&); \
  template cudaError_t bwd_probe<D, ElemType::E, C, M>();

}  // namespace flashtile::cuda::sm80
