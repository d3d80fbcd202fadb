// Additions to the tile framework for the sm80 kernels (owned by the sm80 family; the framework's own headers stay as
// they are): global <-> tile copies that also accept views the 16-byte fast path cannot take, and what the backward
// needs beyond the forward (transposed operands, per-column vectors, f32 reductions into global memory).
//
//   load_rows<NT>(st, g, row_stride, valid_rows, tid, aligned16)
//        like load_async: rows >= valid_rows zero-filled. aligned16 (pointer 16-byte aligned, stride a multiple of
//        8 elements): 16-byte cp.async (then cp_async_commit / cp_async_wait). Otherwise element-wise loads and plain
//        shared stores into the same swizzled image (complete before the next __syncthreads).
//   load_chunk(st, r, c, src, valid, aligned16)   one 16-byte chunk of load_rows (gathers: a source per row).
//   neg<NT>(st, tid)                 st = -st for a shared tile, the NT threads splitting its words (sign bits
//        flipped: exact; NaN stays NaN). Complete before the next __syncthreads.
//   store_rows(g, row_stride, t, valid_rows, aligned4)
//        like store: rows >= valid_rows not written; 32-bit pair stores when aligned4, else 16-bit stores.
//   load_vec<NT>(s, g, valid, tid)   float s[N] = g[0..N) by 4-byte cp.async, entries >= valid zero-filled.
//   transpose(d, s)                  d (C x R, row layout) = sᵀ for s an R x C col-layout tile: the same registers
//        re-indexed, so a tile kept keys x queries in shared memory serves as a queries x keys A operand.
//   load(v, s)                       rv_fl_cols v = this lane's columns of the float vector s (8-byte aligned).
//   exp2_fma_col(d, s, x, v)         d = exp2(s * x - v[col]);   sub_col(d, s, v): d = s - v[col]
//   mul(d, a, b)                     d = a ∘ b (elementwise, float tiles)
//   atomic_add(g, row_stride, t, valid_rows)   g += t in f32 (red.global.add; pairs 8-byte aligned), rows >=
//        valid_rows untouched.
#pragma once

#include "tile/ops.cuh"

