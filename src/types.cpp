// Names, parsing, shapes and host-side 16-bit float conversions.
#include "checked.hpp"

#include <flashtile/types.hpp>
#include <flashtile/version.hpp>

#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>

namespace flashtile {

namespace {
constexpr std::array<std::pair<Backend, std::string_view>, 4> kBackendNames{{
    {Backend::Auto, "auto"}, {Backend::Cpu, "cpu"}, {Backend::Cuda, "cuda"}, {Backend::Vulkan, "vulkan"}}};
constexpr std::array<std::pair<DType, std::string_view>, 4> kDTypeNames{{
    {DType::F16, "f16"}, {DType::BF16, "bf16"}, {DType::F32, "f32"}, {DType::I32, "i32"}}};
constexpr std::array<std::pair<Path, std::string_view>, 6> kPathNames{{
    {Path::CpuReference, "cpu_reference"}, {Path::CudaSm80, "cuda_sm80"}, {Path::CudaSm90, "cuda_sm90"},
    {Path::VulkanPortable, "vulkan_portable"}, {Path::VulkanCoopmat, "vulkan_coopmat"},
    {Path::VulkanCoopmat2, "vulkan_coopmat2"}}};
constexpr std::array<std::pair<ErrorCode, std::string_view>, 11> kErrorNames{{
    {ErrorCode::InvalidArgument, "invalid_argument"}, {ErrorCode::ShapeMismatch, "shape_mismatch"},
    {ErrorCode::DTypeMismatch, "dtype_mismatch"}, {ErrorCode::BadStride, "bad_stride"},
    {ErrorCode::DeviceMismatch, "device_mismatch"}, {ErrorCode::Aliasing, "aliasing"},
    {ErrorCode::Overflow, "overflow"}, {ErrorCode::Unsupported, "unsupported"},
    {ErrorCode::BackendUnavailable, "backend_unavailable"}, {ErrorCode::BackendFailure, "backend_failure"},
    {ErrorCode::OutOfMemory, "out_of_memory"}}};

template <class Table, class E>
std::string_view name_of(const Table& t, E e) {
  for (const auto& [k, v] : t)
    if (k == e) return v;
  return "?";
}

template <class Table>
auto parse_of(const Table& t, std::string_view s, const char* what) {
  std::string allowed;
  for (const auto& [k, v] : t) {
    if (v == s) return k;
    allowed += allowed.empty() ? "" : ", ";
    allowed += v;
  }
  throw Error(ErrorCode::InvalidArgument,
              std::string(what) + ": unknown value '" + std::string(s) + "' (expected one of: " + allowed + ")");
}
}  // namespace

std::string_view to_string(Backend b) { return name_of(kBackendNames, b); }
std::string_view to_string(DType d) { return name_of(kDTypeNames, d); }
std::string_view to_string(Path p) { return name_of(kPathNames, p); }
std::string_view to_string(ErrorCode c) { return name_of(kErrorNames, c); }
Backend parse_backend(std::string_view s) { return parse_of(kBackendNames, s, "backend"); }
DType parse_dtype(std::string_view s) { return parse_of(kDTypeNames, s, "dtype"); }
Path parse_path(std::string_view s) { return parse_of(kPathNames, s, "path"); }

std::size_t dtype_size(DType d) { return d == DType::F32 || d == DType::I32 ? 4 : 2; }

std::int64_t Shape::numel() const {
  if (rank < 0 || rank > 4)
    throw Error(ErrorCode::InvalidArgument, "shape: rank must be 0..4, got " + std::to_string(rank));
  std::int64_t n = 1;
  for (int i = 0; i < rank; ++i) {
    if (dims[static_cast<std::size_t>(i)] < 0)
      throw Error(ErrorCode::InvalidArgument, "shape: dimension " + std::to_string(i) + " must be >= 0, got " +
                                                  std::to_string(dims[static_cast<std::size_t>(i)]));
    n = detail::checked_mul(n, dims[static_cast<std::size_t>(i)], "shape: the element count exceeds 2^63 - 1");
  }
  return n;
}
Shape Shape::of(std::int64_t a, std::int64_t b, std::int64_t c) { return Shape{3, {a, b, c, 0}}; }
Shape Shape::of(std::int64_t a, std::int64_t b, std::int64_t c, std::int64_t d) { return Shape{4, {a, b, c, d}}; }

Strides Strides::contiguous(const Shape& s) {
  detail::check_shape(s, "shape");
  Strides st;
  std::int64_t acc = 1;
  for (int i = s.rank - 1; i >= 0; --i) {
    st.dims[static_cast<std::size_t>(i)] = acc;
    if (i > 0)
      acc = detail::checked_mul(acc, s.dims[static_cast<std::size_t>(i)], [i] {
        return "shape: the contiguous stride of dimension " + std::to_string(i - 1) + " exceeds 2^63 - 1";
      });
  }
  return st;
}

namespace {
// IEEE bit patterns shared by the conversions below.
constexpr std::uint32_t kF32AbsMask = 0x7fffffffu;
constexpr std::uint32_t kF32Inf = 0x7f800000u;  // exponent all ones; anything above it is a NaN
constexpr std::uint32_t kF16Sign = 0x8000u;
constexpr std::uint32_t kF16Inf = 0x7c00u;
constexpr std::uint32_t kF16MantBits = 10;
constexpr std::uint32_t kMantShift = 23 - kF16MantBits;  // f32 mantissa bits beyond f16's
constexpr std::uint32_t kExpRebias = 127 - 15;           // f32 exponent bias minus f16's
constexpr float kHalfSubnormalUlps = 16777216.0f;        // 2^24: one f16 subnormal ulp becomes 1.0
}  // namespace

std::uint16_t float_to_f16(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  const std::uint32_t sign = (x >> 16) & kF16Sign;
  const std::uint32_t absx = x & kF32AbsMask;
  if (absx >= kF32Inf) return static_cast<std::uint16_t>(sign | (absx > kF32Inf ? 0x7e00u : kF16Inf));
  if (absx >= 0x477ff000u) return static_cast<std::uint16_t>(sign | kF16Inf);  // rounds past 65504: inf
  if (absx < 0x38800000u) {  // subnormal half (or zero): scale into the subnormal grid, round to nearest even
    const float a = std::bit_cast<float>(absx);
    const float scaled = a * kHalfSubnormalUlps;
    return static_cast<std::uint16_t>(sign | static_cast<std::uint32_t>(std::nearbyint(scaled)));
  }
  std::uint32_t mant = absx & 0x7fffffu;
  std::uint32_t exp = (absx >> 23) - kExpRebias;
  std::uint32_t h = (exp << kF16MantBits) | (mant >> kMantShift);
  const std::uint32_t rest = mant & ((1u << kMantShift) - 1);
  const std::uint32_t half = 1u << (kMantShift - 1);
  if (rest > half || (rest == half && (h & 1u))) ++h;
  return static_cast<std::uint16_t>(sign | h);
}

float f16_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & kF16Sign) << 16;
  const std::uint32_t exp = (h >> kF16MantBits) & 0x1fu;
  const std::uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    const float v = static_cast<float>(mant) * (1.0f / kHalfSubnormalUlps);
    return sign ? -v : v;
  }
  if (exp == 31) return std::bit_cast<float>(sign | kF32Inf | (mant << kMantShift));
  return std::bit_cast<float>(sign | ((exp + kExpRebias) << 23) | (mant << kMantShift));
}

std::uint16_t float_to_bf16(float f) {
  std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  if ((x & kF32AbsMask) > kF32Inf) return static_cast<std::uint16_t>((x >> 16) | 0x40u);  // quiet NaN
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>(x >> 16);
}

float bf16_to_float(std::uint16_t b) { return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16); }

const char* version_string() {
  static const std::string v =
      std::to_string(kVersionMajor) + "." + std::to_string(kVersionMinor) + "." + std::to_string(kVersionPatch);
  return v.c_str();
}

}  // namespace flashtile
