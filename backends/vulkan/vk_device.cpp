// VulkanDevice: the Vulkan backend's DeviceImpl. Device-local buffers with a staging buffer for copies, a compute
// queue, lazily built pipelines keyed by a plain state struct, plan() over the variant tables (kernels.hpp), and
// run(): synchronous submit + wait, or recording into the caller's command buffer.
//
// Recording into the caller's VkCommandBuffer (Options::vk_command_buffer): flashtile records its dispatches and
// returns; the caller submits. The caller must place these barriers (flashtile inserts only the ones between its
// own passes, and one on its private split-KV scratch buffer):
//   before: the writes that produced q, k, v  -> srcStage/srcAccess of that producer,
//           dstStage COMPUTE_SHADER, dstAccess SHADER_READ;
//           earlier reads/writes of out and lse (WAR/WAW) -> dstStage COMPUTE_SHADER, dstAccess SHADER_WRITE;
//   after:  srcStage COMPUTE_SHADER, srcAccess SHADER_WRITE on out and lse -> the consumer's stage and access
//           (e.g. TRANSFER/TRANSFER_READ for a copy, COMPUTE_SHADER/SHADER_READ for the next shader, HOST/HOST_READ
//           for a mapped read after the fence).
// The backward (attention_backward) follows the same rules with q, k, v, out, lse and dout (and Options::sinks) as
// its inputs and dq, dk, dv (and Options::dsinks and Options::workspace, when given) as its outputs.
// State: flashtile binds its own compute pipeline, descriptor set 0 (or push descriptors) and push constants in
// the caller's command buffer; compute bindings the caller made before the call must be bound again after it.
// Paged calls with k_new / v_new also read those and write the caches (the append pass, ordered before the attention
// by flashtile's barrier): the caller's "before" barriers cover them too (earlier reads of the caches: WAR).
// Queue: submit on the device's queue family (the one given to Device::wrap_vulkan); calls recorded with split-KV
// share one scratch buffer, so run them on one queue (flashtile orders them with a barrier).
// Lifetime: the tensors' buffers must stay alive until the submission completes. Descriptors: with
// VK_KHR_push_descriptor (when the device has it) nothing else is needed; otherwise descriptor sets come from a
// per-device ring of kDescriptorRing sets, and the caller must have waited for a submission before recording
// kDescriptorRing further flashtile calls on the same device. The recorded commands reference flashtile's scratch
// buffer, which only grows; replaced ones are kept until the device is destroyed. Calls that flashtile submits
// itself (no command buffer) use the same VkQueue: for a wrapped device the application must not submit to that
// queue from another thread during a flashtile call.
#include "vk_device.hpp"
#include "backward.hpp"
#include "checked.hpp"
#include "overrides.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <thread>
#include <tuple>
#include <unordered_map>

namespace flashtile::vk {

namespace {

std::atomic<double> g_last_gpu_ms{-1.0};

constexpr std::uint32_t kDescriptorRing = 1024;
constexpr std::uint64_t kStagingChunk = 64ull << 20;
constexpr std::uint64_t kMaxSplits = 256;       // split-KV splits chosen for occupancy (more only for Caps::max_loop_keys)
constexpr std::uint64_t kSplitTarget = 512;     // workgroups a split-KV grid aims at on GPUs: ~4 per SM/CU
// The decode shader (packs_gqa): ~1024 workgroups (several waves, so the last one's tail is short; Vulkan does not
// say how many fit at once), each split at least 1344 keys (42 tiles of 32) so that its first loads' latency is a
// small part of it. Swept on the H200 (d128, Hkv 8): B = 1 best at 48 splits (2.66 TB/s; 64 and 128 splits 20-30%
// slower), B = 16 at 6-8, B = 64 at 2, B = 128 at 1 (2026-12-03_h200_vulkan_decode_splits).
constexpr std::uint64_t kDecodeSplitTarget = 1024;
constexpr std::uint64_t kDecodeMinSplitKeys = 1344;
constexpr std::uint32_t kReduceWg = 64;
constexpr std::uint32_t kAppendWg = 64;

const Path kPathOrder[] = {Path::VulkanCoopmat2, Path::VulkanCoopmat, Path::VulkanPortable};

std::vector<ShaderVariant> variants_of(Path p) {
  switch (p) {
    case Path::VulkanCoopmat2: return coopmat2_variants();
    case Path::VulkanCoopmat: return coopmat_variants();
    default: return portable_variants();
  }
}

const char* storage_suffix(DType d, bool packed) {
  if (d == DType::F32) return "f32";
  return packed ? "pk" : "s16";
}

std::uint32_t shader_dtype(DType d) {
  return d == DType::F16 ? kShaderF16 : d == DType::BF16 ? kShaderBF16 : kShaderF32;
}

// The serving layout's specialization constants; none for dense calls, whose pipelines stay exactly as they were.
std::vector<std::pair<std::uint32_t, std::uint32_t>> layout_spec(const detail::AttnArgs& a) {
  if (a.varlen) return {{kSpecLayout, kLayoutVarlen}};
  if (a.paged) return {{kSpecLayout, kLayoutPaged}, {kSpecPageSize, static_cast<std::uint32_t>(a.paged->page_size)}};
  return {};
}

// The attention variants a call uses (spec id kSpecVariants); 0 for plain calls, whose pipelines stay as they were.
std::uint32_t variant_bits(const detail::AttnArgs& a) {
  return (a.window_left >= 0 || a.window_right >= 0 ? kVarWindow : 0u) | (a.softcap > 0 ? kVarSoftcap : 0u) |
         (a.has_alibi ? kVarAlibi : 0u) | (a.has_sinks ? kVarSinks : 0u);
}

// The variants' values as the shaders read them (VariantParams).
VariantParams variant_params(const detail::AttnArgs& a) {
  // A window wider than Sq + Sk keys bounds nothing: clamped there, diag +- window stays inside int32.
  const std::int64_t far = std::min<std::int64_t>(a.seqlen_q + a.seqlen_k, std::int64_t{1} << 30);
  auto window = [far](std::int64_t w) { return static_cast<std::int32_t>(w < 0 ? -1 : std::min(w, far)); };
  VariantParams p{};
  p.window_left = window(a.window_left);
  p.window_right = window(a.window_right);
  p.softcap_log2 = a.softcap * detail::kLog2e;
  if (a.has_alibi) {
    p.alibi_off = static_cast<std::uint32_t>(a.alibi_slopes.buf.offset / 4);
    p.alibi_sb = a.alibi_per_batch ? static_cast<std::uint32_t>(a.heads_q) : 0u;
  }
  if (a.has_sinks) p.sinks_off = static_cast<std::uint32_t>(a.sinks.buf.offset / 4);
  return p;
}

// The pipeline cache key: a plain state struct.
struct PipelineKey {
  Path path = Path::VulkanPortable;
  std::string spirv;
  std::uint32_t head_dim = 0, causal = 0, dtype = 0, block_m = 0, block_n = 0, wg_size = 0, subgroup_size = 0;
  std::uint32_t required_subgroup_size = 0;
  bool full_subgroups = false;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> extra_spec;
  bool backward = false;  // the backward's pipeline layout (backward.hpp) instead of the forward's
  auto tie() const {
    return std::tie(path, spirv, head_dim, causal, dtype, block_m, block_n, wg_size, subgroup_size,
                    required_subgroup_size, full_subgroups, extra_spec, backward);
  }
  bool operator<(const PipelineKey& o) const { return tie() < o.tie(); }
};

// A descriptor set layout with its pipeline layout, and (without push descriptors) a ring of sets from its own pool.
struct DescriptorLayout {
  std::uint32_t bindings = 0;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VkPipelineLayout pipe_layout = VK_NULL_HANDLE;
  VkDescriptorPool pool = VK_NULL_HANDLE;
  std::vector<VkDescriptorSet> ring;
  std::uint32_t ring_next = 0;
};

struct Allocation {
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkDeviceSize size = 0;
};

class VulkanDevice final : public detail::DeviceImpl {
 public:
  // flashtile's own VkDevice on `pd`.
  VulkanDevice(std::shared_ptr<InstanceState> inst, VkPhysicalDevice pd, int index) : inst_(std::move(inst)), pd_(pd) {
    std::vector<const char*> exts;
    caps_ = query_caps(inst_->fn, pd, &exts, ov_.pipeline_stats);
    const bool v13 = caps_.api_version >= VK_API_VERSION_1_3;
    // Queue: the first family with compute (prefer compute without graphics: often the async compute queue).
    std::uint32_t nq = 0;
    inst_->fn.vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, nullptr);
    std::vector<VkQueueFamilyProperties> qf(nq);
    inst_->fn.vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, qf.data());
    int fam = -1;
    for (std::uint32_t i = 0; i < nq; ++i)
      if ((qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && fam < 0) fam = static_cast<int>(i);
    for (std::uint32_t i = 0; i < nq; ++i)
      if ((qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && !(qf[i].queueFlags & VK_QUEUE_GRAPHICS_BIT)) {
        fam = static_cast<int>(i);
        break;
      }
    if (fam < 0) throw Error(ErrorCode::BackendFailure, caps_.name + ": no compute queue");
    qfam_ = static_cast<std::uint32_t>(fam);

    // Enable exactly the features the paths use, where the device has them.
    FeatureChain e;
    // Query the supported maintenance4 (1.3) alongside: coopmat shaders built for vulkan1.3 use LocalSizeId.
    VkPhysicalDeviceFeatures2 q2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    VkPhysicalDeviceVulkan13Features q13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
    if (v13) q2.pNext = &q13;
    inst_->fn.vkGetPhysicalDeviceFeatures2(pd, &q2);
    e.f2.features.shaderInt16 = caps_.shader_int16;
    e.f11.storageBuffer16BitAccess = caps_.storage_buffer_16bit;
    e.f12.shaderFloat16 = caps_.shader_float16;
    e.f12.vulkanMemoryModel = caps_.vulkan_memory_model;
    e.f13.subgroupSizeControl = e.fssc.subgroupSizeControl = caps_.subgroup_size_control;
    e.f13.computeFullSubgroups = e.fssc.computeFullSubgroups = caps_.compute_full_subgroups;
    e.f13.maintenance4 = v13 ? q13.maintenance4 : VK_FALSE;
    e.fcm.cooperativeMatrix = VK_TRUE;
    e.fcm2.cooperativeMatrixWorkgroupScope = caps_.cm2_workgroup_scope;
    e.fcm2.cooperativeMatrixFlexibleDimensions = caps_.cm2_flexible_dimensions;
    e.fcm2.cooperativeMatrixReductions = caps_.cm2_reductions;
    e.fcm2.cooperativeMatrixConversions = caps_.cm2_conversions;
    e.fcm2.cooperativeMatrixPerElementOperations = caps_.cm2_per_element_operations;
    e.fcm2.cooperativeMatrixTensorAddressing = caps_.cm2_tensor_addressing;
    e.fcm2.cooperativeMatrixBlockLoads = caps_.cm2_block_loads;
    e.fpe.pipelineExecutableInfo = caps_.pipeline_stats;
    if (ov_.pipeline_stats && !caps_.pipeline_stats)
      std::fprintf(stderr, "flashtile: FLASHTILE_VK_PIPELINE_STATS ignored on %s: no VK_KHR_pipeline_executable_properties\n",
                   caps_.name.c_str());
    e.link(v13, caps_.subgroup_size_control || caps_.compute_full_subgroups, caps_.coopmat_khr, caps_.coopmat2_nv,
           caps_.pipeline_stats);
    const float prio = 1.0f;
    VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    qci.queueFamilyIndex = qfam_;
    qci.queueCount = 1;
    qci.pQueuePriorities = &prio;
    VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    dci.pNext = &e.f2;
    dci.queueCreateInfoCount = 1;
    dci.pQueueCreateInfos = &qci;
    dci.enabledExtensionCount = static_cast<std::uint32_t>(exts.size());
    dci.ppEnabledExtensionNames = exts.data();
    check_vk(inst_->fn.vkCreateDevice(pd, &dci, nullptr, &dev_), "vkCreateDevice");
    owns_device_ = true;
    fn_.load(inst_->fn, dev_);
    fn_.vkGetDeviceQueue(dev_, qfam_, 0, &queue_);
    init(index);
  }

  // The application's VkDevice (not owned). Caps assume the application enabled, where the device supports them,
  // the features flashtile's own devices enable (see README); push descriptors only if the extension is enabled.
  VulkanDevice(std::shared_ptr<InstanceState> inst, const VulkanHandles& h) : inst_(std::move(inst)) {
    pd_ = static_cast<VkPhysicalDevice>(h.physical_device);
    dev_ = static_cast<VkDevice>(h.device);
    queue_ = static_cast<VkQueue>(h.queue);
    qfam_ = h.queue_family;
    caps_ = query_caps(inst_->fn, pd_, nullptr, false);  // the application did not enable the statistics for us
    owns_device_ = false;
    fn_.load(inst_->fn, dev_);
    init(0);
  }

  ~VulkanDevice() override {
    if (!dev_) return;
    fn_.vkDeviceWaitIdle(dev_);
    for (auto& [key, p] : pipelines_) fn_.vkDestroyPipeline(dev_, p, nullptr);
    for (auto& [name, m] : modules_) fn_.vkDestroyShaderModule(dev_, m, nullptr);
    for (DescriptorLayout* l : {&fwd_layout_, &bwd_layout_}) {
      if (l->pool) fn_.vkDestroyDescriptorPool(dev_, l->pool, nullptr);
      fn_.vkDestroyPipelineLayout(dev_, l->pipe_layout, nullptr);
      fn_.vkDestroyDescriptorSetLayout(dev_, l->set_layout, nullptr);
    }
    fn_.vkDestroyFence(dev_, fence_, nullptr);
    if (query_pool_) fn_.vkDestroyQueryPool(dev_, query_pool_, nullptr);
    fn_.vkDestroyCommandPool(dev_, cmd_pool_, nullptr);
    for (auto& [buf, a] : allocs_) {
      fn_.vkDestroyBuffer(dev_, reinterpret_cast<VkBuffer>(buf), nullptr);
      fn_.vkFreeMemory(dev_, a.memory, nullptr);
    }
    if (owns_device_) fn_.vkDestroyDevice(dev_, nullptr);
  }

  const DeviceInfo& info() const override { return info_; }
  std::uint64_t max_index_elements() const override { return kMaxIndex; }

  std::uint64_t alloc(std::size_t bytes) override {
    inst_->check_validation();
    std::lock_guard<std::mutex> lock(mu_);
    // Sizes past 2^63 - 1 would wrap in the driver's alignment rounding or in the byte offsets of views.
    return create_buffer(detail::checked_bytes(std::max<std::size_t>(bytes, 4), "bytes: vulkan alloc"), false);
  }

  void free(std::uint64_t handle) noexcept override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = allocs_.find(handle);
    if (it == allocs_.end()) return;
    fn_.vkDestroyBuffer(dev_, reinterpret_cast<VkBuffer>(handle), nullptr);
    fn_.vkFreeMemory(dev_, it->second.memory, nullptr);
    allocs_.erase(it);
  }

