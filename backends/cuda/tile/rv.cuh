// flashtile tile framework: register vectors that go with register tiles (results of row/column reductions).
//
//   rv_rows<T, R>   one value per ROW of an R-row register tile (row max, row sum, LSE). Lane (g = lane/4) holds
//                   rows g and g+8 of each 16-row base tile: v[i][0] is row 16i+g, v[i][1] row 16i+g+8; the 4 lanes
//                   of a quad hold the same values after a reduction.
//   rv_cols<T, C>   one value per COLUMN of a C-column row-layout tile (t = lane%4): v[j][0..3] are cols
//                   16j+2t, 16j+2t+1, 16j+2t+8, 16j+2t+9 (same value in the 8 lanes with equal t).
//   rv_fl_rows<R>, rv_fl_cols<C>   float aliases.
#pragma once

#include "tile/base.cuh"

namespace flashtile::tile {

template <typename T, int R>
struct rv_rows {
  static_assert(R % 16 == 0, "rv_rows length must be a multiple of 16");
  using dtype = T;
  static constexpr int length = R;
  static constexpr int height = R / 16;
  T v[height][2];
};

template <typename T, int C>
struct rv_cols {
  static_assert(C % 16 == 0, "rv_cols length must be a multiple of 16");
  using dtype = T;
  static constexpr int length = C;
  static constexpr int width = C / 16;
  T v[width][4];
};

template <int R>
using rv_fl_rows = rv_rows<float, R>;
template <int C>
using rv_fl_cols = rv_cols<float, C>;

}  // namespace flashtile::tile
