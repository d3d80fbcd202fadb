// The rules validation is built from, shared by the dense (validate.cpp) and serving (validate_serving.cpp) calls.
// Each throws Error naming the argument and the rule it broke. Internal; not installed.
#pragma once

#include "backend.hpp"

#include <cstdint>
#include <limits>
#include <string>

namespace flashtile::detail::rules {

inline constexpr std::int64_t kMaxDim = std::numeric_limits<std::int32_t>::max();  // kernels index rows with int32

[[noreturn]] void fail(ErrorCode c, const std::string& msg);
std::string dev_name(const Tensor& t);   // "cuda:0 (NVIDIA H200)"
std::string shape_str(const Shape& s);   // "[2, 17, 4, 64]"
void require_defined(const Tensor& t, const char* name);
void require_rank(const Tensor& t, const char* name, int rank, const char* layout);
bool overlaps(const Tensor& a, const Tensor& b);              // their byte ranges share memory
bool self_overlapping(const Tensor& t, const char* name);      // two of its elements share memory
TensorArg arg_of(const Tensor& t);
void require_indexable(const Tensor& t, const char* name);    // within the device kernels' index range
void require_same_device(const Tensor& t, const char* name, const Tensor& q);
void require_dtype(const Tensor& t, const char* name, DType want, const char* whose);
void require_shape(const Tensor& t, const char* name, const Shape& want, const char* whose);

}  // namespace flashtile::detail::rules
