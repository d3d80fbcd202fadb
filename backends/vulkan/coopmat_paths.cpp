// The cooperative-matrix paths' variant tables: Path::VulkanCoopmat (shaders/attn_coopmat.comp, VK_KHR_cooperative_
// matrix) and Path::VulkanCoopmat2 (shaders/attn_coopmat2.comp, VK_NV_cooperative_matrix2).
//
// KHR: one SPIR-V module, specialized per coopmat shape (ids 16..18), subgroup size, tile, Q placement (id 19), K/V
// register prefetch (id 20) and the register softmax (id 28: the softmax on the accumulators, for NVIDIA's
// 16x16x16 family where the device's probe found the accumulator layout, Caps::khr_acc_layout; gated entries ahead
// of the plain ones) with its short-sequence options (id 29: 7 on non-causal calls, 3 on causal ones).
// A variant exists per (shape family, head dim, tile); the device keeps those whose shape it advertises
// (vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR: f16 x f16 -> f32, subgroup scope), whose subgroup size it can
// require, and whose shared memory fits; the first of those, in table order (fastest first), runs. Tiles are sized
// for NVIDIA's 48 KB of shared memory per workgroup (49152 on Ampere/Ada/Hopper), and smaller ones follow for
// 32 KB devices (lavapipe).
// bf16 inputs are converted to f16 on load (the matrix units take f16): magnitudes above 65504 clamp to +-65504
// and below 2^-24 flush to zero, so bf16 data outside f16's range loses accuracy on these paths.
//
// NV coopmat2: workgroup-scope tiles; f16 loads through tensor layouts (clamped on the ragged last tile) need no
// shared memory; bf16 goes through a shared staging buffer (converted to f16), so its tiles fit the 48 KB limit.
// Every entry computes the attention variants (window with tile skipping, softcap, ALiBi, sinks); with softcap or
// ALiBi the shader keeps the scale out of exp2 whatever id 25 says (their transforms take the scaled score).
//
// KHR backward (khr_bwd_choose): the portable preprocess, then attn_bwd_coopmat.comp's dK/dV and dQ passes in the first
// shape family the device advertises, with the first tile per pass that fits its shared memory (the same device
// gating as the forward's entries; the forms with P and dS on the accumulators gated on the probed layout as the
// register softmax), and the portable dsinks pass; f16 and bf16 (converted to f16 on load, as the forward), head
// dims 64/128/256.
//
// Why each table holds what it does, with the measurements: docs/PERFORMANCE.md, "Vulkan table choices".
#include "backward.hpp"
#include "kernels.hpp"

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

