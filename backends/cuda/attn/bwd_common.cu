// The backward passes every family shares: the scratch layout, the preprocess (Delta = rowsum(dO ∘ O), lse in log2
// units, a zeroed dQ accumulator) and the dQ convert. Memory-bound, one warp per row; built for every arch.
#include "attn/bwd_params.hpp"
#include "tile/constants.hpp"

#include <flashtile/types.hpp>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <string>

namespace flashtile::cuda {

namespace {

constexpr std::size_t kAlign = 256;
constexpr int kRowsPerBlock = 8;  // one warp a row
constexpr int kThreads = kRowsPerBlock * 32;

std::size_t round_up(std::size_t x, std::size_t a) { return (x + a - 1) / a * a; }

__device__ __forceinline__ float to_f(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_f(__nv_bfloat16 x) { return __bfloat162float(x); }
template <class T>
__device__ __forceinline__ T from_f(float x);
template <>
__device__ __forceinline__ __half from_f<__half>(float x) { return __float2half_rn(x); }
template <>
__device__ __forceinline__ __nv_bfloat16 from_f<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }

// Row r of the flattened [B, Hq, Sq] grid: its batch, head and query index.
struct Row {
  int b, h;
  std::int64_t i;
};
__device__ __forceinline__ Row row_of(std::int64_t r, const FwdParams& f) {
  const std::int64_t per_b = std::int64_t(f.heads_q) * f.seqlen_q;
  return {int(r / per_b), int((r % per_b) / f.seqlen_q), r % f.seqlen_q};
}

template <class T>
__global__ void __launch_bounds__(kThreads) preprocess_kernel(const BwdParams p, const BwdScratch s) {
  const FwdParams& f = p.f;
  const std::int64_t r = std::int64_t(blockIdx.x) * kRowsPerBlock + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (r >= std::int64_t(f.batch) * f.heads_q * f.seqlen_q) return;
  const Row w = row_of(r, f);
  const T* o = static_cast<const T*>(f.o) + w.b * f.o_sb + w.i * f.o_ss + w.h * f.o_sh;
  const T* d = static_cast<const T*>(p.dout) + w.b * p.do_sb + w.i * p.do_ss + w.h * p.do_sh;
  float acc = 0.f;
  for (int c = lane; c < f.head_dim; c += 32) acc += to_f(o[c]) * to_f(d[c]);
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, off);
  const std::int64_t bh = std::int64_t(w.b) * f.heads_q + w.h;
  const std::int64_t at = bh * s.sq_pad + w.i;
  float* dq = s.dq_acc + at * f.head_dim;
  for (int c = lane; c < f.head_dim; c += 32) dq[c] = 0.f;
  if (lane == 0) {
    const float lse = f.lse[bh * f.seqlen_q + w.i];
    s.delta[at] = acc;
    // A row with no visible key has lse = -inf; +inf here makes exp2(s - lse2) = 0: zero gradients, no NaN.
    s.lse2[at] = lse == tile::kNegInf ? -tile::kNegInf : lse * tile::kLog2e;
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads) convert_dq_kernel(const BwdParams p, const BwdScratch s) {
  const FwdParams& f = p.f;
  const std::int64_t r = std::int64_t(blockIdx.x) * kRowsPerBlock + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (r >= std::int64_t(f.batch) * f.heads_q * f.seqlen_q) return;
  const Row w = row_of(r, f);
  const float* acc = s.dq_acc + ((std::int64_t(w.b) * f.heads_q + w.h) * s.sq_pad + w.i) * f.head_dim;
  T* dq = static_cast<T*>(p.dq) + w.b * p.dq_sb + w.i * p.dq_ss + w.h * p.dq_sh;
  for (int c = lane; c < f.head_dim; c += 32) dq[c] = from_f<T>(acc[c] * f.scale);
}

// One warp a row over the flattened [B, Hq, Sq] grid, in the call's dtype.
template <class KB, class KH>
void launch_rows(const BwdParams& p, const BwdScratch& s, KB bf16_kernel, KH f16_kernel, const char* what) {
  const std::int64_t rows = std::int64_t(p.f.batch) * p.f.heads_q * p.f.seqlen_q;
  if (rows == 0) return;
  const dim3 grid(unsigned((rows + kRowsPerBlock - 1) / kRowsPerBlock));
  auto stream = static_cast<cudaStream_t>(p.f.stream);
  if (p.f.dtype == ElemType::BF16)
    bf16_kernel<<<grid, kThreads, 0, stream>>>(p, s);
  else
    f16_kernel<<<grid, kThreads, 0, stream>>>(p, s);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess)
    throw Error(ErrorCode::BackendFailure, std::string(what) + ": " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e));
}

}  // namespace

std::size_t bwd_scratch_bytes(const BwdParams& p, int row_pad) {
  const std::size_t bh = std::size_t(p.f.batch) * std::size_t(p.f.heads_q);
  const std::size_t sq = round_up(std::size_t(p.f.seqlen_q), std::size_t(row_pad));
  const std::size_t vec = round_up(bh * sq * sizeof(float), kAlign);
  return 2 * vec + round_up(bh * sq * std::size_t(p.f.head_dim) * sizeof(float), kAlign);
}

BwdScratch bwd_scratch(const BwdParams& p, int row_pad) {
  const std::size_t bh = std::size_t(p.f.batch) * std::size_t(p.f.heads_q);
  const std::size_t sq = round_up(std::size_t(p.f.seqlen_q), std::size_t(row_pad));
  const std::size_t vec = round_up(bh * sq * sizeof(float), kAlign);
  auto* base = static_cast<unsigned char*>(p.workspace);
  BwdScratch s;
  s.delta = reinterpret_cast<float*>(base);
  s.lse2 = reinterpret_cast<float*>(base + vec);
  s.dq_acc = reinterpret_cast<float*>(base + 2 * vec);
  s.sq_pad = std::int64_t(sq);
  return s;
}

void bwd_preprocess(const BwdParams& p, const BwdScratch& s) {
  launch_rows(p, s, preprocess_kernel<__nv_bfloat16>, preprocess_kernel<__half>, "bwd preprocess");
}

void bwd_convert_dq(const BwdParams& p, const BwdScratch& s) {
  launch_rows(p, s, convert_dq_kernel<__nv_bfloat16>, convert_dq_kernel<__half>, "bwd convert dq");
}

}  // namespace flashtile::cuda
