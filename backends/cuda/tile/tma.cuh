// flashtile tile framework: TMA (the sm_90 bulk tensor copy engine) between gl4 tensors and st shared tiles.
//
//   load_async(st, map, bar, row, head, batch)   one thread: copies rows [row, row+R) x all C columns of (head,
//                               batch) into st as C/64 boxes, completing on mbarrier bar (announce the bytes with
//                               arrive_expect_tx(bar, st::kBytes) first). Rows past the tensor end arrive as zeros.
//   store_async(map, st, row, head, batch, r0)   one thread: shared -> global, from row r0 (multiple of 8) of st,
//                               a box of the map's rows; rows past the end are clipped. Writers of st need
//                               fence_proxy_async() + a barrier before it.
//   store_commit(), store_wait<N>()              bulk-group completion for stores (wait<0>: all done reading smem).
//   store_done<N>()                              the same until the writes themselves are done (visible to this thread).
//   load_bulk(dst, src, bytes, bar)              one thread: a plain copy of `bytes` (multiple of 16, both addresses
//                               16-byte aligned) global -> shared, completing on bar (announce them first).
//   reduce_add_bulk(dst, src, bytes)             one thread: dst[i] += src[i] for `bytes` of f32, shared -> global,
//                               performed in L2 (a bulk group: store_commit / store_wait as stores).
//   reduce_add_box(map, src, col, row)           one thread: the same for one box of a 2-D f32 map (make_f32_map),
//                               from its swizzled shared-memory image at src, box origin (col, row).
//   prefetch(map)                               warm the descriptor cache.
//   prefetch_l2<ST>(map, row, head, batch)      one thread: ask for the box load_async(ST...) would read to be
//                               brought into L2 (a hint: no barrier, no shared memory, out-of-range rows ignored).
// The map must describe boxes of R rows x 64 columns (make_gl4 with box_rows = R).
#pragma once

#include <cuda.h>

#include <cstdint>

#include "tile/mbarrier.cuh"
#include "tile/st.cuh"

namespace flashtile::tile {

__device__ __forceinline__ void tma_load_4d(std::uint32_t dst, const CUtensorMap* map, std::uint32_t bar, int c0,
                                            int c1, int c2, int c3) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, %6}], "
      "[%2];\n" ::"r"(dst),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
      : "memory");
}
__device__ __forceinline__ void tma_store_4d(const CUtensorMap* map, std::uint32_t src, int c0, int c1, int c2,
                                             int c3) {
  asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group [%0, {%2, %3, %4, %5}], [%1];\n" ::"l"(
                   reinterpret_cast<std::uint64_t>(map)),
               "r"(src), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
               : "memory");
}
__device__ __forceinline__ void store_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void store_wait() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}
template <int N>
__device__ __forceinline__ void store_done() {
  asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(N) : "memory");
}
__device__ __forceinline__ void load_bulk(void* dst, const void* src, std::uint32_t bytes, mbarrier& bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(smem_u32(dst)),
      "l"(src), "r"(bytes), "r"(bar.addr())
      : "memory");
}
__device__ __forceinline__ void reduce_add_bulk(float* dst, const float* src, std::uint32_t bytes) {
  asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;\n" ::"l"(dst),
               "r"(smem_u32(src)), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void reduce_add_box(const CUtensorMap* map, const float* src, int col, int row) {
  asm volatile(
      "cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [%0, {%2, %3}], [%1];\n" ::"l"(
          reinterpret_cast<std::uint64_t>(map)),
      "r"(smem_u32(src)), "r"(col), "r"(row)
      : "memory");
}
__device__ __forceinline__ void prefetch(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<std::uint64_t>(map)) : "memory");
}

__device__ __forceinline__ void tma_prefetch_4d(const CUtensorMap* map, int c0, int c1, int c2, int c3) {
  asm volatile("cp.async.bulk.prefetch.tensor.4d.L2.global.tile [%0, {%1, %2, %3, %4}];\n" ::"l"(
                   reinterpret_cast<std::uint64_t>(map)),
               "r"(c0), "r"(c1), "r"(c2), "r"(c3)
               : "memory");
}

template <typename ST>
__device__ __forceinline__ void prefetch_l2(const CUtensorMap* map, int row, int head, int batch) {
#pragma unroll
  for (int b = 0; b < ST::kBlocks; ++b) tma_prefetch_4d(map, b * ST::kBlockCols, row, head, batch);
}

template <typename T, int R, int C>
__device__ __forceinline__ void load_async(st<T, R, C>& s, const CUtensorMap* map, mbarrier& bar, int row, int head,
                                           int batch) {
#pragma unroll
  for (int b = 0; b < st<T, R, C>::kBlocks; ++b)
    tma_load_4d(s.block_addr(b), map, bar.addr(), b * st<T, R, C>::kBlockCols, row, head, batch);
}
template <typename T, int R, int C>
__device__ __forceinline__ void store_async(const CUtensorMap* map, const st<T, R, C>& s, int row, int head,
                                            int batch, int r0 = 0) {
#pragma unroll
  for (int b = 0; b < st<T, R, C>::kBlocks; ++b)
    tma_store_4d(map, s.block_addr(b, r0), b * st<T, R, C>::kBlockCols, row, head, batch);
}

}  // namespace flashtile::tile
