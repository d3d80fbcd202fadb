// The Vulkan shader-variant registry: what a device offers (Caps), the embedded SPIR-V modules, and one table of
// ShaderVariant entries per path family. The backend (vk_device.cpp) picks, for each path, the first variant of
// that path whose requirements the device and the call meet; adding a variant is adding a table entry.
//   portable_variants()  backends/vulkan/portable_paths.cpp (vk-core)
//   coopmat_variants()   backends/vulkan/coopmat_paths.cpp  (vk-coopmat): Path::VulkanCoopmat entries
//   coopmat2_variants()  backends/vulkan/coopmat_paths.cpp  (vk-coopmat): Path::VulkanCoopmat2 entries
#pragma once

#include "backend.hpp"
#include "shader_abi.hpp"

#include <flashtile/types.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace flashtile::vk {

// One entry of vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR (component types and scope as the Vulkan enum
// values: VkComponentTypeKHR 0 f16, 1 f32, ...; VkScopeKHR 3 subgroup).
struct CoopmatShape {
  std::uint32_t m = 0, n = 0, k = 0;
  std::uint32_t a_type = 0, b_type = 0, c_type = 0, result_type = 0;
  std::uint32_t scope = 0;
  bool saturating = false;
};

// llvmpipe's bound on the keys one invocation loops over (Caps::max_loop_keys; vk_instance.cpp says why): a quarter
// of the fewest keys a portable variant was seen to lose keys past (d 256), so every loop's count has margin.
constexpr std::uint32_t kLlvmpipeLoopKeys = 2048;

// Stage 2 of capability gating: what the device offers and flashtile enabled on it.
struct Caps {
  std::string name;
  std::uint32_t vendor_id = 0, device_id = 0, api_version = 0;
  bool software = false;  // VK_PHYSICAL_DEVICE_TYPE_CPU (lavapipe)
  // Keys one invocation may loop over (0: no limit); calls with more are split (split-KV) or refused with the reason.
  std::uint32_t max_loop_keys = 0;

  // Subgroups (compute stage).
  std::uint32_t subgroup_size = 0;
  bool subgroup_basic = false, subgroup_shuffle = false, subgroup_arithmetic = false, subgroup_vote = false,
       subgroup_ballot = false, subgroup_clustered = false;
  bool subgroup_size_control = false;    // enabled: pipelines may require a subgroup size
  bool compute_full_subgroups = false;   // enabled: pipelines may require full subgroups
  std::uint32_t min_subgroup_size = 0, max_subgroup_size = 0;
  bool required_subgroup_size_compute = false;  // requiredSubgroupSizeStages includes compute

  // Storage and arithmetic (enabled when present).
  bool storage_buffer_16bit = false;  // storageBuffer16BitAccess
  bool shader_float16 = false;        // shaderFloat16
  bool shader_int16 = false;
  bool vulkan_memory_model = false;
  bool push_descriptor = false;       // VK_KHR_push_descriptor enabled

  // Limits.
  std::uint32_t max_shared_memory = 0;  // maxComputeSharedMemorySize
  std::uint32_t max_workgroup_invocations = 0;
  std::uint32_t max_workgroup_count[3] = {0, 0, 0};
  std::uint32_t max_push_constants = 0;
  std::uint64_t max_storage_buffer_range = 0;
  std::uint64_t min_storage_buffer_offset_alignment = 0;

  // Cooperative matrices.
  bool coopmat_khr = false;  // VK_KHR_cooperative_matrix present and cooperativeMatrix enabled
  std::vector<CoopmatShape> coopmat_shapes;
  // Stage 2 also probes (vk_device.cpp, at device creation): the element layout of attn_coopmat.comp's 16 x 16 f32
  // accumulators at subgroup 32, which its register softmax (spec id 28) must know: 1 or 2 (the shader's layouts), 0
  // unknown (no such shape, or another layout).
  std::uint32_t khr_acc_layout = 0;
  bool coopmat2_nv = false;  // VK_NV_cooperative_matrix2 present and enabled
  bool cm2_workgroup_scope = false, cm2_flexible_dimensions = false, cm2_reductions = false, cm2_conversions = false,
       cm2_per_element_operations = false, cm2_tensor_addressing = false, cm2_block_loads = false;
  std::uint32_t cm2_max_workgroup_size = 0, cm2_max_dimension = 0, cm2_reserved_shared_memory = 0;

  // Tuning aid, off unless Overrides::pipeline_stats: VK_KHR_pipeline_executable_properties enabled, and each
  // pipeline's compiler statistics (registers, shared memory, ...) printed to stderr when it is created.
  bool pipeline_stats = false;
};

// Embedded SPIR-V (generated at build time from shaders/; see CMakeLists.txt).
struct SpirvModule {
  const char* name;
  const std::uint32_t* words;
  std::size_t word_count;
};
// nullptr when the module was not built; then `why` (if given) says why (dropped at configure time, ...).
const SpirvModule* find_spirv(std::string_view name, std::string* why = nullptr);

