// Self-check of the validation plumbing (built as a test, not an example for users): with FLASHTILE_VK_VALIDATION=1
// and the Khronos validation layer present, a misuse the layer reports (here a buffer without STORAGE_BUFFER usage
// given to attention_forward) must surface as Error(BackendFailure, "vulkan validation: ..."). It also exercises
// Device::vulkan_handles(). Exit codes: 0 as expected, 1 not, 77 no Vulkan device or no validation layer.
#include <volk.h>

#include <flashtile/flashtile.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>

int main() {
  using namespace flashtile;
  const char* env = std::getenv("FLASHTILE_VK_VALIDATION");
  if (!env || std::strcmp(env, "1") != 0) {
    std::printf("skipped: FLASHTILE_VK_VALIDATION=1 is not set\n");
    return 77;
  }
  if (!Device::unavailable_reason(Backend::Vulkan).empty()) {
    std::printf("skipped: %s\n", Device::unavailable_reason(Backend::Vulkan).c_str());
    return 77;
  }
  if (volkInitialize() != VK_SUCCESS) return 77;
  std::uint32_t n = 0;
  vkEnumerateInstanceLayerProperties(&n, nullptr);
  VkLayerProperties layers[64];
  n = n > 64 ? 64 : n;
  vkEnumerateInstanceLayerProperties(&n, layers);
  bool layer = false;
  for (std::uint32_t i = 0; i < n; ++i) layer |= std::strcmp(layers[i].layerName, "VK_LAYER_KHRONOS_validation") == 0;
  if (!layer) {
    std::printf("skipped: VK_LAYER_KHRONOS_validation not installed\n");
    return 77;
  }

  Device dev = Device::open(Backend::Vulkan);
  const VulkanHandles h = dev.vulkan_handles();
  auto gipa = reinterpret_cast<PFN_vkGetInstanceProcAddr>(h.get_instance_proc_addr);
  auto gdpa = reinterpret_cast<PFN_vkGetDeviceProcAddr>(gipa(static_cast<VkInstance>(h.instance), "vkGetDeviceProcAddr"));
  auto d = static_cast<VkDevice>(h.device);
  auto create_buffer = reinterpret_cast<PFN_vkCreateBuffer>(gdpa(d, "vkCreateBuffer"));
  auto destroy_buffer = reinterpret_cast<PFN_vkDestroyBuffer>(gdpa(d, "vkDestroyBuffer"));
  auto requirements = reinterpret_cast<PFN_vkGetBufferMemoryRequirements>(gdpa(d, "vkGetBufferMemoryRequirements"));
  auto allocate = reinterpret_cast<PFN_vkAllocateMemory>(gdpa(d, "vkAllocateMemory"));
  auto free_memory = reinterpret_cast<PFN_vkFreeMemory>(gdpa(d, "vkFreeMemory"));
  auto bind = reinterpret_cast<PFN_vkBindBufferMemory>(gdpa(d, "vkBindBufferMemory"));

  const Shape s = Shape::of(1, 16, 1, 64);
  VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bci.size = static_cast<VkDeviceSize>(s.numel()) * 2;
  bci.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT;  // deliberately no STORAGE_BUFFER usage
  VkBuffer buffer = VK_NULL_HANDLE;
  if (create_buffer(d, &bci, nullptr, &buffer) != VK_SUCCESS) return 1;
  VkMemoryRequirements req;
  requirements(d, buffer, &req);
  VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  mai.allocationSize = req.size;
  while (mai.memoryTypeIndex < 32 && !(req.memoryTypeBits & (1u << mai.memoryTypeIndex))) ++mai.memoryTypeIndex;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  if (allocate(d, &mai, nullptr, &memory) != VK_SUCCESS || bind(d, buffer, memory, 0) != VK_SUCCESS) return 1;

  int rc = 1;
  {
    Tensor q = Tensor::wrap_vulkan(dev, reinterpret_cast<std::uint64_t>(buffer), 0, bci.size, DType::F16, s,
                                   Strides::contiguous(s));
    Tensor k = Tensor::empty(dev, DType::F16, s), v = Tensor::empty(dev, DType::F16, s),
           o = Tensor::empty(dev, DType::F16, s);
    try {
      attention_forward(q, k, v, o);
      dev.sync();
      std::printf("FAIL: the validation message did not surface as an error\n");
    } catch (const Error& e) {
      const bool ok = e.code() == ErrorCode::BackendFailure && std::strstr(e.what(), "vulkan validation:") != nullptr;
      std::printf("%s: caught %s: %.160s...\n", ok ? "OK" : "FAIL", std::string(to_string(e.code())).c_str(), e.what());
      rc = ok ? 0 : 1;
    }
  }
  destroy_buffer(d, buffer, nullptr);
  free_memory(d, memory, nullptr);
  return rc;
}
