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
//   fence_operand(rt, ...)       compiler fence on accumulator/operand registers around async wgmma.
//   mma_ABt(d, a_st, a_row0, b_st, accumulate)   d(64xN) (+)= A(64xK rows a_row0.. of a_st) · B(NxK = b_st)ᵀ
//   mma_AB (d, a_rt, b_st, accumulate)           d(64xN) (+)= A(this warp's 16xK rows, registers) · B(KxN = b_st)
//   mma_AB (d, a_rt, b_st, b_col0, accumulate)   the same from columns b_col0..b_col0+N-1 of a wider MN-major b_st
//   mma_AB (d, a_st, a_row0, b_st, b_col0, accumulate)  d(64xN) (+)= A(64xK rows a_row0.. of K-major a_st) ·
//                                B(columns b_col0.. of MN-major b_st, K rows); both operands in shared memory
//   mma_ABt_w<W>(d, a_st, a_row0, b_st, accumulate)  mma_ABt on d's first W columns only (a narrower wgmma)
//   with_width<N, Step>(cols, f) f(integral_constant W): the narrowest multiple of Step >= cols, at most N
//   mma_AB_rowsum(d, e, a_rt, b_st, ones_st, accumulate)  d(64x64) (+)= A · B and e (+)= A · ones in one m64n72k16
//                                per k-step: with ones all 1, e holds A's row sums (rt_rowsum), from the tensor cores
// Both issue K/16 wgmmas and do NOT commit/wait: call fence() before (when registers changed), then commit(), then
// wait<...>() and fence_operand(d) before reading d.
#pragma once

#include <cstdint>
#include <type_traits>

