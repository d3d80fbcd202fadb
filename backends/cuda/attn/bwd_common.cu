// The backward passes every family shares: the scratch layout, the preprocess (Delta = rowsum(dO ∘ O), lse in log2
// units, a zeroed dQ accumulator) and the dQ convert. Memory-bound: 16-byte accesses, a row over 8-32 lanes; built for
// every arch.
#include "attn/bwd_params.hpp"
#include "tile/constants.hpp"

#include <flashtile/types.hpp>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

namespace flashtile::cuda {

namespace {

constexpr std::size_t kAlign = 256;
constexpr int kThreads = 256;
constexpr std::size_t kVecBytes = 16;
constexpr int kVecElems = kVecBytes / 2;  // f16/bf16 elements in one access

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

// A row's head dim is split over `lanes` lanes of a warp (a power of two: 8, 16 or 32 at d 64/128/256 with 16-byte
// vectors), each taking kVec contiguous elements per step: rows of 128 bytes and more then move in 16-byte accesses.
// kVec 1 is the fallback for rows that do not start 16-byte aligned (odd strides or base addresses).
struct Lanes {
  int lanes;                // lanes per row
  int rows_per_block;
  std::int64_t r;           // this thread's row
  int lane;                 // its lane within the row's group
  unsigned mask;            // the group's lanes, for the row sum's shuffles
};
// Lanes a row takes: the launch's grid and the kernels' mapping both come from here.
__host__ __device__ constexpr int row_lanes(int head_dim, int vec) { return head_dim / vec < 32 ? head_dim / vec : 32; }
template <int kVec>
__device__ __forceinline__ Lanes lanes_of(int head_dim) {
  Lanes l;
  l.lanes = row_lanes(head_dim, kVec);
  l.rows_per_block = kThreads / l.lanes;
  l.r = std::int64_t(blockIdx.x) * l.rows_per_block + threadIdx.x / l.lanes;
  l.lane = threadIdx.x % l.lanes;
  const int base = (threadIdx.x % 32) / l.lanes * l.lanes;
  l.mask = l.lanes == 32 ? 0xffffffffu : ((1u << l.lanes) - 1u) << base;
  return l;
}

// kVec elements of T as one access (16 bytes at kVec 8).
template <class T, int kVec>
struct alignas(sizeof(T) * kVec) Vec {
  T x[kVec];
};
template <int kVec>
struct alignas(sizeof(float) * (kVec < 4 ? kVec : 4)) FVec {
  float x[kVec];
};

template <class T, int kVec>
__global__ void __launch_bounds__(kThreads) preprocess_kernel(const BwdParams p, const BwdScratch s) {
  const FwdParams& f = p.f;
  const Lanes l = lanes_of<kVec>(f.head_dim);
  if (l.r >= std::int64_t(f.batch) * f.heads_q * f.seqlen_q) return;  // whole groups leave together
  const Row w = row_of(l.r, f);
  const T* o = static_cast<const T*>(f.o) + w.b * f.o_sb + w.i * f.o_ss + w.h * f.o_sh;
  const T* d = static_cast<const T*>(p.dout) + w.b * p.do_sb + w.i * p.do_ss + w.h * p.do_sh;
  const std::int64_t bh = std::int64_t(w.b) * f.heads_q + w.h;
  const std::int64_t at = bh * s.sq_pad + w.i;
  float* dq = s.dq_acc + at * f.head_dim;
  float acc = 0.f;
  for (int c = l.lane * kVec; c < f.head_dim; c += l.lanes * kVec) {
    const auto ov = *reinterpret_cast<const Vec<T, kVec>*>(o + c);
    const auto dv = *reinterpret_cast<const Vec<T, kVec>*>(d + c);
    FVec<kVec> zero;
#pragma unroll
    for (int e = 0; e < kVec; ++e) acc += to_f(ov.x[e]) * to_f(dv.x[e]), zero.x[e] = 0.f;
    *reinterpret_cast<FVec<kVec>*>(dq + c) = zero;
  }
  for (int off = l.lanes / 2; off > 0; off >>= 1) acc += __shfl_xor_sync(l.mask, acc, off);
  if (l.lane == 0) {
    const float lse = f.lse[bh * f.seqlen_q + w.i];
    s.delta[at] = acc;
    // A row with no visible key has lse = -inf; +inf here makes exp2(s - lse2) = 0: zero gradients, no NaN.
    s.lse2[at] = lse == tile::kNegInf ? -tile::kNegInf : lse * tile::kLog2e;
  }
}

template <class T, int kVec>
__global__ void __launch_bounds__(kThreads) convert_dq_kernel(const BwdParams p, const BwdScratch s) {
  const FwdParams& f = p.f;
  const Lanes l = lanes_of<kVec>(f.head_dim);
  if (l.r >= std::int64_t(f.batch) * f.heads_q * f.seqlen_q) return;
  const Row w = row_of(l.r, f);
  const float* acc = s.dq_acc + ((std::int64_t(w.b) * f.heads_q + w.h) * s.sq_pad + w.i) * f.head_dim;
  T* dq = static_cast<T*>(p.dq) + w.b * p.dq_sb + w.i * p.dq_ss + w.h * p.dq_sh;
  for (int c = l.lane * kVec; c < f.head_dim; c += l.lanes * kVec) {
    const auto a = *reinterpret_cast<const FVec<kVec>*>(acc + c);
    Vec<T, kVec> out;
#pragma unroll
    for (int e = 0; e < kVec; ++e) out.x[e] = from_f<T>(a.x[e] * f.scale);
    *reinterpret_cast<Vec<T, kVec>*>(dq + c) = out;
  }
}

// dsinks: a block a query head, each thread a fixed stride of the head's rows, then a fixed tree: deterministic.
// A row with no visible key has lse2 = +inf (exp2 gives 0) or, with a sink, Delta = 0 (its output is 0).
__global__ void __launch_bounds__(kThreads) dsinks_kernel(const BwdParams p, const BwdScratch s) {
  const FwdParams& f = p.f;
  const int h = blockIdx.x;
  const float sink2 = p.sinks[h] * tile::kLog2e;
  const std::int64_t rows = std::int64_t(f.batch) * f.seqlen_q;
  float acc = 0.f;
  for (std::int64_t r = threadIdx.x; r < rows; r += kThreads) {
    const std::int64_t at = (r / f.seqlen_q * f.heads_q + h) * s.sq_pad + r % f.seqlen_q;
    acc += exp2f(sink2 - s.lse2[at]) * s.delta[at];
  }
  __shared__ float part[kThreads];
  part[threadIdx.x] = acc;
  __syncthreads();
  for (int n = kThreads / 2; n > 0; n >>= 1) {
    if (threadIdx.x < n) part[threadIdx.x] += part[threadIdx.x + n];
    __syncthreads();
  }
  if (threadIdx.x == 0) p.dsinks[h] = -part[0];
}

// Whether every row of these operands starts at a multiple of `bytes` (head dim contiguous, so rows are all there is).
bool rows_aligned(const void* base, std::int64_t sb, std::int64_t ss, std::int64_t sh, std::size_t elem,
                  std::size_t bytes) {
  const auto step = static_cast<std::int64_t>(bytes / elem);
  return reinterpret_cast<std::uintptr_t>(base) % bytes == 0 && sb % step == 0 && ss % step == 0 && sh % step == 0;
}

void check_launch(const char* what) {
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess)
    throw Error(ErrorCode::BackendFailure, std::string(what) + ": " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e));
}

