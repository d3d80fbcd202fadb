// Stands in for the Vulkan backend when the library is built without it (FLASHTILE_VULKAN=OFF).
#include "backend.hpp"

namespace flashtile::detail {
std::vector<std::shared_ptr<DeviceImpl>> enumerate_vulkan(std::string& why_none) {
  why_none = "flashtile was built without Vulkan (FLASHTILE_VULKAN=OFF)";
  return {};
}
std::shared_ptr<DeviceImpl> wrap_vulkan_device(const VulkanHandles&) {
  throw Error(ErrorCode::BackendUnavailable, "Device::wrap_vulkan: flashtile was built without Vulkan");
}
}  // namespace flashtile::detail
