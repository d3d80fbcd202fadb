// Vulkan loader, instance, validation messenger, physical-device enumeration and the Caps query.
#include "vk_device.hpp"
#include "overrides.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace flashtile::vk {

void check_vk(VkResult r, const char* what) {
  if (r == VK_SUCCESS) return;
  if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY)
    throw Error(ErrorCode::OutOfMemory, std::string(what) + ": VkResult " + std::to_string(static_cast<int>(r)));
  throw Error(ErrorCode::BackendFailure, std::string(what) + ": VkResult " + std::to_string(static_cast<int>(r)));
}

std::string api_version_string(std::uint32_t v) {
  return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) + "." +
         std::to_string(VK_API_VERSION_PATCH(v));
}

void InstanceFns::load(VkInstance inst, PFN_vkGetInstanceProcAddr gipa) {
  instance = inst;
  vkGetInstanceProcAddr = gipa;
#define FT_LOAD(f) f = reinterpret_cast<PFN_##f>(gipa(inst, #f));
  FT_VK_INSTANCE_FNS(FT_LOAD)
#undef FT_LOAD
  vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR = reinterpret_cast<PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR>(
      gipa(inst, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR"));
  if (!vkGetPhysicalDeviceProperties2 || !vkGetPhysicalDeviceFeatures2 || !vkCreateDevice || !vkGetDeviceProcAddr)
    throw Error(ErrorCode::BackendFailure, "vulkan: instance lacks Vulkan 1.1 entry points");
}

void DeviceFns::load(const InstanceFns& in, VkDevice dev) {
#define FT_LOAD(f)                                                              \
  f = reinterpret_cast<PFN_##f>(in.vkGetDeviceProcAddr(dev, #f));               \
  if (!f) throw Error(ErrorCode::BackendFailure, "vulkan: device lacks " #f);
  FT_VK_DEVICE_FNS(FT_LOAD)
#undef FT_LOAD
  // Null unless VK_KHR_push_descriptor is enabled on this device.
  vkCmdPushDescriptorSetKHR =
      reinterpret_cast<PFN_vkCmdPushDescriptorSetKHR>(in.vkGetDeviceProcAddr(dev, "vkCmdPushDescriptorSetKHR"));
  vkGetPipelineExecutablePropertiesKHR = reinterpret_cast<PFN_vkGetPipelineExecutablePropertiesKHR>(
      in.vkGetDeviceProcAddr(dev, "vkGetPipelineExecutablePropertiesKHR"));
  vkGetPipelineExecutableStatisticsKHR = reinterpret_cast<PFN_vkGetPipelineExecutableStatisticsKHR>(
      in.vkGetDeviceProcAddr(dev, "vkGetPipelineExecutableStatisticsKHR"));
}

void InstanceState::check_validation() {
  std::string msg;
  {
    std::lock_guard<std::mutex> lock(mu);
    msg.swap(pending);
  }
  if (!msg.empty()) throw Error(ErrorCode::BackendFailure, "vulkan validation: " + msg);
}

InstanceState::~InstanceState() {
  if (!owned || !fn.instance) return;
  if (messenger) {
    auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        fn.vkGetInstanceProcAddr(fn.instance, "vkDestroyDebugUtilsMessengerEXT"));
    if (destroy) destroy(fn.instance, messenger, nullptr);
  }
  fn.vkDestroyInstance(fn.instance, nullptr);
}

namespace {

VKAPI_ATTR VkBool32 VKAPI_CALL on_validation_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                     VkDebugUtilsMessageTypeFlagsEXT,
                                                     const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
  auto* st = static_cast<InstanceState*>(user);
  const char* text = data && data->pMessage ? data->pMessage : "(no message)";
  std::fprintf(stderr, "flashtile: vulkan validation %s: %s\n",
               (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) ? "error" : "warning", text);
  std::lock_guard<std::mutex> lock(st->mu);
  if (st->pending.empty()) st->pending = text;
  return VK_FALSE;
}

bool has_layer(const char* name) {
  std::uint32_t n = 0;
  if (vkEnumerateInstanceLayerProperties(&n, nullptr) != VK_SUCCESS) return false;
  std::vector<VkLayerProperties> layers(n);
  vkEnumerateInstanceLayerProperties(&n, layers.data());
  for (const auto& l : layers)
    if (std::strcmp(l.layerName, name) == 0) return true;
  return false;
}

bool has_instance_extension(const char* name) {
  std::uint32_t n = 0;
  if (vkEnumerateInstanceExtensionProperties(nullptr, &n, nullptr) != VK_SUCCESS) return false;
  std::vector<VkExtensionProperties> exts(n);
  vkEnumerateInstanceExtensionProperties(nullptr, &n, exts.data());
  for (const auto& e : exts)
    if (std::strcmp(e.extensionName, name) == 0) return true;
  return false;
}

std::vector<std::string> device_extensions(const InstanceFns& fn, VkPhysicalDevice pd) {
  std::uint32_t n = 0;
  fn.vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> exts(n);
  fn.vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, exts.data());
  std::vector<std::string> out;
  for (const auto& e : exts) out.emplace_back(e.extensionName);
  return out;
}

// Rank for ordering: hardware GPUs first (discrete, integrated, virtual, other), then CPU/software devices.
int type_rank(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 0;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 1;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
    case VK_PHYSICAL_DEVICE_TYPE_OTHER: return 3;
    default: return 4;  // CPU
  }
}

