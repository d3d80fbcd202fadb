// flashtile tile framework: warp-level operations on register tiles and vectors. Destination first, no hidden state.
//
// Elementwise (any rt, same shape and layout):
//   zero(d), fill(d, x), copy(d, s) (converts between float / bf16 / half), copy_zero_pad(d, s) (s narrower: the
//                             rest of d zero), mul(d, s, x), exp2(d, s),
//   map(d, f)                 d = f(row, col, value) elementwise, row/col relative to the tile (row layout only).
//   mask_cols(d, lim)         d(r, c) = -inf where c >= the limit of row r (lim[i][h]: this lane's rows
//                             16i + lane/4 + 8h): one compare and select per element (row-layout float tiles).
// Row vectors (rv_rows) against row-layout tiles:
//   row_max(v, t) / row_max(v, t, init)     quad-shuffle reduction; the init form folds in init[row].
//   row_max_partial(v, t)      the lane's part of each row max (quad_max completes it)
//   row_sum(v, t) / row_sum(v, t, init)
//   sub_row(d, s, v), mul_row(d, s, v), div_row(d, s, v)          d[r][c] = s[r][c] op v[r]
//   exp2_sub_row(d, s, v)      d = exp2(s - v[row]) (the softmax numerator in the exp2 domain)
//   exp2_fma_row(d, s, x, v)   d = exp2(s * x - v[row]) in one FFMA + ex2 per element (x: scale·log2e);
//                               exp2_fma_row<P> sends every P-th pair through poly_exp2 (FMA pipe) instead
//   poly_exp2(x)               2^x without the MUFU unit (rel. error < 1e-4; x >= 128 gives ~2^128, finite)
//   rcp_fma(d), tanh_exp2(y)   1/d on the FMA pipe; tanh(y / (2 log2 e)) with one MUFU op (softcap)
//   fill(v, x), mul(v, a, b), sub(v, a, b), exp2(v, a), max(v, a, b), add(v, a, b)
//   any_abs_ge2(t)             whether an element of this lane's t has |x| >= 2 or is inf/NaN (its exponent's top bit):
//                               an OR a pair of elements, where a max or sum would take one op an element
// Matrix multiply on mma.sync m16n8k16 (sm_80+), f32 accumulate, 16-bit inputs:
//   mma_AB (d, a, b, c)   d = a·b + c     a: rt<T,M,K,row>, b: rt<T,K,N,col>, c/d: rt_fl<M,N>
//   mma_ABt(d, a, b, c)   d = a·bᵀ + c    a: rt<T,M,K,row>, b: rt<T,N,K,row>
// Memory:
//   load(d, st, r0, c0)        shared (st or sp) -> registers with ldmatrix (row layout: .x4; col: .x4.trans, i.e.
//                               d = the K x N tile of st rows r0.., cols c0.. read as B of A·B).
//   load_b(d, st, r0, c0)      a row tile read as mma_ABt's B (registers ordered as HMMA pairs them).
//   load_async<NT>(st, g, row_stride, valid_rows, tid)   global -> shared, 16-byte cp.async by NT threads; rows
//                               >= valid_rows are zero-filled. Then cp_async_commit() / cp_async_wait<N>().
//   store(g, row_stride, t, valid_rows)                  registers -> global (converting to the pointer's type);
//                               rows >= valid_rows are not written.
//   store_scaled(g, row_stride, t, v, valid_rows)        as store, row r times v[r];
//   store_scaled_wide<B>(...)  the same with B-byte stores, B = 8 or 16 (quad shuffles; 16-bit g, B-aligned rows)
//   store(st, t, r0, c0)      registers -> shared (swizzled), converting.
//   store_transposed(st, t, r0, c0)   a warp's 16 x C 16-bit row tile, transposed (stmatrix .trans): t(r, c) goes
//                               to st(r0 + c, c0 + r); c0 a multiple of 8.
//   fill(st, x, tid, threads)  every element of a shared tile = x, by `threads` threads (generic proxy: wgmma or TMA
//                               reads need fence_proxy_async and a barrier after).
#pragma once

#include <bit>
#include <cstdint>

#include "tile/base.cuh"
#include "tile/rt.cuh"
#include "tile/rv.cuh"
#include "tile/st.cuh"