#include "tile/rt.cuh"
#include "tile/rv.cuh"
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
__device__ __forceinline__ std::uint64_t desc_mnmajor(const st<T, R, C>& s, int k, int col0 = 0) {
  using S = st<T, R, C>;
  // col0 inside a 64-column block (e.g. 32): a start address inside the swizzled row, as desc_kmajor's k offsets.
  return make_desc(s.block_addr(col0 / S::kBlockCols, k) + (col0 % S::kBlockCols) * static_cast<int>(sizeof(T)),
                   S::kBlockBytes, kSwizzleAtomBytes);
}
// Descriptor d moved on by `bytes` (a multiple of 16) within its tile: one 32-bit add to the start address field,
// which cannot carry into LBO because shared addresses stay under 256 KB. make_desc per k-step instead cost a mask,
// a shift and a 64-bit merge per operand (ncu, 2026-11-30_h200_sm90_d64_narrow_blocks: ours executes 33-35% more warp instructions than cuDNN
// at causal 512, IMAD/LOP3/SHF/R2UR leading).
__device__ __forceinline__ std::uint64_t desc_add(std::uint64_t d, std::uint32_t bytes) {
  const std::uint32_t lo = static_cast<std::uint32_t>(d) + (bytes >> 4), hi = static_cast<std::uint32_t>(d >> 32);
  return (static_cast<std::uint64_t>(hi) << 32) | lo;
}
// Byte offset of K-major column k (a multiple of 8) from column 0 in the same rows: desc_kmajor(s, r, k) equals
// desc_add(desc_kmajor(s, r, 0), kmajor_offset<S>(k)).
template <typename S>
__host__ __device__ constexpr std::uint32_t kmajor_offset(int k) {
  return static_cast<std::uint32_t>(k / S::kBlockCols * S::kBlockBytes +
                                    k % S::kBlockCols * static_cast<int>(sizeof(typename S::dtype)));
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
template <typename T0, typename T1, typename... Ts>
__device__ __forceinline__ void fence_operand(T0& t0, T1& t1, Ts&... ts) {
  fence_operand(t0);
  fence_operand(t1, ts...);
}

#define FT_WGMMA_DISPATCH(KIND, TB)               \
  if constexpr (std::is_same_v<T, bf16>) {        \
    FT_WGMMA_DISPATCH_W(KIND, "bf16", TB)         \
  } else {                                        \
    FT_WGMMA_DISPATCH_W(KIND, "f16", TB)          \
  }

template <int W>
inline constexpr bool wgmma_n_ok = W % 16 == 0 && W >= 16 && W <= 256;

// One m64nWk16 on the first W columns of d (W <= N; the others keep their values): d (+)= A(desc) · B(desc), B
// K-major (kMN: MN-major).
template <typename T, int W, bool kMN = false, int N>
__device__ __forceinline__ void wgmma_ss(rt_fl<16, N>& d, std::uint64_t da, std::uint64_t db, int acc) {
  static_assert(wgmma_n_ok<W> && W <= N, "wgmma width: a multiple of 16, at most the accumulator's");
  if constexpr (kMN) {
    FT_WGMMA_DISPATCH(SS, "1")
  } else {
    FT_WGMMA_DISPATCH(SS, "0")
  }
}
// One m64nWk16 with A from registers (this warp's 16 rows x 16 k); kMN: B is MN-major (transposed).
template <typename T, int W, bool kMN, int N>
__device__ __forceinline__ void wgmma_rs(rt_fl<16, N>& d, std::uint32_t a0, std::uint32_t a1, std::uint32_t a2,
                                         std::uint32_t a3, std::uint64_t db, int acc) {
  static_assert(wgmma_n_ok<W> && W <= N, "wgmma width: a multiple of 16, at most the accumulator's");
  if constexpr (kMN) {
    FT_WGMMA_DISPATCH(RS, "1")
  } else {
    FT_WGMMA_DISPATCH(RS, "0")
  }
}

// f(std::integral_constant<int, W>) for the narrowest W of Step, 2 Step, ... N with W >= cols (N when cols > N): a
// run-time width as a compile-time one (one branch each; a constant cols folds to one call).
template <int N, int Step = 16, int W = Step, typename F>
__device__ __forceinline__ void with_width(int cols, F&& f) {
  static_assert(Step % 16 == 0 && Step > 0, "wgmma widths: multiples of 16");
  if constexpr (W >= N) {
    f(std::integral_constant<int, N>{});
  } else {
    if (cols <= W) f(std::integral_constant<int, W>{});
    else with_width<N, Step, W + Step>(cols, f);
  }
}

// mma_ABt on the first W columns of d only, from b's first W rows (W <= N <= b's rows); d's other columns keep their
// values.
template <int W, typename T, int N, int AR, int K, int BN>
__device__ __forceinline__ void mma_ABt_w(rt_fl<16, N>& d, const st<T, AR, K>& a, int a_row0, const st<T, BN, K>& b,
                                          bool accumulate) {
  static_assert(W <= N && N <= BN, "the columns issued must exist in d and b");
  const std::uint64_t da = desc_kmajor(a, a_row0, 0), db = desc_kmajor(b, 0, 0);
#pragma unroll
  for (int k = 0; k < K; k += 16)
    wgmma_ss<T, W>(d, desc_add(da, kmajor_offset<st<T, AR, K>>(k)), desc_add(db, kmajor_offset<st<T, BN, K>>(k)),
                   (accumulate || k > 0) ? 1 : 0);
}

// d(64 x N) (+)= A(rows a_row0..a_row0+63 of a, K = a's cols) · bᵀ (b: N x K).
template <typename T, int N, int AR, int K, int BN>
__device__ __forceinline__ void mma_ABt(rt_fl<16, N>& d, const st<T, AR, K>& a, int a_row0, const st<T, BN, K>& b,
                                        bool accumulate) {
  static_assert(BN == N, "B rows must equal the accumulator width");
  mma_ABt_w<N>(d, a, a_row0, b, accumulate);
}

// d(64 x N) (+)= A(this warp's rt<T,16,K>, warpgroup rows in warp order) · b (K x N, MN-major in smem).
template <typename T, int N, int K, int BK>
__device__ __forceinline__ void mma_AB(rt_fl<16, N>& d, const rt<T, 16, K>& a, const st<T, BK, N>& b,
                                       bool accumulate) {
  static_assert(BK == K, "B rows must equal A's cols");
  const std::uint64_t db = desc_mnmajor(b, 0);
#pragma unroll
  for (int k = 0; k < K / 16; ++k)  // rows 16k.. of an MN-major tile: 16k whole swizzled rows on
    wgmma_rs<T, N, true>(d, as_u32(a.v[0][k][0]), as_u32(a.v[0][k][1]), as_u32(a.v[0][k][2]), as_u32(a.v[0][k][3]),
                         desc_add(db, 16 * k * kSwizzleBytes), (accumulate || k > 0) ? 1 : 0);
}

// d(64 x N) (+)= A(this warp's rt<T,16,K>) · columns b_col0..b_col0+N-1 of b (K x BN, MN-major; b_col0 a multiple
// of 64, or of N inside one 64-column block).
template <typename T, int N, int K, int BN>
__device__ __forceinline__ void mma_AB(rt_fl<16, N>& d, const rt<T, 16, K>& a, const st<T, K, BN>& b, int b_col0,
                                       bool accumulate) {
  static_assert(N <= BN, "B columns must exist");
  const std::uint64_t db = desc_mnmajor(b, 0, b_col0);
#pragma unroll
  for (int k = 0; k < K / 16; ++k)
    wgmma_rs<T, N, true>(d, as_u32(a.v[0][k][0]), as_u32(a.v[0][k][1]), as_u32(a.v[0][k][2]), as_u32(a.v[0][k][3]),
                         desc_add(db, 16 * k * kSwizzleBytes), (accumulate || k > 0) ? 1 : 0);
}

// d(64 x N) (+)= A(rows a_row0..a_row0+63 of a, K-major, K = a's cols) · columns b_col0.. of b (K x BN, MN-major).
template <typename T, int N, int AR, int K, int BN>
__device__ __forceinline__ void mma_AB(rt_fl<16, N>& d, const st<T, AR, K>& a, int a_row0, const st<T, K, BN>& b,
                                       int b_col0, bool accumulate) {
  static_assert(N <= BN, "B columns must exist");
  const std::uint64_t da = desc_kmajor(a, a_row0, 0), db = desc_mnmajor(b, 0, b_col0);
#pragma unroll
  for (int k = 0; k < K; k += 16)
    wgmma_ss<T, N, true>(d, desc_add(da, kmajor_offset<st<T, AR, K>>(k)), desc_add(db, k * kSwizzleBytes),
                         (accumulate || k > 0) ? 1 : 0);
}

// The 8 columns that mma_AB_rowsum adds past d's 64, one warp's share (g = lane/4, t = lane%4): v[0] = row g's cols
// 2t, 2t+1, v[1] = row g+8's; against an all-ones B every one of them is its row's sum of A.
struct rt_rowsum {
  float2 v[2];
};
__device__ __forceinline__ void fence_operand(rt_rowsum& e) {
  asm volatile("" : "+f"(e.v[0].x), "+f"(e.v[0].y), "+f"(e.v[1].x), "+f"(e.v[1].y)::"memory");
}
// The row sums as a row vector (rv.cuh's order: v[0][0] row g, v[0][1] row g+8).
__device__ __forceinline__ rv_fl_rows<16> row_sums(const rt_rowsum& e) { return {{{e.v[0].x, e.v[1].x}}}; }
// e's rows times v's (O's rescale by corr, applied to l alike).
__device__ __forceinline__ void mul_row(rt_rowsum& e, const rv_fl_rows<16>& v) {
#pragma unroll
  for (int h = 0; h < 2; ++h) e.v[h] = make_float2(e.v[h].x * v.v[0][h], e.v[h].y * v.v[0][h]);
}

// d(64 x 64) (+)= A · b and e (+)= A · ones (A: this warp's rt<T,16,K>; b: K x 64, MN-major) in one m64n72k16 per
// k-step, so an all-ones tile gives A's row sums in e at 12.5% more tensor work instead of an add per element. The
// descriptor's LBO (the distance to B's next 64-column block) points at `ones` instead of past b: ones must lie after
// b in shared memory (LBO is unsigned, 14 bits of 16 bytes) and have at least K rows; only its first 8 columns are
// read, swizzled like any tile, so fill it whole.
template <typename T, int K, int BK, int OR>
__device__ __forceinline__ void mma_AB_rowsum(rt_fl<16, 64>& d, rt_rowsum& e, const rt<T, 16, K>& a,
                                              const st<T, BK, 64>& b, const st<T, OR, 64>& ones, bool accumulate) {
  static_assert(BK == K && OR >= K, "B rows must equal A's cols; ones needs as many");
  const std::uint64_t db0 = make_desc(b.addr(), ones.addr() - b.addr(), kSwizzleAtomBytes);
#pragma unroll
  for (int k = 0; k < K / 16; ++k) {  // the macro reads d, e, a0..a3, db, acc
    const std::uint32_t a0 = as_u32(a.v[0][k][0]), a1 = as_u32(a.v[0][k][1]), a2 = as_u32(a.v[0][k][2]),
                        a3 = as_u32(a.v[0][k][3]);
    const std::uint64_t db = desc_add(db0, 16 * k * kSwizzleBytes);
    const int acc = (accumulate || k > 0) ? 1 : 0;
    if constexpr (std::is_same_v<T, bf16>) {
      FT_WGMMA_RSX_64("bf16", "1");
    } else {
      FT_WGMMA_RSX_64("f16", "1");
    }
  }
}

#undef FT_WGMMA_DISPATCH

}  // namespace flashtile::tile