// One compiled shader configuration the backend may pick. Spec constants 0..6 are filled by the backend from the
// fields below and the call (HEAD_DIM, CAUSAL, DTYPE, BLOCK_M, BLOCK_N, WG_SIZE, SUBGROUP_SIZE); extra_spec adds
// more (ids 16+ for coopmat shapes). Dispatch follows the ABI: x = ceil(Sq / block_m) * n_splits, y = Hq, z = B.
struct ShaderVariant {
  Path path = Path::VulkanPortable;
  std::string kernel;  // Result::kernel base name, e.g. "vk_portable_sg"
  std::string spirv;   // embedded module name
  std::uint32_t wg_size = 128, block_m = 32, block_n = 32;
  std::uint32_t required_subgroup_size = 0;  // 0: any; else set through subgroup size control (+ full subgroups)
  std::vector<std::uint32_t> head_dims;      // supported head dims
  std::vector<DType> dtypes;                 // supported storage dtypes
  std::uint32_t shared_bytes = 0;            // checked against maxComputeSharedMemorySize
  bool needs_16bit_storage = false, needs_float16 = false, needs_subgroup_shuffle = false,
       needs_subgroup_arithmetic = false, needs_coopmat = false, needs_coopmat2 = false,
       needs_full_subgroups = false;
  std::uint32_t min_subgroup_size = 0;       // e.g. the portable subgroup variant's threads per row
  // Q/K/V/O element offsets and strides must be multiples of this: 2 for packed 16-bit pairs, 8 for coopmat2's
  // tensor-layout accesses (16-byte aligned), 1 for none.
  std::uint32_t align_elems = 1;
  bool split_kv = false;                     // honours n_splits > 1 (writes scratch records; reduce pass follows)
  // Runs the serving layouts (AttnArgs::paged / varlen: spec id kSpecLayout); other entries pass those calls over.
  bool serving_layouts = false;
  // Computes the attention variants (AttnArgs window / softcap / alibi / sinks: spec id kSpecVariants); other entries
  // pass those calls over.
  bool variants = false;
  // GQA packing (attn_decode.comp): a workgroup takes one KV head's group x seqlen_q query rows, block_m of them a
  // row tile, so the grid is (row tiles of the packed rows) x n_splits, Hkv, B (grid_row_tiles, grid_heads).
  bool packs_gqa = false;
  // Causal calls launch in longest-first order across heads (kFlagRowsOuter), where that won against the per-head
  // order (docs/PERFORMANCE.md, "Vulkan table choices").
  bool rows_outer = false;
  // With rows_outer: longest-first within groups of this many (batch, head) pairs (0: one group of all), fewer heads'
  // K/V in flight at once (specialization constant kSpecHeadGroup).
  std::uint32_t head_group = 0;
  // Reduced-precision accumulation (coopmat2's f16 O, the portable rgh modules' f16 P·V sums): only for calls with
  // Options::allow_reduced_precision_accumulation.
  bool reduced_precision = false;
  // Non-empty: why CPU devices (lavapipe) skip this GPU-only variant, unless tests force variants
  // (Overrides::variant).
  std::string cpu_skip;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> extra_spec;  // {constant_id, value}
  // Optional further checks: device-level (empty when usable), call-level (empty when usable). One-line reasons.
  std::function<std::string(const Caps&)> device_check;
  std::function<std::string(const Caps&, const detail::AttnArgs&)> call_check;
};

std::vector<ShaderVariant> portable_variants();
std::vector<ShaderVariant> coopmat_variants();
std::vector<ShaderVariant> coopmat2_variants();
// The decode shader's entries (decode_paths.cpp), first in every path's table: `path`'s own device feature required,
// so a device lists a path only where it has one.
std::vector<ShaderVariant> decode_variants(Path path);

// Query rows a workgroup grid covers (x, before split-KV) and heads (y): packed GQA rows for packs_gqa entries.
inline std::uint64_t grid_row_tiles(const ShaderVariant& v, const detail::AttnArgs& a) {
  const std::uint64_t group = v.packs_gqa && a.heads_kv > 0 ? static_cast<std::uint64_t>(a.heads_q / a.heads_kv) : 1;
  return (group * static_cast<std::uint64_t>(a.seqlen_q) + v.block_m - 1) / v.block_m;
}
inline std::uint64_t grid_heads(const ShaderVariant& v, const detail::AttnArgs& a) {
  return static_cast<std::uint64_t>(v.packs_gqa ? a.heads_kv : a.heads_q);
}

// The KHR accumulator-layout probe (coopmat_paths.cpp): a d = 64 variant of the 16x16x16 subgroup-32 family in the
// shader's probe mode (id 28 = 15), usable on this device, or none; and the layout (1, 2, or 0: neither) read from
// the first 256 elements of the probe's O (f16 bits): lane l, element i at 8 l + i holds the r * 16 + c it sits at.
bool khr_layout_probe_variant(const Caps& caps, ShaderVariant* out);
std::uint32_t khr_layout_from_probe(const std::uint16_t* o);

// "vulkan_portable: ..."-free reason why `v` cannot run on this device at all ("" when it can).
std::string device_reason(const ShaderVariant& v, const Caps& caps);
// Reason why `v` cannot run this call ("" when it can): head dim, dtype, align_elems, grid limits, call_check.
std::string call_reason(const ShaderVariant& v, const Caps& caps, const detail::AttnArgs& args);

}  // namespace flashtile::vk
