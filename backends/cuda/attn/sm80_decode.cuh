// sm80 split-KV decode (Flash-Decoding) for calls with few query rows (decode, speculative verification): dense or
// paged K/V. A CTA is (split, kv head x row block, batch); its 1-4 warps hold the group's query heads x query rows
// packed 16 to a warp (sm80_traits.hpp, decode_plan), so every K/V tile is read once for the whole GQA group. The
// keys of a sequence are cut into `splits` ranges of whole tiles; each CTA writes its partial O (normalized) and LSE
// (log2 units) in f32 to the workspace, and combine_kernel (decode_common.cu) merges them exactly.
// Mods (the variant instantiation): the splits cut only the tiles the rows' windows touch; softcap, ALiBi (a slope per
// packed row's head) and the window apply per element; a sink joins each row's denominator once, in the combine.
// Included by sm80_decode_d*.cu (the kernel) and decode_common.cu (DecodeArgs).
#pragma once

#include "attn/decode_rows.cuh"
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

// Merges the splits' partials into o (and lse); defined in decode_common.cu.
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

  const DecodeRows<Mods> r =
      decode_rows<Mods>(p, b, hk, a.group, a.rows, rb * kDecodeRows + w * 16, seq_span<L>(p, b).sk);
  const TileRange tr = split_tiles<kN>(r, split, a.splits);
  const int t0 = tr.begin, t1 = tr.end;

  const int bk = L == Layout::Dense ? b : 0;
  const T* gk = static_cast<const T*>(p.k) + bk * p.k_sb + hk * p.k_sh;
  const T* gv = static_cast<const T*>(p.v) + bk * p.v_sb + hk * p.v_sh;
  const std::int32_t* bt = L == Layout::Paged ? p.block_table + b * p.block_table_sb : nullptr;

  const std::int64_t Sq = p.seqlen_q;
  const int pr0 = r.pr0;
  const T* gq = static_cast<const T*>(p.q) + b * p.q_sb + std::int64_t(hk) * a.group * p.q_sh;
  load_rows_by(
      sq, [&](int i) { return gq + (pr0 + i) / Sq * p.q_sh + (pr0 + i) % Sq * p.q_ss; }, gq, a.rows - pr0, lane_id(),
      32, al);

  auto load_kv = [&](int j) {
    const std::int64_t n0 = std::int64_t(j) * kN;
    const int valid = int(imin(r.sk - n0, kN));
    if constexpr (L == Layout::Paged) {
      load_kv_paged(sk[j % kDecodeStages], sv[j % kDecodeStages], gk, gv, p, bt, n0, valid, tid, nt, al);
    } else {
      load_rows_by(sk[j % kDecodeStages], [&](int i) { return gk + (n0 + i) * p.k_ss; }, gk, valid, tid, nt, al);
      load_rows_by(sv[j % kDecodeStages], [&](int i) { return gv + (n0 + i) * p.v_ss; }, gv, valid, tid, nt, al);
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
  auto q = [&](int kk) {
    if constexpr (kQInRegs) {
      return qr[kk];
    } else {
      rt<T, 16, 16> qt;
      load(qt, sq, 0, kk * 16);
      return qt;
    }
  };
  DecodeAcc<D> acc;
  init(acc);

  for (int j = t0; j < t1; ++j) {
    if (j > t0) {
      cp_async_wait<0>();
      __syncthreads();
    }
    if (j + 1 < t1) {
      load_kv(j + 1);
      cp_async_commit();
    }
    decode_step<D, kN, Mods, T>(acc, q, sk[j % kDecodeStages], sv[j % kDecodeStages], std::int64_t(j) * kN, r, p);
  }
  decode_store<D, Mods, T>(acc, r, p, a.o_part, a.lse_part, split);
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
