// flashtile tile framework: thread-block clusters (sm_90). CTAs of one cluster run at once on one GPC and can reach
// each other's shared memory, so one TMA load can land in several of them (multicast) and a consumer in one CTA can
// release a buffer that its peer's producer refills.
//
//   cluster_rank()                      this CTA's rank in its cluster (%cluster_ctarank).
//   cluster_arrive() / cluster_wait()   barrier.cluster halves (release / acquire), all threads of a warp together;
//                                       exited threads count as arrived. cluster_sync() = both.
//   arrive_remote(bar, cta)             one arrival on the mbarrier at bar's offset in cluster CTA `cta`, default
//                                       semantics: a consumer's release after its wgmma reads completed (the form
//                                       with .release.cluster cost the sm90 kernel 11-24%, 2026-11-30_h200_sm90_clusters_multicast).
//   load_async_multicast(st, map, bar, row, head, batch, r0, mask)   one thread: rows [row, row + box) of (head,
//                                       batch), box = the map's box rows, into rows r0.. (multiple of 8) of st in every
//                                       CTA of `mask` (bit i: rank i), completing on the mbarrier at bar's offset in
//                                       each of them. Each destination's barrier must expect the bytes of every part
//                                       that lands there (its tx-count may go negative before its own expect_tx).
// Barriers that remote CTAs reach must be initialized (fence_barrier_init) and the cluster synced before use, and a CTA
// must not exit while a peer can still reach its shared memory (a cluster_sync at the end).
#pragma once

#include <cuda.h>

#include <cstdint>

#include "tile/mbarrier.cuh"
#include "tile/st.cuh"

namespace flashtile::tile {

__device__ __forceinline__ std::uint32_t cluster_rank() {
  std::uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}
__device__ __forceinline__ void cluster_arrive() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void cluster_wait() { asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void cluster_sync() {
  cluster_arrive();
  cluster_wait();
}

__device__ __forceinline__ void arrive_remote(mbarrier& bar, std::uint32_t cta) {
  std::uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(bar.addr()), "r"(cta));
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];\n" ::"r"(remote) : "memory");
}

__device__ __forceinline__ void tma_load_4d_multicast(std::uint32_t dst, const CUtensorMap* map, std::uint32_t bar,
                                                      int c0, int c1, int c2, int c3, std::uint16_t mask) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, "
      "{%3, %4, %5, %6}], [%2], %7;\n" ::"r"(dst),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "h"(mask)
      : "memory");
}

template <typename T, int R, int C>
__device__ __forceinline__ void load_async_multicast(st<T, R, C>& s, const CUtensorMap* map, mbarrier& bar, int row,
                                                     int head, int batch, int r0, std::uint16_t mask) {
#pragma unroll
  for (int b = 0; b < st<T, R, C>::kBlocks; ++b)
    tma_load_4d_multicast(s.block_addr(b, r0), map, bar.addr(), b * st<T, R, C>::kBlockCols, row, head, batch, mask);
}

}  // namespace flashtile::tile