namespace flashtile::vk {

namespace {

constexpr std::uint32_t kCompF16 = 0, kCompF32 = 1;  // VkComponentTypeKHR
constexpr std::uint32_t kScopeSubgroup = 3;           // VkScopeKHR
constexpr std::uint32_t kKhrHeadGroup = 16;           // KHR causal rows-outer launches: (batch, head) pairs a group
constexpr std::uint32_t kCm2TensorAlignElems = 8;     // coopmat2 tensor-layout accesses: 16-byte aligned f16

bool advertises(const Caps& c, std::uint32_t m, std::uint32_t n, std::uint32_t k) {
  for (const CoopmatShape& s : c.coopmat_shapes)
    if (s.m == m && s.n == n && s.k == k && s.a_type == kCompF16 && s.b_type == kCompF16 && s.c_type == kCompF32 &&
        s.result_type == kCompF32 && s.scope == kScopeSubgroup && !s.saturating)
      return true;
  return false;
}

std::string shape_name(std::uint32_t m, std::uint32_t n, std::uint32_t k) {
  return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
}

// Shape families in preference order: NVIDIA (16x16x16 and 16x8x16 at subgroup 32), AMD RDNA3 (16x16x16 at 32 or
// 64), Intel (M = 8 at subgroup 8 or 16), lavapipe (8x8x8 at 8).
struct Family {
  std::uint32_t m, n, k, sg;
};
constexpr Family kFamilies[] = {{16, 16, 16, 32}, {16, 16, 16, 64}, {16, 8, 16, 32},
                                {8, 16, 16, 16},  {8, 8, 16, 8},    {8, 8, 8, 8}};

// KHR tiles per head dim, fastest first (docs/PERFORMANCE.md, "Vulkan table choices"): subgroups sharing a K/V
// tile, keys a tile, Q in registers (id 19), K/V register prefetch (id 20). Sized for NVIDIA's 48 KB of shared
// memory; the smaller ones fit 32 KB devices (lavapipe).
struct KhrTile {
  std::uint32_t dim, nsg, block_n, q_regs, prefetch;
  bool rsm_only = false;  // only with the register softmax (the score tile would not fit)
};
const KhrTile kKhrTiles[] = {
    {64, 4, 32, 1, 1},  {64, 4, 64, 1, 1},  {64, 2, 32, 1, 0},  {64, 2, 16, 1, 0},
    {128, 8, 64, 1, 1, true}, {128, 4, 64, 1, 1}, {128, 4, 32, 1, 1}, {128, 2, 32, 1, 0}, {128, 2, 16, 1, 0},
    {256, 4, 32, 1, 0}, {256, 4, 16, 1, 0}, {256, 2, 32, 0, 0}, {256, 2, 16, 0, 0}, {256, 1, 16, 0, 0},
};

// The KHR softmax forms per head dim, in table order (docs/PERFORMANCE.md, "Vulkan table choices"): id 28 (1, 2:
// the register softmax for that accumulator layout, on NVIDIA's 16x16x16 family at subgroup 32, gated on the probed
// layout; 0: the shared-memory softmax) and id 29 (bits: 1 Q straight from global memory, 2 the first K tile's loads
// before Q's, 4 causal tiles past a subgroup's rows skipped) for non-causal and causal calls.
struct KhrForm {
  std::uint32_t dim, regsm, opt_noncausal, opt_causal;
};
const KhrForm kKhrForms[] = {
    {64, 1, 7, 3},  {64, 2, 7, 3},  {64, 0, 0, 0},
    {128, 1, 7, 3}, {128, 2, 7, 3}, {128, 0, 0, 0},
    {256, 0, 3, 3},
};

// Mirrors the shared declarations of attn_coopmat.comp (rsm: the register softmax, id 28 = 1 or 2).
std::uint32_t khr_shared_bytes(const Family& f, const KhrTile& t, bool rsm) {
  const std::uint32_t d = t.dim, bm = t.nsg * f.m, bn = t.block_n;
  return 2 * bn * (d + 8)                            // K/V tile (f16)
         + (t.q_regs ? 8 : 2 * bm * (d + 8))         // Q (f16) when not in registers
         + (rsm ? 16 : 4 * bm * (bn + 8))            // S (f32; also the rescale broadcast tiles and O staging)
         + 2 * bm * (bn + 8);                        // P (f16)
}

// The shader's structural requirements (see attn_coopmat.comp).
bool khr_tile_valid(const Family& f, const KhrTile& t) {
  const std::uint32_t d = t.dim, bn = t.block_n;
  const std::uint32_t segs = f.sg >= f.m ? f.sg / f.m : 1;
  if (f.sg < f.m && f.m % f.sg != 0) return false;
  if (bn % f.n || bn % f.k || d % bn || d % f.n || d % f.k) return false;
  if (bn % segs || (bn / segs) % 8) return false;  // softmax lanes take whole 8-column groups
  if (t.q_regs && bn % f.m) return false;          // Q staged through the K/V buffer in BLOCK_N-row chunks
  return t.nsg >= 1;
}

// The one shape family whose accumulator layout the register softmax knows.
bool khr_regsm_family(const Family& f) { return f.m == 16 && f.n == 16 && f.k == 16 && f.sg == 32; }
bool khr_regsm_layout(std::uint32_t rsm) { return rsm == 1 || rsm == 2; }  // id 28 values that run the softmax

// coopmat2 entries, in table order per head dim (the first usable one runs; docs/PERFORMANCE.md, "Vulkan table
// choices"). f16 loads K/V/Q through tensor layouts (no shared memory); bf16 stages them through shared memory,
// converted to f16, within 48 KB. o16: O accumulated in f16 (module attn_coopmat2_o16), for calls with
// Options::allow_reduced_precision_accumulation only. Every entry: aligned loads (id 23), narrow row values (id 24)
// and the scale folded into exp2 (id 25, with an unfolded twin for scale <= 0).
enum class Cm2Full { kNever, kCausal, kAlways };  // one loop body (id 30) on calls whose K/V tiles are all full
struct Cm2Entry {
  std::uint32_t dim;
  DType dtype;
  bool o16, noncausal_only;
  std::uint32_t block_m, block_n, wg;
  bool q_reload;      // id 27: Q reloaded per tile through its tensor layout (f32 O at d 256 would spill holding it)
  Cm2Full full;
  bool rows_outer;    // causal calls longest-first across heads
};
constexpr DType kF16 = DType::F16, kBF16 = DType::BF16;
constexpr Cm2Full kNever = Cm2Full::kNever, kCausal = Cm2Full::kCausal, kAlways = Cm2Full::kAlways;
const Cm2Entry kCm2Entries[] = {
    // dim, dtype, o16, non-causal only, block_m, block_n, wg, Q reload, one loop body, rows outer
    {64, kF16, true, false, 128, 128, 128, false, kAlways, false},
    {64, kF16, false, false, 128, 128, 128, false, kAlways, false},
    {64, kBF16, false, false, 64, 64, 128, false, kNever, false},
    {128, kF16, true, false, 128, 64, 128, false, kCausal, false},
    {128, kF16, false, true, 128, 128, 256, false, kNever, false},
    {128, kF16, false, false, 64, 128, 128, false, kCausal, false},
    {128, kBF16, false, false, 64, 64, 128, false, kNever, false},
    {256, kF16, true, false, 128, 64, 256, false, kNever, true},
    {256, kF16, false, false, 64, 32, 128, true, kNever, true},
    {256, kBF16, false, false, 32, 32, 128, false, kNever, true},
};

// Narrow row-value matrices: NVIDIA's workgroup-scope granularity is 16 at 128 invocations and 32 at 256 (llama.cpp
// avoids 256 invocations for head dims not a multiple of 32 for this reason).
std::uint32_t cm2_narrow(const Cm2Entry& e) { return std::min(e.wg <= 128 ? 16u : 32u, e.block_n); }

std::uint32_t cm2_shared_bytes(const Cm2Entry& e) {
  if (e.dtype == DType::F16) return 16;
  return 2 * e.block_n * (e.dim + 8) + 2 * e.block_m * (e.dim + 8);
}

// One KHR table entry: shape family f, tile t, register softmax id 28 = rsm (1, 2: gated on the probed layout), id 29
// = opt, for non-causal calls only when noncausal_only.
ShaderVariant khr_variant(const Family& f, const KhrTile& t, std::uint32_t rsm, std::uint32_t opt,
                          bool noncausal_only = false) {
  ShaderVariant v;
  v.path = Path::VulkanCoopmat;
  // The backend appends <d,dtype,causal,bm,bn>.
  v.kernel = "vk_coopmat_" + shape_name(f.m, f.n, f.k) + "_sg" + std::to_string(f.sg) + (t.q_regs ? "_qreg" : "_qsh") +
             (t.prefetch ? "_pf" : "") + (rsm ? "_rsm" + std::to_string(rsm) : "") +
             (opt ? "_o" + std::to_string(opt) : "");
  v.spirv = "attn_coopmat";
  v.wg_size = t.nsg * f.sg;
  v.block_m = t.nsg * f.m;
  v.block_n = t.block_n;
  v.required_subgroup_size = f.sg;
  v.needs_full_subgroups = true;
  v.head_dims = {t.dim};
  v.dtypes = {DType::F16, DType::BF16};
  v.shared_bytes = khr_shared_bytes(f, t, khr_regsm_layout(rsm));
  v.needs_16bit_storage = true;
  v.needs_float16 = true;
  v.needs_subgroup_shuffle = true;
  v.needs_coopmat = true;
  v.split_kv = true;
  v.rows_outer = true;
  v.head_group = kKhrHeadGroup;
  v.variants = rsm == 0;  // the shared-memory softmax has the attention variants; the register softmax not yet
  v.extra_spec = {{kSpecCmM, f.m},           {kSpecCmN, f.n},           {kSpecCmK, f.k},
                 {kSpecCmQInRegs, t.q_regs}, {kSpecCmPrefetch, t.prefetch}, {kSpecCmRegSoftmax, rsm},
                 {kSpecCmOpt, opt}};
  const std::uint32_t m = f.m, n = f.n, k = f.k;
  const bool gated = khr_regsm_layout(rsm);
  v.device_check = [m, n, k, rsm, gated](const Caps& c) -> std::string {
    if (!advertises(c, m, n, k))
      return "device does not advertise a " + shape_name(m, n, k) + " f16*f16+f32 subgroup cooperative matrix";
    if (!c.subgroup_vote) return "device lacks subgroup vote in compute shaders";
    if (!c.vulkan_memory_model) return "device lacks vulkanMemoryModel (the coopmat SPIR-V declares it)";
    if (gated && c.khr_acc_layout != rsm)
      return "accumulator layout " + std::to_string(c.khr_acc_layout) + " (probed) is not layout " + std::to_string(rsm);
    return "";
  };
  if (noncausal_only)
    v.call_check = [](const Caps&, const detail::AttnArgs& a) -> std::string {
      return a.causal ? "id 29's options are for non-causal calls" : "";
    };
  return v;
}

}  // namespace

// Per shape family, head dim and tile: each softmax form of that head dim the family and tile allow; where a form's
// id 29 differs by causality, the non-causal entry first, then the one causal calls reach.
std::vector<ShaderVariant> coopmat_variants() {
  std::vector<ShaderVariant> out = decode_variants(Path::VulkanCoopmat);  // decode-shaped calls first
  for (const Family& f : kFamilies)
    for (const KhrTile& t : kKhrTiles) {
      if (!khr_tile_valid(f, t)) continue;
      for (const KhrForm& form : kKhrForms) {
        if (form.dim != t.dim || (form.regsm && !khr_regsm_family(f)) || (t.rsm_only && !form.regsm)) continue;
        if (form.opt_noncausal != form.opt_causal)
          out.push_back(khr_variant(f, t, form.regsm, form.opt_noncausal, /*noncausal_only=*/true));
        out.push_back(khr_variant(f, t, form.regsm, form.opt_causal));
      }
    }
  return out;
}

bool khr_layout_probe_variant(const Caps& caps, ShaderVariant* out) {
  // One subgroup of the family, d = 64, whatever the tile table holds.
  ShaderVariant v = khr_variant(Family{16, 16, 16, 32}, KhrTile{64, 1, 32, 1, 0}, kCmRegSoftmaxProbe, 0);
  if (!device_reason(v, caps).empty()) return false;
  v.kernel += "_probe";
  v.split_kv = false;  // one workgroup, no reduce pass over the probe's O
  *out = std::move(v);
  return true;
}

std::uint32_t khr_layout_from_probe(const std::uint16_t* o) {
  for (std::uint32_t layout : {1u, 2u}) {
    const std::uint32_t rh = layout == 2 ? 2 : 1, ch = 3 - rh;
    bool ok = true;
    for (std::uint32_t l = 0; l < 32 && ok; ++l)
      for (std::uint32_t i = 0; i < 8 && ok; ++i) {
        const std::uint32_t r = (l >> 2) + 8 * ((i >> rh) & 1), c = 2 * (l & 3) + (i & 1) + 8 * ((i >> ch) & 1);
        ok = f16_to_float(o[8 * l + i]) == static_cast<float>(r * 16 + c);  // exact in f16; poison (NaN) never equal
      }
    if (ok) return layout;
  }
  return 0;
}

namespace {

// The entries of one coopmat2 table row: the one-loop-body form (id 30) where the row has it, then the folded
// entry (id 25 = 1, scale > 0), then its unfolded twin (id 25 = 0) for the other scales.
void add_coopmat2(std::vector<ShaderVariant>& out, const Cm2Entry& e) {
  ShaderVariant v;
  v.path = Path::VulkanCoopmat2;
  const bool staged = e.dtype != DType::F16;
  const std::uint32_t d = e.dim, narrow = cm2_narrow(e), q_reload = e.q_reload ? 1 : 0;
  v.kernel = std::string("vk_coopmat2_") + (staged ? "staged" : "tensor") + "_wg" + std::to_string(e.wg) + "_al_nw" +
             std::to_string(narrow) + "_fold" + (q_reload ? "_qgl" : "") + (e.o16 ? "_o16" : "");
  v.spirv = e.o16 ? "attn_coopmat2_o16" : "attn_coopmat2";
  v.reduced_precision = e.o16;
  v.wg_size = e.wg;
  v.block_m = e.block_m;
  v.block_n = e.block_n;
  v.head_dims = {d};
  v.dtypes = {e.dtype};
  v.shared_bytes = cm2_shared_bytes(e);
  v.needs_16bit_storage = true;
  v.needs_float16 = true;
  v.needs_coopmat = true;
  v.needs_coopmat2 = true;
  v.split_kv = true;
  v.variants = true;  // VARIANTS (id 14): plain calls keep 0 and fold the variant code away
  v.rows_outer = e.rows_outer;
  v.extra_spec = {{kSpecCm2AlignedLoads, 1u}, {kSpecCm2Narrow, narrow}, {kSpecCm2FoldScale, 1u},
                  {kSpecCm2QReload, q_reload}};
  // Tensor-layout loads and stores need 16-byte aligned element offsets (GLSL_NV_cooperative_matrix2); other calls
  // go to the next path with the reason.
  if (!staged) v.align_elems = kCm2TensorAlignElems;
  const std::uint32_t bm = e.block_m, bn = e.block_n, wg = e.wg, sh = v.shared_bytes;
  v.device_check = [bm, bn, wg, d, sh](const Caps& c) -> std::string {
    if (!c.cm2_workgroup_scope) return "device lacks cooperativeMatrixWorkgroupScope";
    if (!c.shader_int16) return "device lacks shaderInt16";
    if (!c.vulkan_memory_model) return "device lacks vulkanMemoryModel (the coopmat2 SPIR-V declares it)";
    if (!c.cm2_flexible_dimensions) return "device lacks cooperativeMatrixFlexibleDimensions";
    if (!c.cm2_reductions) return "device lacks cooperativeMatrixReductions";
    if (!c.cm2_conversions) return "device lacks cooperativeMatrixConversions";
    if (!c.cm2_per_element_operations) return "device lacks cooperativeMatrixPerElementOperations";
    if (!c.cm2_tensor_addressing) return "device lacks cooperativeMatrixTensorAddressing";
    if (c.cm2_max_workgroup_size && wg > c.cm2_max_workgroup_size)
      return "workgroup size " + std::to_string(wg) + " above cooperativeMatrixWorkgroupScopeMaxWorkgroupSize " +
             std::to_string(c.cm2_max_workgroup_size);
    const std::uint32_t dim = std::max(std::max(bm, bn), d);
    if (c.cm2_max_dimension && dim > c.cm2_max_dimension)
      return "tile dimension " + std::to_string(dim) + " above cooperativeMatrixFlexibleDimensionsMaxDimension";
    if (sh + c.cm2_reserved_shared_memory > c.max_shared_memory)
      return "needs " + std::to_string(sh + c.cm2_reserved_shared_memory) + " bytes of shared memory";
    return "";
  };
  std::function<std::string(const Caps&, const detail::AttnArgs&)> base_check;
  if (e.noncausal_only)
    base_check = [](const Caps&, const detail::AttnArgs& a) -> std::string {
      return a.causal ? "this tile lost to the next entry's on causal calls" : "";
    };
  // Id 25 takes the row max of unscaled scores and masks them to -inf before the scale: exact for scale > 0 only.
  auto folded_check = [](const std::function<std::string(const Caps&, const detail::AttnArgs&)>& inner) {
    return [inner](const Caps& c, const detail::AttnArgs& a) -> std::string {
      if (!(a.scale > 0.0f)) return "scale <= 0: id 25 folds the scale in after the row max (exact for scale > 0)";
      return inner ? inner(c, a) : "";
    };
  };
  v.call_check = folded_check(base_check);
  if (e.full != Cm2Full::kNever) {
    ShaderVariant full = v;
    full.kernel += "_full";
    full.extra_spec.push_back({kSpecCm2AllFull, 1u});
    const bool causal_only = e.full == Cm2Full::kCausal;
    full.call_check = folded_check([bn, d, causal_only](const Caps&, const detail::AttnArgs& a) -> std::string {
      if (!a.causal && causal_only)
        return "id 30 lost to the peeled form on non-causal d" + std::to_string(d) + " calls";
      return a.seqlen_k % bn == 0 ? "" : "seqlen_k is not a multiple of " + std::to_string(bn) + " (id 30)";
    });
    out.push_back(std::move(full));
  }
  ShaderVariant unfolded = v;
  unfolded.kernel += "_unfolded";
  for (auto& [id, value] : unfolded.extra_spec)
    if (id == kSpecCm2FoldScale) value = 0;
  unfolded.call_check = [base_check](const Caps& c, const detail::AttnArgs& a) -> std::string {
    if (a.scale > 0.0f) return "scale > 0 runs the folded entry";
    return base_check ? base_check(c, a) : "";
  };
  out.push_back(std::move(v));
  out.push_back(std::move(unfolded));
}

}  // namespace

std::vector<ShaderVariant> coopmat2_variants() {
  std::vector<ShaderVariant> out = decode_variants(Path::VulkanCoopmat2);  // decode-shaped calls first
  for (const Cm2Entry& e : kCm2Entries) add_coopmat2(out, e);
  return out;
}

// ---- KHR backward (shaders/attn_bwd_coopmat.comp): the dK/dV and dQ passes after the portable preprocess ----------

namespace {

// Per pass and head dim, fastest first (untimed on the first two forms: sized for NVIDIA's 48 KB and 255 registers):
// subgroups per workgroup, each owning CM_M keys (dK/dV) or query rows (dQ); the rows of the streamed block (BLOCK_M
// query rows for dK/dV, BLOCK_N keys for dQ); the own rows' fragments in registers (id 19); P and dS on the
// accumulators (id 28 = the probed layout: NVIDIA's 16x16x16 family only, Caps::khr_acc_layout); the next block's
// global loads in flight in registers (id 20: 2 T D / (8 wg) 16-byte vectors a thread, where the registers allow);
// the scores one 16-row tile of the block at a time (id 21). d 128's dK/dV pass holds dK and dV (128 registers a
// lane) and K and V (64): its first form makes room for id 20 with eight subgroups (the block's loads spread over 256
// threads: 16 registers) and id 21 (16 score registers, not 32), as many as four subgroups without id 20 hold.
// At d 256 the register forms would spill (the dK and dV accumulators alone take 256 registers a lane): the first
// form only.
struct KhrBwdTile {
  std::uint32_t dim, nsg, step;
  bool own_regs = false, reg_pds = false, prefetch = false, by_tile = false;
};
const KhrBwdTile kKhrBwdDkDvTiles[] = {
    {64, 4, 64, true, true, true}, {64, 4, 32, true, true}, {128, 8, 32, true, true, true, true},
    {128, 4, 32, true, true}, {64, 4, 32, true, false}, {128, 4, 32, true, false}, {64, 2, 32}, {64, 1, 32},
    {64, 1, 16}, {128, 2, 16}, {128, 1, 32}, {128, 1, 16}, {256, 1, 16}};
const KhrBwdTile kKhrBwdDqTiles[] = {
    {64, 4, 64, true, true, true}, {128, 4, 32, true, true, true}, {128, 4, 64, true, true}, {64, 4, 32, true, false},
    {128, 4, 32, true, false}, {64, 2, 32}, {64, 1, 16}, {128, 2, 32}, {128, 2, 16}, {128, 1, 16}, {256, 1, 16}};

// Mirrors the shared declarations of attn_bwd_coopmat.comp: R own rows, T streamed rows.
std::uint32_t khr_bwd_shared_bytes(const Family& f, const KhrBwdTile& t, bool dkdv) {
  const std::uint32_t d = t.dim, r = t.nsg * f.m, s = t.step;
  return (t.own_regs ? 16 : 4 * r * (d + 8))  // own rows: K and V, or Q and dO (f16; placeholders with id 19)
         + 4 * s * (d + 8)                    // the streamed block: Q and dO, or K and V (f16)
         + (t.reg_pds ? 32 : 8 * r * (s + 4))  // S and dP staging (f32; placeholders with id 28)
         + (dkdv ? 4 * r * (s + 8) : 2 * r * (s + 8) + 8)  // P (dK/dV; a placeholder for dQ) and dS (f16)
         + 8 * (dkdv ? s : r);                // lse2 and Delta
}

// The shader's structural requirements: whole coopmat tiles along every dimension; id 19 stages the own rows through
// the streamed block in whole subgroup tiles; id 28 knows one family's accumulators; id 20 fetches one streamed row's
// lse2 and Delta a thread; id 21 splits the scores of id 28 only.
bool khr_bwd_tile_valid(const Family& f, const KhrBwdTile& t) {
  return t.nsg >= 1 && t.step % f.n == 0 && t.step % f.k == 0 && t.step % 8 == 0 && t.dim % f.n == 0 &&
         t.dim % f.k == 0 && (!t.own_regs || t.step % f.m == 0) && (!t.reg_pds || khr_regsm_family(f)) &&
         (!t.prefetch || t.step <= t.nsg * f.sg) && (!t.by_tile || t.reg_pds);
}

// One pass of family f and tile t as a table entry, so that the forward's device gating (device_reason) decides;
// acc_layout: the device's probed accumulator layout (id 28 for tiles with reg_pds).
ShaderVariant khr_bwd_pass(const Family& f, const KhrBwdTile& t, bool dkdv, std::uint32_t acc_layout) {
  ShaderVariant v;
  v.path = Path::VulkanCoopmat;
  v.spirv = dkdv ? "attn_bwd_dkdv_cm" : "attn_bwd_dq_cm";
  v.wg_size = t.nsg * f.sg;
  v.block_m = dkdv ? t.step : t.nsg * f.m;
  v.block_n = dkdv ? t.nsg * f.m : t.step;
  v.required_subgroup_size = f.sg;
  v.needs_full_subgroups = true;
  v.head_dims = {t.dim};
  v.dtypes = {DType::F16, DType::BF16};
  v.shared_bytes = khr_bwd_shared_bytes(f, t, dkdv);
  v.needs_16bit_storage = true;
  v.needs_float16 = true;
  v.needs_coopmat = true;
  const std::uint32_t rsm = t.reg_pds ? acc_layout : 0;
  v.extra_spec = {{kSpecCmM, f.m},
                  {kSpecCmN, f.n},
                  {kSpecCmK, f.k},
                  {kSpecCmQInRegs, t.own_regs ? 1u : 0u},
                  {kSpecCmPrefetch, t.prefetch ? 1u : 0u},
                  {kSpecCmScoreByTile, t.by_tile ? 1u : 0u},
                  {kSpecCmRegSoftmax, rsm}};
  // The forms, for khr_bwd_choose's name.
  v.kernel = std::string(t.own_regs ? "+regs" : "") + (t.prefetch ? "+pf" : "") + (t.reg_pds ? "+acc" : "") +
             (t.by_tile ? "+tile" : "");
  const std::uint32_t m = f.m, n = f.n, k = f.k;
  const bool gated = t.reg_pds;
  v.device_check = [m, n, k, gated](const Caps& c) -> std::string {
    if (!advertises(c, m, n, k))
      return "device does not advertise a " + shape_name(m, n, k) + " f16*f16+f32 subgroup cooperative matrix";
    if (!c.vulkan_memory_model) return "device lacks vulkanMemoryModel (the coopmat SPIR-V declares it)";
    if (gated && !khr_regsm_layout(c.khr_acc_layout))
      return "accumulator layout " + std::to_string(c.khr_acc_layout) + " (probed) is not one the shader knows";
    return "";
  };
  return v;
}

// The first tile of `tiles` for head dim d that family f runs on this device: "" and *out, else the first reason.
template <std::size_t N>
std::string khr_bwd_pick(const Caps& caps, const Family& f, const KhrBwdTile (&tiles)[N], std::uint32_t d, bool dkdv,
                         ShaderVariant* out) {
  std::string first;
  for (const KhrBwdTile& t : tiles) {
    if (t.dim != d || !khr_bwd_tile_valid(f, t)) continue;
    ShaderVariant v = khr_bwd_pass(f, t, dkdv, caps.khr_acc_layout);
    const std::string why = device_reason(v, caps);
    if (why.empty()) {
      *out = std::move(v);
      return "";
    }
    if (first.empty()) first = why;
  }
  return first.empty() ? "no " + shape_name(f.m, f.n, f.k) + " tile for head_dim " + std::to_string(d) : first;
}

BwdPassKernel pass_kernel(const ShaderVariant& v) {
  BwdPassKernel k;
  k.spirv = v.spirv;
  k.block_m = v.block_m, k.block_n = v.block_n, k.wg = v.wg_size;
  k.required_subgroup_size = v.required_subgroup_size;
  k.extra_spec = v.extra_spec;
  return k;
}

}  // namespace

std::string khr_bwd_choose(const Caps& caps, const detail::BwdArgs& a, BwdChoice* out) {
  const detail::AttnArgs& f = a.fwd;
  if (!caps.coopmat_khr) return "device lacks VK_KHR_cooperative_matrix";
  if (f.dtype != DType::F16 && f.dtype != DType::BF16)
    return "dtype " + std::string(to_string(f.dtype)) + " not supported (f16 and bf16: the matrix units take f16)";
  const auto d = static_cast<std::uint32_t>(f.head_dim);
  if (d != 64 && d != 128 && d != 256) return "head_dim " + std::to_string(d) + " not supported (64,128,256)";
  std::string first;
  for (const Family& fam : kFamilies) {
    ShaderVariant dkdv, dq;
    std::string why = khr_bwd_pick(caps, fam, kKhrBwdDkDvTiles, d, true, &dkdv);
    if (why.empty()) why = khr_bwd_pick(caps, fam, kKhrBwdDqTiles, d, false, &dq);
    if (!why.empty()) {
      if (first.empty()) first = why;
      continue;
    }
    BwdChoice c;
    c.storage = "s16";  // the preprocess's module: 16-bit storage, which every coopmat entry needs
    for (std::size_t i = 0; i < std::size(kBwdPasses); ++i)
      c.passes[i] = kBwdPasses[i] == BwdPass::Preprocess ? bwd_preprocess_kernel(c.storage)
                    : kBwdPasses[i] == BwdPass::Dsinks ? bwd_dsinks_kernel()
                    : kBwdPasses[i] == BwdPass::DkDv   ? pass_kernel(dkdv)
                                                        : pass_kernel(dq);
    if (std::string call = bwd_call_reason(caps, a, c); !call.empty()) return call;
    c.kernel = "vk_coopmat_bwd_" + shape_name(fam.m, fam.n, fam.k) + "_sg" + std::to_string(fam.sg) + "<d" +
               std::to_string(d) + "," + std::string(to_string(f.dtype)) + (f.causal ? ",causal" : "") + ",kv" +
               std::to_string(dkdv.block_n) + "x" + std::to_string(dkdv.block_m) + dkdv.kernel + ",q" +
               std::to_string(dq.block_m) + "x" + std::to_string(dq.block_n) + dq.kernel + ">";
    *out = std::move(c);
    return "";
  }
  return first;
}

}  // namespace flashtile::vk
