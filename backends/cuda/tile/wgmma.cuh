// flashtile tile framework: warpgroup matrix multiply (wgmma, sm_90a) on shared tiles and register tiles.
//
// Scope: a warpgroup (4 warps). A 64 x N accumulator is held as one rt_fl<16, N> per warp (warp w of the group owns
// rows 16w..16w+15); the rt row layout is exactly wgmma's accumulator register order, so no shuffling is needed.
//
//   desc_kmajor(st, row0, k)     descriptor of the 64 (or all) rows from row0 of a K-major st (rows = M or N,
//                                cols = K), at K offset k (multiple of 16). 128B swizzle, SBO = 1024 B.
//   desc_mnmajor(st, k)          descriptor of rows k..k+15 of an MN-major st (rows = K, cols = N): LBO = the byte
//                                distance between 64-column blocks, SBO = 1024 B (next 8 rows of K).
//   fence(), commit(), wait<N>() wgmma.fence / commit_group / wait_group (wait<0>: all issued groups done).
//   fence_operand(rt)            compiler fence on accumulator registers around async wgmma.
//   mma_ABt(d, a_st, a_row0, b_st, accumulate)   d(64xN) (+)= A(64xK rows a_row0.. of a_st) · B(NxK = b_st)ᵀ
//   mma_AB (d, a_rt, b_st, accumulate)           d(64xN) (+)= A(this warp's 16xK rows, registers) · B(KxN = b_st)
// Both issue K/16 wgmmas and do NOT commit/wait: call fence() before (when registers changed), then commit(), then
// wait<...>() and fence_operand(d) before reading d.
#pragma once

#include <cstdint>

#include "tile/rt.cuh"
#include "tile/st.cuh"
#include "tile/wgmma_ops.inc"

