// Vulkan interop: the application creates its own VkInstance, VkDevice and VkBuffers, wraps them for flashtile
// (Device::wrap_vulkan, Tensor::wrap_vulkan), records attention into its own command buffer between its own
// barriers, submits, and checks the output and LSE against a direct computation on the host.
// Exit codes: 0 match, 1 mismatch or error, 77 no Vulkan device here.
#include <volk.h>

#include <flashtile/flashtile.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

void vk_check(VkResult r, const char* what) {
  if (r != VK_SUCCESS) throw std::runtime_error(std::string(what) + " failed: VkResult " + std::to_string(r));
}

int g_validation_messages = 0;
VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT, VkDebugUtilsMessageTypeFlagsEXT,
                                          const VkDebugUtilsMessengerCallbackDataEXT* d, void*) {
  std::fprintf(stderr, "validation: %s\n", d->pMessage);
  ++g_validation_messages;
  return VK_FALSE;
}

// A buffer in host-visible memory, so the application fills and reads it by mapping (lavapipe and most GPUs have
// such memory; a real application would use device-local memory and its own staging).
struct HostBuffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkDeviceSize size = 0;
  void* map = nullptr;
};

HostBuffer make_buffer(VkPhysicalDevice pd, VkDevice dev, VkDeviceSize size) {
  HostBuffer b;
  b.size = size;
  VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bci.size = size;
  bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  vk_check(vkCreateBuffer(dev, &bci, nullptr, &b.buffer), "vkCreateBuffer");
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(dev, b.buffer, &req);
  VkPhysicalDeviceMemoryProperties mp;
  vkGetPhysicalDeviceMemoryProperties(pd, &mp);
  const VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  std::uint32_t type = UINT32_MAX;
  for (std::uint32_t i = 0; i < mp.memoryTypeCount && type == UINT32_MAX; ++i)
    if ((req.memoryTypeBits & (1u << i)) && (mp.memoryTypes[i].propertyFlags & want) == want) type = i;
  if (type == UINT32_MAX) throw std::runtime_error("no host-visible memory type");
  VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  mai.allocationSize = req.size;
  mai.memoryTypeIndex = type;
  vk_check(vkAllocateMemory(dev, &mai, nullptr, &b.memory), "vkAllocateMemory");
  vk_check(vkBindBufferMemory(dev, b.buffer, b.memory, 0), "vkBindBufferMemory");
  vk_check(vkMapMemory(dev, b.memory, 0, VK_WHOLE_SIZE, 0, &b.map), "vkMapMemory");
  return b;
}

void memory_barrier(VkCommandBuffer cb, VkPipelineStageFlags src_stage, VkAccessFlags src, VkPipelineStageFlags dst_stage,
                    VkAccessFlags dst) {
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = src;
  mb.dstAccessMask = dst;
  vkCmdPipelineBarrier(cb, src_stage, dst_stage, 0, 1, &mb, 0, nullptr, 0, nullptr);
}

}  // namespace

