// Values in a dtype's storage format: one element written or read at an index of a host image, a float rounded
// through the format, and the byte that poisons outputs. Shared by the tests, the CLI's --check and the benchmark.
#pragma once

#include <flashtile/types.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace flashtile::cases {

// Every byte 0xFF is a NaN in f16, bf16 and f32: outputs are filled with it before a run, so an element a kernel
// never wrote shows up as NaN.
inline constexpr std::byte kPoisonByte{0xFF};

// Round a float through a dtype's storage format, and back.
inline float round_to(DType dt, float x) {
  if (dt == DType::F16) return f16_to_float(float_to_f16(x));
  if (dt == DType::BF16) return bf16_to_float(float_to_bf16(x));
  return x;
}

inline void put(std::byte* base, DType dt, std::int64_t index, float x) {
  if (dt == DType::F32) {
    std::memcpy(base + index * 4, &x, 4);
  } else {
    const std::uint16_t h = dt == DType::F16 ? float_to_f16(x) : float_to_bf16(x);
    std::memcpy(base + index * 2, &h, 2);
  }
}

inline float get(const std::byte* base, DType dt, std::int64_t index) {
  if (dt == DType::F32) {
    float f;
    std::memcpy(&f, base + index * 4, 4);
    return f;
  }
  std::uint16_t h;
  std::memcpy(&h, base + index * 2, 2);
  return dt == DType::F16 ? f16_to_float(h) : bf16_to_float(h);
}

}  // namespace flashtile::cases
