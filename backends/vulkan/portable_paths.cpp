// The portable path's variant table (shaders/attn_portable*.comp) and the generic variant checks every path uses.
#include "kernels.hpp"

#include <algorithm>
#include <iterator>
#include <string>

namespace flashtile::vk {

namespace {

// Tiles per head dim range. Q and the K/V tile sit in f32 shared memory (see the shader's header).
struct PortableTile {
  std::uint32_t min_dim, max_dim;  // head dims: multiples of 8 in [min_dim, max_dim]
  std::uint32_t block_m, block_n, wg;
  std::uint32_t max_sq;  // 0: any seqlen_q; else only calls with seqlen_q <= max_sq
};
// The portable tables' choices and their measurements: docs/PERFORMANCE.md, "Vulkan table choices".
// Decode-like calls (seqlen_q <= 8): 8-row tiles waste less of the work on rows past Sq (split-KV fills the GPU).
const PortableTile kDecodeTiles[] = {{40, 64, 8, 64, 128, 8}, {72, 128, 8, 32, 128, 8}, {136, 256, 8, 16, 128, 8}};
// Fastest first. The first three need 48 KB of shared memory (NVIDIA, AMD, Intel GPUs): wider key tiles halve the
// barriers per key. The last three fit in 32 KB, the portable path's floor (lavapipe).
const PortableTile kTiles[] = {{8, 64, 64, 32, 256, 0},   {72, 128, 32, 32, 128, 0}, {136, 256, 16, 16, 128, 0},
                               {8, 64, 32, 32, 128, 0},   {72, 128, 32, 16, 128, 0}, {136, 256, 16, 8, 128, 0}};

// The shader's padded tile width for head dim d (attn_portable.comp: DP).
std::uint32_t padded_dim(std::uint32_t d) { return d <= 32 ? 32 : d <= 64 ? 64 : d <= 128 ? 128 : 256; }

// attn_portable.comp's shared arrays: Q, K/V tiles (vec4, padded rows), scores, rescale factors, row reductions.
std::uint32_t portable_shared_bytes(std::uint32_t d, std::uint32_t bm, std::uint32_t bn, std::uint32_t wg) {
  const std::uint32_t d4 = padded_dim(d) / 4, tpr = wg / bm;
  return 16 * bm * (d4 + 1) + 16 * bn * (d4 + 1) + 4 * bm * (bn + 1) + 4 * bm + 4 * bm * tpr;
}

struct StorageMode {
  const char* suffix;
  std::vector<DType> dtypes;
  bool needs16, packed;  // packed: 16-bit data read and written as uint pairs (even offsets and strides)
};

// What every portable variant shares: module attn_portable_<stem><suffix>, kernel vk_portable_<stem><suffix>, the
// storage mode's dtypes and needs, split-KV.
ShaderVariant portable_variant(const std::string& stem, const StorageMode& s, std::uint32_t wg, std::uint32_t bm,
                               std::uint32_t bn) {
  ShaderVariant v;
  v.path = Path::VulkanPortable;
  v.kernel = "vk_portable_" + stem + s.suffix;
  v.spirv = "attn_portable_" + stem + s.suffix;
  v.wg_size = wg;
  v.block_m = bm;
  v.block_n = bn;
  v.dtypes = s.dtypes;
  v.needs_16bit_storage = s.needs16;
  v.align_elems = s.packed ? 2 : 1;
  v.split_kv = true;
  v.rows_outer = true;
  return v;
}

// attn_portable_row.comp: TPR = d / 64 threads per row (a power of two), BLOCK_M = 128 / TPR rows, K and V tiles of
// block_n keys in shared memory (2 * block_n * d * 4 bytes).
struct RowTile {
  std::uint32_t dim, block_n;
};
const RowTile kRowTiles[] = {{64, 32}, {128, 32}, {256, 16}};
constexpr std::uint32_t kRowWg = 128;

ShaderVariant make_row_variant(const RowTile& t, const StorageMode& s) {
  const std::uint32_t tpr = t.dim / 64;
  ShaderVariant v = portable_variant("row_", s, kRowWg, kRowWg / tpr, t.block_n);
  v.head_dims = {t.dim};
  v.shared_bytes = 2 * t.block_n * t.dim * 4;
  v.needs_subgroup_shuffle = true;
  v.min_subgroup_size = tpr;
  // On CPU devices (lavapipe) its large per-thread arrays make it slower than the tiled shader, and much slower to
  // compile.
  v.cpu_skip = "row shader skipped on CPU devices (slower there)";
  return v;
}

// attn_portable_tile.comp (register-blocked): per head dim, BLOCK_M x BLOCK_N tiles on wg threads; each thread
// computes s_tm x s_tn scores (over head_dim / ds columns, ds = wg / ((bm / s_tm) * (bn / s_tn)) partial score
// tiles) and keeps o_tm rows x (bm * d / (wg * o_tm)) columns of O in registers. Entries are in preference order:
// a 48 KB tile where measured faster (NVIDIA's limit), then one within 32 KB (lavapipe's limit) for every head dim;
// a device takes the first its shared memory holds.
struct TileConfig {
  std::uint32_t dim, block_m, block_n, wg, s_tm, s_tn, o_tm;
};
constexpr TileConfig kTileConfigs[] = {
    {64, 64, 16, 128, 4, 2, 4},   // 27.0 KB; S 4x2 (ds 1), O 4x8
    {128, 64, 16, 128, 4, 2, 4},  // 47.0 KB; S 4x2 (ds 1), O 4x16
    {128, 32, 16, 64, 4, 4, 4},   // 30.1 KB; S 4x4 (ds 2), O 4x16
    {256, 32, 8, 128, 4, 2, 4},   // 47.3 KB; S 4x2 (ds 4), O 4x16
    {256, 16, 8, 64, 4, 4, 4},    // 30.7 KB; S 4x4 (ds 8), O 4x16
};

std::uint32_t tile_shared_bytes(const TileConfig& c) {
  const std::uint32_t qs = c.dim / 4 + 1, ds = c.wg / ((c.block_m / c.s_tm) * (c.block_n / c.s_tn));
  return 16 * (c.block_m + c.block_n) * qs + 16 * ds * c.block_m * (c.block_n / 4 + 1) + 4 * c.wg + 4 * c.block_m;
}

// attn_portable_tile.comp's divisibility rules.
constexpr bool tile_config_valid(const TileConfig& c) {
  const std::uint32_t d4 = c.dim / 4;
  auto div = [](std::uint32_t a, std::uint32_t b) { return b != 0 && a % b == 0; };
  if (!c.block_m || !c.block_n || !c.wg || !c.s_tm || !c.s_tn || !c.o_tm) return false;
  if (!div(c.block_m, c.s_tm) || !div(c.block_n, c.s_tn) || !div(c.block_m, c.o_tm)) return false;  // micro-tiles
  const std::uint32_t group = (c.block_m / c.s_tm) * (c.block_n / c.s_tn);
  if (!div(c.wg, group) || !div(d4, c.wg / group)) return false;  // wg / score groups divides head_dim / 4
  const std::uint32_t org = c.block_m / c.o_tm;
  if (!div(c.wg, org) || !div(d4, c.wg / org)) return false;      // wg / output row groups divides head_dim / 4
  if (!div(c.wg, c.block_m) || !div(c.block_n, c.wg / c.block_m)) return false;  // wg / block_m divides block_n
  return div(c.block_n, 4) && div(c.block_n * d4, c.wg);  // block_n a multiple of 4 and of wg * 4 / head_dim
}
static_assert(std::all_of(std::begin(kTileConfigs), std::end(kTileConfigs), tile_config_valid));

ShaderVariant make_tile_variant(const TileConfig& c, const StorageMode& s) {
  ShaderVariant v = portable_variant("tile_", s, c.wg, c.block_m, c.block_n);
  v.head_dims = {c.dim};
  v.shared_bytes = tile_shared_bytes(c);
  v.extra_spec = {{kSpecTileSTm, c.s_tm}, {kSpecTileSTn, c.s_tn}, {kSpecTileOTm, c.o_tm}};
  // Like the row shader: on CPU devices (lavapipe) the tiled shader is the default (CI time); tests force this one.
  v.cpu_skip = "tile shader skipped on CPU devices (CI time)";
  return v;
}

// attn_portable_rg.comp (row groups of tpr subgroup lanes, Q and O in registers, S and P never in shared memory):
// rows per lane R = block_m * tpr / wg. f16 tensors take the packed-f16 P·V module ("rgh") first. Every tile fits
// in 32 KB. The portable path's default on GPUs.
struct RgConfig {
  std::uint32_t dim, block_m, block_n, wg, tpr, prefetch;
};
// Registers per lane, 32-bit, from the shader's arrays (its header), for 16-bit tensors: Q + O 2 * R * d / tpr,
// scores R * block_n / tpr, partial scores R * tpr (score step) or the f16 P·V sums R * d / (2 * tpr) and a key's V
// columns d / (2 * tpr) (P·V step), prefetch block_n * d / wg, plus about 24 (addresses, m/l/alpha, loop state).
constexpr RgConfig kRgConfigs[] = {
    {64, 128, 16, 128, 4, 0},  // R 4: Q+O 128, S 16
    {128, 64, 16, 128, 8, 0},  // R 4: Q+O 128, S 8
    {256, 32, 16, 128, 16, 0}, // R 4: Q+O 128, S 4
    {256, 32, 16, 128, 8, 0},  // R 2, for subgroups of 8 (lavapipe, some Intel GPUs)
};

// attn_portable_rg.comp's divisibility rules (f16_pv: the packed-f16 P·V module's extra ones).
constexpr bool rg_config_valid(const RgConfig& c, bool f16_pv) {
  auto div = [](std::uint32_t a, std::uint32_t b) { return b != 0 && a % b == 0; };
  const std::uint32_t unit = f16_pv ? 8 : 4;  // columns of a shared V load
  if (c.tpr < 2 || (c.tpr & (c.tpr - 1)) != 0) return false;  // tpr a power of two >= 2
  if (!c.block_m || !c.block_n || !c.wg || c.wg > 1024) return false;
  if (!div(c.dim / unit, c.tpr) || !div(c.block_n, c.tpr) || !div(c.wg, c.tpr)) return false;
  if (!div(c.block_m * c.tpr, c.wg)) return false;  // rows per lane R >= 1
  if (!div(c.block_n * c.dim / unit, c.wg)) return false;  // the K/V tile's loads
  return c.prefetch <= 1;
}
static_assert(std::all_of(std::begin(kRgConfigs), std::end(kRgConfigs),
                          [](const RgConfig& c) { return rg_config_valid(c, false) && rg_config_valid(c, true); }));

ShaderVariant make_rg_variant(const RgConfig& c, const StorageMode& s, bool f16_pv) {
  ShaderVariant v = portable_variant(f16_pv ? "rgh_" : "rg_", s, c.wg, c.block_m, c.block_n);
  v.head_dims = {c.dim};
  if (f16_pv) v.dtypes = {DType::F16};
  // f16 P·V sums round every product and partial sum to f16: about 2.5x the error of f32 sums, past the f16
  // bound (row-relative 2.6e-3 on random cases), so only for calls that allow reduced-precision accumulation.
  v.reduced_precision = f16_pv;
  v.needs_float16 = f16_pv;
  v.shared_bytes = c.block_n * c.dim * (f16_pv ? 4 + 2 : 4 + 4);  // K f32, V f32 or f16
  v.extra_spec = {{kSpecRgTpr, c.tpr}, {kSpecRgPrefetch, c.prefetch}};
  v.needs_subgroup_shuffle = true;
  v.min_subgroup_size = c.tpr;  // a row group's lanes share one subgroup
  // Like the tile shader: on CPU devices (lavapipe) only when tests force it (CI time).
  v.cpu_skip = "row-group shader skipped on CPU devices (CI time)";
  return v;
}

ShaderVariant make_variant(const PortableTile& t, const StorageMode& s, bool sg) {
  ShaderVariant v = portable_variant("", s, t.wg, t.block_m, t.block_n);
  v.kernel += sg ? "_sg" : "_sh";
  v.spirv += sg ? "_sg" : "_sh";
  for (std::uint32_t d = t.min_dim; d <= t.max_dim; d += 8) v.head_dims.push_back(d);
  for (std::uint32_t d : v.head_dims)
    v.shared_bytes = std::max(v.shared_bytes, portable_shared_bytes(d, t.block_m, t.block_n, t.wg));
  v.needs_subgroup_shuffle = sg;
  v.min_subgroup_size = sg ? t.wg / t.block_m : 0;  // a row's threads share one subgroup
  // The serving layouts live in this shader only: it is every device's fallback (lavapipe's default), and one
  // shader keeps their clamping in one place; the faster GPU shaders pass those calls over (call_reason).
  v.serving_layouts = true;
  v.variants = true;  // the attention variants likewise, for the same reasons
  if (const std::uint32_t max_sq = t.max_sq) {
    v.call_check = [max_sq](const Caps&, const detail::AttnArgs& a) -> std::string {
      return a.seqlen_q > max_sq ? "seqlen_q > " + std::to_string(max_sq) + " (decode tiles)" : "";
    };
  }
  return v;
}

}  // namespace

std::vector<ShaderVariant> portable_variants() {
  const StorageMode storages[] = {{"s16", {DType::F16, DType::BF16}, true, false},
                                  {"pk", {DType::F16, DType::BF16}, false, true},
                                  {"f32", {DType::F32}, false, false}};
  // Fastest first: the decode shader and the decode tiles for the calls they take, then the row-group shader, the
  // register-blocked tile shader and the row shader (head dims 64/128/256), then the tiled shader for every head dim:
  // subgroup row reductions before shared-memory ones, wide tiles before 32 KB ones; per storage mode.
  std::vector<ShaderVariant> out = decode_variants(Path::VulkanPortable);
  for (const bool sg : {true, false})
    for (const PortableTile& t : kDecodeTiles)
      for (const StorageMode& s : storages) out.push_back(make_variant(t, s, sg));
  // Register-blocked tiles: packed uint loads first (half the load instructions of 16-bit ones; odd layouts fall
  // through to s16).
  const StorageMode tile_storages[] = {storages[1], storages[0], storages[2]};
  // The row-group shader before the tile shader on d 64/128/256.
  for (const RgConfig& c : kRgConfigs)
    for (const bool f16_pv : {true, false})
      for (const StorageMode& s : tile_storages)
        if (!f16_pv || s.needs16 || s.packed) out.push_back(make_rg_variant(c, s, f16_pv));  // f32: no f16 P·V
  for (const TileConfig& c : kTileConfigs)
    for (const StorageMode& s : tile_storages) out.push_back(make_tile_variant(c, s));
  for (const RowTile& t : kRowTiles)
    for (const StorageMode& s : storages) out.push_back(make_row_variant(t, s));
  for (const bool sg : {true, false})
    for (const PortableTile& t : kTiles)
      for (const StorageMode& s : storages) out.push_back(make_variant(t, s, sg));
  return out;
}

std::string device_reason(const ShaderVariant& v, const Caps& caps) {
  std::string why;
  if (!find_spirv(v.spirv, &why)) return why;
  if (v.needs_coopmat2 && !caps.coopmat2_nv) return "device lacks VK_NV_cooperative_matrix2";
  if (v.needs_coopmat && !caps.coopmat_khr) return "device lacks VK_KHR_cooperative_matrix";
  if (v.needs_16bit_storage && !caps.storage_buffer_16bit) return "device lacks storageBuffer16BitAccess";
  if (v.needs_float16 && !caps.shader_float16) return "device lacks shaderFloat16";
  if (v.needs_subgroup_shuffle && !caps.subgroup_shuffle) return "device lacks subgroup shuffle in compute shaders";
  if (v.needs_subgroup_arithmetic && !caps.subgroup_arithmetic)
    return "device lacks subgroup arithmetic in compute shaders";
  if (v.min_subgroup_size && caps.subgroup_size < v.min_subgroup_size && v.required_subgroup_size == 0)
    return "subgroup size " + std::to_string(caps.subgroup_size) + " < " + std::to_string(v.min_subgroup_size);
  if (v.wg_size % std::max(1u, caps.subgroup_size) != 0 && v.needs_subgroup_shuffle && v.required_subgroup_size == 0)
    return "workgroup size " + std::to_string(v.wg_size) + " not a multiple of the subgroup size";
  if (v.required_subgroup_size) {
    if (!caps.subgroup_size_control || !caps.required_subgroup_size_compute)
      return "device lacks subgroup size control for compute";
    if (v.required_subgroup_size < caps.min_subgroup_size || v.required_subgroup_size > caps.max_subgroup_size)
      return "subgroup size " + std::to_string(v.required_subgroup_size) + " outside the device's " +
             std::to_string(caps.min_subgroup_size) + ".." + std::to_string(caps.max_subgroup_size);
  }
  if (v.needs_full_subgroups && !caps.compute_full_subgroups) return "device lacks computeFullSubgroups";
  if (v.shared_bytes > caps.max_shared_memory)
    return "needs " + std::to_string(v.shared_bytes) + " bytes of shared memory, device has " +
           std::to_string(caps.max_shared_memory);
  if (v.wg_size > caps.max_workgroup_invocations) return "workgroup size too large for the device";
  if (v.device_check) return v.device_check(caps);
  return "";
}

std::string call_reason(const ShaderVariant& v, const Caps& caps, const detail::AttnArgs& a) {
  if (v.reduced_precision && !a.allow_reduced_precision)
    return "accumulates O in f16: needs Options::allow_reduced_precision_accumulation";
  // Worded like detail::layout_why_not, so that callers (and tests) read it as "no kernel for this layout".
  if ((a.paged || a.varlen) && !v.serving_layouts)
    return std::string(a.paged ? "no paged-KV" : "no varlen") + " kernel on this path in " + v.kernel +
           " (the tiled portable shader has one)";
  // Worded like detail::variants_why_not, so that callers (and tests) read it as "no kernel for these variants".
  if (a.has_variant() && !v.variants)
    return "options (window, softcap, alibi_slopes, sinks): no kernel of " + v.kernel +
           " implements these variants yet (another shader form of this path does)";
  if (std::find(v.dtypes.begin(), v.dtypes.end(), a.dtype) == v.dtypes.end())
    return "dtype " + std::string(to_string(a.dtype)) + " not supported";
  if (std::find(v.head_dims.begin(), v.head_dims.end(), static_cast<std::uint32_t>(a.head_dim)) == v.head_dims.end())
    return "head_dim " + std::to_string(a.head_dim) + " not supported";
  const std::uint64_t row_tiles = grid_row_tiles(v, a), heads = grid_heads(v, a);
  if (row_tiles > caps.max_workgroup_count[0] || heads > caps.max_workgroup_count[1] ||
      static_cast<std::uint64_t>(a.batch) > caps.max_workgroup_count[2])
    return "grid (" + std::to_string(row_tiles) + ", " + std::to_string(heads) + ", " + std::to_string(a.batch) +
           ") exceeds maxComputeWorkGroupCount";
  const bool append = a.paged && a.paged->seqlen_new > 0;
  for (const detail::TensorArg* t : {&a.q, &a.k, &a.v, &a.o, append ? &a.paged->k_new : &a.q,
                                     append ? &a.paged->v_new : &a.q}) {
    if (v.align_elems <= 1) break;
    const std::uint64_t n = v.align_elems, esz = dtype_size(t->dtype);
    bool ok = (t->buf.offset / esz) % n == 0;
    for (int i = 0; i < 3; ++i) ok = ok && static_cast<std::uint64_t>(t->strides[i]) % n == 0;
    if (!ok) return "element offsets and strides must be multiples of " + std::to_string(n);
  }
  if (v.call_check) return v.call_check(caps, a);
  return "";
}

}  // namespace flashtile::vk
