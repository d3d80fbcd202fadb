#pragma once

#include <flashtile/flashtile.hpp>

#include <cstdint>
#include <cstdlib>
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
// Which Vulkan kernel a call runs is the tables' choice unless FLASHTILE_VK_VARIANT forces a family (ctest's
// conformance_vulkan_<variant> entries): then tests do not assert it.
inline bool vk_kernel_choice_forced() {
  const char* forced = std::getenv("FLASHTILE_VK_VARIANT");
  return forced && *forced;
}
}  // namespace flashtile::testing