namespace flashtile::tile {

// ---------------------------------------------------------------------------------------------------- elementwise
template <typename RT>
__device__ __forceinline__ void fill(RT& d, float x) {
  each<RT>([&](int i, int j, int k) { d.v[i][j][k] = from_float2<typename RT::dtype>(make_float2(x, x)); });
}
template <typename RT>
__device__ __forceinline__ void zero(RT& d) {
  fill(d, 0.0f);
}

template <typename TD, typename TS, int R, int C, layout L>
__device__ __forceinline__ void copy(rt<TD, R, C, L>& d, const rt<TS, R, C, L>& s) {
  each<rt<TD, R, C, L>>([&](int i, int j, int k) { d.v[i][j][k] = from_float2<TD>(to_float2(s.v[i][j][k])); });
}
// d's first columns from s (converting, as copy), the rest of d zero.
template <typename TD, typename TS, int R, int CD, int CS>
__device__ __forceinline__ void copy_zero_pad(rt<TD, R, CD>& d, const rt<TS, R, CS>& s) {
  static_assert(CS <= CD, "s must fit in d");
  each<rt<TD, R, CD>>([&](int i, int j, int k) {
    d.v[i][j][k] = from_float2<TD>(j < CS / 16 ? to_float2(s.v[i][j < CS / 16 ? j : 0][k]) : make_float2(0.0f, 0.0f));
  });
}

template <int R, int C, layout L>
__device__ __forceinline__ void mul(rt_fl<R, C, L>& d, const rt_fl<R, C, L>& s, float x) {
  each<rt_fl<R, C, L>>(
      [&](int i, int j, int k) { d.v[i][j][k] = make_float2(s.v[i][j][k].x * x, s.v[i][j][k].y * x); });
}

__device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// 1 / d for 1 <= d < 2^126 (NaN stays NaN) on the FMA and integer pipes: a first guess from the bits (relative error
// 5.05%), then one Newton step r += r e, e = 1 - d r (the error squared: 2.6e-3), and one third-order step
// r += r (e + e²) (cubed): 7.6e-8 relative over [1, 2^32], as MUFU's rcp.approx; five FFMAs where three Newton steps
// took six (softcap's tanh is issue-bound beside its two MUFU ops a score). The third-order step first spilled the
// d256 variants' kernels (40 bytes).
__host__ __device__ __forceinline__ float rcp_fma(float d) {
  constexpr std::uint32_t kGuess = 0x7EF311C3u;  // kGuess - bits(d): the exponent negated, the mantissa ~linearly
  float r = std::bit_cast<float>(kGuess - std::bit_cast<std::uint32_t>(d));
  float e = fmaf(-d, r, 1.0f);
  r = fmaf(r, e, r);
  e = fmaf(-d, r, 1.0f);
  return fmaf(r, fmaf(e, e, e), r);
}

// a · tanh from e = 2^y: a - 2a / (e + 1), the reciprocal by rcp_fma (e >= 0, <= 2^kTanhMaxY).
inline constexpr float kTanhMaxY = 32.0f;  // y past it: 1 - 2^-31 rounds to 1 in f32
__host__ __device__ __forceinline__ float tanh_of_exp2(float e, float a = 1.0f) {
  return fmaf(-2.0f * a, rcp_fma(e + 1.0f), a);
}

// a · tanh(y / (2 log2 e)), i.e. of x for y = 2 log2(e) x, with one MUFU op (ex2): softcap's, where the softmax's own
// ex2 already keeps MUFU the busiest unit (ex2 + rcp.approx made softcap 0.53x of the plain sm90 kernel). Absolute
// error < 3e-7 · a over all y (tests/cuda/tile/test_host.cu sweeps it against std::tanh), the exact-ish tanh the
// softcap's cap · tanh needs: tanh.approx.f32's 2^-11 relative, times a softcap of 50, would move a score by 0.02,
// past f16's output and the LSE tolerances. Large y saturates to a (inf too), -inf gives -a, NaN stays NaN.
__device__ __forceinline__ float tanh_exp2(float y, float a = 1.0f) {
  return tanh_of_exp2(fast_exp2(y > kTanhMaxY ? kTanhMaxY : y), a);
}

// 2^x on the FMA and integer pipes (-inf gives exactly 0, x >= 128 about 2^128, finite): round x to n, 2^(x-n) by a
// degree-3 polynomial on [-0.5, 0.5] (relative error < 1e-4, under f16's half ulp), n added to the exponent bits.
// ex2 runs on the MUFU unit at a quarter of the FMA rate; at small head dims the softmax's ex2s take as long as the
// matrix products, so moving some of them here shortens the softmax (FlashAttention-4 does the same on Blackwell).
__device__ __forceinline__ float poly_exp2(float x) {
  constexpr float kRound = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer held in the low mantissa bits
  // n + the polynomial's exponent (126 or 127) stays <= 254, finite; below -126 the select returns 0. Above 128 the
  // exponent would carry into the sign bit (kLazy 3 exponentiates scores past its reference unchecked).
  const float xc = fminf(x, 128.0f);
  const float j = xc + kRound;
  const float f = xc - (j - kRound);
  const float p = fmaf(fmaf(fmaf(0.05583828f, f, 0.24263948f), f, 0.69313675f), f, 0.99992454f);
  const float y = __int_as_float(__float_as_int(p) + (__float_as_int(j) << 23));  // j's low bits hold n
  return x < -126.0f ? 0.0f : y;
}

template <int R, int C, layout L>
__device__ __forceinline__ void exp2(rt_fl<R, C, L>& d, const rt_fl<R, C, L>& s) {
  each<rt_fl<R, C, L>>([&](int i, int j, int k) {
    d.v[i][j][k] = make_float2(fast_exp2(s.v[i][j][k].x), fast_exp2(s.v[i][j][k].y));
  });
}

// d = f(row, col, value) with row/col relative to the tile. Row layout only.
template <int R, int C, typename F>
__device__ __forceinline__ void map(rt_fl<R, C>& d, F&& f) {
  const int lane = lane_id();
  each<rt_fl<R, C>>([&](int i, int j, int k) {
    const coord c = rt_coords(lane, k);
    const int r = 16 * i + c.row, cc = 16 * j + c.col;
    d.v[i][j][k].x = f(r, cc, d.v[i][j][k].x);
    d.v[i][j][k].y = f(r, cc + 1, d.v[i][j][k].y);
  });
}

// The lane's column offset is folded into its row limits once, so each element compares a constant column against
// a register (ISETP + FSEL); a general map() with a (row, col) predicate compiled to several more instructions.
template <int R, int C>
__device__ __forceinline__ void mask_cols(rt_fl<R, C>& d, const int (&lim)[R / 16][2]) {
  const int c0 = rt_coords(lane_id(), 0).col;  // the lane's part of the column; rt_coords(0, k) the pair's own
  each<rt_fl<R, C>>([&](int i, int j, int k) {
    const int t = lim[i][k & 1] - c0, cc = 16 * j + rt_coords(0, k).col;
    d.v[i][j][k].x = cc < t ? d.v[i][j][k].x : kNegInf;
    d.v[i][j][k].y = cc + 1 < t ? d.v[i][j][k].y : kNegInf;
  });
}

// ------------------------------------------------------------------------------------------- row/col reductions
__device__ __forceinline__ float quad_max(float x) {
  x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 1));
  return fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 2));
}
__device__ __forceinline__ float quad_sum(float x) {
  x += __shfl_xor_sync(0xffffffffu, x, 1);
  return x + __shfl_xor_sync(0xffffffffu, x, 2);
}

