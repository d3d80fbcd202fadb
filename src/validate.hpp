// Validation of an attention call: every rule checked before any work, each error naming the argument and rule.
#pragma once

#include "backend.hpp"

#include <flashtile/serving.hpp>

namespace flashtile::detail {

// Throws Error on the first rule broken; otherwise returns the call as kernels see it (scale resolved).
AttnArgs validate_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out, const Tensor* lse,
                            const Options& options);

// The backward's rules: the forward's (lse required), then dout like q, dq like q, dk and dv like k and v, no
// gradient overlapping an input, another gradient or the workspace.
BwdArgs validate_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out, const Tensor& lse,
                          const Tensor& dout, const Tensor& dq, const Tensor& dk, const Tensor& dv,
                          const Options& options);

// The serving layouts (serving.hpp): the dense rules on each tensor, the tables' dtypes and shapes, and their
// contents where the host can read them (CPU tensors).
AttnArgs validate_kvcache(const Tensor& q, const PagedKv& cache, const Tensor& out, const Tensor* lse,
                          const Tensor* k_new, const Tensor* v_new, const Options& options);
AttnArgs validate_varlen(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out, const Tensor* lse,
                         const Varlen& lengths, const Options& options);

}  // namespace flashtile::detail
