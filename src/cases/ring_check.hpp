// The simulated ring against full attention: the check `flashtile run --ring N --check` prints and tests/ring.cpp
// asserts. Built from the public API only (target flashtile_cases).
#pragma once

#include "cases.hpp"

#include <flashtile/device.hpp>
#include <flashtile/ring.hpp>

#include <array>
#include <cstdint>

namespace flashtile::cases {

// A ring problem: c's batch, heads, head dim, dtype, causality and scale, with c.seqlen_q = c.seqlen_k = S, the
// global length (divisible by world, by 2·world for zigzag).
struct RingCase {
  Case c;
  int world = 2;
  Sharding sharding = Sharding::Contiguous;
  bool backward = false;
  bool compare = true;  // false: run and time only (no reference)
};

struct RingCheck {
  Result forward, backward;
  double out_error = 0, lse_error = 0;   // out: relative L2; lse: max |error| / max(1, |lse|)
  std::array<double, 3> grad_error{};    // dq, dk, dv: relative L2
  double out_tol = 0, lse_tol = 0, grad_tol = 0;
  double forward_ms = 0, backward_ms = 0;  // the ring calls, host clock around synchronous calls
  bool ok = false;
};

// Random global q, k, v (and dout) on `dev`, sharded with shard_sequence, the simulated ring forward (and backward)
// into poisoned outputs, unsharded, and compared with attention_forward (attention_backward) of the whole sequence on
// the CPU device (the same rounded inputs, double accumulation), under the conformance suite's tolerances.
RingCheck check_ring(const Device& dev, const RingCase& rc, std::uint64_t seed);

}  // namespace flashtile::cases