// Per-lane partial (no shuffle) then quad reduction. `op` combines two floats. The lane's C/4 elements of a row
// combine as a balanced tree (depth log2(C/4), not C/8): a row max sits between a score block and its exponentials,
// so its dependency chain is on the softmax's critical path.
template <bool kShuffle, int R, int C, typename Op>
__device__ __forceinline__ void row_reduce(rv_fl_rows<R>& d, const rt_fl<R, C>& s, Op op, const rv_fl_rows<R>* init) {
  constexpr int kN = C / 4;
#pragma unroll
  for (int i = 0; i < R / 16; ++i) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {  // h = 0: row g (pairs 0, 2); h = 1: row g+8 (pairs 1, 3)
      float x[kN];
#pragma unroll
      for (int j = 0; j < C / 16; ++j) {
        x[4 * j] = s.v[i][j][h].x, x[4 * j + 1] = s.v[i][j][h].y;
        x[4 * j + 2] = s.v[i][j][h + 2].x, x[4 * j + 3] = s.v[i][j][h + 2].y;
      }
#pragma unroll
      for (int w = 1; w < kN; w *= 2)
#pragma unroll
        for (int k = 0; k + w < kN; k += 2 * w) x[k] = op(x[k], x[k + w]);
      float acc = x[0];
      if constexpr (kShuffle) {
        acc = op(acc, __shfl_xor_sync(0xffffffffu, acc, 1));
        acc = op(acc, __shfl_xor_sync(0xffffffffu, acc, 2));
      }
      d.v[i][h] = init ? op(acc, init->v[i][h]) : acc;
    }
  }
}

