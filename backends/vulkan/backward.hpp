// The Vulkan backward (shaders/attn_bwd_portable.comp; vulkan_coopmat's shaders/attn_bwd_coopmat.comp): its ABI (the
// C++ mirror of shaders/attn_bwd_common.glsl's push constants and bindings: keep the two identical), the portable
// tiles, and the per-call choices VulkanDevice::plan_backward and run_backward (vk_device.cpp) record from. Three
// passes: preprocess (lse2, Delta; the portable module on every path), dK/dV, dQ; and a fourth, dsinks (the portable
// module on every path), for calls that give Options::dsinks; no atomics.
#pragma once

#include "backend.hpp"
#include "kernels.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

namespace flashtile::vk {

// Descriptor set 0 of the backward's pipelines: whole storage buffers, tensors addressed by element offsets.
enum BwdBinding : std::uint32_t {
  kBwdBindingQ = 0,
  kBwdBindingK = 1,
  kBwdBindingV = 2,
  kBwdBindingO = 3,
  kBwdBindingDO = 4,
  kBwdBindingLse = 5,  // f32 [B, Hq, Sq] contiguous
  kBwdBindingWs = 6,   // f32 workspace: lse2 [B, Hq, Sq], then Delta [B, Hq, Sq]
  kBwdBindingDQ = 7,
  kBwdBindingDK = 8,
  kBwdBindingDV = 9,
  kBwdBindingVariant = 10,  // the variants' VariantParams and ALiBi slopes, as the forward's (shader_abi.hpp)
  kBwdBindingAlibi = 11,
  kBwdBindingSinks = 12,   // f32 [Hq]: the dsinks pass's (the forward's binding of sinks); a dummy buffer elsewhere
  kBwdBindingDsinks = 13,  // f32 [Hq]
  kBwdBindingCount = 14,
};

// std430, 32-bit members, exactly Vulkan's guaranteed 128 bytes. Slots x and y are the pass's own tensors: O for the
// preprocess, dK and dV for the dK/dV pass, dQ for the dQ pass, sinks and dsinks (offsets alone) for the dsinks pass.
struct BwdPushConstants {
  std::uint32_t q_off, k_off, v_off, do_off, x_off, y_off;  // element offsets of element 0 in the bound buffer
  std::uint32_t q_sb, q_ss, q_sh;                           // strides (elements): batch, seq, head
  std::uint32_t k_sb, k_ss, k_sh;
  std::uint32_t v_sb, v_ss, v_sh;
  std::uint32_t do_sb, do_ss, do_sh;
  std::uint32_t x_sb, x_ss, x_sh;
  std::uint32_t y_sb, y_ss, y_sh;
  std::uint32_t lse_off, ws_off;  // f32 element offsets
  std::uint32_t B, Sq, Sk, Hq, Hkv;
  float scale_log2;  // softmax scale * log2(e)
};
static_assert(sizeof(BwdPushConstants) == 128, "BwdPushConstants must match attn_bwd_common.glsl (std430)");

// The passes in recording order (the shader's FT_BWD_PASS). Dsinks is recorded only for calls with Options::dsinks;
// like dK/dV and dQ it reads only what the preprocess wrote.
enum class BwdPass : std::uint32_t { Preprocess = 0, DkDv = 1, Dq = 2, Dsinks = 3 };
inline constexpr BwdPass kBwdPasses[] = {BwdPass::Preprocess, BwdPass::DkDv, BwdPass::Dq, BwdPass::Dsinks};

// Tiles: BLOCK_M query rows, BLOCK_N keys, WG_SIZE threads, for head dims (multiples of 8) in [min_dim, max_dim].
struct BwdTile {
  std::uint32_t min_dim, max_dim, block_m, block_n, wg;
};

// One pass's pipeline: its module, spec constants 3..6 (BLOCK_M, BLOCK_N, WG_SIZE) and the coopmat shape's (ids
// 16..18), and the subgroup size it requires (0: any; else with full subgroups, as the KHR forward's).
struct BwdPassKernel {
  std::string spirv;
  std::uint32_t block_m = 0, block_n = 0, wg = 0;
  std::uint32_t required_subgroup_size = 0;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> extra_spec;
};

// What plan_backward chose for a call (run_backward chooses it again: plans carry no variant).
struct BwdChoice {
  std::string storage;  // the portable modules' suffix: "s16", "pk" (packed uint pairs) or "f32"
  BwdTile tile{};       // the portable tile (vulkan_portable)
  BwdPassKernel passes[std::size(kBwdPasses)];  // in kBwdPasses order
  std::string kernel;   // Result::kernel
  std::uint64_t workspace_bytes = 0;
};

// "" with `out` filled when the portable backward can run the call on this device; else a one-line reason.
std::string bwd_choose(const Caps& caps, const detail::BwdArgs& a, BwdChoice* out);
// The same for vulkan_coopmat's (coopmat_paths.cpp): the KHR cooperative-matrix dK/dV and dQ passes after the
// portable preprocess.
std::string khr_bwd_choose(const Caps& caps, const detail::BwdArgs& a, BwdChoice* out);
// The checks every path's choice shares, once c.passes is filled: grids, uint indices, the workspace; "" with
// c.workspace_bytes set, else a one-line reason.
std::string bwd_call_reason(const Caps& caps, const detail::BwdArgs& a, BwdChoice& c);
// The portable preprocess's pipeline (every path's first pass) for 16-bit, packed or f32 storage.
BwdPassKernel bwd_preprocess_kernel(const std::string& storage);
// The dsinks pass's pipeline (every path's, f32 whatever the storage).
BwdPassKernel bwd_dsinks_kernel();
// The pass's grid.
std::array<std::uint32_t, 3> bwd_grid(BwdPass pass, const BwdPassKernel& k, const detail::BwdArgs& a);
// The pass's push constants; ws_off: the workspace's first float in its buffer.
BwdPushConstants bwd_push_constants(BwdPass pass, const detail::BwdArgs& a, std::uint32_t ws_off);

}  // namespace flashtile::vk
