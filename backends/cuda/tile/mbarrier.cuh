// flashtile tile framework: shared-memory barriers (sm_90) and the other block-level synchronization primitives.
//
//   mbarrier                       one 64-bit barrier object in shared memory (put it in the kernel's smem struct).
//   init(bar, count)               by one thread; then fence_barrier_init() and a block barrier before use.
//   arrive(bar)                    one arrival.
//   arrive_expect_tx(bar, bytes)   one arrival that also announces `bytes` of TMA traffic completing on bar.
//   wait(bar, parity)              spin until the phase with this parity has completed. A fresh barrier is in phase
//                                  0: wait(bar, 0) blocks until its first completion, wait(bar, 1) returns at once
//                                  (how a producer waits on "empty" barriers in its first round).
//   named_sync(id, threads) / named_arrive(id, threads)   bar.sync / bar.arrive on hardware barrier id (1..15;
//                                  0 is __syncthreads), for a subset of warps (threads: multiple of 32).
//   setmaxnreg_inc<N>() / setmaxnreg_dec<N>()   re-balance registers between warpgroups (sm_90a; the kernel needs
//                                  __launch_bounds__, and inc only takes what the CTA's own pool holds: kThreads x
//                                  the entry register count); N multiple of 8 in [24, 256].
//   wait_flag(flag, value) / add_flag(flag, x)   a counter in global memory between CTAs: spin until it equals value
//                                  (acquire, GPU scope) / add x to it (release, GPU scope).
#pragma once

#include <cstdint>

#include "tile/st.cuh"

namespace flashtile::tile {

struct alignas(8) mbarrier {
  std::uint64_t raw;
  __device__ std::uint32_t addr() const { return smem_u32(&raw); }
};

__device__ __forceinline__ void init(mbarrier& bar, int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar.addr()), "r"(count) : "memory");
}
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
__device__ __forceinline__ void arrive(mbarrier& bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar.addr()) : "memory");
}
__device__ __forceinline__ void arrive_expect_tx(mbarrier& bar, std::uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar.addr()), "r"(bytes) : "memory");
}
__device__ __forceinline__ bool try_wait(mbarrier& bar, int parity) {
  std::uint32_t ok;
  asm volatile(
      "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(ok)
      : "r"(bar.addr()), "r"(parity)
      : "memory");
  return ok != 0;
}
__device__ __forceinline__ void wait(mbarrier& bar, int parity) {
  while (!try_wait(bar, parity)) {
  }
}

__device__ __forceinline__ void named_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void named_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

template <int N>
__device__ __forceinline__ void setmaxnreg_inc() {
  static_assert(N % 8 == 0 && N >= 24 && N <= 256);
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}
template <int N>
__device__ __forceinline__ void setmaxnreg_dec() {
  static_assert(N % 8 == 0 && N >= 24 && N <= 256);
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}

__device__ __forceinline__ void wait_flag(const int* flag, int value) {
  int x;
  do {
    asm volatile("ld.acquire.gpu.global.s32 %0, [%1];\n" : "=r"(x) : "l"(flag) : "memory");
  } while (x != value);
}
__device__ __forceinline__ void add_flag(int* flag, int x) {
  asm volatile("red.release.gpu.global.add.s32 [%0], %1;\n" ::"l"(flag), "r"(x) : "memory");
}

// Order this thread's generic-proxy shared-memory writes before later async-proxy (TMA, wgmma) accesses.
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

}  // namespace flashtile::tile