struct op_max {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct op_sum {
  __device__ float operator()(float a, float b) const { return a + b; }
};

template <int R, int C>
__device__ __forceinline__ void row_max(rv_fl_rows<R>& d, const rt_fl<R, C>& s) {
  row_reduce<true>(d, s, op_max{}, static_cast<const rv_fl_rows<R>*>(nullptr));
}
template <int R, int C>
__device__ __forceinline__ void row_max(rv_fl_rows<R>& d, const rt_fl<R, C>& s, const rv_fl_rows<R>& init) {
  row_reduce<true>(d, s, op_max{}, &init);
}
template <int R, int C>
__device__ __forceinline__ void row_sum(rv_fl_rows<R>& d, const rt_fl<R, C>& s) {
  row_reduce<true>(d, s, op_sum{}, static_cast<const rv_fl_rows<R>*>(nullptr));
}
template <int R, int C>
__device__ __forceinline__ void row_sum(rv_fl_rows<R>& d, const rt_fl<R, C>& s, const rv_fl_rows<R>& init) {
  row_reduce<true>(d, s, op_sum{}, &init);
}
// The lane's part of each row max (no shuffle; quad_max completes it).
template <int R, int C>
__device__ __forceinline__ void row_max_partial(rv_fl_rows<R>& d, const rt_fl<R, C>& s) {
  row_reduce<false>(d, s, op_max{}, static_cast<const rv_fl_rows<R>*>(nullptr));
}
// Lane-local partial row sum (no shuffle): accumulate per lane, reduce once at the end with quad_sum.
template <int R, int C>
__device__ __forceinline__ void row_sum_partial(rv_fl_rows<R>& d, const rt_fl<R, C>& s, const rv_fl_rows<R>& init) {
  row_reduce<false>(d, s, op_sum{}, &init);
}

template <int R, int C, layout L>
__device__ __forceinline__ bool any_abs_ge2(const rt_fl<R, C, L>& t) {
  std::uint32_t bits = 0;
  each<rt_fl<R, C, L>>(
      [&](int i, int j, int k) { bits |= __float_as_uint(t.v[i][j][k].x) | __float_as_uint(t.v[i][j][k].y); });
  return (bits & 0x40000000u) != 0;  // exponent >= 128: |x| >= 2, inf, NaN
}

template <int R, int C, typename F>
__device__ __forceinline__ void row_apply(rt_fl<R, C>& d, const rt_fl<R, C>& s, const rv_fl_rows<R>& v, F f) {
  each<rt_fl<R, C>>([&](int i, int j, int k) {
    const float x = v.v[i][k & 1];
    d.v[i][j][k] = make_float2(f(s.v[i][j][k].x, x), f(s.v[i][j][k].y, x));
  });
}
template <int R, int C>
__device__ __forceinline__ void sub_row(rt_fl<R, C>& d, const rt_fl<R, C>& s, const rv_fl_rows<R>& v) {
  row_apply(d, s, v, [](float a, float b) { return a - b; });
}
template <int R, int C>
__device__ __forceinline__ void mul_row(rt_fl<R, C>& d, const rt_fl<R, C>& s, const rv_fl_rows<R>& v) {
  row_apply(d, s, v, [](float a, float b) { return a * b; });
}
template <int R, int C>
__device__ __forceinline__ void div_row(rt_fl<R, C>& d, const rt_fl<R, C>& s, const rv_fl_rows<R>& v) {
  row_apply(d, s, v, [](float a, float b) { return a / b; });
}
template <int R, int C>
__device__ __forceinline__ void exp2_sub_row(rt_fl<R, C>& d, const rt_fl<R, C>& s, const rv_fl_rows<R>& v) {
  row_apply(d, s, v, [](float a, float b) { return fast_exp2(a - b); });
}

// kPolyEvery > 0: every kPolyEvery-th register pair goes through poly_exp2 instead of ex2 (pairs counted across the
// row: j * 4 + k), balancing the MUFU and FMA pipes.
template <int kPolyEvery = 0, int R, int C>
__device__ __forceinline__ void exp2_fma_row(rt_fl<R, C>& d, const rt_fl<R, C>& s, float x, const rv_fl_rows<R>& v) {
  each<rt_fl<R, C>>([&](int i, int j, int k) {
    const float b = v.v[i][k & 1];
    const float2 a = s.v[i][j][k];
    bool poly = false;
    if constexpr (kPolyEvery > 0) poly = (j * 4 + k) % kPolyEvery == 0;
    auto e2 = [&](float y) { return poly ? poly_exp2(fmaf(y, x, -b)) : fast_exp2(fmaf(y, x, -b)); };
    d.v[i][j][k] = make_float2(e2(a.x), e2(a.y));
  });
}

// Vector ops (rv_rows of float).
template <int R>
__device__ __forceinline__ void fill(rv_fl_rows<R>& d, float x) {
#pragma unroll
  for (int i = 0; i < R / 16; ++i) d.v[i][0] = d.v[i][1] = x;
}
template <int R, typename F>
__device__ __forceinline__ void vec_apply(rv_fl_rows<R>& d, const rv_fl_rows<R>& a, const rv_fl_rows<R>& b, F f) {
#pragma unroll
  for (int i = 0; i < R / 16; ++i) {
    d.v[i][0] = f(a.v[i][0], b.v[i][0]);
    d.v[i][1] = f(a.v[i][1], b.v[i][1]);
  }
}
template <int R>
__device__ __forceinline__ void add(rv_fl_rows<R>& d, const rv_fl_rows<R>& a, const rv_fl_rows<R>& b) {
  vec_apply(d, a, b, [](float x, float y) { return x + y; });
}
template <int R>
__device__ __forceinline__ void sub(rv_fl_rows<R>& d, const rv_fl_rows<R>& a, const rv_fl_rows<R>& b) {
  vec_apply(d, a, b, [](float x, float y) { return x - y; });
}
template <int R>
__device__ __forceinline__ void mul(rv_fl_rows<R>& d, const rv_fl_rows<R>& a, const rv_fl_rows<R>& b) {
  vec_apply(d, a, b, [](float x, float y) { return x * y; });
}
template <int R>
__device__ __forceinline__ void max(rv_fl_rows<R>& d, const rv_fl_rows<R>& a, const rv_fl_rows<R>& b) {
  vec_apply(d, a, b, [](float x, float y) { return fmaxf(x, y); });
}
template <int R>
__device__ __forceinline__ void exp2(rv_fl_rows<R>& d, const rv_fl_rows<R>& a) {
#pragma unroll
  for (int i = 0; i < R / 16; ++i) {
    d.v[i][0] = fast_exp2(a.v[i][0]);
    d.v[i][1] = fast_exp2(a.v[i][1]);
  }
}

// ------------------------------------------------------------------------------------------------- mma.sync
template <typename T>
__device__ __forceinline__ void mma_16816(float2& d0, float2& d1, const std::uint32_t (&a)[4], std::uint32_t b0,
                                          std::uint32_t b1, const float2& c0, const float2& c1) {
  if constexpr (std::is_same_v<T, bf16>) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%10,%11,%12,%13};\n"
        : "=f"(d0.x), "=f"(d0.y), "=f"(d1.x), "=f"(d1.y)
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "f"(c0.x), "f"(c0.y), "f"(c1.x), "f"(c1.y));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%10,%11,%12,%13};\n"
        : "=f"(d0.x), "=f"(d0.y), "=f"(d1.x), "=f"(d1.y)
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "f"(c0.x), "f"(c0.y), "f"(c1.x), "f"(c1.y));
  }
}