int main() {
  using namespace flashtile;
  if (volkInitialize() != VK_SUCCESS) {
    std::printf("skipped: no Vulkan loader\n");
    return 77;
  }
  // ---- The application's own Vulkan objects. --------------------------------------------------------------------
  const char* env = std::getenv("FLASHTILE_VK_VALIDATION");
  bool validation = env && std::strcmp(env, "1") == 0;
  if (validation) {
    std::uint32_t n = 0;
    vkEnumerateInstanceLayerProperties(&n, nullptr);
    std::vector<VkLayerProperties> layers(n);
    vkEnumerateInstanceLayerProperties(&n, layers.data());
    validation = false;
    for (const auto& l : layers) validation |= std::strcmp(l.layerName, "VK_LAYER_KHRONOS_validation") == 0;
  }
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "flashtile interop example";
  app.apiVersion = VK_API_VERSION_1_2;
  VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ici.pApplicationInfo = &app;
  const char* layer = "VK_LAYER_KHRONOS_validation";
  const char* ext = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
  if (validation) {
    ici.enabledLayerCount = 1;
    ici.ppEnabledLayerNames = &layer;
    ici.enabledExtensionCount = 1;
    ici.ppEnabledExtensionNames = &ext;
  }
  VkInstance instance;
  if (vkCreateInstance(&ici, nullptr, &instance) != VK_SUCCESS) {
    std::printf("skipped: vkCreateInstance failed\n");
    return 77;
  }
  volkLoadInstance(instance);
  VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
  if (validation) {
    VkDebugUtilsMessengerCreateInfoEXT mci{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
    mci.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    mci.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT;
    mci.pfnUserCallback = on_message;
    vkCreateDebugUtilsMessengerEXT(instance, &mci, nullptr, &messenger);
  }
  std::uint32_t npd = 0;
  vkEnumeratePhysicalDevices(instance, &npd, nullptr);
  if (npd == 0) {
    std::printf("skipped: no Vulkan physical device\n");
    return 77;
  }
  std::vector<VkPhysicalDevice> pds(npd);
  vkEnumeratePhysicalDevices(instance, &npd, pds.data());
  VkPhysicalDevice pd = pds[0];
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(pd, &props);
  std::uint32_t nq = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, nullptr);
  std::vector<VkQueueFamilyProperties> qf(nq);
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, qf.data());
  std::uint32_t fam = 0;
  while (fam < nq && !(qf[fam].queueFlags & VK_QUEUE_COMPUTE_BIT)) ++fam;
  // Enable what flashtile's portable path uses when the device has it: 16-bit storage (else it reads 16-bit data
  // as packed uints), and VK_KHR_push_descriptor (else it uses its descriptor ring).
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  f2.pNext = &f11;
  vkGetPhysicalDeviceFeatures2(pd, &f2);
  VkPhysicalDeviceVulkan11Features en11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  en11.storageBuffer16BitAccess = f11.storageBuffer16BitAccess;
  std::vector<const char*> dev_exts;
  std::uint32_t ne = 0;
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &ne, nullptr);
  std::vector<VkExtensionProperties> exts(ne);
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &ne, exts.data());
  for (const auto& e : exts)
    if (std::strcmp(e.extensionName, VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME) == 0)
      dev_exts.push_back(VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);
  const float prio = 1.0f;
  VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qci.queueFamilyIndex = fam;
  qci.queueCount = 1;
  qci.pQueuePriorities = &prio;
  VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  dci.pNext = &en11;
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  dci.enabledExtensionCount = static_cast<std::uint32_t>(dev_exts.size());
  dci.ppEnabledExtensionNames = dev_exts.data();
  VkDevice device;
  vk_check(vkCreateDevice(pd, &dci, nullptr, &device), "vkCreateDevice");
  volkLoadDevice(device);
  VkQueue queue;
  vkGetDeviceQueue(device, fam, 0, &queue);

  int rc = 0;
  {
    // ---- Problem: B=2, Sq=37, Sk=50, Hq=4, Hkv=2 (GQA), D=64, f16, causal. ----------------------------------------
    const std::int64_t B = 2, Sq = 37, Sk = 50, Hq = 4, Hkv = 2, D = 64;
    const Shape qs = Shape::of(B, Sq, Hq, D), ks = Shape::of(B, Sk, Hkv, D), ls = Shape::of(B, Hq, Sq);
    std::mt19937 rng(7);
    std::normal_distribution<float> nd;
    std::vector<std::uint16_t> hq(qs.numel()), hk(ks.numel()), hv(ks.numel());
    for (auto* h : {&hq, &hk, &hv})
      for (auto& x : *h) x = float_to_f16(nd(rng));
    HostBuffer bq = make_buffer(pd, device, hq.size() * 2), bk = make_buffer(pd, device, hk.size() * 2),
               bv = make_buffer(pd, device, hv.size() * 2), bo = make_buffer(pd, device, hq.size() * 2),
               bl = make_buffer(pd, device, ls.numel() * 4);
    std::memcpy(bq.map, hq.data(), hq.size() * 2);
    std::memcpy(bk.map, hk.data(), hk.size() * 2);
    std::memcpy(bv.map, hv.data(), hv.size() * 2);
    std::memset(bo.map, 0xff, bo.size);  // poison: NaN in f16

    try {
      // ---- Wrap the application's objects. -------------------------------------------------------------------
      VulkanHandles h;
      h.instance = instance;
      h.physical_device = pd;
      h.device = device;
      h.queue = queue;
      h.queue_family = fam;
      h.get_instance_proc_addr = reinterpret_cast<void*>(vkGetInstanceProcAddr);
      Device dev = Device::wrap_vulkan(h);
      auto wrap = [&](const HostBuffer& b, DType dt, const Shape& s) {
        return Tensor::wrap_vulkan(dev, reinterpret_cast<std::uint64_t>(b.buffer), 0, b.size, dt, s,
                                   Strides::contiguous(s));
      };
      Tensor q = wrap(bq, DType::F16, qs), k = wrap(bk, DType::F16, ks), v = wrap(bv, DType::F16, ks),
             o = wrap(bo, DType::F16, qs), lse = wrap(bl, DType::F32, ls);
      Options opt;
      opt.causal = true;
      // At load time: build the pipeline this configuration needs, so recording below does not compile shaders
      // (seconds for large head dims when the driver's shader cache is cold).
      const Result prepared = prepare_attention(q, k, v, o, &lse, opt);

      // ---- Record into the application's command buffer, between its own barriers. ---------------------------
      VkCommandPoolCreateInfo cpi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
      cpi.queueFamilyIndex = fam;
      VkCommandPool pool;
      vk_check(vkCreateCommandPool(device, &cpi, nullptr, &pool), "vkCreateCommandPool");
      VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
      cai.commandPool = pool;
      cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
      cai.commandBufferCount = 1;
      VkCommandBuffer cb;
      vk_check(vkAllocateCommandBuffers(device, &cai, &cb), "vkAllocateCommandBuffers");
      VkCommandBufferBeginInfo cbi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
      vk_check(vkBeginCommandBuffer(cb, &cbi), "vkBeginCommandBuffer");
      // Before: the producers of q, k, v (here the host, through mapped memory) -> compute shader reads; earlier
      // accesses to out and lse -> compute shader writes.
      memory_barrier(cb, VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                     VK_ACCESS_HOST_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                     VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
      opt.vk_command_buffer = cb;
      const Result r = attention_forward(q, k, v, o, &lse, opt);
      if (r.kernel != prepared.kernel) throw std::runtime_error("prepared " + prepared.kernel + ", ran " + r.kernel);
      // After: compute shader writes of out and lse -> the consumer (here the host, after the fence).
      memory_barrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                     VK_ACCESS_HOST_READ_BIT);
      vk_check(vkEndCommandBuffer(cb), "vkEndCommandBuffer");
      VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
      VkFence fence;
      vk_check(vkCreateFence(device, &fci, nullptr, &fence), "vkCreateFence");
      VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
      si.commandBufferCount = 1;
      si.pCommandBuffers = &cb;
      vk_check(vkQueueSubmit(queue, 1, &si, fence), "vkQueueSubmit");
      vk_check(vkWaitForFences(device, 1, &fence, VK_TRUE, UINT64_MAX), "vkWaitForFences");
      dev.sync();  // surfaces any validation message flashtile saw
      std::printf("device %s: path %s, kernel %s, asynchronous %d\n", props.deviceName,
                  std::string(to_string(r.path)).c_str(), r.kernel.c_str(), r.asynchronous ? 1 : 0);

      // ---- Check against a direct computation. ---------------------------------------------------------------
      const auto* out = static_cast<const std::uint16_t*>(bo.map);
      const auto* lse_out = static_cast<const float*>(bl.map);
      const double scale = 1.0 / std::sqrt(static_cast<double>(D));
      double err2 = 0, ref2 = 0, lse_err = 0;
      for (std::int64_t b = 0; b < B; ++b)
        for (std::int64_t hh = 0; hh < Hq; ++hh)
          for (std::int64_t i = 0; i < Sq; ++i) {
            const std::int64_t hk_ = hh / (Hq / Hkv), last = i + Sk - Sq;  // causal, bottom-right aligned
            std::vector<double> s;
            double mx = -INFINITY;
            for (std::int64_t j = 0; j <= std::min(last, Sk - 1); ++j) {
              double dot = 0;
              for (std::int64_t d = 0; d < D; ++d)
                dot += f16_to_float(hq[((b * Sq + i) * Hq + hh) * D + d]) * f16_to_float(hk[((b * Sk + j) * Hkv + hk_) * D + d]);
              s.push_back(dot * scale);
              mx = std::max(mx, dot * scale);
            }
            double sum = 0;
            for (double& x : s) sum += (x = std::exp(x - mx));
            for (std::int64_t d = 0; d < D; ++d) {
              double ref = 0;
              for (std::size_t j = 0; j < s.size(); ++j)
                ref += s[j] / sum * f16_to_float(hv[((b * Sk + j) * Hkv + hk_) * D + d]);
              const double got = f16_to_float(out[((b * Sq + i) * Hq + hh) * D + d]);
              err2 += (got - ref) * (got - ref);
              ref2 += ref * ref;
              if (std::isnan(got)) err2 = INFINITY;
            }
            const double lse_ref = s.empty() ? -INFINITY : mx + std::log(sum);
            const double got = lse_out[(b * Hq + hh) * Sq + i];
            if (s.empty() ? got != -INFINITY : !(std::abs(got - lse_ref) <= 1e-3 * std::max(1.0, std::abs(lse_ref))))
              lse_err = std::max(lse_err, std::isfinite(got) ? std::abs(got - lse_ref) : INFINITY);
          }
      const double rel = std::sqrt(err2 / ref2);
      std::printf("relative error %.3g (tolerance 2e-3), lse error %.3g, validation messages %d\n", rel, lse_err,
                  g_validation_messages);
      rc = (rel <= 2e-3 && lse_err == 0 && g_validation_messages == 0) ? 0 : 1;
      std::printf("%s\n", rc == 0 ? "OK" : "MISMATCH");
      vkDestroyFence(device, fence, nullptr);
      vkDestroyCommandPool(device, pool, nullptr);
    } catch (const Error& e) {
      std::printf("flashtile error: %s\n", e.what());
      rc = 1;
    }
    for (HostBuffer* b : {&bq, &bk, &bv, &bo, &bl}) {
      vkDestroyBuffer(device, b->buffer, nullptr);
      vkFreeMemory(device, b->memory, nullptr);
    }
  }
  vkDestroyDevice(device, nullptr);
  if (messenger) vkDestroyDebugUtilsMessengerEXT(instance, messenger, nullptr);
  vkDestroyInstance(instance, nullptr);
  return rc;
}
