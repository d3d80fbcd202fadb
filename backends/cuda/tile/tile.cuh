// flashtile tile framework: everything. base (types, scopes) · fastdiv (launch-constant divisors) · rt/rv (register
// tiles, vectors) · st (swizzled shared tiles) · ops (warp-level elementwise, reductions, mma.sync, ldmatrix/cp.async
// loads, stores) · mbarrier (mbarriers, named barriers, setmaxnreg) · gl (global layouts + TMA maps, host) · tma (bulk
// tensor copies) · cluster (thread-block clusters: multicast loads, remote arrivals) · wgmma (warpgroup MMA).
#pragma once

#include "tile/base.cuh"
#include "tile/cluster.cuh"
#include "tile/fastdiv.cuh"
#include "tile/gl.cuh"
#include "tile/mbarrier.cuh"
#include "tile/ops.cuh"
#include "tile/rt.cuh"
#include "tile/rv.cuh"
#include "tile/st.cuh"
#include "tile/tma.cuh"
#include "tile/wgmma.cuh"
