// Vulkan backend internals shared by vk_instance.cpp (loader, instance, enumeration, Caps) and vk_device.cpp
// (VulkanDevice: memory, pipelines, run).
//
// Function pointers: volk opens the loader (volkInitialize) and gives vkGetInstanceProcAddr; everything else goes
// through per-instance and per-device tables below, never volk's global pointers. So several devices (flashtile's
// own, and VkDevices the application wraps, possibly of another VkInstance) each call their own driver entry points.
#pragma once

#include "kernels.hpp"
#include "vk_ext.hpp"

#include <flashtile/device.hpp>

#include <memory>
#include <mutex>
#include <string>

namespace flashtile::vk {

#define FT_VK_INSTANCE_FNS(X)                         \
  X(vkDestroyInstance)                                \
  X(vkEnumeratePhysicalDevices)                       \
  X(vkGetPhysicalDeviceProperties)                    \
  X(vkGetPhysicalDeviceProperties2)                   \
  X(vkGetPhysicalDeviceFeatures2)                     \
  X(vkGetPhysicalDeviceMemoryProperties)              \
  X(vkGetPhysicalDeviceQueueFamilyProperties)         \
  X(vkEnumerateDeviceExtensionProperties)             \
  X(vkCreateDevice)                                   \
  X(vkGetDeviceProcAddr)

#define FT_VK_DEVICE_FNS(X)              \
  X(vkDestroyDevice)                     \
  X(vkGetDeviceQueue)                    \
  X(vkDeviceWaitIdle)                    \
  X(vkQueueSubmit)                       \
  X(vkQueueWaitIdle)                     \
  X(vkCreateBuffer)                      \
  X(vkDestroyBuffer)                     \
  X(vkGetBufferMemoryRequirements)       \
  X(vkAllocateMemory)                    \
  X(vkFreeMemory)                        \
  X(vkBindBufferMemory)                  \
  X(vkMapMemory)                         \
  X(vkUnmapMemory)                       \
  X(vkCreateCommandPool)                 \
  X(vkDestroyCommandPool)                \
  X(vkAllocateCommandBuffers)            \
  X(vkBeginCommandBuffer)                \
  X(vkEndCommandBuffer)                  \
  X(vkResetCommandBuffer)                \
  X(vkCreateFence)                       \
  X(vkDestroyFence)                      \
  X(vkWaitForFences)                     \
  X(vkResetFences)                       \
  X(vkCmdCopyBuffer)                     \
  X(vkCmdPipelineBarrier)                \
  X(vkCmdBindPipeline)                   \
  X(vkCmdBindDescriptorSets)             \
  X(vkCmdPushConstants)                  \
  X(vkCmdDispatch)                       \
  X(vkCmdFillBuffer)                     \
  X(vkCmdUpdateBuffer)                   \
  X(vkCreateShaderModule)                \
  X(vkDestroyShaderModule)               \
  X(vkCreateDescriptorSetLayout)         \
  X(vkDestroyDescriptorSetLayout)        \
  X(vkCreatePipelineLayout)              \
  X(vkDestroyPipelineLayout)             \
  X(vkCreateComputePipelines)            \
  X(vkDestroyPipeline)                   \
  X(vkCreateDescriptorPool)              \
  X(vkDestroyDescriptorPool)             \
  X(vkAllocateDescriptorSets)            \
  X(vkUpdateDescriptorSets)              \
  X(vkCreateQueryPool)                   \
  X(vkDestroyQueryPool)                  \
  X(vkCmdResetQueryPool)                 \
  X(vkCmdWriteTimestamp)                 \
  X(vkGetQueryPoolResults)

struct InstanceFns {
  VkInstance instance = VK_NULL_HANDLE;
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
#define FT_DECL(f) PFN_##f f = nullptr;
  FT_VK_INSTANCE_FNS(FT_DECL)
#undef FT_DECL
  PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR = nullptr;
  void load(VkInstance inst, PFN_vkGetInstanceProcAddr gipa);
};

struct DeviceFns {
#define FT_DECL(f) PFN_##f f = nullptr;
  FT_VK_DEVICE_FNS(FT_DECL)
#undef FT_DECL
  PFN_vkCmdPushDescriptorSetKHR vkCmdPushDescriptorSetKHR = nullptr;
  // Null unless VK_KHR_pipeline_executable_properties is enabled (Caps::pipeline_stats).
  PFN_vkGetPipelineExecutablePropertiesKHR vkGetPipelineExecutablePropertiesKHR = nullptr;
  PFN_vkGetPipelineExecutableStatisticsKHR vkGetPipelineExecutableStatisticsKHR = nullptr;
  void load(const InstanceFns& in, VkDevice dev);
};

// The feature structs flashtile queries (vk_instance.cpp, into Caps) and enables (vk_device.cpp), chained from f2:
// f11, f12, then f13 (Vulkan 1.3) or the subgroup-size-control struct, then the coopmat, coopmat2 and pipeline
// executable properties structs where asked for. Linked in place: not copyable.
struct FeatureChain {
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceVulkan13Features f13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
  VkPhysicalDeviceSubgroupSizeControlFeatures fssc{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES};
  VkPhysicalDeviceCooperativeMatrixFeaturesKHR fcm{FT_VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR};
  VkPhysicalDeviceCooperativeMatrix2FeaturesNV fcm2{FT_VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV};
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR fpe{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};

  FeatureChain() = default;
  FeatureChain(const FeatureChain&) = delete;
  FeatureChain& operator=(const FeatureChain&) = delete;
  void link(bool v13, bool ssc, bool cm, bool cm2, bool pe) {
    f2.pNext = &f11;
    f11.pNext = &f12;
    void** tail = &f12.pNext;
    if (v13) {
      *tail = &f13;
      tail = &f13.pNext;
    } else if (ssc) {
      *tail = &fssc;
      tail = &fssc.pNext;
    }
    if (cm) {
      *tail = &fcm;
      tail = &fcm.pNext;
    }
    if (cm2) {
      *tail = &fcm2;
      tail = &fcm2.pNext;
    }
    if (pe) *tail = &fpe;
  }
};

// flashtile's own VkInstance (or the application's, for wrapped devices: then not owned), with the validation
// messenger. Validation warnings and errors are stored here; the next flashtile call on any device of this
// instance throws Error(BackendFailure, "vulkan validation: <message>").
struct InstanceState {
  InstanceFns fn;
  bool owned = false;
  VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
  std::mutex mu;
  std::string pending;  // first unreported validation message
  void check_validation();  // throws and clears when a message is pending
  ~InstanceState();
};

void check_vk(VkResult r, const char* what);
std::string api_version_string(std::uint32_t v);

// Query what a physical device offers (Caps before enabling); `extensions` receives the ones flashtile enables;
// pipeline_stats asks for VK_KHR_pipeline_executable_properties (Overrides::pipeline_stats).
Caps query_caps(const InstanceFns& fn, VkPhysicalDevice pd, std::vector<const char*>* extensions, bool pipeline_stats);

// Create the backend's DeviceImpl for a physical device (own VkDevice) or around an application's VkDevice.
std::shared_ptr<detail::DeviceImpl> make_device(std::shared_ptr<InstanceState> inst, VkPhysicalDevice pd, int index);
std::shared_ptr<detail::DeviceImpl> make_wrapped_device(std::shared_ptr<InstanceState> inst,
                                                        const VulkanHandles& handles);

}  // namespace flashtile::vk
