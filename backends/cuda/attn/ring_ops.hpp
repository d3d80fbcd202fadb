// Ring attention's elementwise kernel (ring_ops.cu): Copy, Add and Merge of src/backend.hpp's RingOpArgs, as a plain
// parameter struct. Host-only header (no cuda.h): the stream is a void* holding a cudaStream_t.
#pragma once

#include <array>
#include <cstdint>

namespace flashtile::cuda {

enum class RingOp { Copy, Add, Merge };
enum class RingDType { F16, BF16, F32 };

struct RingOpParams {
  RingOp op = RingOp::Copy;
  void* dst = nullptr;
  const void* src = nullptr;
  RingDType dst_dtype = RingDType::F32, src_dtype = RingDType::F32;
  // [rows: n[0] x n[1] x n[2], elements: n[3]], strides in elements; Merge: rows are (b, i, h) of [B, L, H, D].
  std::array<std::int64_t, 4> n{1, 1, 1, 1}, dst_stride{}, src_stride{};
  float* dst_lse = nullptr;  // Merge: f32 [B, H, L] views, strides (b, h, i)
  const float* src_lse = nullptr;
  std::array<std::int64_t, 3> dst_lse_stride{}, src_lse_stride{};
  void* stream = nullptr;
};

// Queues the op on params.stream; launch errors are left for the caller's cudaGetLastError.
void ring_op_launch(const RingOpParams& params);

}  // namespace flashtile::cuda
