// The serving kernels both CUDA families share, independent of the head dim: the split-KV combine (merges the decode
// kernels' partials exactly: sm80_decode.cuh, sm90_decode.cuh) and the paged cache's append (k_new / v_new into their
// slots before attention reads them).
#include "attn/sm80_decode.cuh"

#include "tile/constants.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>

namespace flashtile::cuda::sm80 {
namespace {

template <ElemType E>
__device__ __forceinline__ void store16(void* o, std::int64_t at, float x) {
  if constexpr (E == ElemType::BF16)
    static_cast<__nv_bfloat16*>(o)[at] = __float2bfloat16_rn(x);
  else
    static_cast<__half*>(o)[at] = __float2half_rn(x);
}

// One warp an output row (b, h, i): weights 2^(lse_s - max) over the splits, O = sum w_s O_s / sum w_s. A sink joins
// the max and the denominator here, once a row (never per split): O = sum w_s O_s / (sum w_s + 2^(sink - max)).
template <ElemType E>
__global__ void __launch_bounds__(kCombineRows * 32) combine_kernel(const __grid_constant__ DecodeArgs a,
                                                                    std::int64_t out_rows) {
  __shared__ float weight[kCombineRows][kDecodeMaxSplits];
  const FwdParams& p = a.p;
  const int w = threadIdx.x / 32, lane = threadIdx.x % 32;
  const std::int64_t row = std::int64_t(blockIdx.x) * kCombineRows + w;
  if (row >= out_rows) return;  // whole warp; no block barrier follows
  const std::int64_t i = row % p.seqlen_q, bh = row / p.seqlen_q, h = bh % p.heads_q, b = bh / p.heads_q;
  const float sink2 = p.sinks != nullptr ? p.sinks[h] * tile::kLog2e : -INFINITY;
  float mx = -INFINITY;
  for (int s = lane; s < a.splits; s += 32) mx = fmaxf(mx, a.lse_part[s * out_rows + row]);
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, off));
  mx = fmaxf(mx, sink2);
  float sum = 0.f;
  for (int s = lane; s < a.splits; s += 32) {
    // No split saw a key: every weight 0 (exp2(-inf - -inf) would be NaN). A NaN partial stays NaN.
    const float wt = mx == -INFINITY ? 0.f : exp2f(a.lse_part[s * out_rows + row] - mx);
    weight[w][s] = wt;
    sum += wt;
  }
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, off);
  if (sink2 != -INFINITY) sum += exp2f(sink2 - mx);  // a row with no key but a sink: O = 0, LSE = the sink
  __syncwarp();
  const float inv = sum == 0.f ? 0.f : 1.f / sum;  // == 0, not > 0: NaN stays NaN
  const std::int64_t o_at = b * p.o_sb + i * p.o_ss + h * p.o_sh;
  for (int d = lane; d < p.head_dim; d += 32) {
    float acc = 0.f;
    for (int s = 0; s < a.splits; ++s) acc += weight[w][s] * a.o_part[(s * out_rows + row) * p.head_dim + d];
    store16<E>(p.o, o_at + d, acc * inv);
  }
  if (p.lse != nullptr && lane == 0) p.lse[row] = sum == 0.f ? -INFINITY : (mx + __log2f(sum)) * tile::kLn2;
}

// One CTA a (new key t, batch b): copies its Hkv x D elements of k_new and v_new into the slot of position
// seqlens[b] + t. Positions outside the sequence's pages are skipped; the page entry is clamped like the readers'.
__global__ void __launch_bounds__(128) append_kernel(const __grid_constant__ FwdParams p) {
  const int t = blockIdx.x, b = blockIdx.y;
  const std::int64_t pos = std::int64_t(p.seqlens[b]) + t;
  if (pos < 0 || pos >= paged_capacity(p)) return;
  const PageSlot ps = page_slot(p, p.block_table + b * p.block_table_sb, pos);
  auto* k = static_cast<unsigned short*>(const_cast<void*>(p.k));
  auto* v = static_cast<unsigned short*>(const_cast<void*>(p.v));
  const auto* kn = static_cast<const unsigned short*>(p.k_new);
  const auto* vn = static_cast<const unsigned short*>(p.v_new);
  for (int e = threadIdx.x; e < p.heads_kv * p.head_dim; e += blockDim.x) {
    const int hk = e / p.head_dim, d = e % p.head_dim;
    k[ps.page * p.k_sb + ps.slot * p.k_ss + hk * p.k_sh + d] = kn[b * p.kn_sb + t * p.kn_ss + hk * p.kn_sh + d];
    v[ps.page * p.v_sb + ps.slot * p.v_ss + hk * p.v_sh + d] = vn[b * p.vn_sb + t * p.vn_ss + hk * p.vn_sh + d];
  }
}

}  // namespace

cudaError_t combine_launch(const DecodeArgs& a, std::int64_t out_rows) {
  const unsigned blocks = unsigned((out_rows + kCombineRows - 1) / kCombineRows);
  if (blocks == 0) return cudaSuccess;
  auto stream = static_cast<cudaStream_t>(a.p.stream);
  if (a.p.dtype == ElemType::BF16)
    combine_kernel<ElemType::BF16><<<blocks, kCombineRows * 32, 0, stream>>>(a, out_rows);
  else
    combine_kernel<ElemType::F16><<<blocks, kCombineRows * 32, 0, stream>>>(a, out_rows);
  return cudaGetLastError();
}

cudaError_t append_launch(const FwdParams& p) {
  if (p.seqlen_new <= 0 || p.batch <= 0) return cudaSuccess;
  append_kernel<<<dim3(unsigned(p.seqlen_new), unsigned(p.batch)), 128, 0, static_cast<cudaStream_t>(p.stream)>>>(p);
  return cudaGetLastError();
}

cudaError_t serve_probe() {
  cudaFuncAttributes attr{};
  if (cudaError_t e = cudaFuncGetAttributes(&attr, combine_kernel<ElemType::BF16>); e != cudaSuccess) return e;
  return cudaFuncGetAttributes(&attr, append_kernel);
}

}  // namespace flashtile::cuda::sm80
