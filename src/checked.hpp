// Checked size arithmetic. Every element count, extent, offset and allocation size goes through these, so a
// product or sum that would wrap becomes Error(Overflow) naming the argument instead of a short allocation or an
// out-of-bounds index. Internal; not installed.
#pragma once

#include <flashtile/types.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

namespace flashtile::detail {

// Byte extents and byte offsets must fit in int64: kernels and the CPU reference address memory as int64 element
// indices times the element size, and the C API reports sizes as int64 shapes.
inline constexpr std::uint64_t kMaxBytes = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());

// `what` names the argument and the rule: "shape: the element count exceeds 2^63 - 1". It is a string, or a callable
// returning one, evaluated only when a check fails: these checks run on every call (validation, views), their
// messages almost never.
template <class Msg>
std::string message_of(const Msg& what) {
  if constexpr (std::is_invocable_v<const Msg&>) return what();
  else return std::string(what);
}
template <class Msg>
[[noreturn]] void throw_overflow(const Msg& what) { throw Error(ErrorCode::Overflow, message_of(what)); }

// a + b or a * b, or Error(Overflow) where the exact result does not fit in T.
template <char Op, class T, class Msg>
T checked_op(T a, T b, const Msg& what) {
  static_assert(std::is_integral_v<T> && (Op == '+' || Op == '*'));
  T r;
  bool wrapped;
  if constexpr (Op == '+') wrapped = __builtin_add_overflow(a, b, &r);
  else wrapped = __builtin_mul_overflow(a, b, &r);
  if (wrapped) throw_overflow(what);
  return r;
}
template <class T, class Msg>
T checked_add(T a, T b, const Msg& what) { return checked_op<'+'>(a, b, what); }
template <class T, class Msg>
T checked_mul(T a, T b, const Msg& what) { return checked_op<'*'>(a, b, what); }

// `bytes` rounded up to a multiple of `align` (a power of two), for allocators; throws where rounding would wrap.
template <class Msg>
std::uint64_t checked_round_up(std::uint64_t bytes, std::uint64_t align, const Msg& what) {
  return checked_add(bytes, align - 1, what) & ~(align - 1);
}

// A size a backend may allocate or copy: at most kMaxBytes, and representable as size_t.
template <class Msg>
std::size_t checked_bytes(std::uint64_t bytes, const Msg& what) {
  if (bytes > kMaxBytes || bytes > std::numeric_limits<std::size_t>::max())
    throw_overflow(message_of(what) + ": " + std::to_string(bytes) + " bytes exceed the limit of 2^63 - 1");
  return static_cast<std::size_t>(bytes);
}

// Rank 1..4 and every dimension >= 1; InvalidArgument otherwise (a rank outside 1..4 would index past Shape::dims).
inline void check_shape(const Shape& shape, const char* what) {
  if (shape.rank < 1 || shape.rank > 4)
    throw Error(ErrorCode::InvalidArgument,
                std::string(what) + ": rank must be 1..4, got " + std::to_string(shape.rank));
  for (int i = 0; i < shape.rank; ++i)
    if (shape[i] < 1)
      throw Error(ErrorCode::InvalidArgument, std::string(what) + ": dimension " + std::to_string(i) +
                                                  " must be >= 1, got " + std::to_string(shape[i]));
}

}  // namespace flashtile::detail
