// sm80 split-KV decode (Flash-Decoding) for calls with few query rows (decode, speculative verification): dense or
// paged K/V. A CTA is (split, kv head x row block, batch); its 1-4 warps hold the group's query heads x query rows
// packed 16 to a warp (sm80_traits.hpp, decode_plan), so every K/V tile is read once for the whole GQA group. The
// keys of a sequence are cut into `splits` ranges of whole tiles; each CTA writes its partial O (normalized) and LSE
// (log2 units) in f32 to the workspace, and combine_kernel (sm80_decode_common.cu) merges them exactly.
// Mods (the variant instantiation): the splits cut only the tiles the rows' windows touch; softcap, ALiBi (a slope per
// packed row's head) and the window apply per element; a sink joins each row's denominator once, in the combine.
// Included by sm80_decode_d*.cu (the kernel) and sm80_decode_common.cu (DecodeArgs).
#pragma once

#include "attn/fwd_params.hpp"
#include "attn/sm80_layout.cuh"
#include "attn/sm80_mods.cuh"
#include "attn/sm80_traits.hpp"
#include "tile/ops.cuh"
#include "tile/sm80/ops_any.cuh"

#include <cuda_runtime.h>

#include <cstdint>

namespace flashtile::cuda::sm80 {

struct DecodeArgs {
  FwdParams p;
  int splits, group, rows;  // decode_plan's
  bool aligned16;
  float* o_part;    // [splits, out_rows, D]
  float* lse_part;  // [splits, out_rows]
};

inline DecodeArgs decode_args(const FwdParams& p, const DecodePlan& d) {
  auto* ws = static_cast<unsigned char*>(p.workspace);
  return {p, d.splits, d.group, d.rows, aligned16(p), reinterpret_cast<float*>(ws),
          reinterpret_cast<float*>(ws + d.o_part_bytes)};
}

// Merges the splits' partials into o (and lse); defined in sm80_decode_common.cu.
cudaError_t combine_launch(const DecodeArgs& a, std::int64_t out_rows);

template <int D, ElemType E, Layout L, bool Mods>
__global__ void __launch_bounds__(kDecodeMaxWarps * 32) decode_kernel(const __grid_constant__ DecodeArgs a) {
  using namespace tile;
  using T = std::conditional_t<E == ElemType::F16, half, bf16>;
  constexpr int kN = kDecodeBlockN;
  constexpr bool kQInRegs = Traits<D>::kQInRegs;
  const FwdParams& p = a.p;
  const bool al = a.aligned16;
  const int tid = threadIdx.x, nt = blockDim.x, w = warp::index();
  const int split = blockIdx.x, hk = int(blockIdx.y) % p.heads_kv, rb = int(blockIdx.y) / p.heads_kv;
  const int b = blockIdx.z;

  extern __shared__ __align__(1024) unsigned char smem_raw[];
  auto* sk = reinterpret_cast<st<T, kN, D>*>(smem_raw);  // [kDecodeStages], then V's, then one Q tile a warp
  auto* sv = sk + kDecodeStages;
  st<T, 16, D>& sq = reinterpret_cast<st<T, 16, D>*>(sv + kDecodeStages)[w];

  const std::int64_t Sq = p.seqlen_q, Sk = seq_span<L>(p, b).sk;
  const std::int64_t diag = Sk - Sq;  // bottom-right causal per sequence
  // The tiles this CTA's rows can see (Mods: every query row's window), cut into a.splits ranges.
  TileRange tiles{0, int((Sk + kN - 1) / kN)};
  // Window and softcap; ALiBi slopes are per packed row below.
  [[maybe_unused]] const ModState md = Mods ? make_mods(p, b, hk * a.group) : ModState{};
  if constexpr (Mods) tiles = row_tiles<kN>(md.win, 0, Sq, diag, Sk);
  const int tb = tiles.begin, te = tiles.end, per = (te - tb + a.splits - 1) / a.splits;
  const int t0 = min(te, tb + split * per), t1 = min(te, t0 + per);

  const int bk = L == Layout::Dense ? b : 0;
  const T* gk = static_cast<const T*>(p.k) + bk * p.k_sb + hk * p.k_sh;
  const T* gv = static_cast<const T*>(p.v) + bk * p.v_sb + hk * p.v_sh;
  const std::int32_t* bt = L == Layout::Paged ? p.block_table + b * p.block_table_sb : nullptr;

  // Packed row pr of this kv head: query head hk * group + pr / Sq, query row pr % Sq.
  const int pr0 = rb * kDecodeRows + w * 16;
  // Mods: this lane's two packed rows' query row + diag and ALiBi slope (padding rows past a.rows take the group's
  // first head: their results are never stored).
  [[maybe_unused]] int row_diag[2];
  [[maybe_unused]] float slope2[2];
  if constexpr (Mods) {
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      const int pr = pr0 + (lane_id() >> 2) + 8 * hh, hq = pr < a.rows ? pr / int(Sq) : 0;
      row_diag[hh] = pr % int(Sq) + int(diag);
      slope2[hh] = alibi_slope2(p, b, hk * a.group + hq);
    }
  }
  const T* gq = static_cast<const T*>(p.q) + b * p.q_sb + std::int64_t(hk) * a.group * p.q_sh;
  load_rows_by(
      sq, [&](int r) { return gq + (pr0 + r) / Sq * p.q_sh + (pr0 + r) % Sq * p.q_ss; }, gq, a.rows - pr0, lane_id(),
      32, al);