  void upload(detail::BufferRef dst, const void* src, std::size_t bytes) override {
    inst_->check_validation();
    std::lock_guard<std::mutex> lock(mu_);
    const auto* p = static_cast<const std::uint8_t*>(src);
    for (std::uint64_t done = 0; done < bytes;) {
      const std::uint64_t n = std::min<std::uint64_t>(bytes - done, kStagingChunk);
      ensure_staging(n);
      std::memcpy(staging_map_, p + done, n);
      VkCommandBuffer cb = begin();
      VkBufferCopy region{0, dst.offset + done, n};
      fn_.vkCmdCopyBuffer(cb, staging_, reinterpret_cast<VkBuffer>(dst.handle), 1, &region);
      submit_and_wait(cb);
      done += n;
    }
    inst_->check_validation();
  }

  void download(void* dst, detail::BufferRef src, std::size_t bytes) override {
    inst_->check_validation();
    std::lock_guard<std::mutex> lock(mu_);
    auto* p = static_cast<std::uint8_t*>(dst);
    for (std::uint64_t done = 0; done < bytes;) {
      const std::uint64_t n = std::min<std::uint64_t>(bytes - done, kStagingChunk);
      ensure_staging(n);
      VkCommandBuffer cb = begin();
      VkBufferCopy region{src.offset + done, 0, n};
      fn_.vkCmdCopyBuffer(cb, reinterpret_cast<VkBuffer>(src.handle), staging_, 1, &region);
      VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
      mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
      mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
      fn_.vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, nullptr, 0,
                               nullptr);
      submit_and_wait(cb);
      std::memcpy(p + done, staging_map_, n);
      done += n;
    }
    inst_->check_validation();
  }

  detail::Plan plan(const detail::AttnArgs& args, const std::optional<Path>& forced) const override {
    return choose_vk_path(forced, [&](detail::PathCheck& c) {
      // The portable path's tiled shader runs the serving layouts (its variants say which); the others have none.
      c.why_not = c.path == Path::VulkanPortable ? "" : detail::layout_why_not(args);
      if (c.why_not.empty()) c.why_not = detail::variants_why_not(c.path, args, false);
      const ShaderVariant* v = c.why_not.empty() ? pick(c.path, args, &c.why_not) : nullptr;
      if (v) {
        c.kernel = kernel_name(*v, args);
        c.reduced_precision = v->reduced_precision;
        const std::uint32_t splits = choose_splits(*v, args);
        if (splits > 1) c.kernel += "+splitkv" + std::to_string(splits);
      }
    });
  }

