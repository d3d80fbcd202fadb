// The CPU reference backward on f32 host copies, and the error measure gradients are held to: the oracle of the
// CLI's `run --backward --check` and of the tests. Built from the public API only (target flashtile_cases).
#pragma once

#include "cases.hpp"
#include "variants.hpp"

#include <flashtile/tensor.hpp>

#include <vector>

namespace flashtile::cases {

// Logical (contiguous [B, S, H, D], lse [B, Hq, Sq]) f32 values of one backward call's inputs.
struct BackwardInputs {
  std::vector<float> q, k, v, out, lse, dout;
};

struct Gradients {
  std::vector<float> dq, dk, dv, dsinks;  // dsinks: with var.sinks only
};

// attention_backward on the CPU device (double accumulation) with c's sizes, causality and scale
// (c.scale unset: 1/sqrt(head_dim)) and the variants of `var` (tables rebuilt from `seed`, as VariantTables makes
// them), given exactly these inputs: the device's own out and lse, so that a difference measures the device's
// backward alone.
Gradients reference_backward(const Case& c, const BackwardInputs& in, const VariantSpec& var = {},
                             std::uint64_t seed = 0);

// attention_forward on the CPU device from f32 copies of q, k, v (logical [B, S, H, D]) with c's sizes, causality and
// scale and the variants of `var` (tables from `seed`): out [B, Sq, Hq, D] and lse [B, Hq, Sq].
struct Forward {
  std::vector<float> out, lse;
};
Forward reference_forward(const Case& c, const std::vector<float>& q, const std::vector<float>& k,
                          const std::vector<float>& v, const VariantSpec& var = {}, std::uint64_t seed = 0);

// A contiguous tensor's elements as f32, in order (any device; one download).
std::vector<float> download_floats(const Tensor& t);

// ||got - want|| / ||want|| (||got - want|| when want is all zeros); infinity when got holds a NaN or an infinity.
double rel_l2_error(const std::vector<float>& got, const std::vector<float>& want);

}  // namespace flashtile::cases