  auto load_kv = [&](int j) {
    const std::int64_t n0 = std::int64_t(j) * kN;
    const int valid = int(imin(Sk - n0, kN));
    if constexpr (L == Layout::Paged) {
      load_kv_paged(sk[j % kDecodeStages], sv[j % kDecodeStages], gk, gv, p, bt, n0, valid, tid, nt, al);
    } else {
      load_rows_by(sk[j % kDecodeStages], [&](int r) { return gk + (n0 + r) * p.k_ss; }, gk, valid, tid, nt, al);
      load_rows_by(sv[j % kDecodeStages], [&](int r) { return gv + (n0 + r) * p.v_ss; }, gv, valid, tid, nt, al);
    }
  };
  if (t0 < t1) load_kv(t0);
  cp_async_commit();
  cp_async_wait<0>();
  __syncthreads();

  rt<T, 16, 16> qr[kQInRegs ? D / 16 : 1];
  if constexpr (kQInRegs) {
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) load(qr[kk], sq, 0, kk * 16);
  }
  rt_fl<16, 16> o[D / 16];
#pragma unroll
  for (int i = 0; i < D / 16; ++i) zero(o[i]);
  rv_fl_rows<16> m, l;
  fill(m, kNegInf);
  fill(l, 0.f);

  for (int j = t0; j < t1; ++j) {
    if (j > t0) {
      cp_async_wait<0>();
      __syncthreads();
    }
    if (j + 1 < t1) {
      load_kv(j + 1);
      cp_async_commit();
    }
    const auto& skj = sk[j % kDecodeStages];
    const auto& svj = sv[j % kDecodeStages];
    rt_fl<16, kN> s;
    zero(s);
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      rt<T, kN, 16> kt;
      load(kt, skj, 0, kk * 16);
      if constexpr (kQInRegs) {
        mma_ABt(s, qr[kk], kt, s);
      } else {
        rt<T, 16, 16> qt;
        load(qt, sq, 0, kk * 16);
        mma_ABt(s, qt, kt, s);
      }
    }
    const std::int64_t n0 = std::int64_t(j) * kN;
    if constexpr (Mods) {  // every tile: the packed rows differ in head (slope) and window
      map_rows(s, [&](int hh, int c, float x) {
        const int d = int(n0) + c - row_diag[hh];
        float dcap;
        x = mod_score(md, x, 0, dcap);
        x -= slope2[hh] * float(d < 0 ? -d : d);
        return n0 + c < Sk && in_window(md.win, d) ? x : kNegInf;
      });
    } else {
      mul(s, s, p.scale_log2);
    }
    // Query row 0 sees the fewest keys: a tile wholly at or below its diagonal needs no causal mask.
    if (!Mods && (n0 + kN > Sk || (p.causal && n0 + kN - 1 > diag))) {
      map(s, [=](int r, int c, float x) {
        const std::int64_t key = n0 + c;
        const bool visible = key < Sk && (!p.causal || key <= (pr0 + r) % Sq + diag);
        return visible ? x : kNegInf;
      });
    }
    rv_fl_rows<16> m_new, m_use, alpha;
    row_max(m_new, s, m);
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) m_use.v[0][hh] = m_new.v[0][hh] == kNegInf ? 0.f : m_new.v[0][hh];
    sub(alpha, m, m_use);
    exp2(alpha, alpha);
    m = m_new;
    exp2_sub_row(s, s, m_use);
    mul(l, l, alpha);
    row_sum_partial(l, s, l);
