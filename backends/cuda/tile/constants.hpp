// flashtile tile framework: the numeric constants the kernels and their host code share. Plain C++ (host and device),
// so host-only sources (cuda_device.cpp) use the same definitions as the kernels.
#pragma once

namespace flashtile::tile {

inline constexpr float kLog2e = 1.4426950408889634f;  // log2(e): exp(x) = exp2(x * kLog2e)
inline constexpr float kLn2 = 0.6931471805599453f;    // ln(2): ln(x) = log2(x) * kLn2
inline constexpr float kNegInf = -__builtin_huge_valf();

}  // namespace flashtile::tile