namespace flashtile::tile {

__device__ __forceinline__ std::uint64_t make_desc(std::uint32_t addr, std::uint32_t lbo_bytes,
                                                   std::uint32_t sbo_bytes) {
  std::uint64_t d = 0;
  d |= static_cast<std::uint64_t>((addr & 0x3FFFF) >> 4);
  d |= static_cast<std::uint64_t>((lbo_bytes >> 4) & 0x3FFF) << 16;
  d |= static_cast<std::uint64_t>((sbo_bytes >> 4) & 0x3FFF) << 32;
  d |= std::uint64_t{1} << 62;  // 128-byte swizzle
  return d;
}

template <typename T, int R, int C>
__device__ __forceinline__ std::uint64_t desc_kmajor(const st<T, R, C>& s, int row0, int k) {
  using S = st<T, R, C>;
  return make_desc(s.block_addr(k / S::kBlockCols, row0) + (k % S::kBlockCols) * static_cast<int>(sizeof(T)), 16,
                   kSwizzleAtomBytes);
}
template <typename T, int R, int C>
__device__ __forceinline__ std::uint64_t desc_mnmajor(const st<T, R, C>& s, int k) {
  using S = st<T, R, C>;
  return make_desc(s.block_addr(0, k), S::kBlockBytes, kSwizzleAtomBytes);
}

__device__ __forceinline__ void fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

template <typename T, int R, int C, layout L>
__device__ __forceinline__ void fence_operand(rt<T, R, C, L>& t) {
  each<rt<T, R, C, L>>([&](int i, int j, int k) {
    if constexpr (std::is_same_v<T, float>) {
      asm volatile("" : "+f"(t.v[i][j][k].x), "+f"(t.v[i][j][k].y)::"memory");
    } else {
      asm volatile("" : "+r"(*reinterpret_cast<std::uint32_t*>(&t.v[i][j][k]))::"memory");
    }
  });
}

#define FT_WGMMA_DISPATCH(KIND, TB)                      \
  if constexpr (std::is_same_v<T, bf16>) {               \
    FT_WGMMA_DISPATCH_N(KIND, "bf16", TB)                \
  } else {                                               \
    FT_WGMMA_DISPATCH_N(KIND, "f16", TB)                 \
  }
#define FT_WGMMA_DISPATCH_N(KIND, TY, TB)                                                                    \
  if constexpr (N == 16) FT_WGMMA_##KIND##_16(TY, TB);                                                      \
  else if constexpr (N == 32) FT_WGMMA_##KIND##_32(TY, TB);                                                 \
  else if constexpr (N == 64) FT_WGMMA_##KIND##_64(TY, TB);                                                 \
  else if constexpr (N == 80) FT_WGMMA_##KIND##_80(TY, TB);                                                 \
  else if constexpr (N == 96) FT_WGMMA_##KIND##_96(TY, TB);                                                 \
  else if constexpr (N == 128) FT_WGMMA_##KIND##_128(TY, TB);                                               \
  else if constexpr (N == 160) FT_WGMMA_##KIND##_160(TY, TB);                                               \
  else if constexpr (N == 176) FT_WGMMA_##KIND##_176(TY, TB);                                               \
  else if constexpr (N == 192) FT_WGMMA_##KIND##_192(TY, TB);                                               \
  else if constexpr (N == 256) FT_WGMMA_##KIND##_256(TY, TB);

template <int N>
inline constexpr bool wgmma_n_ok = N == 16 || N == 32 || N == 64 || N == 80 || N == 96 || N == 128 || N == 160 || N == 176 ||
                                   N == 192 || N == 256;

// One m64nNk16: d (+)= A(desc) · B(desc), B K-major.
template <typename T, int N>
__device__ __forceinline__ void wgmma_ss(rt_fl<16, N>& d, std::uint64_t da, std::uint64_t db, int acc) {
  static_assert(wgmma_n_ok<N>, "wgmma N not generated (gen_wgmma.py)");
  FT_WGMMA_DISPATCH(SS, "0")
}
// One m64nNk16 with A from registers (this warp's 16 rows x 16 k); kMN: B is MN-major (transposed).
template <typename T, int N, bool kMN>
__device__ __forceinline__ void wgmma_rs(rt_fl<16, N>& d, std::uint32_t a0, std::uint32_t a1, std::uint32_t a2,
                                         std::uint32_t a3, std::uint64_t db, int acc) {
  static_assert(wgmma_n_ok<N>, "wgmma N not generated (gen_wgmma.py)");
  if constexpr (kMN) {
    FT_WGMMA_DISPATCH(RS, "1")
  } else {
    FT_WGMMA_DISPATCH(RS, "0")
  }
}

// d(64 x N) (+)= A(rows a_row0..a_row0+63 of a, K = a's cols) · bᵀ (b: N x K).
template <typename T, int N, int AR, int K, int BN>
__device__ __forceinline__ void mma_ABt(rt_fl<16, N>& d, const st<T, AR, K>& a, int a_row0, const st<T, BN, K>& b,
                                        bool accumulate) {
  static_assert(BN == N, "B rows must equal the accumulator width");
#pragma unroll
  for (int k = 0; k < K; k += 16)
    wgmma_ss<T, N>(d, desc_kmajor(a, a_row0, k), desc_kmajor(b, 0, k), (accumulate || k > 0) ? 1 : 0);
}

// d(64 x N) (+)= A(this warp's rt<T,16,K>, warpgroup rows in warp order) · b (K x N, MN-major in smem).
template <typename T, int N, int K, int BK>
__device__ __forceinline__ void mma_AB(rt_fl<16, N>& d, const rt<T, 16, K>& a, const st<T, BK, N>& b,
                                       bool accumulate) {
  static_assert(BK == K, "B rows must equal A's cols");
#pragma unroll
  for (int k = 0; k < K / 16; ++k)
    wgmma_rs<T, N, true>(d, as_u32(a.v[0][k][0]), as_u32(a.v[0][k][1]), as_u32(a.v[0][k][2]), as_u32(a.v[0][k][3]),
                         desc_mnmajor(b, 16 * k), (accumulate || k > 0) ? 1 : 0);
}

#undef FT_WGMMA_DISPATCH
#undef FT_WGMMA_DISPATCH_N

}  // namespace flashtile::tile
