// flashtile tile framework: global layouts. A gl4 is a 4-D tensor [B, S, H, D] (D contiguous; other strides in
// elements, arbitrary) plus, when TMA can address it, the tensor map that lets the copy engine move 64-column-wide
// boxes of `box_rows` rows (one head, one batch) into a 128B-swizzled shared tile (st.cuh).
//
//   gl4<T>                        device pointer, dims, element strides, CUtensorMap (passed to kernels by value as
//                                 part of a __grid_constant__ params struct).
//   tma_unsupported(ptr, strides_bytes, ...)   host: "" when TMA can describe the tensor, else a one-line reason
//                                 (base address and strides must be multiples of 16 bytes, strides < 2^40).
//   make_gl4<T>(ptr, B, S, H, D, sb, ss, sh, box_rows)   host: builds the map through the driver's
//                                 cuTensorMapEncodeTiled, fetched with cudaGetDriverEntryPointByVersion, so nothing
//                                 links against libcuda. Returns the driver's error as a string via `why`.
//   make_f32_map(map, ptr, rows, cols, box_rows)   host: a map of a row-major f32 matrix for boxes of box_rows x 32
//                                 columns (128 bytes, 128B-swizzled), e.g. for bulk reduce-adds (tma.cuh).
// Out-of-bounds box elements (rows >= S) read as zero; TMA stores clip them.
#pragma once

#include <cuda.h>  // CUtensorMap and its enums only: no libcuda symbol is referenced
#include <cuda_runtime.h>
#include <cudaTypedefs.h>

#include <cstdint>
#include <string>

#include "tile/base.cuh"

namespace flashtile::tile {

template <typename T>
struct gl4 {
  T* ptr = nullptr;
  int b = 0, s = 0, h = 0, d = 0;
  std::int64_t sb = 0, ss = 0, sh = 0;  // element strides of batch, seq, head
  CUtensorMap map{};
};

inline std::string tma_unsupported(const void* ptr, std::int64_t sb, std::int64_t ss, std::int64_t sh,
                                   int elem_bytes) {
  const auto addr = reinterpret_cast<std::uintptr_t>(ptr);
  if (addr % 16 != 0) return "base address not 16-byte aligned (TMA)";
  const std::int64_t strides[3] = {ss, sh, sb};
  const char* names[3] = {"seq", "head", "batch"};
  for (int i = 0; i < 3; ++i) {
    const std::int64_t bytes = strides[i] * elem_bytes;
    if (bytes % 16 != 0) return std::string(names[i]) + " stride not a multiple of 16 bytes (TMA)";
    if (bytes <= 0 || bytes >= (std::int64_t{1} << 40)) return std::string(names[i]) + " stride out of TMA range";
  }
  return {};
}

inline PFN_cuTensorMapEncodeTiled_v12000 tma_encode_fn(std::string& why) {
  static PFN_cuTensorMapEncodeTiled_v12000 fn = []() -> PFN_cuTensorMapEncodeTiled_v12000 {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess)
      return nullptr;
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
  }();
  if (!fn) why = "driver has no cuTensorMapEncodeTiled";
  return fn;
}

// Build a map for boxes of box_rows x 64 elements (64 x 16-bit = one 128-byte swizzled row).
template <typename T>
inline std::string make_gl4(gl4<T>& g, T* ptr, int b, int s, int h, int d, std::int64_t sb, std::int64_t ss,
                            std::int64_t sh, int box_rows) {
  static_assert(is_16bit_v<T>, "gl4 maps 16-bit tensors");
  g.ptr = ptr;
  g.b = b, g.s = s, g.h = h, g.d = d, g.sb = sb, g.ss = ss, g.sh = sh;
  std::string why = tma_unsupported(ptr, sb, ss, sh, 2);
  if (!why.empty()) return why;
  if (d % 64 != 0) return "head dim not a multiple of 64 (TMA box)";
  if (box_rows < 1 || box_rows > 256) return "TMA box rows out of range";
  auto fn = tma_encode_fn(why);
  if (!fn) return why;
  const cuuint64_t dims[4] = {static_cast<cuuint64_t>(d), static_cast<cuuint64_t>(s), static_cast<cuuint64_t>(h),
                              static_cast<cuuint64_t>(b)};
  const cuuint64_t strides[3] = {static_cast<cuuint64_t>(ss * 2), static_cast<cuuint64_t>(sh * 2),
                                 static_cast<cuuint64_t>(sb * 2)};
  const cuuint32_t box[4] = {64, static_cast<cuuint32_t>(box_rows), 1, 1};
  const cuuint32_t estr[4] = {1, 1, 1, 1};
  const auto dt = std::is_same_v<T, bf16> ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  const CUresult r = fn(&g.map, dt, 4, static_cast<void*>(ptr), dims, strides, box, estr,
                        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) return "cuTensorMapEncodeTiled failed (error " + std::to_string(static_cast<int>(r)) + ")";
  return {};
}

inline constexpr int kF32BoxCols = 32;  // one 128-byte swizzled row of f32

inline std::string make_f32_map(CUtensorMap& map, float* ptr, std::int64_t rows, int cols, int box_rows) {
  std::string why;
  if (reinterpret_cast<std::uintptr_t>(ptr) % 16 != 0 || cols % kF32BoxCols != 0) return "f32 map: alignment";
  if (box_rows < 1 || box_rows > 256) return "TMA box rows out of range";
  auto fn = tma_encode_fn(why);
  if (!fn) return why;
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(cols) * sizeof(float)};
  const cuuint32_t box[2] = {kF32BoxCols, static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t estr[2] = {1, 1};
  const CUresult r = fn(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, static_cast<void*>(ptr), dims, strides, box, estr,
                        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) return "cuTensorMapEncodeTiled failed (error " + std::to_string(static_cast<int>(r)) + ")";
  return {};
}

}  // namespace flashtile::tile
