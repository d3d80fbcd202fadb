// flashtile tile framework, base: element types, packed pairs, named constants, execution scopes.
//
//   bf16 / half / float                    element types; packed_t<T> is the 2-wide register type (bf16_2, half_2,
//                                           float2) that every register tile stores.
//   kLog2e, kLn2, kNegInf                   constants used by the online softmax (exp2 domain; tile/constants.hpp).
//   warp, warpgroup                         scopes as types: kThreads, kWarps, lane(), warp_in_scope() (warp index
//                                           inside the scope), index() (which warp / warpgroup of the block this thread is in).
//   to_float2 / from_float2<T>              conversions between packed pairs and float2.
//
// Namespace flashtile::tile. Header-only, each header stands alone; "tile/tile.cuh" includes them all.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "tile/constants.hpp"

namespace flashtile::tile {

using bf16 = __nv_bfloat16;
using bf16_2 = __nv_bfloat162;
using half = __half;
using half_2 = __half2;

template <typename T>
inline constexpr bool is_16bit_v = std::is_same_v<T, bf16> || std::is_same_v<T, half>;

// The 2-wide type a register tile of T stores (one 32-bit register for 16-bit types).
template <typename T>
struct packed;
template <>
struct packed<bf16> {
  using type = bf16_2;
};
template <>
struct packed<half> {
  using type = half_2;
};
template <>
struct packed<float> {
  using type = float2;
};
template <typename T>
using packed_t = typename packed<T>::type;

__device__ __forceinline__ float2 to_float2(float2 v) { return v; }
__device__ __forceinline__ float2 to_float2(bf16_2 v) { return __bfloat1622float2(v); }
__device__ __forceinline__ float2 to_float2(half_2 v) { return __half22float2(v); }

template <typename T>
__device__ __forceinline__ packed_t<T> from_float2(float2 v) {
  if constexpr (std::is_same_v<T, float>) {
    return v;
  } else if constexpr (std::is_same_v<T, bf16>) {
    return __float22bfloat162_rn(v);
  } else {
    return __float22half2_rn(v);
  }
}

// A packed 16-bit pair reinterpreted as the 32-bit register mma/wgmma take.
template <typename P>
__device__ __forceinline__ std::uint32_t as_u32(const P& p) {
  static_assert(sizeof(P) == 4, "as_u32 needs a 32-bit packed pair");
  return *reinterpret_cast<const std::uint32_t*>(&p);
}

__device__ __forceinline__ int lane_id() { return static_cast<int>(threadIdx.x & 31u); }

// Scope types. A tile operation is done by every thread of its scope together (warp: 32 threads; warpgroup: four
// consecutive warps starting at a warp index divisible by 4, 128 threads — what wgmma needs).
struct warp {
  static constexpr int kThreads = 32;
  static constexpr int kWarps = 1;
  __device__ static int lane() { return lane_id(); }
  __device__ static int warp_in_scope() { return 0; }
  // Index of this warp in the block.
  __device__ static int index() { return static_cast<int>(threadIdx.x / 32u); }
  __device__ static void sync() { __syncwarp(); }
};

struct warpgroup {
  static constexpr int kThreads = 128;
  static constexpr int kWarps = 4;
  __device__ static int lane() { return lane_id(); }
  // Thread index inside the warpgroup (0..127).
  __device__ static int thread() { return static_cast<int>(threadIdx.x & 127u); }
  // Warp index inside the warpgroup (0..3): it owns rows 16*w .. 16*w+15 of a 64-row wgmma tile.
  __device__ static int warp_in_scope() { return static_cast<int>((threadIdx.x / 32u) & 3u); }
  // Index of this warpgroup in the block.
  __device__ static int index() { return static_cast<int>(threadIdx.x / 128u); }
};

// x as lane 0 of the warp has it: for values the same in every lane (warp and warpgroup indices) that the compiler
// cannot prove so. Known warp-uniform, what is computed from them (shared-memory addresses, wgmma descriptors) can live
// in uniform registers instead of being moved there (R2UR) before each use. All 32 lanes must call it.
__device__ __forceinline__ int warp_uniform(int x) { return __shfl_sync(0xffffffffu, x, 0); }

static_assert(warpgroup::kThreads == warpgroup::kWarps * warp::kThreads);

template <typename S>
inline constexpr bool is_scope_v = std::is_same_v<S, warp> || std::is_same_v<S, warpgroup>;

}  // namespace flashtile::tile
