// The one place the Vulkan backend reads the environment (overrides.hpp lists the variables).
#include "overrides.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace flashtile::vk {

namespace {

bool is_one(const char* name) {
  const char* e = std::getenv(name);
  return e && std::strcmp(e, "1") == 0;
}

}  // namespace

Overrides read_overrides() {
  Overrides o;
  o.validation = is_one("FLASHTILE_VK_VALIDATION");
  if (const char* e = std::getenv("FLASHTILE_VK_VARIANT")) o.variant = e;
  if (const char* e = std::getenv("FLASHTILE_VK_SPLITS"))
    o.splits = static_cast<std::uint32_t>(std::max(1L, std::strtol(e, nullptr, 10)));
  if (const char* e = std::getenv("FLASHTILE_VK_HEAD_GROUP")) o.head_group = static_cast<int>(std::strtol(e, nullptr, 10));
  o.no_push_descriptor = is_one("FLASHTILE_VK_NO_PUSH_DESCRIPTOR");
  if (const char* e = std::getenv("FLASHTILE_VK_PATHS")) o.paths = e;
  o.pipeline_stats = is_one("FLASHTILE_VK_PIPELINE_STATS");
  return o;
}

bool Overrides::lists(Path p) const {
  return !paths || ("," + *paths + ",").find("," + std::string(to_string(p)) + ",") != std::string::npos;
}

bool timestamps_requested() { return is_one("FLASHTILE_VK_TIMESTAMPS"); }

}  // namespace flashtile::vk
