// Additions to the tile framework for the sm80 forward kernel (owned by the sm80 family; the framework's own headers
// stay as they are): global <-> tile copies that also accept views the 16-byte fast path cannot take.
//
//   load_rows<NT>(st, g, row_stride, valid_rows, tid, aligned16)
//        like load_async: rows >= valid_rows zero-filled. aligned16 (pointer 16-byte aligned, stride a multiple of
//        8 elements): 16-byte cp.async (then cp_async_commit / cp_async_wait). Otherwise element-wise loads and plain
//        shared stores into the same swizzled image (complete before the next __syncthreads).
//   store_rows(g, row_stride, t, valid_rows, aligned4)
//        like store: rows >= valid_rows not written; 32-bit pair stores when aligned4, else 16-bit stores.
#pragma once

#include "tile/ops.cuh"

namespace flashtile::tile::sm80 {

template <int NT, typename T, int R, int C>
__device__ __forceinline__ void load_rows(st<T, R, C>& s, const T* g, std::int64_t row_stride, int valid_rows, int tid,
                                          bool aligned16) {
  constexpr int kChunksPerRow = C / 8;
  constexpr int kChunks = R * kChunksPerRow;
  static_assert(kChunks % NT == 0, "tile must split evenly over the threads");
#pragma unroll
  for (int i = 0; i < kChunks / NT; ++i) {
    const int idx = tid + i * NT;
    const int r = idx / kChunksPerRow, c = (idx % kChunksPerRow) * 8;
    const bool valid = r < valid_rows;
    const T* src = g + (valid ? static_cast<std::int64_t>(r) * row_stride + c : 0);
    if (aligned16) {
      cp_async_16(s.addr() + st<T, R, C>::byte_offset(r, c), src, valid);
    } else {
      std::uint32_t wds[4] = {0u, 0u, 0u, 0u};  // built in registers (a byte array would live in local memory)
      if (valid) {
        const unsigned short* s16 = reinterpret_cast<const unsigned short*>(src);
#pragma unroll
        for (int e = 0; e < 8; ++e) wds[e / 2] |= std::uint32_t(__ldg(s16 + e)) << (16 * (e % 2));
      }
      *reinterpret_cast<uint4*>(s.ptr(r, c)) = make_uint4(wds[0], wds[1], wds[2], wds[3]);
    }
  }
}

template <typename TG, typename T, int R, int C>
__device__ __forceinline__ void store_rows(TG* g, std::int64_t row_stride, const rt<T, R, C>& t, int valid_rows,
                                           bool aligned4) {
  static_assert(is_16bit_v<TG>, "store_rows writes 16-bit elements");
  if (aligned4) {
    store(g, row_stride, t, valid_rows);
  } else {
    store_map<false>(g, row_stride, t, valid_rows, [](int, int, float2 x) { return x; });
  }
}

}  // namespace flashtile::tile::sm80