#pragma unroll
    for (int i = 0; i < D / 16; ++i) mul_row(o[i], o[i], alpha);
    rt<T, 16, kN> pt;
    copy(pt, s);
#pragma unroll
    for (int i = 0; i < D / 16; ++i) {
      rt<T, kN, 16, layout::col> vt;
      load(vt, svj, 0, i * 16);
      mma_AB(o[i], pt, vt, o[i]);
    }
  }

  // ---- partials: O / l and the LSE (log2 units); an empty split gives 0 and -inf, which the merge weighs 0 ----
  rv_fl_rows<16> inv;
#pragma unroll
  for (int hh = 0; hh < 2; ++hh) {
    l.v[0][hh] = quad_sum(l.v[0][hh]);
    inv.v[0][hh] = l.v[0][hh] == 0.f ? 0.f : 1.f / l.v[0][hh];
  }
  const int lane = lane_id();
  const std::int64_t out_rows = std::int64_t(p.batch) * p.heads_q * Sq;
  auto out_row = [&](int r) {  // the packed row's (batch, head, query row) index
    const int pr = pr0 + r;
    return (std::int64_t(b) * p.heads_q + std::int64_t(hk) * a.group + pr / Sq) * Sq + pr % Sq;
  };
#pragma unroll
  for (int i = 0; i < D / 16; ++i) {
    mul_row(o[i], o[i], inv);
    each<rt_fl<16, 16>>([&](int, int, int k) {
      const coord c = rt_coords(lane, k);
      if (pr0 + c.row < a.rows)
        *reinterpret_cast<float2*>(a.o_part + (split * out_rows + out_row(c.row)) * D + i * 16 + c.col) =
            o[i].v[0][0][k];
    });
  }
  if ((lane & 3) == 0) {
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      const int r = (lane >> 2) + hh * 8;
      if (pr0 + r < a.rows)
        a.lse_part[split * out_rows + out_row(r)] =
            l.v[0][hh] == 0.f ? kNegInf : m.v[0][hh] + __log2f(l.v[0][hh]);
    }
  }
}

// ---- host side of one instantiation (explicitly instantiated in sm80_decode_d*.cu) ----------------------------------
template <int D, ElemType E, Layout L, bool Mods>
cudaError_t decode_launch(const FwdParams& p) {
  const DecodePlan d = decode_plan(p);
  const int smem = int(decode_smem(D, d.warps));
  auto* kernel = decode_kernel<D, E, L, Mods>;
  if (cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem); e != cudaSuccess)
    return e;
  const DecodeArgs a = decode_args(p, d);
  const dim3 grid(unsigned(d.splits), unsigned(p.heads_kv * d.row_blocks), unsigned(p.batch));
  kernel<<<grid, d.warps * 32, smem, static_cast<cudaStream_t>(p.stream)>>>(a);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  return combine_launch(a, d.out_rows);
}

template <int D, ElemType E, Layout L, bool Mods>
cudaError_t decode_probe() {
  cudaFuncAttributes attr{};
  return cudaFuncGetAttributes(&attr, decode_kernel<D, E, L, Mods>);
}

#define FLASHTILE_SM80_DECODE_INSTANTIATE(D, E, L, M)                                   \
  template cudaError_t decode_launch<D, ElemType::E, Layout::L, M>(const FwdParams&); \
  template cudaError_t decode_probe<D, ElemType::E, Layout::L, M>();

}  // namespace flashtile::cuda::sm80
