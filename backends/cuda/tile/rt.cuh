// flashtile tile framework: register tiles, held by one warp, in the mma.sync m16n8k16 fragment layout.
//
//   rt<T, R, C, L>     an R x C tile (R, C multiples of 16) of T (bf16, half, float) spread over the 32 lanes of a warp.
//                      Stored as (R/16) x (C/16) base tiles of 16x16; each lane holds 4 packed pairs per base tile:
//                        layout::row (A operands, accumulators, K for A·Kᵀ), with g = lane/4, t = lane%4:
//                          v[0] = (row g,   cols 2t,2t+1)     v[1] = (row g+8, cols 2t,2t+1)
//                          v[2] = (row g,   cols 2t+8,2t+9)   v[3] = (row g+8, cols 2t+8,2t+9)
//                        layout::col (B operands of A·B, e.g. V): pairs run down a column:
//                          v[0] = (rows 2t,2t+1,   col g)     v[1] = (rows 2t,2t+1,   col g+8)
//                          v[2] = (rows 2t+8,2t+9, col g)     v[3] = (rows 2t+8,2t+9, col g+8)
//                      A row-layout float tile is also exactly the wgmma accumulator order of one warp's 16 rows,
//                      and a row-layout 16-bit tile exactly wgmma's A-from-registers fragment (see wgmma.cuh).
//   rt_bf<R,C>, rt_hf<R,C>, rt_fl<R,C>   aliases (row layout unless the last argument says col).
//   rt_coords(lane, i) -> (row, col) of pair v[i] inside a row-layout base tile (first element of the pair).
//   each<RT>(f)         f(i, j, k) over every register pair of an RT.
#pragma once

#include "tile/base.cuh"

namespace flashtile::tile {

enum class layout { row, col };

template <typename T, int R, int C, layout L = layout::row>
struct rt {
  static_assert(R % 16 == 0 && C % 16 == 0, "register tiles are made of 16x16 base tiles");
  static_assert(std::is_same_v<T, float> || is_16bit_v<T>, "rt element type: float, bf16 or half");
  using dtype = T;
  using packed_type = packed_t<T>;
  static constexpr int rows = R;
  static constexpr int cols = C;
  static constexpr int height = R / 16;  // base tiles down
  static constexpr int width = C / 16;   // base tiles across
  static constexpr layout lay = L;
  static constexpr int kPairsPerThread = height * width * 4;

  packed_type v[height][width][4];
};

template <int R, int C, layout L = layout::row>
using rt_bf = rt<bf16, R, C, L>;
template <int R, int C, layout L = layout::row>
using rt_hf = rt<half, R, C, L>;
template <int R, int C, layout L = layout::row>
using rt_fl = rt<float, R, C, L>;

template <typename X>
inline constexpr bool is_rt_v = false;
template <typename T, int R, int C, layout L>
inline constexpr bool is_rt_v<rt<T, R, C, L>> = true;

// f(i, j, k) for every pair of a tile's registers (base tile i down, j across, pair k), fully unrolled: the one loop
// nest the element-wise ops share.
template <typename RT, typename F>
__device__ __forceinline__ void each(F&& f) {
#pragma unroll
  for (int i = 0; i < RT::height; ++i)
#pragma unroll
    for (int j = 0; j < RT::width; ++j)
#pragma unroll
      for (int k = 0; k < 4; ++k) f(i, j, k);
}

struct coord {
  int row, col;
};
// Position of the first element of pair v[i] in a row-layout 16x16 base tile for this lane.
__device__ __forceinline__ coord rt_coords(int lane, int i) {
  return {(lane >> 2) + ((i & 1) ? 8 : 0), 2 * (lane & 3) + ((i & 2) ? 8 : 0)};
}

}  // namespace flashtile::tile
