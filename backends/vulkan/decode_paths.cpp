// The decode shader's table (shaders/attn_decode.comp): calls with few packed query rows (group x seqlen_q) against
// a long K/V, on every Vulkan path. Its entries come first in each path's table; calls they refuse (too many packed
// rows, f32, odd alignment, other head dims) go on to the path's own shaders.
#include "kernels.hpp"

#include <algorithm>
#include <iterator>
#include <string>

namespace flashtile::vk {

namespace {

// Packed rows (group x seqlen_q) past this are left to the prefill shaders (e.g. speculative 16 rows x group 4): the
// decode shader would read K/V once per block_m rows, the prefill tiles take them on matrix units.
constexpr std::uint64_t kMaxDecodeRows = 16;
constexpr std::uint32_t kDecodeWg = 128;

// One entry: head dim, packed rows a workgroup (registers: Q and O are 2 * block_m * dim / tpk floats a lane), lanes
// a key (16-byte chunks: dim / 8 a multiple of tpk), keys a slot takes per step (BLOCK_N = slots * keys_per_slot),
// the most packed rows it takes (row tiles past the first read K/V again).
struct DecodeConfig {
  std::uint32_t dim, block_m, tpk, keys_per_slot, max_rows;
};
// Fewer rows first (fewer registers, more keys in flight a lane). Lanes a key: 16 where subgroups hold them (one
// 256-byte row of d128 a half-warp), then 8 for subgroups of 8 (lavapipe).
constexpr DecodeConfig kDecodeConfigs[] = {
    {64, 4, 8, 4, 4},   {64, 8, 8, 2, kMaxDecodeRows},                                  // Q+O 64 / 128 floats
    {128, 4, 16, 4, 4}, {128, 8, 16, 2, kMaxDecodeRows},                                // Q+O 64 / 128
    {256, 4, 16, 2, 8},                                                                 // Q+O 128
    {128, 4, 8, 2, 4},  {128, 8, 8, 2, kMaxDecodeRows}, {256, 4, 8, 2, 8},               // subgroups of 8
};

// attn_decode.comp's divisibility rules.
constexpr bool decode_config_valid(const DecodeConfig& c) {
  const std::uint32_t slots = c.tpk ? kDecodeWg / c.tpk : 0;
  return c.tpk >= 2 && (c.tpk & (c.tpk - 1)) == 0 && c.dim % (8 * c.tpk) == 0 && kDecodeWg % c.tpk == 0 &&
         c.block_m >= 1 && c.keys_per_slot >= 1 && c.max_rows >= c.block_m && slots * c.tpk == kDecodeWg;
}
static_assert(std::all_of(std::begin(kDecodeConfigs), std::end(kDecodeConfigs), decode_config_valid));

// The shared arrays: per slot a max and a sum per row, and one row's O (f32).
std::uint32_t decode_shared_bytes(const DecodeConfig& c) {
  const std::uint32_t slots = kDecodeWg / c.tpk;
  return slots * (8 * c.block_m + 4 * c.dim);
}

ShaderVariant make_decode_variant(Path path, const DecodeConfig& c) {
  ShaderVariant v;
  v.path = path;
  v.kernel = "vk_decode";
  v.spirv = "attn_decode_pk";
  v.wg_size = kDecodeWg;
  v.block_m = c.block_m;
  v.block_n = kDecodeWg / c.tpk * c.keys_per_slot;
  v.head_dims = {c.dim};
  v.dtypes = {DType::F16, DType::BF16};
  v.shared_bytes = decode_shared_bytes(c);
  v.needs_subgroup_shuffle = true;
  v.min_subgroup_size = c.tpk;  // a key's lanes share one subgroup
  v.needs_coopmat = path == Path::VulkanCoopmat;
  v.needs_coopmat2 = path == Path::VulkanCoopmat2;
  v.align_elems = 8;  // 16-byte loads of K and V
  v.split_kv = true;
  v.packs_gqa = true;
  v.rows_outer = true;  // causal: the row tiles with the most keys first, across KV heads
  v.serving_layouts = true;
  v.variants = true;
  v.extra_spec = {{kSpecDecodeTpk, c.tpk}};
  const std::uint64_t max_rows = c.max_rows, block_m = c.block_m;
  v.call_check = [max_rows, block_m](const Caps&, const detail::AttnArgs& a) -> std::string {
    const std::uint64_t group = static_cast<std::uint64_t>(a.heads_q / std::max<std::int64_t>(1, a.heads_kv));
    const std::uint64_t rows = group * static_cast<std::uint64_t>(a.seqlen_q), tiles = (rows + block_m - 1) / block_m;
    if (rows > max_rows)
      return "group x seqlen_q = " + std::to_string(rows) + " > " + std::to_string(max_rows) + " (decode shader)";
    // Each row tile reads the KV head's keys: more tiles than query heads would read more than the per-head shaders.
    if (tiles > 1 && tiles > group)
      return std::to_string(tiles) + " row tiles of " + std::to_string(block_m) + " for group " +
             std::to_string(group) + " (decode shader)";
    return "";
  };
  return v;
}

}  // namespace

std::vector<ShaderVariant> decode_variants(Path path) {
  std::vector<ShaderVariant> out;
  for (const DecodeConfig& c : kDecodeConfigs) out.push_back(make_decode_variant(path, c));
  return out;
}

}  // namespace flashtile::vk
