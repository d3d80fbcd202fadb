// Devices: opened by backend and index, listed with their capabilities.
#pragma once

#include <flashtile/types.hpp>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace flashtile {

namespace detail {
class DeviceImpl;
}

struct DeviceInfo {
  Backend backend = Backend::Cpu;
  int index = 0;
  std::string name;
  bool software = false;           // lavapipe, the CPU: correct but slow
  std::vector<Path> paths;         // kernel paths this device can run, fastest first
  std::vector<std::pair<std::string, std::string>> caps;  // for display: arch, subgroup size, shared memory, ...
};

// The Vulkan objects of a device, for interop. Handles are passed as void* / uint64_t so this header never needs
// vulkan.h: VkInstance, VkPhysicalDevice, VkDevice and VkQueue are pointers; VkBuffer is a 64-bit handle.
struct VulkanHandles {
  void* instance = nullptr;
  void* physical_device = nullptr;
  void* device = nullptr;
  void* queue = nullptr;
  std::uint32_t queue_family = 0;
  void* get_instance_proc_addr = nullptr;  // PFN_vkGetInstanceProcAddr the application loaded Vulkan with
};

class Device {
 public:
  // Backend::Auto prefers CUDA, then a hardware Vulkan GPU, then any Vulkan device (lavapipe), then the CPU.
  static Device open(Backend backend = Backend::Auto, int index = 0);
  // Use a VkDevice the application created (it must enable the features flashtile's paths need; the Caps then
  // show which paths are usable). The application keeps ownership and must outlive every flashtile object.
  static Device wrap_vulkan(const VulkanHandles& handles);
  // All devices of all built backends, in the order Auto considers them.
  static std::vector<DeviceInfo> list();
  // Why a backend has no device here ("built without CUDA", "no CUDA driver", ...); empty when it has one.
  static std::string unavailable_reason(Backend backend);

  const DeviceInfo& info() const;
  Backend backend() const { return info().backend; }
  // This device's Vulkan objects (Backend::Vulkan only; throws otherwise).
  VulkanHandles vulkan_handles() const;
  // Wait for all work flashtile submitted on its own queue or stream.
  void sync() const;

  bool operator==(const Device& o) const { return impl_ == o.impl_; }

  explicit Device(std::shared_ptr<detail::DeviceImpl> impl) : impl_(std::move(impl)) {}
  const std::shared_ptr<detail::DeviceImpl>& impl() const { return impl_; }

 private:
  std::shared_ptr<detail::DeviceImpl> impl_;
};

}  // namespace flashtile
