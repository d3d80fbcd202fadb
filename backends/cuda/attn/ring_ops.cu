// Ring attention's elementwise kernel (ring_ops.hpp): one warp a row, lanes over the row's elements. Merge: every
// lane reads both LSEs, then lane 0 writes the merged one after the warp has read (the row's own O is lane-private).
#include "attn/ring_ops.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>

namespace flashtile::cuda {

namespace {

constexpr int kWarp = 32;
constexpr int kWarpsPerBlock = 8;
constexpr std::int64_t kMaxBlocks = 65535;

__device__ float load(const void* p, RingDType t, std::int64_t i) {
  switch (t) {
    case RingDType::F16: return __half2float(static_cast<const __half*>(p)[i]);
    case RingDType::BF16: return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
    default: return static_cast<const float*>(p)[i];
  }
}

__device__ void store(void* p, RingDType t, std::int64_t i, float x) {
  switch (t) {
    case RingDType::F16: static_cast<__half*>(p)[i] = __float2half_rn(x); break;
    case RingDType::BF16: static_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16_rn(x); break;
    default: static_cast<float*>(p)[i] = x;
  }
}

__global__ void ring_op_kernel(RingOpParams p) {
  const int lane = threadIdx.x % kWarp;
  const std::int64_t rows = p.n[0] * p.n[1] * p.n[2];
  const std::int64_t warps = std::int64_t(gridDim.x) * kWarpsPerBlock;
  for (std::int64_t row = std::int64_t(blockIdx.x) * kWarpsPerBlock + threadIdx.x / kWarp; row < rows; row += warps) {
    const std::int64_t a = row / (p.n[1] * p.n[2]), b = (row / p.n[2]) % p.n[1], c = row % p.n[2];
    const std::int64_t drow = a * p.dst_stride[0] + b * p.dst_stride[1] + c * p.dst_stride[2];
    const std::int64_t srow = a * p.src_stride[0] + b * p.src_stride[1] + c * p.src_stride[2];
    float wa = 0.0f, wb = 1.0f;
    if (p.op == RingOp::Merge) {  // rows (b = a, i = b, h = c); lse index (b, h, i)
      const std::int64_t dl = a * p.dst_lse_stride[0] + c * p.dst_lse_stride[1] + b * p.dst_lse_stride[2];
      const std::int64_t sl = a * p.src_lse_stride[0] + c * p.src_lse_stride[1] + b * p.src_lse_stride[2];
      const float la = p.dst_lse[dl], lb = p.src_lse[sl];
      if (lb == -INFINITY) continue;  // src saw no key: dst unchanged (uniform across the warp)
      const float m = fmaxf(la, lb);
      const float lse = la == -INFINITY ? lb : m + logf(expf(la - m) + expf(lb - m));
      wa = la == -INFINITY ? 0.0f : expf(la - lse);
      wb = expf(lb - lse);
      __syncwarp();
      if (lane == 0) p.dst_lse[dl] = lse;
    }
    for (std::int64_t e = lane; e < p.n[3]; e += kWarp) {
      const float x = load(p.src, p.src_dtype, srow + e * p.src_stride[3]);
      const std::int64_t at = drow + e * p.dst_stride[3];
      switch (p.op) {
        case RingOp::Copy: store(p.dst, p.dst_dtype, at, x); break;
        case RingOp::Add: store(p.dst, p.dst_dtype, at, load(p.dst, p.dst_dtype, at) + x); break;
        case RingOp::Merge: store(p.dst, p.dst_dtype, at, load(p.dst, p.dst_dtype, at) * wa + x * wb); break;
      }
    }
  }
}

}  // namespace

void ring_op_launch(const RingOpParams& p) {
  const std::int64_t rows = p.n[0] * p.n[1] * p.n[2];
  const auto blocks = static_cast<unsigned>(std::clamp<std::int64_t>((rows + kWarpsPerBlock - 1) / kWarpsPerBlock, 1, kMaxBlocks));
  ring_op_kernel<<<blocks, kWarp * kWarpsPerBlock, 0, static_cast<cudaStream_t>(p.stream)>>>(p);
}

}  // namespace flashtile::cuda