  // Builds outside mu_ (seconds on a cold driver cache), so calls running on this device meanwhile, e.g. an
  // application's loader thread preparing while another thread computes, are not held up; build_mu_ keeps two
  // prepares from compiling one key twice.
  void prepare(const detail::Plan& plan, const detail::AttnArgs& a) override {
    const ShaderVariant& v = planned_variant(plan, a);
    std::vector<PipelineKey> keys{key_of(v, a)};
    if (choose_splits(v, a) > 1) keys.push_back(reduce_key(v, a));
    if (appends(a)) keys.push_back(append_key(v, a));
    std::lock_guard<std::mutex> build(build_mu_);
    for (const PipelineKey& k : keys) {
      VkShaderModule mod = VK_NULL_HANDLE;
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (pipelines_.count(k) != 0) continue;
        mod = module(k.spirv);
      }
      const VkPipeline p = create_pipeline(k, mod);
      std::lock_guard<std::mutex> lock(mu_);
      if (!pipelines_.emplace(k, p).second) fn_.vkDestroyPipeline(dev_, p, nullptr);  // a run built it meanwhile
    }
    inst_->check_validation();
  }

  void run(const detail::Plan& plan, const detail::AttnArgs& a) override {
    inst_->check_validation();
    const ShaderVariant* v = &planned_variant(plan, a);
    std::lock_guard<std::mutex> lock(mu_);
    dispatch(*v, a);
  }

  void sync() override {
    // Every submission flashtile makes on its own is waited for before the call returns.
    inst_->check_validation();
  }

  // The backward: three passes, and dsinks where asked (backward.hpp), on vulkan_coopmat (the KHR cooperative-matrix
  // dK/dV and dQ passes) and vulkan_portable; vulkan_coopmat2 has none yet.
  detail::Plan plan_backward(const detail::BwdArgs& args, const std::optional<Path>& forced) const override {
    return choose_vk_path(forced, [&](detail::PathCheck& c) {
      if (c.why_not = detail::variants_why_not(c.path, args.fwd, true); !c.why_not.empty()) return;
      BwdChoice choice;
      c.why_not = bwd_choice(c.path, args, &choice);
      c.kernel = choice.kernel;
      c.workspace_bytes = choice.workspace_bytes;
    });
  }

  // Records preprocess, then dK/dV, dQ and (with Options::dsinks) dsinks, which all read only what the preprocess
  // wrote (one barrier after it), into the application's command buffer, or submits and waits.
  void run_backward(const detail::Plan& plan, const detail::BwdArgs& a) override {
    inst_->check_validation();
    BwdChoice c;
    const std::string why = bwd_choice(plan.path, a, &c);
    if (!why.empty()) throw Error(ErrorCode::Unsupported, std::string(to_string(plan.path)) + ": " + why);
    std::lock_guard<std::mutex> lock(mu_);
    const detail::AttnArgs& f = a.fwd;
    const bool external = f.vk_command_buffer != nullptr;
    VkBuffer ws = a.has_workspace ? reinterpret_cast<VkBuffer>(a.workspace.buf.handle) : ensure_scratch(c.workspace_bytes);
    const auto ws_off = static_cast<std::uint32_t>(a.has_workspace ? a.workspace.buf.offset / 4 : 0);
    auto vb = [](const detail::TensorArg& t) { return reinterpret_cast<VkBuffer>(t.buf.handle); };
    // Sinks change dQ, dK and dV only through the forward's lse: those passes run as for a call without them (the
    // same pipelines), and the dsinks pass reads the sinks from their own binding.
    const std::uint32_t bits = variant_bits(f) & ~kVarSinks;
    const VkBuffer bufs[kBwdBindingCount] = {
        vb(f.q),  vb(f.k),  vb(f.v),  vb(f.o), vb(a.dout), vb(f.lse), ws, vb(a.dq), vb(a.dk), vb(a.dv),
        bits ? variant_params_ : dummy_, f.has_alibi ? vb(f.alibi_slopes) : dummy_,
        a.has_dsinks ? vb(f.sinks) : dummy_, a.has_dsinks ? vb(a.dsinks) : dummy_};
    auto records = [&](BwdPass pass) { return pass != BwdPass::Dsinks || a.has_dsinks; };
    VkPipeline pipes[std::size(kBwdPasses)] = {};
    for (std::size_t i = 0; i < std::size(kBwdPasses); ++i) {
      if (!records(kBwdPasses[i])) continue;
      const BwdPassKernel& pk = c.passes[i];
      PipelineKey k;
      k.path = plan.path;
      k.spirv = pk.spirv;
      k.head_dim = static_cast<std::uint32_t>(f.head_dim);
      k.causal = f.causal ? 1 : 0;
      k.dtype = shader_dtype(f.dtype);
      k.block_m = pk.block_m;
      k.block_n = pk.block_n;
      k.wg_size = pk.wg;
      k.subgroup_size = pk.required_subgroup_size ? pk.required_subgroup_size : caps_.subgroup_size;
      k.required_subgroup_size = pk.required_subgroup_size;
      k.full_subgroups = pk.required_subgroup_size != 0;
      k.extra_spec = pk.extra_spec;
      k.backward = true;
      const bool scores = kBwdPasses[i] == BwdPass::DkDv || kBwdPasses[i] == BwdPass::Dq;
      if (bits && scores) k.extra_spec.push_back({kSpecVariants, bits});
      pipes[i] = pipeline(k);
    }
    VkCommandBuffer cb = external ? static_cast<VkCommandBuffer>(f.vk_command_buffer) : begin();
    const bool stamp = !external && stamp_begin(cb);
    // flashtile's scratch may still be in use by an earlier recorded call: order after it (WAR/WAW).
    if (external && !a.has_workspace)
      barrier(cb, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT, VK_ACCESS_SHADER_WRITE_BIT);
    if (bits) record_variant_params(cb, f);
    bind_descriptors(cb, bwd_layout_, bufs);
    for (std::size_t i = 0; i < std::size(kBwdPasses); ++i) {
      const BwdPass pass = kBwdPasses[i];
      if (!records(pass)) continue;
      const BwdPushConstants pc = bwd_push_constants(pass, a, ws_off);
      fn_.vkCmdPushConstants(cb, bwd_layout_.pipe_layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof pc, &pc);
      fn_.vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipes[i]);
      const auto g = bwd_grid(pass, c.passes[i], a);
      fn_.vkCmdDispatch(cb, g[0], g[1], g[2]);
      // The later passes read its lse2 and Delta.
      if (pass == BwdPass::Preprocess) barrier(cb, VK_ACCESS_SHADER_WRITE_BIT, VK_ACCESS_SHADER_READ_BIT);
    }
    if (stamp) stamp_end(cb);
    if (!external) {
      submit_and_wait(cb);
      if (stamp) read_timestamps();
      inst_->check_validation();
    }
  }

 private:
  // The backward's choice on `path` ("" and *out), else why it cannot run the call.
  std::string bwd_choice(Path path, const detail::BwdArgs& a, BwdChoice* out) const {
    switch (path) {
      case Path::VulkanPortable: return bwd_choose(caps_, a, out);
      case Path::VulkanCoopmat: return khr_bwd_choose(caps_, a, out);
      default: return "no backward kernel on this path yet (vulkan_coopmat and vulkan_portable have one)";
    }
  }

  // choose_path over kPathOrder: a path FLASHTILE_VK_PATHS leaves out is passed over, `check` fills the others'.
  template <class Check>
  detail::Plan choose_vk_path(const std::optional<Path>& forced, Check check) const {
    inst_->check_validation();
    std::vector<detail::PathCheck> order;
    for (Path p : kPathOrder) {
      detail::PathCheck c{p, "", ""};
      if (std::find(unlisted_.begin(), unlisted_.end(), p) != unlisted_.end()) c.why_not = "not in FLASHTILE_VK_PATHS";
      else check(c);
      order.push_back(std::move(c));
    }
    return detail::choose_path(order, forced, info_.name + " (vulkan:" + std::to_string(info_.index) + ")", &info_.paths);
  }

  // Records variant v on the call's arguments (mu_ held): into the application's command buffer, or submitted and
  // waited for.
  void dispatch(const ShaderVariant& variant, const detail::AttnArgs& a) {
    const ShaderVariant* v = &variant;
    PushConstants pc{};
    const std::uint64_t es = dtype_size(a.dtype);
    pc.q_off = static_cast<std::uint32_t>(a.q.buf.offset / es);
    pc.k_off = static_cast<std::uint32_t>(a.k.buf.offset / es);
    pc.v_off = static_cast<std::uint32_t>(a.v.buf.offset / es);
    pc.o_off = static_cast<std::uint32_t>(a.o.buf.offset / es);
    pc.lse_off = a.has_lse ? static_cast<std::uint32_t>(a.lse.buf.offset / 4) : 0;
    auto st = [](std::int64_t s) { return static_cast<std::uint32_t>(s); };
    pc.q_sb = st(a.q.strides[0]), pc.q_ss = st(a.q.strides[1]), pc.q_sh = st(a.q.strides[2]);
    pc.k_sb = st(a.k.strides[0]), pc.k_ss = st(a.k.strides[1]), pc.k_sh = st(a.k.strides[2]);
    pc.v_sb = st(a.v.strides[0]), pc.v_ss = st(a.v.strides[1]), pc.v_sh = st(a.v.strides[2]);
    pc.o_sb = st(a.o.strides[0]), pc.o_ss = st(a.o.strides[1]), pc.o_sh = st(a.o.strides[2]);
    pc.B = st(a.batch), pc.Sq = st(a.seqlen_q), pc.Sk = st(a.seqlen_k), pc.Hq = st(a.heads_q), pc.Hkv = st(a.heads_kv);
    pc.scale_log2 = a.scale * detail::kLog2e;
    pc.flags = a.has_lse ? kFlagWriteLse : 0u;
    // Causal: long rows first (shorter grid tail).
    if (a.causal) pc.flags |= kFlagReverseRows;
    pc.n_splits = choose_splits(*v, a);
    const detail::TensorArg *table = nullptr, *lens = nullptr;
    if (a.paged) {
      table = &a.paged->block_table, lens = &a.paged->seqlens;
      pc.table_sb = st(table->strides[0]);
      pc.kv_rows = st(a.paged->num_pages * a.paged->page_size);
      pc.s_new = st(a.paged->seqlen_new);
    } else if (a.varlen) {
      table = &a.varlen->cu_seqlens_q, lens = &a.varlen->cu_seqlens_k;
      pc.q_rows = st(a.varlen->total_q);
      pc.kv_rows = st(a.varlen->total_k);
    }
    if (table) pc.table_off = st(table->buf.offset / 4), pc.lens_off = st(lens->buf.offset / 4);
    const auto row_tiles = static_cast<std::uint32_t>(grid_row_tiles(*v, a));
    const auto heads = static_cast<std::uint32_t>(grid_heads(*v, a));  // Hkv for packed GQA rows (attn_decode.comp)
    // Causal: and the longest rows of every head before any shorter ones, where the variant won with it, while
    // ft_wg's 32-bit linear index fits.
    const bool fits32 = std::uint64_t{row_tiles} * pc.n_splits * heads * pc.B <= 0xffffffffull;
    if (a.causal && fits32 && v->rows_outer) pc.flags |= kFlagRowsOuter;

    VkBuffer scratch = dummy_;
    if (pc.n_splits > 1) scratch = ensure_scratch(scratch_floats(a.batch, a.heads_q, a.seqlen_q, pc.n_splits, a.head_dim) * 4);
    auto buf = [this](const detail::TensorArg* t) { return t ? reinterpret_cast<VkBuffer>(t->buf.handle) : dummy_; };
    const bool append = appends(a);
    const bool variants = variant_bits(a) != 0;
    const VkBuffer bufs[kBindingCount] = {
        buf(&a.q), buf(&a.k), buf(&a.v), buf(&a.o), a.has_lse ? buf(&a.lse) : dummy_, scratch, buf(table), buf(lens),
        buf(append ? &a.paged->k_new : nullptr), buf(append ? &a.paged->v_new : nullptr),
        variants ? variant_params_ : dummy_, buf(a.has_alibi ? &a.alibi_slopes : nullptr),
        buf(a.has_sinks ? &a.sinks : nullptr)};

    VkPipeline attn = pipeline(key_of(*v, a));
    VkPipeline reduce = VK_NULL_HANDLE;
    if (pc.n_splits > 1) reduce = pipeline(reduce_key(*v, a));
    VkPipeline append_pipe = append ? pipeline(append_key(*v, a)) : VK_NULL_HANDLE;

    const bool external = a.vk_command_buffer != nullptr;
    VkCommandBuffer cb = external ? static_cast<VkCommandBuffer>(a.vk_command_buffer) : begin();
    const bool stamp = !external && stamp_begin(cb);
    if (pc.n_splits > 1 && external) {
      // The scratch buffer may still be in use by an earlier recorded call: order after it (WAR/WAW).
      barrier(cb, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT, VK_ACCESS_SHADER_WRITE_BIT);
    }
    if (variants) record_variant_params(cb, a);
    bind_descriptors(cb, fwd_layout_, bufs);
    if (append) record_append(cb, append_pipe, a, pc);
    fn_.vkCmdPushConstants(cb, fwd_layout_.pipe_layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(PushConstants), &pc);
    fn_.vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, attn);
    fn_.vkCmdDispatch(cb, row_tiles * pc.n_splits, heads, pc.B);
    if (pc.n_splits > 1) {
      barrier(cb, VK_ACCESS_SHADER_WRITE_BIT, VK_ACCESS_SHADER_READ_BIT);
      fn_.vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, reduce);
      fn_.vkCmdDispatch(cb, pc.Sq, pc.Hq, pc.B);
    }
    if (stamp) stamp_end(cb);
    if (!external) {
      submit_and_wait(cb);
      if (stamp) read_timestamps();
      inst_->check_validation();
    }
  }

  static bool appends(const detail::AttnArgs& a) { return a.paged && a.paged->seqlen_new > 0; }

  // The call's VariantParams into variant_params_, in the command stream (push constants have no room left): after
  // every earlier dispatch that read it (a caller's command buffer may hold several calls), before this one's.
  void record_variant_params(VkCommandBuffer cb, const detail::AttnArgs& a) {
    const VariantParams p = variant_params(a);
    barrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
            VK_ACCESS_TRANSFER_WRITE_BIT);
    fn_.vkCmdUpdateBuffer(cb, variant_params_, 0, sizeof p, &p);
    barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
            VK_ACCESS_SHADER_READ_BIT);
  }

  // The paged append (attn_kv_append.comp) on the attention's descriptor set: its push constants carry k_new's
  // offset and strides in q_*, v_new's in o_*; then a barrier, so the attention reads the appended keys.
  void record_append(VkCommandBuffer cb, VkPipeline p, const detail::AttnArgs& a, const PushConstants& attn) {
    PushConstants pc = attn;
    const detail::TensorArg &kn = a.paged->k_new, &vn = a.paged->v_new;
    const std::uint64_t es = dtype_size(a.dtype);
    auto st = [](std::int64_t s) { return static_cast<std::uint32_t>(s); };
    pc.q_off = st(kn.buf.offset / es), pc.q_sb = st(kn.strides[0]), pc.q_ss = st(kn.strides[1]), pc.q_sh = st(kn.strides[2]);
    pc.o_off = st(vn.buf.offset / es), pc.o_sb = st(vn.strides[0]), pc.o_ss = st(vn.strides[1]), pc.o_sh = st(vn.strides[2]);
    const std::uint64_t pairs = static_cast<std::uint64_t>(a.paged->seqlen_new) * a.heads_kv * (a.head_dim / 2);
    const std::uint64_t groups = std::min<std::uint64_t>((pairs + kAppendWg - 1) / kAppendWg, caps_.max_workgroup_count[0]);
    fn_.vkCmdPushConstants(cb, fwd_layout_.pipe_layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(PushConstants), &pc);
    fn_.vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p);
    fn_.vkCmdDispatch(cb, static_cast<std::uint32_t>(std::max<std::uint64_t>(groups, 1)), 1, pc.B);
    barrier(cb, VK_ACCESS_SHADER_WRITE_BIT, VK_ACCESS_SHADER_READ_BIT);
  }

  // Stage 2 (device) of the KHR register softmax's gating: runs the shader's layout probe (a one-workgroup dispatch
  // of a d = 64 variant, spec id 28 = 15) and returns the layout it found (Caps::khr_acc_layout), 0 where there is
  // nothing to probe or the layout is not one the shader knows. Not on an application's VkDevice: nothing is
  // submitted to its queue before a call asks for it, so those keep the shared-memory softmax.
  std::uint32_t probe_khr_layout() {
    ShaderVariant v;
    if (!owns_device_ || !caps_.coopmat_khr || !khr_layout_probe_variant(caps_, &v)) return 0;
    // The probe mode reads none of Q/K/V: one buffer serves every binding, O's first 256 elements the answer.
    const std::int64_t S = v.block_m, D = 64;  // one row tile, one head: workgroup 0 only
    detail::AttnArgs a;
    a.batch = 1, a.seqlen_q = S, a.seqlen_k = S, a.heads_q = 1, a.heads_kv = 1, a.head_dim = D;
    a.dtype = DType::F16;
    std::uint64_t buf = 0;  // free() ignores handles it does not own
    std::vector<std::uint16_t> o(256, 0xffff);
    std::uint32_t layout = 0;
    try {
      buf = create_buffer(static_cast<VkDeviceSize>(S * D * 2), false);
      for (detail::TensorArg* t : {&a.q, &a.k, &a.v, &a.o}) {
        t->buf = {buf, 0};
        t->dtype = DType::F16;
        t->strides = Strides{S * D, D, D, 1};
      }
      {
        std::lock_guard<std::mutex> lock(mu_);
        dispatch(v, a);
      }
      download(o.data(), {buf, 0}, o.size() * 2);
      layout = khr_layout_from_probe(o.data());
    } catch (const std::exception&) {
      layout = 0;  // a probe that cannot run leaves the register softmax off
    }
    free(buf);
    return layout;
  }

 public:
  VulkanHandles vulkan_handles() const override {
    VulkanHandles h;
    h.instance = inst_->fn.instance;
    h.physical_device = pd_;
    h.device = dev_;
    h.queue = queue_;
    h.queue_family = qfam_;
    h.get_instance_proc_addr = reinterpret_cast<void*>(inst_->fn.vkGetInstanceProcAddr);
    return h;
  }

 private:
  void init(int index) {
    VkPhysicalDeviceMemoryProperties mp{};
    inst_->fn.vkGetPhysicalDeviceMemoryProperties(pd_, &mp);
    mem_props_ = mp;
    push_descriptor_ = caps_.push_descriptor && fn_.vkCmdPushDescriptorSetKHR;
    if (ov_.no_push_descriptor) push_descriptor_ = false;  // tests: the descriptor ring on any device
    caps_.push_descriptor = push_descriptor_;
    {
      VkPhysicalDeviceProperties props{};
      inst_->fn.vkGetPhysicalDeviceProperties(pd_, &props);
      std::uint32_t nq = 0;
      inst_->fn.vkGetPhysicalDeviceQueueFamilyProperties(pd_, &nq, nullptr);
      std::vector<VkQueueFamilyProperties> qf(nq);
      inst_->fn.vkGetPhysicalDeviceQueueFamilyProperties(pd_, &nq, qf.data());
      timestamp_bits_ = qfam_ < nq ? qf[qfam_].timestampValidBits : 0;
      if (timestamp_bits_ > 0) timestamp_period_ = props.limits.timestampPeriod;
    }
    VkCommandPoolCreateInfo cpi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    cpi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    cpi.queueFamilyIndex = qfam_;
    check_vk(fn_.vkCreateCommandPool(dev_, &cpi, nullptr, &cmd_pool_), "vkCreateCommandPool");
    VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    cai.commandPool = cmd_pool_;
    cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cai.commandBufferCount = 1;
    check_vk(fn_.vkAllocateCommandBuffers(dev_, &cai, &cmd_), "vkAllocateCommandBuffers");
    VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    check_vk(fn_.vkCreateFence(dev_, &fci, nullptr, &fence_), "vkCreateFence");

    create_layout(fwd_layout_, kBindingCount, sizeof(PushConstants));
    create_layout(bwd_layout_, kBwdBindingCount, sizeof(BwdPushConstants));
    dummy_ = reinterpret_cast<VkBuffer>(create_buffer(256, false));
    variant_params_ = reinterpret_cast<VkBuffer>(create_buffer(sizeof(VariantParams), false));
    caps_.khr_acc_layout = probe_khr_layout();

    info_.backend = Backend::Vulkan;
    info_.index = index;
    info_.name = caps_.name;
    info_.software = caps_.software;
    // Device-level reasons are fixed for the device's life: found once here, not on every call's pick().
    for (Path p : kPathOrder) {
      tables_[p] = variants_of(p);
      for (const ShaderVariant& v : tables_[p]) {
        std::string why = device_reason(v, caps_);
        // GPU-only variants run on CPU devices (lavapipe) only where a test forces variants.
        if (why.empty() && caps_.software && !v.cpu_skip.empty() && ov_.variant.empty()) why = v.cpu_skip;
        device_reasons_[p].push_back(std::move(why));
      }
    }
    for (Path p : kPathOrder) {
      if (!ov_.lists(p)) {
        unlisted_.push_back(p);
        continue;
      }
      const auto& reasons = device_reasons_.at(p);
      if (std::find(reasons.begin(), reasons.end(), std::string()) != reasons.end()) info_.paths.push_back(p);
    }
    fill_caps_display();
  }

  void fill_caps_display() {
    auto yn = [](bool b) { return std::string(b ? "yes" : "no"); };
    auto& c = info_.caps;
    c.emplace_back("api", api_version_string(caps_.api_version));
    char ids[32];
    std::snprintf(ids, sizeof ids, "%04x:%04x", caps_.vendor_id, caps_.device_id);
    c.emplace_back("vendor:device", ids);
    c.emplace_back("wrapped", yn(!owns_device_));
    c.emplace_back("subgroup_size", std::to_string(caps_.subgroup_size) + " (" +
                                        std::to_string(caps_.min_subgroup_size) + ".." +
                                        std::to_string(caps_.max_subgroup_size) + ")");
    std::string ops;
    auto add = [&](bool b, const char* n) {
      if (b) ops += std::string(ops.empty() ? "" : ",") + n;
    };
    add(caps_.subgroup_basic, "basic");
    add(caps_.subgroup_vote, "vote");
    add(caps_.subgroup_ballot, "ballot");
    add(caps_.subgroup_shuffle, "shuffle");
    add(caps_.subgroup_arithmetic, "arithmetic");
    add(caps_.subgroup_clustered, "clustered");
    c.emplace_back("subgroup_ops", ops.empty() ? "none" : ops);
    c.emplace_back("subgroup_size_control", yn(caps_.subgroup_size_control) +
                                                (caps_.compute_full_subgroups ? ", full subgroups" : ""));
    c.emplace_back("storage_buffer_16bit", yn(caps_.storage_buffer_16bit));
    c.emplace_back("shader_float16", yn(caps_.shader_float16));
    c.emplace_back("shared_memory", std::to_string(caps_.max_shared_memory) + " bytes");
    c.emplace_back("push_descriptor", yn(caps_.push_descriptor));
    std::string shapes;
    auto ty = [](std::uint32_t t) -> std::string {
      switch (t) {
        case 0: return "f16";
        case 1: return "f32";
        case 2: return "f64";
        case 3: return "s8";
        case 5: return "s32";
        case 7: return "u8";
        case 9: return "u32";
        default: return "t" + std::to_string(t);
      }
    };
    for (const CoopmatShape& s : caps_.coopmat_shapes) {
      if (s.scope != 3) continue;  // subgroup scope only
      shapes += std::string(shapes.empty() ? "" : " ") + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" +
                std::to_string(s.k) + ":" + ty(s.a_type) + "->" + ty(s.result_type);
    }
    c.emplace_back("coopmat_khr", caps_.coopmat_khr ? "yes " + shapes : "no");
    if (caps_.coopmat_khr)
      c.emplace_back("coopmat_acc_layout", caps_.khr_acc_layout ? std::to_string(caps_.khr_acc_layout) + " (probed)"
                                                                 : "unknown (shared-memory softmax)");
    c.emplace_back("coopmat2_nv", caps_.coopmat2_nv ? "yes (max workgroup " + std::to_string(caps_.cm2_max_workgroup_size) +
                                                          ", flexible dims up to " +
                                                          std::to_string(caps_.cm2_max_dimension) + ")"
                                                    : "no");
  }

  // The variant plan() chose for this call (prepare() and run() pick it again: plans carry no variant).
  const ShaderVariant& planned_variant(const detail::Plan& plan, const detail::AttnArgs& a) const {
    std::string why;
    const ShaderVariant* v = pick(plan.path, a, &why);
    if (!v) throw Error(ErrorCode::Unsupported, std::string(to_string(plan.path)) + ": " + why);
    return *v;
  }

  // The first variant of `path` that the device and the call allow; else null and a one-line reason.
  const ShaderVariant* pick(Path path, const detail::AttnArgs& a, std::string* why) const {
    const std::vector<ShaderVariant>& vs = tables_.at(path);
    if (vs.empty()) {
      *why = path == Path::VulkanPortable ? "no shader variant built"
             : path == Path::VulkanCoopmat ? (caps_.coopmat_khr ? "no shader variant built" : "device lacks VK_KHR_cooperative_matrix")
             : (caps_.coopmat2_nv ? "no shader variant built" : "device lacks VK_NV_cooperative_matrix2");
      return nullptr;
    }
    std::string first_device, first_call, decode_call;
    std::vector<std::uint32_t> dims;
    // Overrides::variant: tests cover the fallbacks a device would not pick (_sh, _pk).
    const std::vector<std::string>& device_reasons = device_reasons_.at(path);
    for (std::size_t i = 0; i < vs.size(); ++i) {
      const ShaderVariant& v = vs[i];
      if (!ov_.variant.empty() && v.kernel.find(ov_.variant) == std::string::npos) continue;
      // Reduced-precision entries exist only for calls that allow them: passed over silently, so that their refusal
      // never stands in for the real reason a path cannot run a call.
      if (v.reduced_precision && !a.allow_reduced_precision) continue;
      if (!device_reasons[i].empty()) {
        if (first_device.empty()) first_device = device_reasons[i];
        continue;
      }
      for (std::uint32_t d : v.head_dims)
        if (std::find(dims.begin(), dims.end(), d) == dims.end()) dims.push_back(d);
      std::string r = call_reason(v, caps_, a);
      if (r.empty()) r = index_reason(a);
      if (r.empty()) r = loop_reason(v, a);
      if (r.empty()) return &v;
      // The decode shader's refusals (calls not decode-shaped) stand in only where no other entry gave a reason.
      if (v.packs_gqa) {
        if (decode_call.empty()) decode_call = r;
        continue;
      }
      if (first_call.empty() || first_call.rfind("head_dim", 0) == 0) first_call = r;
    }
    if (first_call.empty()) first_call = decode_call;
    if (first_call.empty()) {
      *why = first_device.empty() ? "no variant matches FLASHTILE_VK_VARIANT" : first_device;
    } else if (first_call.rfind("head_dim", 0) == 0) {
      std::sort(dims.begin(), dims.end());
      std::string list;
      bool mult8 = !dims.empty();
      for (std::size_t i = 0; i < dims.size(); ++i) mult8 = mult8 && dims[i] == 8 * (i + 1);
      if (mult8) list = "multiples of 8 up to " + std::to_string(dims.back());
      for (std::uint32_t d : dims)
        if (!mult8) list += (list.empty() ? "" : ",") + std::to_string(d);
      *why = "head_dim " + std::to_string(a.head_dim) + " not supported (" + list + ")";
    } else {
      *why = first_call;
    }
    return nullptr;
  }

  // uint element indices: element 0's offset plus the extent must stay below 2^32.
  static std::string index_reason(const detail::AttnArgs& a) {
    std::vector<std::pair<const char*, const detail::TensorArg*>> ts = {{"q", &a.q}, {"k", &a.k}, {"v", &a.v}, {"out", &a.o}};
    if (a.paged) {
      ts.insert(ts.end(), {{"cache.block_table", &a.paged->block_table}, {"cache.seqlens", &a.paged->seqlens}});
      if (appends(a)) ts.insert(ts.end(), {{"k_new", &a.paged->k_new}, {"v_new", &a.paged->v_new}});
      if (static_cast<std::uint64_t>(a.paged->num_pages) * static_cast<std::uint64_t>(a.paged->page_size) >= kMaxIndex)
        return "the cache's num_pages x page_size is 2^32 or more (uint indices)";
    }
    if (a.varlen)
      ts.insert(ts.end(), {{"lengths.cu_seqlens_q", &a.varlen->cu_seqlens_q}, {"lengths.cu_seqlens_k", &a.varlen->cu_seqlens_k}});
    for (const auto& [name, t] : ts) {
      const std::uint64_t es = dtype_size(t->dtype);
      std::uint64_t end = t->buf.offset / es + 1;
      for (int i = 0; i < t->shape.rank; ++i)
        end += static_cast<std::uint64_t>(t->shape[i] - 1) * static_cast<std::uint64_t>(t->strides[i]);
      if (end > kMaxIndex) return std::string(name) + " addresses element " + std::to_string(end) + " of its buffer, beyond 2^32 (uint indices)";
    }
    if (a.has_lse && a.lse.buf.offset / 4 + static_cast<std::uint64_t>(a.lse.shape.numel()) > kMaxIndex)
      return "lse addresses elements beyond 2^32 of its buffer (uint indices)";
    return "";
  }

  static std::string kernel_name(const ShaderVariant& v, const detail::AttnArgs& a) {
    const std::int64_t g = a.heads_q / std::max<std::int64_t>(1, a.heads_kv);
    const std::string group = v.packs_gqa ? ",g" + std::to_string(g) : "";  // the query heads a workgroup packs
    return v.kernel + "<d" + std::to_string(a.head_dim) + "," + std::string(to_string(a.dtype)) + group +
           (a.causal ? ",causal" : "") + ",bm" + std::to_string(v.block_m) + ",bn" + std::to_string(v.block_n) + ">";
  }

  // Split-KV when the grid alone would leave the device idle (decode-like shapes), and at least enough splits that no
  // invocation loops over more than Caps::max_loop_keys keys. Overrides::splits asks for a number (tests).
  std::uint32_t choose_splits(const ShaderVariant& v, const detail::AttnArgs& a) const {
    if (!v.split_kv) return 1;
    const std::uint64_t row_tiles = grid_row_tiles(v, a);
    const std::uint64_t wgs = row_tiles * grid_heads(v, a) * a.batch;
    const std::uint64_t kv_tiles = (static_cast<std::uint64_t>(a.seqlen_k) + v.block_n - 1) / v.block_n;
    std::uint64_t want = 1;
    if (ov_.splits) {
      want = ov_.splits;
    } else {
      const std::uint64_t target = caps_.software ? 2 * std::max(1u, std::thread::hardware_concurrency())
                                   : v.packs_gqa    ? kDecodeSplitTarget
                                                    : kSplitTarget;
      if (wgs < target && kv_tiles >= 4) want = std::min<std::uint64_t>((target + wgs - 1) / wgs, kv_tiles / 2);
      if (v.packs_gqa)
        want = std::min<std::uint64_t>(
            want, std::max<std::uint64_t>(1, static_cast<std::uint64_t>(a.seqlen_k) / kDecodeMinSplitKeys));
    }
    want = std::max(std::min<std::uint64_t>({want, kv_tiles, kMaxSplits}), loop_splits(v, a));
    if (want <= 1) return 1;
    const std::uint64_t per = (kv_tiles + want - 1) / want;
    std::uint64_t n = (kv_tiles + per - 1) / per;  // no empty split
    if (row_tiles * n > caps_.max_workgroup_count[0] ||
        static_cast<std::uint64_t>(a.seqlen_q) > caps_.max_workgroup_count[0] ||
        scratch_floats(a.batch, a.heads_q, a.seqlen_q, n, a.head_dim) > kMaxIndex ||
        scratch_floats(a.batch, a.heads_q, a.seqlen_q, n, a.head_dim) * 4 > caps_.max_storage_buffer_range)
      n = 1;
    return static_cast<std::uint32_t>(n);
  }

  // The fewest splits that keep every invocation within Caps::max_loop_keys keys (1 without a limit).
  std::uint64_t loop_splits(const ShaderVariant& v, const detail::AttnArgs& a) const {
    if (caps_.max_loop_keys == 0) return 1;
    const std::uint64_t kv_tiles = (static_cast<std::uint64_t>(a.seqlen_k) + v.block_n - 1) / v.block_n;
    const std::uint64_t per = std::max<std::uint64_t>(1, caps_.max_loop_keys / v.block_n);
    return (kv_tiles + per - 1) / per;
  }

  // "" when the splits chosen keep every invocation within Caps::max_loop_keys keys; else why the call cannot run.
  std::string loop_reason(const ShaderVariant& v, const detail::AttnArgs& a) const {
    const std::uint64_t need = loop_splits(v, a);
    if (need <= 1 || (v.split_kv && choose_splits(v, a) >= need)) return "";
    return "seqlen_k " + std::to_string(a.seqlen_k) + " needs " + std::to_string(need) +
           " key splits on this driver (it ends a shader's loops after 65535 iterations), more than the split-KV " +
           "scratch buffer and grid allow for this call";
  }

  PipelineKey key_of(const ShaderVariant& v, const detail::AttnArgs& a) const {
    PipelineKey k;
    k.path = v.path;
    k.spirv = v.spirv;
    k.head_dim = static_cast<std::uint32_t>(a.head_dim);
    k.causal = a.causal ? 1 : 0;
    k.dtype = shader_dtype(a.dtype);
    k.block_m = v.block_m;
    k.block_n = v.block_n;
    k.wg_size = v.wg_size;
    k.required_subgroup_size = v.required_subgroup_size;
    k.subgroup_size = v.required_subgroup_size ? v.required_subgroup_size : caps_.subgroup_size;
    // Full subgroups: required when asked, and used by subgroup-reducing variants when the device allows it.
    k.full_subgroups = v.needs_full_subgroups ||
                       (v.needs_subgroup_shuffle && caps_.compute_full_subgroups &&
                        v.wg_size % std::max(1u, v.required_subgroup_size ? v.required_subgroup_size
                                                                          : caps_.max_subgroup_size) == 0);
    k.extra_spec = v.extra_spec;
    // Causal rows-outer launches in groups of heads (id 31): the variant's size, or Overrides::head_group's (tests).
    const std::uint32_t group = ov_.head_group >= 0 ? static_cast<std::uint32_t>(ov_.head_group) : v.head_group;
    if (a.causal && group > 0) k.extra_spec.push_back({kSpecHeadGroup, group});
    const auto layout = layout_spec(a);
    k.extra_spec.insert(k.extra_spec.end(), layout.begin(), layout.end());
    if (const std::uint32_t bits = variant_bits(a)) k.extra_spec.push_back({kSpecVariants, bits});
    return k;
  }

  // A pass around the attention (split-KV reduce, paged append): module `stem` in the attention variant's storage
  // mode, with the call's layout constants.
  PipelineKey pass_key(const char* stem, const ShaderVariant& v, const detail::AttnArgs& a, std::uint32_t wg,
                       std::uint32_t block_n) const {
    PipelineKey k;
    k.path = v.path;
    const bool packed = v.spirv.find("_pk") != std::string::npos;
    k.spirv = std::string(stem) + storage_suffix(a.dtype, packed || !caps_.storage_buffer_16bit);
    k.head_dim = static_cast<std::uint32_t>(a.head_dim);
    k.dtype = shader_dtype(a.dtype);
    k.block_m = 1;
    k.block_n = block_n;
    k.wg_size = wg;
    k.subgroup_size = caps_.subgroup_size;
    k.extra_spec = layout_spec(a);  // varlen: rows and LSE through cu_seqlens_q; paged append: the table
    return k;
  }
  PipelineKey reduce_key(const ShaderVariant& v, const detail::AttnArgs& a) const {
    PipelineKey k = pass_key("attn_splitkv_reduce_", v, a, kReduceWg, v.block_n);
    if (a.has_sinks) k.extra_spec.push_back({kSpecVariants, kVarSinks});  // the sink joins the rows here, once
    return k;
  }
  PipelineKey append_key(const ShaderVariant& v, const detail::AttnArgs& a) const {
    return pass_key("attn_kv_append_", v, a, kAppendWg, 1);
  }

  VkShaderModule module(const std::string& name) {
    auto it = modules_.find(name);
    if (it != modules_.end()) return it->second;
    std::string why;
    const SpirvModule* m = find_spirv(name, &why);
    if (!m) throw Error(ErrorCode::Unsupported, why);
    VkShaderModuleCreateInfo ci{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    ci.codeSize = m->word_count * 4;
    ci.pCode = m->words;
    VkShaderModule sm = VK_NULL_HANDLE;
    check_vk(fn_.vkCreateShaderModule(dev_, &ci, nullptr, &sm), "vkCreateShaderModule");
    modules_.emplace(name, sm);
    return sm;
  }

  VkPipeline pipeline(const PipelineKey& k) {
    auto it = pipelines_.find(k);
    if (it != pipelines_.end()) return it->second;
    const VkPipeline p = create_pipeline(k, module(k.spirv));
    pipelines_.emplace(k, p);
    return p;
  }

  // A new pipeline for k from its module; touches no state of this object (prepare() calls it without mu_).
  VkPipeline create_pipeline(const PipelineKey& k, VkShaderModule mod) const {
    std::vector<std::pair<std::uint32_t, std::uint32_t>> spec = {
        {kSpecHeadDim, k.head_dim}, {kSpecCausal, k.causal},   {kSpecDType, k.dtype},
        {kSpecBlockM, k.block_m},   {kSpecBlockN, k.block_n},  {kSpecWgSize, k.wg_size},
        {kSpecSubgroupSize, k.subgroup_size}};
    spec.insert(spec.end(), k.extra_spec.begin(), k.extra_spec.end());
    std::vector<VkSpecializationMapEntry> entries;
    std::vector<std::uint32_t> data;
    for (const auto& [id, value] : spec) {
      entries.push_back({id, static_cast<std::uint32_t>(data.size() * 4), 4});
      data.push_back(value);
    }
    VkSpecializationInfo si{static_cast<std::uint32_t>(entries.size()), entries.data(), data.size() * 4, data.data()};
    VkPipelineShaderStageRequiredSubgroupSizeCreateInfo rss{
        VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO};
    rss.requiredSubgroupSize = k.required_subgroup_size;
    VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    ci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    ci.stage.module = mod;
    ci.stage.pName = "main";
    ci.stage.pSpecializationInfo = &si;
    if (k.required_subgroup_size) ci.stage.pNext = &rss;
    if (k.full_subgroups) ci.stage.flags |= VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT;
    if (caps_.pipeline_stats) ci.flags |= VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
    ci.layout = k.backward ? bwd_layout_.pipe_layout : fwd_layout_.pipe_layout;
    VkPipeline p = VK_NULL_HANDLE;
    check_vk(fn_.vkCreateComputePipelines(dev_, VK_NULL_HANDLE, 1, &ci, nullptr, &p), "vkCreateComputePipelines");
    inst_->check_validation();
    if (caps_.pipeline_stats) print_pipeline_stats(p, k, spec);
    return p;
  }

  // Overrides::pipeline_stats: one stderr line per executable of a new pipeline, with every statistic the
  // driver reports (on NVIDIA: registers, shared memory, ...), to tune tiles without a profiler.
  void print_pipeline_stats(VkPipeline p, const PipelineKey& k,
                            const std::vector<std::pair<std::uint32_t, std::uint32_t>>& spec) const {
    if (!fn_.vkGetPipelineExecutablePropertiesKHR || !fn_.vkGetPipelineExecutableStatisticsKHR) return;
    std::string what = k.spirv + " spec";
    for (const auto& [id, value] : spec) what += " " + std::to_string(id) + "=" + std::to_string(value);
    VkPipelineInfoKHR pi{VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR};
    pi.pipeline = p;
    std::uint32_t n = 0;
    if (fn_.vkGetPipelineExecutablePropertiesKHR(dev_, &pi, &n, nullptr) != VK_SUCCESS) return;
    std::vector<VkPipelineExecutablePropertiesKHR> props(n, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_PROPERTIES_KHR});
    if (fn_.vkGetPipelineExecutablePropertiesKHR(dev_, &pi, &n, props.data()) != VK_SUCCESS) return;
    for (std::uint32_t e = 0; e < n; ++e) {
      VkPipelineExecutableInfoKHR ei{VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR};
      ei.pipeline = p;
      ei.executableIndex = e;
      std::uint32_t ns = 0;
      if (fn_.vkGetPipelineExecutableStatisticsKHR(dev_, &ei, &ns, nullptr) != VK_SUCCESS) continue;
      std::vector<VkPipelineExecutableStatisticKHR> st(ns, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR});
      if (fn_.vkGetPipelineExecutableStatisticsKHR(dev_, &ei, &ns, st.data()) != VK_SUCCESS) continue;
      std::string line = "flashtile: pipeline stats " + what + " [" + props[e].name + "]:";
      for (const VkPipelineExecutableStatisticKHR& x : st) {
        line += std::string(" ") + x.name + "=";
        switch (x.format) {
          case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR: line += x.value.b32 ? "true" : "false"; break;
          case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR: line += std::to_string(x.value.i64); break;
          case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR: line += std::to_string(x.value.u64); break;
          default: line += std::to_string(x.value.f64); break;
        }
      }
      std::fprintf(stderr, "%s\n", line.c_str());
    }
  }

  // Layout l: `bindings` storage buffers at bindings 0.. and push constants of `push_bytes`, for the compute stage.
  void create_layout(DescriptorLayout& l, std::uint32_t bindings, std::uint32_t push_bytes) {
    l.bindings = bindings;
    std::vector<VkDescriptorSetLayoutBinding> b(bindings);
    for (std::uint32_t i = 0; i < bindings; ++i) {
      b[i].binding = i;
      b[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      b[i].descriptorCount = 1;
      b[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
    }
    VkDescriptorSetLayoutCreateInfo dli{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    dli.flags = push_descriptor_ ? VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR : 0;
    dli.bindingCount = bindings;
    dli.pBindings = b.data();
    check_vk(fn_.vkCreateDescriptorSetLayout(dev_, &dli, nullptr, &l.set_layout), "vkCreateDescriptorSetLayout");
    VkPushConstantRange pcr{VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes};
    VkPipelineLayoutCreateInfo pli{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    pli.setLayoutCount = 1;
    pli.pSetLayouts = &l.set_layout;
    pli.pushConstantRangeCount = 1;
    pli.pPushConstantRanges = &pcr;
    check_vk(fn_.vkCreatePipelineLayout(dev_, &pli, nullptr, &l.pipe_layout), "vkCreatePipelineLayout");
    if (!push_descriptor_) {
      VkDescriptorPoolSize ps{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kDescriptorRing * bindings};
      VkDescriptorPoolCreateInfo dpi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
      dpi.maxSets = kDescriptorRing;
      dpi.poolSizeCount = 1;
      dpi.pPoolSizes = &ps;
      check_vk(fn_.vkCreateDescriptorPool(dev_, &dpi, nullptr, &l.pool), "vkCreateDescriptorPool");
    }
  }

  // bufs: l.bindings buffers, bound whole.
  void bind_descriptors(VkCommandBuffer cb, DescriptorLayout& l, const VkBuffer* bufs) {
    std::vector<VkDescriptorBufferInfo> bi(l.bindings);
    std::vector<VkWriteDescriptorSet> w(l.bindings);
    VkDescriptorSet set = VK_NULL_HANDLE;
    if (!push_descriptor_) {
      if (l.ring.empty()) {
        std::vector<VkDescriptorSetLayout> layouts(kDescriptorRing, l.set_layout);
        l.ring.resize(kDescriptorRing);
        VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
        ai.descriptorPool = l.pool;
        ai.descriptorSetCount = kDescriptorRing;
        ai.pSetLayouts = layouts.data();
        check_vk(fn_.vkAllocateDescriptorSets(dev_, &ai, l.ring.data()), "vkAllocateDescriptorSets");
      }
      set = l.ring[l.ring_next];
      l.ring_next = (l.ring_next + 1) % kDescriptorRing;
    }
    for (std::uint32_t i = 0; i < l.bindings; ++i) {
      bi[i] = {bufs[i], 0, VK_WHOLE_SIZE};
      w[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
      w[i].dstSet = set;
      w[i].dstBinding = i;
      w[i].descriptorCount = 1;
      w[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      w[i].pBufferInfo = &bi[i];
    }
    if (push_descriptor_) {
      fn_.vkCmdPushDescriptorSetKHR(cb, VK_PIPELINE_BIND_POINT_COMPUTE, l.pipe_layout, 0, l.bindings, w.data());
    } else {
      fn_.vkUpdateDescriptorSets(dev_, l.bindings, w.data(), 0, nullptr);
      fn_.vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, l.pipe_layout, 0, 1, &set, 0, nullptr);
    }
  }

  void barrier(VkCommandBuffer cb, VkAccessFlags src, VkAccessFlags dst) {
    barrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, src, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, dst);
  }
  void barrier(VkCommandBuffer cb, VkPipelineStageFlags src_stage, VkAccessFlags src, VkPipelineStageFlags dst_stage,
               VkAccessFlags dst) {
    VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = src;
    mb.dstAccessMask = dst;
    fn_.vkCmdPipelineBarrier(cb, src_stage, dst_stage, 0, 1, &mb, 0, nullptr, 0, nullptr);
  }

  std::uint32_t memory_type(std::uint32_t bits, VkMemoryPropertyFlags want) const {
    for (std::uint32_t i = 0; i < mem_props_.memoryTypeCount; ++i)
      if ((bits & (1u << i)) && (mem_props_.memoryTypes[i].propertyFlags & want) == want) return i;
    return UINT32_MAX;
  }

  // A buffer with its own memory: device-local (host_visible false) or host-visible coherent (staging).
  std::uint64_t create_buffer(VkDeviceSize bytes, bool host_visible, VkDeviceMemory* mem_out = nullptr) {
    VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bci.size = bytes;
    bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    VkBuffer buf = VK_NULL_HANDLE;
    check_vk(fn_.vkCreateBuffer(dev_, &bci, nullptr, &buf), "vkCreateBuffer");
    VkMemoryRequirements req{};
    fn_.vkGetBufferMemoryRequirements(dev_, buf, &req);
    const VkMemoryPropertyFlags want = host_visible
                                           ? VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
                                           : VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
    std::uint32_t type = memory_type(req.memoryTypeBits, want);
    if (type == UINT32_MAX && !host_visible) type = memory_type(req.memoryTypeBits, 0);
    if (type == UINT32_MAX) {
      fn_.vkDestroyBuffer(dev_, buf, nullptr);
      throw Error(ErrorCode::BackendFailure, "vulkan: no suitable memory type");
    }
    VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    mai.allocationSize = req.size;
    mai.memoryTypeIndex = type;
    VkDeviceMemory mem = VK_NULL_HANDLE;
    const VkResult r = fn_.vkAllocateMemory(dev_, &mai, nullptr, &mem);
    if (r != VK_SUCCESS) {
      fn_.vkDestroyBuffer(dev_, buf, nullptr);
      if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY)
        throw Error(ErrorCode::OutOfMemory, "vulkan: cannot allocate " + std::to_string(bytes) + " bytes");
      check_vk(r, "vkAllocateMemory");
    }
    check_vk(fn_.vkBindBufferMemory(dev_, buf, mem, 0), "vkBindBufferMemory");
    const auto h = reinterpret_cast<std::uint64_t>(buf);
    allocs_[h] = {mem, bytes};
    if (mem_out) *mem_out = mem;
    return h;
  }

  void ensure_staging(std::uint64_t bytes) {
    if (staging_ && staging_size_ >= bytes) return;
    if (staging_) {
      fn_.vkUnmapMemory(dev_, allocs_[reinterpret_cast<std::uint64_t>(staging_)].memory);
      destroy_buffer(staging_);
    }
    const std::uint64_t size = std::max<std::uint64_t>(bytes, 1ull << 20);
    VkDeviceMemory mem = VK_NULL_HANDLE;
    staging_ = reinterpret_cast<VkBuffer>(create_buffer(size, true, &mem));
    staging_size_ = size;
    check_vk(fn_.vkMapMemory(dev_, mem, 0, VK_WHOLE_SIZE, 0, &staging_map_), "vkMapMemory");
  }

  VkBuffer ensure_scratch(std::uint64_t bytes) {
    if (scratch_ && scratch_size_ >= bytes) return scratch_;
    // Replaced scratch buffers stay in allocs_ (freed with the device): a caller's command buffer may use them.
    const std::uint64_t size = std::max<std::uint64_t>(bytes, scratch_size_ * 2);
    scratch_ = reinterpret_cast<VkBuffer>(create_buffer(size, false));
    scratch_size_ = size;
    return scratch_;
  }

  void destroy_buffer(VkBuffer b) {
    auto it = allocs_.find(reinterpret_cast<std::uint64_t>(b));
    if (it == allocs_.end()) return;
    fn_.vkDestroyBuffer(dev_, b, nullptr);
    fn_.vkFreeMemory(dev_, it->second.memory, nullptr);
    allocs_.erase(it);
  }

  // Begin flashtile's own command buffer, ordered after everything submitted before (memory made visible).
  VkCommandBuffer begin() {
    check_vk(fn_.vkResetCommandBuffer(cmd_, 0), "vkResetCommandBuffer");
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    check_vk(fn_.vkBeginCommandBuffer(cmd_, &bi), "vkBeginCommandBuffer");
    VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT;
    fn_.vkCmdPipelineBarrier(cmd_, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 1, &mb, 0,
                             nullptr, 0, nullptr);
    return cmd_;
  }

  // GPU timestamps around the dispatches of run() and run_backward() (timestamps_requested(), flashtile's own
  // submissions only), for the benchmark: flashtile_vk_last_gpu_ms() below returns the last one.
  bool timestamps_on() {
    if (!timestamps_requested() || timestamp_period_ <= 0.0) return false;
    if (!query_pool_) {
      VkQueryPoolCreateInfo qi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
      qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
      qi.queryCount = 2;
      if (fn_.vkCreateQueryPool(dev_, &qi, nullptr, &query_pool_) != VK_SUCCESS) {
        query_pool_ = VK_NULL_HANDLE;
        timestamp_period_ = 0.0;
        return false;
      }
    }
    return true;
  }
  // The pair of timestamps around a call's dispatches (forward or backward), when timestamps_on(): begin returns
  // whether it wrote the first.
  bool stamp_begin(VkCommandBuffer cb) {
    if (!timestamps_on()) return false;
    fn_.vkCmdResetQueryPool(cb, query_pool_, 0, 2);
    fn_.vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, query_pool_, 0);
    return true;
  }
  void stamp_end(VkCommandBuffer cb) {
    fn_.vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, query_pool_, 1);
  }

  void read_timestamps() {
    std::uint64_t t[2] = {0, 0};
    if (fn_.vkGetQueryPoolResults(dev_, query_pool_, 0, 2, sizeof(t), t, sizeof(std::uint64_t),
                                  VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT) != VK_SUCCESS)
      return;
    const std::uint64_t mask = timestamp_bits_ >= 64 ? ~0ull : ((1ull << timestamp_bits_) - 1);
    const std::uint64_t ticks = (t[1] - t[0]) & mask;
    g_last_gpu_ms.store(static_cast<double>(ticks) * timestamp_period_ * 1e-6);
  }

  void submit_and_wait(VkCommandBuffer cb) {
    check_vk(fn_.vkEndCommandBuffer(cb), "vkEndCommandBuffer");
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cb;
    check_vk(fn_.vkQueueSubmit(queue_, 1, &si, fence_), "vkQueueSubmit");
    check_vk(fn_.vkWaitForFences(dev_, 1, &fence_, VK_TRUE, UINT64_MAX), "vkWaitForFences");
    check_vk(fn_.vkResetFences(dev_, 1, &fence_), "vkResetFences");
  }

  std::shared_ptr<InstanceState> inst_;
  const Overrides ov_ = read_overrides();  // read once, at device creation
  VkPhysicalDevice pd_ = VK_NULL_HANDLE;
  VkDevice dev_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  std::uint32_t qfam_ = 0;
  bool owns_device_ = false;
  DeviceFns fn_;
  Caps caps_;
  DeviceInfo info_;
  VkPhysicalDeviceMemoryProperties mem_props_{};
  bool push_descriptor_ = false;

  std::mutex mu_;
  std::mutex build_mu_;  // prepare(): one build at a time, outside mu_
  std::unordered_map<std::uint64_t, Allocation> allocs_;
  VkCommandPool cmd_pool_ = VK_NULL_HANDLE;
  VkCommandBuffer cmd_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  VkQueryPool query_pool_ = VK_NULL_HANDLE;
  double timestamp_period_ = 0.0;  // ns per tick; 0: no timestamps on the queue
  std::uint32_t timestamp_bits_ = 0;
  VkBuffer staging_ = VK_NULL_HANDLE;
  std::uint64_t staging_size_ = 0;
  void* staging_map_ = nullptr;
  VkBuffer scratch_ = VK_NULL_HANDLE;
  std::uint64_t scratch_size_ = 0;
  VkBuffer dummy_ = VK_NULL_HANDLE;
  VkBuffer variant_params_ = VK_NULL_HANDLE;  // the current variant call's VariantParams (record_variant_params)
  DescriptorLayout fwd_layout_;  // the forward's: Binding, PushConstants (shader_abi.hpp)
  DescriptorLayout bwd_layout_;  // the backward's: BwdBinding, BwdPushConstants (backward.hpp)
  std::map<std::string, VkShaderModule> modules_;
  std::map<PipelineKey, VkPipeline> pipelines_;
  std::map<Path, std::vector<ShaderVariant>> tables_;  // filled once in init(), read-only afterwards
  std::map<Path, std::vector<std::string>> device_reasons_;  // per variant of tables_: "" when the device can run it
  std::vector<Path> unlisted_;                               // paths Overrides::paths leaves out
};

}  // namespace

std::shared_ptr<detail::DeviceImpl> make_device(std::shared_ptr<InstanceState> inst, VkPhysicalDevice pd, int index) {
  return std::make_shared<VulkanDevice>(std::move(inst), pd, index);
}

std::shared_ptr<detail::DeviceImpl> make_wrapped_device(std::shared_ptr<InstanceState> inst, const VulkanHandles& h) {
  return std::make_shared<VulkanDevice>(std::move(inst), h);
}

}  // namespace flashtile::vk

// Benchmark hook (not public API): the GPU time in ms of the last run() that flashtile submitted itself with
// FLASHTILE_VK_TIMESTAMPS=1 (timestamps around its dispatches, split-KV reduce included), or -1 when none.
// flashtile_bench finds it with dlsym, so builds without Vulkan need nothing.
extern "C" __attribute__((visibility("default"))) double flashtile_vk_last_gpu_ms() {
  return flashtile::vk::g_last_gpu_ms.load();
}
