// Test-side helpers for tile tests: device compute capability, register tile <-> plain global arrays.
#pragma once

#include "tile/tile.cuh"
#include "../common.cuh"

namespace fttest {

inline int device_cc() {
  int dev = 0, major = 0, minor = 0;
  FT_CUDA(cudaGetDevice(&dev));
  FT_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  FT_CUDA(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
  return major * 10 + minor;
}

// Register tile (row layout) from / to a row-major global array with row stride `ld` (elements).
template <typename T, typename TG, int R, int C>
__device__ void rt_from_global(flashtile::tile::rt<T, R, C>& t, const TG* g, int ld) {
  using namespace flashtile::tile;
  const int lane = lane_id();
  for (int i = 0; i < R / 16; ++i)
    for (int j = 0; j < C / 16; ++j)
      for (int k = 0; k < 4; ++k) {
        const coord c = rt_coords(lane, k);
        const int r = 16 * i + c.row, cc = 16 * j + c.col;
        float2 f;
        if constexpr (std::is_same_v<TG, float>) f = make_float2(g[r * ld + cc], g[r * ld + cc + 1]);
        else f = make_float2(static_cast<float>(g[r * ld + cc]), static_cast<float>(g[r * ld + cc + 1]));
        t.v[i][j][k] = from_float2<T>(f);
      }
}

}  // namespace fttest
