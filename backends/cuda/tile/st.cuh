// flashtile tile framework: shared tiles in the 128-byte-swizzled layout that TMA, wgmma and ldmatrix all read
// without bank conflicts.
//
//   st<T, R, C>   R x C tile of a 16-bit T in shared memory (R multiple of 8, C multiple of 64). Stored as C/64
//                 column blocks, each [R rows][64 elements] = R x 128 bytes, block b at byte b*R*128. Inside a block
//                 the 16-byte chunk j of row r sits at chunk j ^ (r % 8): the CU_TENSOR_MAP_SWIZZLE_128B pattern,
//                 which equals wgmma's 128B swizzle mode. Needs 1024-byte alignment (alignas on the struct).
//   st_bf<R,C>, st_hf<R,C>   aliases.
//   sp<T, R, C>   R x C tile stored row by row, each row padded by 16 bytes: a row is contiguous (one 1-D bulk copy
//                 fills it, whatever the source's row stride) and the padding moves ldmatrix's 8 rows onto distinct
//                 banks. Same byte_offset / addr interface as st (load() reads both); no TMA-map or wgmma use.
//   t.byte_offset(r, c)      byte offset of element (r, c) from the tile start (c % 8 == 0 keeps 16 bytes contiguous).
//   t.block_addr(b, r0)      shared-space address (u32) of row r0 (multiple of 8) of column block b.
//   smem_u32(p)              generic pointer -> shared-space address.
#pragma once

#include "tile/base.cuh"

namespace flashtile::tile {

inline constexpr int kSwizzleBytes = 128;  // one swizzled row: 64 16-bit elements
inline constexpr int kSwizzleAtomBytes = 1024;  // 8 rows of 128 bytes: the repeat of the swizzle pattern

__device__ __forceinline__ std::uint32_t smem_u32(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

template <typename T, int R, int C>
struct alignas(kSwizzleAtomBytes) st {
  static_assert(is_16bit_v<T>, "shared tiles hold bf16 or half");
  static_assert(R % 8 == 0, "shared tile rows: multiple of 8 (one swizzle atom)");
  static_assert(C % 64 == 0, "shared tile cols: multiple of 64 (one 128-byte swizzled row)");
  using dtype = T;
  static constexpr int rows = R;
  static constexpr int cols = C;
  static constexpr int kBlockCols = kSwizzleBytes / static_cast<int>(sizeof(T));  // 64
  static constexpr int kBlocks = C / kBlockCols;
  static constexpr int kBlockBytes = R * kSwizzleBytes;
  static constexpr int kBytes = R * C * static_cast<int>(sizeof(T));

  T data[R * C];

  __device__ static constexpr std::uint32_t byte_offset(int r, int c) {
    const int b = c / kBlockCols;
    const int cc = c % kBlockCols;
    return static_cast<std::uint32_t>(b * kBlockBytes + r * kSwizzleBytes + ((((cc / 8) ^ (r % 8)) & 7) * 16) +
                                      (cc % 8) * static_cast<int>(sizeof(T)));
  }
  __device__ T* ptr(int r, int c) { return reinterpret_cast<T*>(reinterpret_cast<char*>(data) + byte_offset(r, c)); }
  __device__ const T* ptr(int r, int c) const {
    return reinterpret_cast<const T*>(reinterpret_cast<const char*>(data) + byte_offset(r, c));
  }
  __device__ std::uint32_t addr() const { return smem_u32(data); }
  __device__ std::uint32_t block_addr(int b, int r0 = 0) const {
    return addr() + static_cast<std::uint32_t>(b * kBlockBytes + r0 * kSwizzleBytes);
  }
};

template <typename T, int R, int C>
struct alignas(16) sp {
  static_assert(is_16bit_v<T>, "shared tiles hold bf16 or half");
  static_assert(R % 16 == 0 && C % 16 == 0, "padded tiles: 16 x 16 base tiles");
  using dtype = T;
  static constexpr int rows = R;
  static constexpr int cols = C;
  static constexpr int kPitch = C * static_cast<int>(sizeof(T)) + 16;  // bytes a row
  static constexpr int kRowBytes = C * static_cast<int>(sizeof(T));    // payload bytes a row
  static constexpr int kBytes = R * kPitch;

  unsigned char data[kBytes];

  __device__ static constexpr std::uint32_t byte_offset(int r, int c) {
    return static_cast<std::uint32_t>(r * kPitch + c * static_cast<int>(sizeof(T)));
  }
  __device__ T* row(int r) { return reinterpret_cast<T*>(data + r * kPitch); }
  __device__ std::uint32_t addr() const { return smem_u32(data); }
};

template <typename X>
inline constexpr bool is_shared_tile_v = false;
template <typename T, int R, int C>
inline constexpr bool is_shared_tile_v<st<T, R, C>> = true;
template <typename T, int R, int C>
inline constexpr bool is_shared_tile_v<sp<T, R, C>> = true;

template <int R, int C>
using st_bf = st<bf16, R, C>;
template <int R, int C>
using st_hf = st<half, R, C>;

}  // namespace flashtile::tile