struct Enumerated {
  std::vector<std::shared_ptr<detail::DeviceImpl>> devices;
  std::string why_none;
};

Enumerated enumerate_once() {
  Enumerated out;
  if (volkInitialize() != VK_SUCCESS) {
    out.why_none = "no Vulkan loader (libvulkan.so.1 could not be loaded)";
    return out;
  }
  const std::uint32_t loader_version = volkGetInstanceVersion();
  if (loader_version < VK_API_VERSION_1_2) {
    out.why_none = "the Vulkan loader supports only API " + api_version_string(loader_version) + ", flashtile needs 1.2";
    return out;
  }
  auto st = std::make_shared<InstanceState>();
  const bool want_validation = read_overrides().validation;
  const bool validation = want_validation && has_layer("VK_LAYER_KHRONOS_validation") &&
                          has_instance_extension(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
  if (want_validation && !validation)
    std::fprintf(stderr, "flashtile: FLASHTILE_VK_VALIDATION=1 but VK_LAYER_KHRONOS_validation (or "
                         "VK_EXT_debug_utils) is not available: running without validation\n");

  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "flashtile";
  app.pEngineName = "flashtile";
  app.apiVersion = loader_version >= VK_API_VERSION_1_3 ? VK_API_VERSION_1_3 : VK_API_VERSION_1_2;
  VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ici.pApplicationInfo = &app;
  const char* layer = "VK_LAYER_KHRONOS_validation";
  const char* ext = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
  VkDebugUtilsMessengerCreateInfoEXT mci{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  mci.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  mci.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT;
  mci.pfnUserCallback = on_validation_message;
  mci.pUserData = st.get();
  if (validation) {
    ici.enabledLayerCount = 1;
    ici.ppEnabledLayerNames = &layer;
    ici.enabledExtensionCount = 1;
    ici.ppEnabledExtensionNames = &ext;
    ici.pNext = &mci;  // also reports problems of vkCreateInstance / vkDestroyInstance themselves
  }
  VkInstance instance = VK_NULL_HANDLE;
  const VkResult r = vkCreateInstance(&ici, nullptr, &instance);
  if (r != VK_SUCCESS) {
    out.why_none = "vkCreateInstance failed (VkResult " + std::to_string(static_cast<int>(r)) + ")";
    return out;
  }
  st->owned = true;
  st->fn.load(instance, vkGetInstanceProcAddr);
  if (validation) {
    auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance, "vkCreateDebugUtilsMessengerEXT"));
    if (create) create(instance, &mci, nullptr, &st->messenger);
  }

  std::uint32_t n = 0;
  st->fn.vkEnumeratePhysicalDevices(instance, &n, nullptr);
  std::vector<VkPhysicalDevice> pds(n);
  st->fn.vkEnumeratePhysicalDevices(instance, &n, pds.data());
  std::vector<std::pair<int, VkPhysicalDevice>> ranked;
  std::string skipped;
  for (VkPhysicalDevice pd : pds) {
    VkPhysicalDeviceProperties p{};
    st->fn.vkGetPhysicalDeviceProperties(pd, &p);
    if (p.apiVersion < VK_API_VERSION_1_2) {
      skipped += std::string(skipped.empty() ? "" : "; ") + p.deviceName + ": Vulkan " +
                 api_version_string(p.apiVersion) + " < 1.2";
      continue;
    }
    ranked.emplace_back(type_rank(p.deviceType), pd);
  }
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [rank, pd] : ranked) {
    try {
      out.devices.push_back(make_device(st, pd, static_cast<int>(out.devices.size())));
    } catch (const Error& e) {
      skipped += std::string(skipped.empty() ? "" : "; ") + e.what();
    }
  }
  if (out.devices.empty())
    out.why_none = pds.empty() ? "no Vulkan physical devices" : "no usable Vulkan device (" + skipped + ")";
  return out;
}

}  // namespace