namespace flashtile::tile::sm80 {

// One 16-byte chunk (row r, columns c .. c+7) of a shared tile from src; zero-filled when !valid (src not read).
template <typename T, int R, int C>
__device__ __forceinline__ void load_chunk(st<T, R, C>& s, int r, int c, const T* src, bool valid, bool aligned16) {
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

template <int NT, typename T, int R, int C>
__device__ __forceinline__ void neg(st<T, R, C>& s, int tid) {
  auto* w = reinterpret_cast<std::uint32_t*>(s.data);  // the swizzle moves elements, not signs: the words in any order
#pragma unroll 4
  for (int i = tid; i < R * C / 2; i += NT) w[i] ^= 0x80008000u;
}

template <int NT, typename T, int R, int C>
__device__ __forceinline__ void load_rows(st<T, R, C>& s, const T* g, std::int64_t row_stride, int valid_rows, int tid,
                                          bool aligned16) {
  constexpr int kChunksPerRow = C / 8;
  constexpr int kChunks = R * kChunksPerRow;
  static_assert(kChunks % NT == 0, "tile must split evenly over the threads");
  // cp.async where the threads split whole rows: a thread's chunks then sit in one column, kStep rows apart, so their
  // addresses are its first chunk's plus constants (shared: the swizzle repeats every 8 rows, kA first offsets) and
  // multiples of the row stride; one aligned16 test a tile, and full tiles without predicates. Per chunk, index
  // arithmetic and a branch had made these copies most of the sm80 forward's integer work
  // (bench/results/2026-12-03_h200_sm80_forward_profile).
  constexpr int kRowsApart = NT % kChunksPerRow == 0 ? NT / kChunksPerRow : 0;
  if constexpr (kRowsApart > 0 && (kRowsApart % 8 == 0 || 8 % kRowsApart == 0)) {
    if (aligned16) {
      using ST = st<T, R, C>;
      constexpr int kStep = kRowsApart, kPer = kChunks / NT, kA = kStep >= 8 ? 1 : 8 / kStep;
      const int r0 = tid / kChunksPerRow, c = (tid % kChunksPerRow) * 8;
      std::uint32_t first[kA];
#pragma unroll
      for (int a = 0; a < kA; ++a) first[a] = s.addr() + ST::byte_offset(r0 + a * kStep, c);
      const T* src = g + static_cast<std::int64_t>(r0) * row_stride + c;
      const std::int64_t step = static_cast<std::int64_t>(kStep) * row_stride;
      auto dst = [&](int i) { return first[i % kA] + static_cast<std::uint32_t>((i / kA) * kA * kStep * kSwizzleBytes); };
      if (valid_rows >= R) {
#pragma unroll
        for (int i = 0; i < kPer; ++i) cp_async_16(dst(i), src + i * step, true);
      } else {
#pragma unroll
        for (int i = 0; i < kPer; ++i) {
          const bool ok = r0 + i * kStep < valid_rows;
          cp_async_16(dst(i), ok ? src + i * step : g, ok);
        }
      }
      return;
    }
  }
#pragma unroll
  for (int i = 0; i < kChunks / NT; ++i) {
    const int idx = tid + i * NT;
    const int r = idx / kChunksPerRow, c = (idx % kChunksPerRow) * 8;
    const bool valid = r < valid_rows;
    load_chunk(s, r, c, g + (valid ? static_cast<std::int64_t>(r) * row_stride + c : 0), valid, aligned16);
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

template <int NT, int N>
__device__ __forceinline__ void load_vec(float (&s)[N], const float* g, int valid, int tid) {
#pragma unroll
  for (int i = tid; i < N; i += NT) {
    const bool ok = i < valid;  // 0 source bytes: the destination is zero-filled
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(smem_u32(s + i)), "l"(g + (ok ? i : 0)),
                 "r"(ok ? 4 : 0));
  }
}

// A col tile's pair (rows 2t, 2t+1, col g) is its transpose's (row g, cols 2t, 2t+1): base tile (i, j) becomes (j, i).
template <typename T, int R, int C>
__device__ __forceinline__ void transpose(rt<T, C, R>& d, const rt<T, R, C, layout::col>& s) {
  each<rt<T, C, R>>([&](int i, int j, int k) { d.v[i][j][k] = s.v[j][i][k]; });
}

template <int C>
__device__ __forceinline__ void load(rv_fl_cols<C>& d, const float* s) {
  const int t = 2 * (lane_id() & 3);
#pragma unroll
  for (int j = 0; j < C / 16; ++j) {
    const float2 lo = *reinterpret_cast<const float2*>(s + 16 * j + t);
    const float2 hi = *reinterpret_cast<const float2*>(s + 16 * j + t + 8);
    d.v[j][0] = lo.x, d.v[j][1] = lo.y, d.v[j][2] = hi.x, d.v[j][3] = hi.y;
  }
}

// d = f(s, v[col]) elementwise; pair k's columns are 2t + (k & 2 ? 8 : 0) and one more: v[j][0..1] or v[j][2..3].
template <int R, int C, typename F>
__device__ __forceinline__ void col_apply(rt_fl<R, C>& d, const rt_fl<R, C>& s, const rv_fl_cols<C>& v, F f) {
  each<rt_fl<R, C>>([&](int i, int j, int k) {
    const int c = (k & 2) ? 2 : 0;
    d.v[i][j][k] = make_float2(f(s.v[i][j][k].x, v.v[j][c]), f(s.v[i][j][k].y, v.v[j][c + 1]));
  });
}
template <int R, int C>
__device__ __forceinline__ void exp2_fma_col(rt_fl<R, C>& d, const rt_fl<R, C>& s, float x, const rv_fl_cols<C>& v) {
  col_apply(d, s, v, [x](float a, float b) { return fast_exp2(fmaf(a, x, -b)); });
}
template <int R, int C>
__device__ __forceinline__ void sub_col(rt_fl<R, C>& d, const rt_fl<R, C>& s, const rv_fl_cols<C>& v) {
  col_apply(d, s, v, [](float a, float b) { return a - b; });
}

template <int R, int C, layout L>
__device__ __forceinline__ void mul(rt_fl<R, C, L>& d, const rt_fl<R, C, L>& a, const rt_fl<R, C, L>& b) {
  each<rt_fl<R, C, L>>([&](int i, int j, int k) {
    d.v[i][j][k] = make_float2(a.v[i][j][k].x * b.v[i][j][k].x, a.v[i][j][k].y * b.v[i][j][k].y);
  });
}

template <int R, int C>
__device__ __forceinline__ void atomic_add(float* g, std::int64_t row_stride, const rt_fl<R, C>& t, int valid_rows) {
  const int lane = lane_id();
  each<rt_fl<R, C>>([&](int i, int j, int k) {
    const coord c = rt_coords(lane, k);
    const int r = 16 * i + c.row;
    if (r < valid_rows) {
      float* dst = g + static_cast<std::int64_t>(r) * row_stride + 16 * j + c.col;  // results unused: REDs
#if __CUDA_ARCH__ >= 900
      atomicAdd(reinterpret_cast<float2*>(dst), t.v[i][j][k]);  // one 8-byte RED a pair (sm_90+)
#else
      atomicAdd(dst, t.v[i][j][k].x);
      atomicAdd(dst + 1, t.v[i][j][k].y);
#endif
    }
  });
}

}  // namespace flashtile::tile::sm80
