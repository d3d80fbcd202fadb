// The Vulkan backend's environment overrides, all parsed in overrides.cpp: the validation layer (a user feature,
// README.md), and the switches tests and the benchmark use to reach variants or measure them (docs/CONTRIBUTING.md,
// "Vulkan overrides"). Tuning experiments are not switches here: they live on branches or as patches with their
// results (docs/CONTRIBUTING.md, house rules).
#pragma once

#include <flashtile/types.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace flashtile::vk {

struct Overrides {
  bool validation = false;          // FLASHTILE_VK_VALIDATION=1: Khronos validation on flashtile's own instance
  std::string variant;              // FLASHTILE_VK_VARIANT=text: only variants whose kernel name contains text
  std::uint32_t splits = 0;         // FLASHTILE_VK_SPLITS=n: n split-KV splits on split-capable variants (0: chosen)
  int head_group = -1;              // FLASHTILE_VK_HEAD_GROUP=n: rows-outer groups of n (batch, head) pairs (-1: the variant's)
  bool no_push_descriptor = false;  // FLASHTILE_VK_NO_PUSH_DESCRIPTOR=1: the descriptor ring even with push descriptors
  std::optional<std::string> paths;  // FLASHTILE_VK_PATHS=vulkan_coopmat2,...: only these paths are listed and run
  bool pipeline_stats = false;      // FLASHTILE_VK_PIPELINE_STATS=1: each new pipeline's compiler statistics to stderr

  bool lists(Path p) const;  // false when FLASHTILE_VK_PATHS leaves p out
};

// The overrides as the environment sets them now; read at instance and device creation.
Overrides read_overrides();

// FLASHTILE_VK_TIMESTAMPS=1: GPU timestamps around flashtile's own submissions (flashtile_vk_last_gpu_ms()). Read per
// call, not with the rest: flashtile_bench sets it after opening the device.
bool timestamps_requested();

}  // namespace flashtile::vk
