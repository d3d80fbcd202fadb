// The rules validation is built from, shared by the dense (validate.cpp) and serving (validate_serving.cpp) calls.
// Each throws Error naming the argument and the rule it broke. Internal; not installed.
#pragma once

#include "backend.hpp"

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

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
// The validated call as kernels see it: tensors, sizes, the scale (default 1/sqrt(head_dim), finite) and the plain
// options. Layouts and variants are added by the caller.
AttnArgs call_args(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out, const Tensor* lse,
                   std::int64_t batch, std::int64_t seqlen_q, std::int64_t seqlen_k, std::int64_t heads_q,
                   std::int64_t heads_kv, std::int64_t head_dim, const Options& options);
// A stream or command buffer only of the tensors' backend, and not both.
void require_streams(const Tensor& q, const Options& options);
// The variant options (window, softcap, ALiBi slopes, sinks) checked against a call of `batch` sequences and `heads_q`
// query heads, and recorded in `a`; `outs` are the call's outputs, which the slopes and sinks may not overlap.
void apply_variants(AttnArgs& a, const Options& options, const Tensor& q, std::int64_t batch, std::int64_t heads_q,
                    const std::vector<std::pair<const Tensor*, const char*>>& outs);

}  // namespace flashtile::detail::rules
