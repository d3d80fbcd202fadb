// flashtile tile framework: division by a divisor fixed for a launch (tile-index arithmetic), as one multiply-high,
// one add and one shift instead of the ~25 instructions of a run-time integer division (Granlund-Montgomery,
// round-up multiplier; exact for dividends 0 <= x < 2^31).
//
//   fastdiv f(d)        d >= 1, built on the host (constexpr) and passed to kernels by value.
//   f.div(x), f.mod(x)  host and device.
#pragma once

#include <cstdint>

namespace flashtile::tile {

struct fastdiv {
  std::uint32_t d = 1, mul = 1, shift = 0;

  constexpr fastdiv() = default;
  constexpr explicit fastdiv(std::uint32_t divisor) : d(divisor) {
    while (shift < 31 && (std::uint32_t{1} << shift) < d) ++shift;  // shift = ceil(log2 d)
    // 2^32 (2^shift - d) / d + 1 < 2^32, since 2^shift < 2d.
    mul = static_cast<std::uint32_t>((std::uint64_t{1} << 32) * ((std::uint64_t{1} << shift) - d) / d + 1);
  }
  // hi < x, so hi + x < 2^32 for x < 2^31.
  __host__ __device__ constexpr int div(int x) const {
    const auto hi = static_cast<std::uint32_t>((static_cast<std::uint64_t>(x) * mul) >> 32);
    return static_cast<int>((hi + static_cast<std::uint32_t>(x)) >> shift);
  }
  __host__ __device__ constexpr int mod(int x) const { return x - div(x) * static_cast<int>(d); }
};

}  // namespace flashtile::tile
