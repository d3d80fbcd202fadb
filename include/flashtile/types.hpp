// flashtile public types: enums, the error type, shapes. No backend headers here.
#pragma once

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace flashtile {

enum class Backend { Auto, Cpu, Cuda, Vulkan };

enum class DType { F16, BF16, F32, I32 };  // I32: index tensors (page tables, sequence lengths)

// Every kernel path flashtile has, on every backend. The Result of a call names the one that ran.
enum class Path {
  CpuReference,    // plain double-accumulating reference, multithreaded over (batch, head)
  CudaSm80,        // FA2-style mma.sync kernel (Ampere, Ada; also runs on Hopper)
  CudaSm90,        // Hopper: TMA + wgmma + warp specialization
  VulkanPortable,  // no cooperative matrices: runs on any Vulkan 1.2 device, lavapipe included
  VulkanCoopmat,   // VK_KHR_cooperative_matrix
  VulkanCoopmat2,  // VK_NV_cooperative_matrix2
};

enum class ErrorCode {
  InvalidArgument = 1,  // a value out of its allowed range (head dim, scale, rank, ...)
  ShapeMismatch,        // tensors whose shapes disagree
  DTypeMismatch,        // tensors whose dtypes disagree or are not allowed
  BadStride,            // head dim not contiguous, negative or zero strides
  DeviceMismatch,       // tensors on different devices, or a stream/command buffer of another backend
  Aliasing,             // out or lse overlaps an input or each other
  Overflow,             // sizes beyond the kernels' index types
  Unsupported,          // valid input that no kernel path of this device handles
  BackendUnavailable,   // the backend was not built, or no device of it exists
  BackendFailure,       // the driver or runtime reported an error
  OutOfMemory,
};

std::string_view to_string(Backend b);
std::string_view to_string(DType d);
std::string_view to_string(Path p);
std::string_view to_string(ErrorCode c);
// Parse the names to_string gives ("f16", "cuda_sm90", ...); throw Error(InvalidArgument) otherwise.
Backend parse_backend(std::string_view s);
DType parse_dtype(std::string_view s);
Path parse_path(std::string_view s);

// Bytes of one element.
std::size_t dtype_size(DType d);

// The one exception type. what() names the argument and the rule it broke.
class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const noexcept { return code_; }

 private:
  ErrorCode code_;
};

// Up to four dimensions. Attention tensors are [batch, seqlen, heads, headdim]; LSE is [batch, heads, seqlen].
struct Shape {
  int rank = 0;
  std::array<std::int64_t, 4> dims{};
  std::int64_t operator[](int i) const { return dims[static_cast<std::size_t>(i)]; }
  // Product of the dims; throws Error(Overflow) where it exceeds int64, InvalidArgument for a negative dim.
  std::int64_t numel() const;
  static Shape of(std::int64_t a, std::int64_t b, std::int64_t c);
  static Shape of(std::int64_t a, std::int64_t b, std::int64_t c, std::int64_t d);
};

// Strides in elements, one per dimension.
struct Strides {
  std::array<std::int64_t, 4> dims{};
  std::int64_t operator[](int i) const { return dims[static_cast<std::size_t>(i)]; }
  // Row-major strides; throws Error(InvalidArgument) for a rank outside 1..4 or a dim < 1, Overflow past int64.
  static Strides contiguous(const Shape& s);
};

// Host-side conversions between float and the 16-bit storage formats (round to nearest even).
std::uint16_t float_to_f16(float f);
float f16_to_float(std::uint16_t h);
std::uint16_t float_to_bf16(float f);
float bf16_to_float(std::uint16_t b);

}  // namespace flashtile