// B is given by the pair indices of an N x K row tile or a K x N col tile: both keep (k=2t.., n=g) in v[0],
// (k=2t+8.., n=g) in v[2], and the n=g+8 halves in v[1], v[3].
template <bool kBIsNK, typename T, int M, int N, int K, typename BT>
__device__ __forceinline__ void mma_impl(rt_fl<M, N>& d, const rt<T, M, K>& a, const BT& b, const rt_fl<M, N>& c) {
#pragma unroll
  for (int i = 0; i < M / 16; ++i)
#pragma unroll
    for (int j = 0; j < N / 16; ++j) {
      float2 acc[4] = {c.v[i][j][0], c.v[i][j][1], c.v[i][j][2], c.v[i][j][3]};
#pragma unroll
      for (int k = 0; k < K / 16; ++k) {
        const std::uint32_t af[4] = {as_u32(a.v[i][k][0]), as_u32(a.v[i][k][1]), as_u32(a.v[i][k][2]),
                                     as_u32(a.v[i][k][3])};
        const auto& bt = [&]() -> const auto& {
          if constexpr (kBIsNK) return b.v[j][k];
          else return b.v[k][j];
        }();
        mma_16816<T>(acc[0], acc[1], af, as_u32(bt[0]), as_u32(bt[2]), acc[0], acc[1]);
        mma_16816<T>(acc[2], acc[3], af, as_u32(bt[1]), as_u32(bt[3]), acc[2], acc[3]);
      }
#pragma unroll
      for (int q = 0; q < 4; ++q) d.v[i][j][q] = acc[q];
    }
}

template <typename T, int M, int N, int K>
__device__ __forceinline__ void mma_AB(rt_fl<M, N>& d, const rt<T, M, K>& a, const rt<T, K, N, layout::col>& b,
                                       const rt_fl<M, N>& c) {
  mma_impl<false>(d, a, b, c);
}
template <typename T, int M, int N, int K>
__device__ __forceinline__ void mma_ABt(rt_fl<M, N>& d, const rt<T, M, K>& a, const rt<T, N, K>& b,
                                        const rt_fl<M, N>& c) {
  mma_impl<true>(d, a, b, c);
}

