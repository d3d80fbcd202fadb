#pragma once

#include <flashtile/flashtile.hpp>

#include <cstdint>

namespace flashtile::testing {
struct Config {
  Backend backend = Backend::Cpu;  // devices the conformance suite runs on
  bool backend_selected = false;
  std::uint64_t seed = 0;
};
Config& config();
}  // namespace flashtile::testing
