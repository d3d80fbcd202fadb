// Numbers that dispatch, the backends and the tests share, each defined once. Internal; not installed.
#pragma once

#include <cstdint>

namespace flashtile::detail {

// log2(e): the kernels run the softmax in the exp2 domain, exp(x) = exp2(x * kLog2e), so a backend hands them
// scale * kLog2e.
inline constexpr float kLog2e = 1.4426950408889634f;

// Head dims attention_forward accepts on any backend (validate.cpp): multiples of kHeadDimMultiple up to kMaxHeadDim.
inline constexpr std::int64_t kHeadDimMultiple = 8;
inline constexpr std::int64_t kMaxHeadDim = 256;

}  // namespace flashtile::detail