// --------------------------------------------------------------------------------------------- shared -> regs
__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], std::uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x4_trans(std::uint32_t (&r)[4], std::uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

// ldmatrix.x4 fills four consecutive registers, register m from the 8x8 matrix lanes 8m..8m+7 address. A base tile
// read as an A operand wants them in its pair order v[0..3]; read as a B operand, each 8-wide n block's two k halves
// (v[0], v[2] and v[1], v[3]) must sit in adjacent registers, the pair HMMA reads, so B tiles take the matrices in
// the order v[0], v[2], v[1], v[3]: the same values without two register moves before every mma (ncu: the A order
// cost sm80's forward 227M moves a 4 x 4k x 16-head call).
__device__ __forceinline__ constexpr int ldsm_pair(int m, bool b_order) { return b_order ? (m & 1) << 1 | m >> 1 : m; }

// The address of a lane's ldmatrix row dr rows and c columns (c % 16 == 0) on from `base`, its address at (dr, c) =
// (0, 0) (s.addr() + byte_offset(r0 + rr, cc), cc 0 or 8). Swizzled tiles: moving 16 rows keeps a row's swizzle
// phase, and moving c columns inside a 64-column block flips the 16-byte chunk index by 2 (c % 64) / 16 (chunk
// 2m + cc / 8 = 2m ^ cc / 8), which commutes with the phase's XOR; base's row part has no bits below 128. So every
// load is base XOR one of four constants plus a constant: ldmatrix's immediate offset, and no address register a
// fragment (ncu: ptxas had held one per head-dim step of K and V through the sm80 forward's key loop).
template <typename S>
__device__ __forceinline__ std::uint32_t ldsm_addr(std::uint32_t base, int dr, int c) {
  if constexpr (requires { S::kBlockBytes; }) {
    return (base ^ static_cast<std::uint32_t>((c % S::kBlockCols) / 16 * 32)) +
           static_cast<std::uint32_t>((c / S::kBlockCols) * S::kBlockBytes + dr * kSwizzleBytes);
  } else {
    return base + S::byte_offset(dr, c);  // unswizzled (sp): linear in row and column
  }
}

// Row layout: the R x C register tile = st rows r0.., cols c0..; kB: the tile is mma_ABt's B operand (load_b).
template <bool kB = false, typename T, int R, int C, typename S>
  requires is_shared_tile_v<S> && std::is_same_v<typename S::dtype, T>
__device__ __forceinline__ void load(rt<T, R, C, layout::row>& d, const S& s, int r0, int c0) {
  const int lane = lane_id();
  const int q = ldsm_pair(lane >> 3, kB);  // the pair this lane's matrix fills: rows (q & 1) * 8, cols (q >> 1) * 8
  const int rr = (q & 1) * 8 + (lane & 7), cc = (q >> 1) * 8;
  const std::uint32_t base = s.addr() + S::byte_offset(r0 + rr, cc);
#pragma unroll
  for (int i = 0; i < R / 16; ++i)
#pragma unroll
    for (int j = 0; j < C / 16; ++j) {
      std::uint32_t r[4];
      ldmatrix_x4(r, ldsm_addr<S>(base, 16 * i, c0 + 16 * j));
#pragma unroll
      for (int m = 0; m < 4; ++m) d.v[i][j][ldsm_pair(m, kB)] = *reinterpret_cast<packed_t<T>*>(&r[m]);
    }
}
// A row tile read as mma_ABt's B operand (N x K: e.g. K for S = Q·Kᵀ).
template <typename T, int R, int C, typename S>
__device__ __forceinline__ void load_b(rt<T, R, C, layout::row>& d, const S& s, int r0, int c0) {
  load<true>(d, s, r0, c0);
}
// Col layout: the R x C (K x N) register tile = st rows r0.. (K), cols c0.. (N), transposed while loading; always a
// B operand (mma_AB), so in the B order: pair v[q] holds k rows (q >> 1) * 8, n cols (q & 1) * 8.
template <typename T, int R, int C, typename S>
  requires is_shared_tile_v<S> && std::is_same_v<typename S::dtype, T>
__device__ __forceinline__ void load(rt<T, R, C, layout::col>& d, const S& s, int r0, int c0) {
  const int lane = lane_id();
  const int q = ldsm_pair(lane >> 3, true);
  const int rr = (q >> 1) * 8 + (lane & 7), cc = (q & 1) * 8;
  const std::uint32_t base = s.addr() + S::byte_offset(r0 + rr, cc);
#pragma unroll
  for (int i = 0; i < R / 16; ++i)
#pragma unroll
    for (int j = 0; j < C / 16; ++j) {
      std::uint32_t r[4];
      ldmatrix_x4_trans(r, ldsm_addr<S>(base, 16 * i, c0 + 16 * j));
#pragma unroll
      for (int m = 0; m < 4; ++m) d.v[i][j][ldsm_pair(m, true)] = *reinterpret_cast<packed_t<T>*>(&r[m]);
    }
}

// --------------------------------------------------------------------------------------------- global -> shared
__device__ __forceinline__ void cp_async_16(std::uint32_t dst, const void* src, bool valid) {
  const int bytes = valid ? 16 : 0;  // 0 source bytes: the 16 destination bytes are zero-filled
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// NT threads (tid in [0, NT)) copy the tile from g (row-major, row_stride elements; 16-byte aligned rows) into s.
template <int NT, typename T, int R, int C>
__device__ __forceinline__ void load_async(st<T, R, C>& s, const T* g, std::int64_t row_stride, int valid_rows,
                                           int tid) {
  constexpr int kChunksPerRow = C / 8;
  constexpr int kChunks = R * kChunksPerRow;
#pragma unroll
  for (int idx = tid; idx < kChunks; idx += NT) {
    const int r = idx / kChunksPerRow, c = (idx % kChunksPerRow) * 8;
    const bool valid = r < valid_rows;
    const T* src = g + (valid ? static_cast<std::int64_t>(r) * row_stride + c : 0);
    cp_async_16(s.addr() + st<T, R, C>::byte_offset(r, c), src, valid);
  }
}

// --------------------------------------------------------------------------------------------- regs -> memory
// Rows >= valid_rows are not written; f(i, k, x) maps each register pair (row block i, pair k) before the store.
// kPacked: one store per pair (g and row_stride must keep pairs aligned), else one per element.
template <bool kPacked = true, typename TG, typename T, int R, int C, typename F>
__device__ __forceinline__ void store_map(TG* g, std::int64_t row_stride, const rt<T, R, C>& t, int valid_rows, F f) {
  const int lane = lane_id();
  each<rt<T, R, C>>([&](int i, int j, int k) {
    const coord c = rt_coords(lane, k);
    const int r = 16 * i + c.row;
    if (r < valid_rows) {
      const packed_t<TG> v = from_float2<TG>(f(i, k, to_float2(t.v[i][j][k])));
      TG* dst = g + static_cast<std::int64_t>(r) * row_stride + 16 * j + c.col;
      if constexpr (kPacked) {
        *reinterpret_cast<packed_t<TG>*>(dst) = v;
      } else {
        dst[0] = v.x;
        dst[1] = v.y;
      }
    }
  });
}
template <typename TG, typename T, int R, int C>
__device__ __forceinline__ void store(TG* g, std::int64_t row_stride, const rt<T, R, C>& t, int valid_rows) {
  store_map(g, row_stride, t, valid_rows, [](int, int, float2 x) { return x; });
}
// As store, each row multiplied by v's entry on the way out (t itself is only read: an epilogue may run this while
// wgmmas that accumulate into t's registers are still being retired).
template <typename TG, int R, int C>
__device__ __forceinline__ void store_scaled(TG* g, std::int64_t row_stride, const rt_fl<R, C>& t,
                                             const rv_fl_rows<R>& v, int valid_rows) {
  store_map(g, row_stride, t, valid_rows, [&v](int i, int k, float2 x) {
    const float s = v.v[i][k & 1];
    return make_float2(s * x.x, s * x.y);
  });
}

// As store_scaled, to a 16-bit destination whose rows are kBytes-aligned (g and row_stride), with kBytes-wide stores
// (8 or 16): per 32-column span the 4 lanes of a quad trade their 4-byte pairs in xor shuffles (one round for 8 bytes,
// two for 16), so that a warp writes whole 32-byte sectors of each row instead of 4-byte pieces. Every lane must
// call it (the shuffles); rows >= valid_rows are not written.
template <int kBytes, typename TG, int R, int C>
__device__ __forceinline__ void store_scaled_wide(TG* g, std::int64_t row_stride, const rt_fl<R, C>& t,
                                                  const rv_fl_rows<R>& v, int valid_rows) {
  static_assert(is_16bit_v<TG> && C % 32 == 0, "wide stores: a 16-bit destination, 32-column spans");
  static_assert(kBytes == 8 || kBytes == 16, "wide stores: 8 or 16 bytes");
  const int lane = lane_id(), q = lane & 3;
  const bool odd = (q & 1) != 0, upper = (q & 2) != 0;
  auto word = [&](int i, int j, int k) {  // pair k of base tile (i, j), scaled and packed
    const float s = v.v[i][k & 1];
    const float2 x = to_float2(t.v[i][j][k]);
    const packed_t<TG> p = from_float2<TG>(make_float2(s * x.x, s * x.y));
    return *reinterpret_cast<const std::uint32_t*>(&p);
  };
#pragma unroll
  for (int i = 0; i < R / 16; ++i)
#pragma unroll
    for (int h = 0; h < 2; ++h) {  // row half: pairs k = h (columns 0-7 of a base tile) and h + 2 (8-15)
      const int r = 16 * i + (lane >> 2) + 8 * h;
      TG* row = g + static_cast<std::int64_t>(r) * row_stride;
#pragma unroll
      for (int j = 0; j < C / 16; j += 2) {
        // Groups of 8 columns: g0, g1 = base tile j, g2, g3 = j + 1; lane q holds columns 2q, 2q + 1 of each.
        const std::uint32_t a0 = word(i, j, h), a1 = word(i, j, h + 2);
        const std::uint32_t a2 = word(i, j + 1, h), a3 = word(i, j + 1, h + 2);
        // xor 1: even lanes keep g0, g2, odd lanes g1, g3, each now 4 columns (4m..4m+3, m = q / 2) of them.
        const std::uint32_t r0 = __shfl_xor_sync(0xffffffffu, odd ? a0 : a1, 1);
        const std::uint32_t r1 = __shfl_xor_sync(0xffffffffu, odd ? a2 : a3, 1);
        const std::uint32_t u0 = odd ? r0 : a0, u1 = odd ? a1 : r0;  // g0 or g1
        const std::uint32_t u2 = odd ? r1 : a2, u3 = odd ? a3 : r1;  // g2 or g3
        if constexpr (kBytes == 8) {
          const int col = 16 * j + 8 * (q & 1) + 4 * (q >> 1);
          if (r < valid_rows) {
            *reinterpret_cast<uint2*>(row + col) = make_uint2(u0, u1);
            *reinterpret_cast<uint2*>(row + col + 16) = make_uint2(u2, u3);
          }
        } else {
          // xor 2: lanes 0, 1 complete g0, g1 (columns 0-3 theirs, 4-7 the partner's), lanes 2, 3 complete g2, g3.
          const std::uint32_t w0 = __shfl_xor_sync(0xffffffffu, upper ? u0 : u2, 2);
          const std::uint32_t w1 = __shfl_xor_sync(0xffffffffu, upper ? u1 : u3, 2);
          const uint4 out = upper ? make_uint4(w0, w1, u2, u3) : make_uint4(u0, u1, w0, w1);
          if (r < valid_rows) *reinterpret_cast<uint4*>(row + 16 * j + 8 * q) = out;
        }
      }
    }
}

template <typename TS, typename T, int R, int C, int SR, int SC>
__device__ __forceinline__ void store(st<TS, SR, SC>& s, const rt<T, R, C>& t, int r0, int c0) {
  const int lane = lane_id();
  each<rt<T, R, C>>([&](int i, int j, int k) {
    const coord c = rt_coords(lane, k);
    *reinterpret_cast<packed_t<TS>*>(s.ptr(r0 + 16 * i + c.row, c0 + 16 * j + c.col)) =
        from_float2<TS>(to_float2(t.v[i][j][k]));
  });
}

__device__ __forceinline__ void stmatrix_x4_trans(std::uint32_t addr, std::uint32_t r0, std::uint32_t r1,
                                                  std::uint32_t r2, std::uint32_t r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(r0), "r"(r1),
               "r"(r2), "r"(r3)
               : "memory");
}
// Pair v[m] of a base tile is the 8x8 matrix of rows 8(m & 1).., cols 8(m >> 1)..; lanes 8m..8m+7 address its
// stored rows (t's columns), each 8 elements of t's rows: 16 bytes, inside one swizzle chunk.
template <typename T, int C, int SR, int SC>
__device__ __forceinline__ void store_transposed(st<T, SR, SC>& s, const rt<T, 16, C>& t, int r0, int c0) {
  const int lane = lane_id(), m = lane >> 3;
#pragma unroll
  for (int j = 0; j < C / 16; ++j)
    stmatrix_x4_trans(s.addr() + st<T, SR, SC>::byte_offset(r0 + 16 * j + 8 * (m >> 1) + (lane & 7), c0 + 8 * (m & 1)),
                      as_u32(t.v[0][j][0]), as_u32(t.v[0][j][1]), as_u32(t.v[0][j][2]), as_u32(t.v[0][j][3]));
}

template <typename T, int R, int C>
__device__ __forceinline__ void fill(st<T, R, C>& s, float x, int tid, int threads) {
  const packed_t<T> two = from_float2<T>(make_float2(x, x));
  auto* words = reinterpret_cast<packed_t<T>*>(s.data);
  for (int i = tid; i < R * C / 2; i += threads) words[i] = two;
}

}  // namespace flashtile::tile
