#pragma once

#include <flashtile/flashtile.hpp>

#include <cstdint>
#include <optional>
#include <vector>

namespace flashtile::testing {
struct Config {
  Backend backend = Backend::Cpu;  // devices the conformance suite runs on
  bool backend_selected = false;
  std::optional<Path> path;  // --ft-path=NAME: the conformance suite runs this path alone (default: every path)
  std::uint64_t seed = 0;
};
Config& config();
// The devices of the selected backend (--ft-backend), each suite's subjects.
std::vector<Device> selected_devices();
}  // namespace flashtile::testing