// The flattened [B, Hq, Sq] rows in the call's dtype, 16-byte vectors where `aligned` (else one element a lane).
struct Preprocess {
  template <class T, int kVec>
  static constexpr auto kernel = preprocess_kernel<T, kVec>;
};
struct ConvertDq {
  template <class T, int kVec>
  static constexpr auto kernel = convert_dq_kernel<T, kVec>;
};

template <class K>
void launch_rows(const BwdParams& p, const BwdScratch& s, bool aligned, const char* what) {
  const std::int64_t rows = std::int64_t(p.f.batch) * p.f.heads_q * p.f.seqlen_q;
  if (rows == 0) return;
  const int vec = aligned && p.f.head_dim % kVecElems == 0 ? kVecElems : 1;
  const std::int64_t rows_per_block = kThreads / row_lanes(p.f.head_dim, vec);
  const dim3 grid(unsigned((rows + rows_per_block - 1) / rows_per_block));
  auto stream = static_cast<cudaStream_t>(p.f.stream);
  const bool bf16 = p.f.dtype == ElemType::BF16;
  const auto kernel = vec == kVecElems ? (bf16 ? K::template kernel<__nv_bfloat16, kVecElems>
                                                      : K::template kernel<__half, kVecElems>)
                                       : (bf16 ? K::template kernel<__nv_bfloat16, 1> : K::template kernel<__half, 1>);
  kernel<<<grid, kThreads, 0, stream>>>(p, s);
  check_launch(what);
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
  const bool aligned = rows_aligned(p.f.o, p.f.o_sb, p.f.o_ss, p.f.o_sh, 2, kVecBytes) &&
                       rows_aligned(p.dout, p.do_sb, p.do_ss, p.do_sh, 2, kVecBytes);
  launch_rows<Preprocess>(p, s, aligned, "bwd preprocess");
  if (p.dsinks == nullptr || p.f.batch * std::int64_t(p.f.seqlen_q) == 0) return;
  dsinks_kernel<<<p.f.heads_q, kThreads, 0, static_cast<cudaStream_t>(p.f.stream)>>>(p, s);
  check_launch("bwd dsinks");
}

void bwd_convert_dq(const BwdParams& p, const BwdScratch& s) {
  launch_rows<ConvertDq>(p, s, rows_aligned(p.dq, p.dq_sb, p.dq_ss, p.dq_sh, 2, kVecBytes), "bwd convert dq");
}

}  // namespace flashtile::cuda