Caps query_caps(const InstanceFns& fn, VkPhysicalDevice pd, std::vector<const char*>* extensions,
                bool pipeline_stats) {
  Caps c;
  const std::vector<std::string> exts = device_extensions(fn, pd);
  auto has = [&](const char* e) { return std::find(exts.begin(), exts.end(), e) != exts.end(); };

  VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  VkPhysicalDeviceVulkan11Properties p11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_PROPERTIES};
  VkPhysicalDeviceSubgroupSizeControlProperties pssc{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES};
  VkPhysicalDeviceCooperativeMatrix2PropertiesNV pcm2{FT_VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_PROPERTIES_NV};
  VkPhysicalDeviceDriverProperties pdrv{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};  // core in 1.2
  VkPhysicalDeviceProperties props{};
  fn.vkGetPhysicalDeviceProperties(pd, &props);
  const bool v13 = props.apiVersion >= VK_API_VERSION_1_3;
  const bool has_ssc = v13 || has(VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);
  const bool has_cm = has(VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME);
  const bool has_cm2 = has(VK_NV_COOPERATIVE_MATRIX_2_EXTENSION_NAME) && has_cm;
  const bool has_pe = pipeline_stats && has(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
  p2.pNext = &p11;
  p11.pNext = &pdrv;
  void** tail = &pdrv.pNext;
  if (has_ssc) { *tail = &pssc; tail = &pssc.pNext; }
  if (has_cm2) { *tail = &pcm2; tail = &pcm2.pNext; }
  fn.vkGetPhysicalDeviceProperties2(pd, &p2);

  FeatureChain fc;
  fc.link(v13, has_ssc, has_cm, has_cm2, has_pe);
  fn.vkGetPhysicalDeviceFeatures2(pd, &fc.f2);

  c.name = props.deviceName;
  c.vendor_id = props.vendorID;
  c.device_id = props.deviceID;
  c.api_version = props.apiVersion;
  c.software = props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
  // llvmpipe (lavapipe) ends every loop of an invocation once the loops together have run 65535 iterations
  // (Mesa's LP_MAX_TGSI_LOOP_ITERATIONS, one counter for the whole shader), silently: a row would stop reading keys.
  // The portable shaders run about 8 loop iterations a key at d 256 (measured: keys past 6000-8000 were lost), so
  // no invocation may loop over more than kLlvmpipeLoopKeys keys there; split-KV covers the rest.
  if (pdrv.driverID == VK_DRIVER_ID_MESA_LLVMPIPE) c.max_loop_keys = kLlvmpipeLoopKeys;
  c.subgroup_size = p11.subgroupSize;
  const bool sg_compute = (p11.subgroupSupportedStages & VK_SHADER_STAGE_COMPUTE_BIT) != 0;
  const VkSubgroupFeatureFlags ops = sg_compute ? p11.subgroupSupportedOperations : 0;
  c.subgroup_basic = ops & VK_SUBGROUP_FEATURE_BASIC_BIT;
  c.subgroup_shuffle = ops & VK_SUBGROUP_FEATURE_SHUFFLE_BIT;
  c.subgroup_arithmetic = ops & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT;
  c.subgroup_vote = ops & VK_SUBGROUP_FEATURE_VOTE_BIT;
  c.subgroup_ballot = ops & VK_SUBGROUP_FEATURE_BALLOT_BIT;
  c.subgroup_clustered = ops & VK_SUBGROUP_FEATURE_CLUSTERED_BIT;
  const bool ssc = v13 ? fc.f13.subgroupSizeControl : fc.fssc.subgroupSizeControl;
  const bool full = v13 ? fc.f13.computeFullSubgroups : fc.fssc.computeFullSubgroups;
  c.subgroup_size_control = has_ssc && ssc;
  c.compute_full_subgroups = has_ssc && full;
  c.min_subgroup_size = has_ssc ? pssc.minSubgroupSize : c.subgroup_size;
  c.max_subgroup_size = has_ssc ? pssc.maxSubgroupSize : c.subgroup_size;
  c.required_subgroup_size_compute = has_ssc && (pssc.requiredSubgroupSizeStages & VK_SHADER_STAGE_COMPUTE_BIT);
  c.storage_buffer_16bit = fc.f11.storageBuffer16BitAccess;
  c.shader_float16 = fc.f12.shaderFloat16;
  c.shader_int16 = fc.f2.features.shaderInt16;
  c.vulkan_memory_model = fc.f12.vulkanMemoryModel;
  c.push_descriptor = has(VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);
  c.max_shared_memory = props.limits.maxComputeSharedMemorySize;
  c.max_workgroup_invocations = props.limits.maxComputeWorkGroupInvocations;
  for (int i = 0; i < 3; ++i) c.max_workgroup_count[i] = props.limits.maxComputeWorkGroupCount[i];
  c.max_push_constants = props.limits.maxPushConstantsSize;
  c.max_storage_buffer_range = props.limits.maxStorageBufferRange;
  c.min_storage_buffer_offset_alignment = props.limits.minStorageBufferOffsetAlignment;
  c.coopmat_khr = has_cm && fc.fcm.cooperativeMatrix && fn.vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR;
  if (c.coopmat_khr) {
    std::uint32_t n = 0;
    fn.vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR(pd, &n, nullptr);
    std::vector<VkCooperativeMatrixPropertiesKHR> cps(n);
    for (auto& cp : cps) cp = {FT_VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR};
    fn.vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR(pd, &n, cps.data());
    for (std::uint32_t i = 0; i < n; ++i) {
      const auto& cp = cps[i];
      c.coopmat_shapes.push_back({cp.MSize, cp.NSize, cp.KSize, static_cast<std::uint32_t>(cp.AType),
                                  static_cast<std::uint32_t>(cp.BType), static_cast<std::uint32_t>(cp.CType),
                                  static_cast<std::uint32_t>(cp.ResultType), static_cast<std::uint32_t>(cp.scope),
                                  cp.saturatingAccumulation != 0});
    }
  }
  c.pipeline_stats = has_pe && fc.fpe.pipelineExecutableInfo;
  c.coopmat2_nv = has_cm2 && c.coopmat_khr && fc.fcm2.cooperativeMatrixWorkgroupScope;
  if (has_cm2) {
    c.cm2_workgroup_scope = fc.fcm2.cooperativeMatrixWorkgroupScope;
    c.cm2_flexible_dimensions = fc.fcm2.cooperativeMatrixFlexibleDimensions;
    c.cm2_reductions = fc.fcm2.cooperativeMatrixReductions;
    c.cm2_conversions = fc.fcm2.cooperativeMatrixConversions;
    c.cm2_per_element_operations = fc.fcm2.cooperativeMatrixPerElementOperations;
    c.cm2_tensor_addressing = fc.fcm2.cooperativeMatrixTensorAddressing;
    c.cm2_block_loads = fc.fcm2.cooperativeMatrixBlockLoads;
    c.cm2_max_workgroup_size = pcm2.cooperativeMatrixWorkgroupScopeMaxWorkgroupSize;
    c.cm2_max_dimension = pcm2.cooperativeMatrixFlexibleDimensionsMaxDimension;
    c.cm2_reserved_shared_memory = pcm2.cooperativeMatrixWorkgroupScopeReservedSharedMemory;
  }
  if (extensions) {
    extensions->clear();
    if (c.push_descriptor) extensions->push_back(VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);
    if (!v13 && has_ssc) extensions->push_back(VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);
    if (c.coopmat_khr) extensions->push_back(VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME);
    if (c.coopmat2_nv) extensions->push_back(VK_NV_COOPERATIVE_MATRIX_2_EXTENSION_NAME);
    if (c.pipeline_stats) extensions->push_back(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
  }
  return c;
}

}  // namespace flashtile::vk

namespace flashtile::detail {

std::vector<std::shared_ptr<DeviceImpl>> enumerate_vulkan(std::string& why_none) {
  vk::Enumerated e = vk::enumerate_once();
  why_none = e.why_none;
  return e.devices;
}

std::shared_ptr<DeviceImpl> wrap_vulkan_device(const VulkanHandles& h) {
  auto st = std::make_shared<vk::InstanceState>();
  st->owned = false;
  st->fn.load(static_cast<VkInstance>(h.instance), reinterpret_cast<PFN_vkGetInstanceProcAddr>(h.get_instance_proc_addr));
  return vk::make_wrapped_device(std::move(st), h);
}

}  // namespace flashtile::detail
