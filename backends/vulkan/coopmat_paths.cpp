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
//
// Tuning without rebuilding (benchmarks): FLASHTILE_VKCM_TILE="nsg,block_n,q_in_regs[,prefetch]" replaces the KHR
// tile list, FLASHTILE_VKCM2_TILE="block_m,block_n,wg_size" the coopmat2 f16 tile, for every head dim where they are
// valid; FLASHTILE_VKCM_REGSM=N sets the KHR shader's id 28 without the probe's gating; FLASHTILE_VKCM2_CLAMP=0 makes
// coopmat2's full K/V tiles load unclamped (slow on the H200's driver: see below); FLASHTILE_VKCM2_STAGE=1 sends f16
// through coopmat2's shared staging buffers like bf16 (H200: 40-80 TFLOP/s, below the tensor loads);
// FLASHTILE_VKCM2_OPT="opt[,opt...]" picks coopmat2's shader options (cm2_opt below).
#include "kernels.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace flashtile::vk {

namespace {

bool env_is(const char* name, char v) {
  const char* e = std::getenv(name);
  return e && e[0] == v && e[1] == 0;
}
// FLASHTILE_VKCM2_STAGE=1: f16 K/V/Q through shared staging buffers (the bf16 scheme) instead of tensor loads.
bool cm2_stage_f16() { return env_is("FLASHTILE_VKCM2_STAGE", '1'); }

constexpr std::uint32_t kCompF16 = 0, kCompF32 = 1;  // VkComponentTypeKHR
constexpr std::uint32_t kScopeSubgroup = 3;           // VkScopeKHR

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

struct KhrTile {
  std::uint32_t nsg, block_n, q_regs, prefetch;
  bool rsm_only = false;  // only with the register softmax (the score tile would not fit)
};

// Mirrors the shared declarations of attn_coopmat.comp (rsm: the register softmax, id 28 = 1 or 2).
std::uint32_t khr_shared_bytes(std::uint32_t d, const Family& f, const KhrTile& t, bool rsm = false) {
  const std::uint32_t bm = t.nsg * f.m, bn = t.block_n;
  return 2 * bn * (d + 8)                            // K/V tile (f16)
         + (t.q_regs ? 8 : 2 * bm * (d + 8))         // Q (f16) when not in registers
         + (rsm ? 16 : 4 * bm * (bn + 8))            // S (f32; also the rescale broadcast tiles and O staging)
         + 2 * bm * (bn + 8);                        // P (f16)
}

// The shader's structural requirements (see attn_coopmat.comp).
bool khr_tile_valid(std::uint32_t d, const Family& f, const KhrTile& t) {
  const std::uint32_t bn = t.block_n;
  const std::uint32_t segs = f.sg >= f.m ? f.sg / f.m : 1;
  if (f.sg < f.m && f.m % f.sg != 0) return false;
  if (bn % f.n || bn % f.k || d % bn || d % f.n || d % f.k) return false;
  if (bn % segs || (bn / segs) % 8) return false;  // softmax lanes take whole 8-column groups
  if (t.q_regs && bn % f.m) return false;          // Q staged through the K/V buffer in BLOCK_N-row chunks
  return t.nsg >= 1;
}

// The KHR shader's register softmax (id 28): the softmax on the score accumulators in registers, for the one shape
// family whose accumulator layout the shader knows (NVIDIA's 16x16x16 at subgroup 32), where the device probe found
// that layout (Caps::khr_acc_layout), at head dims to 128. H200, session 10 call 3 (bench/results/
// 2026-11-30_h200_vk_khr_register_softmax), f16, against the shared-memory softmax in the same call: d 64 +15/+16/+15% at 1k/4k/16k
// non-causal, +11/+12/+11% causal; d 128 +7/+7/+8%, causal +2/+4/+2%; d 256 -1..-9% (255 registers either way), so
// not there. FLASHTILE_VKCM_REGSM=N sets id 28 to N on every variant of the family instead (0 off; 1, 2 a layout
// assumed; 15 the probe), without the probe's gating: for experiments.
bool khr_regsm_family(const Family& f) { return f.m == 16 && f.n == 16 && f.k == 16 && f.sg == 32; }
bool khr_regsm_layout(std::uint32_t rsm) { return rsm == 1 || rsm == 2; }  // id 28 values that run the softmax
const char* khr_regsm_env() { return std::getenv("FLASHTILE_VKCM_REGSM"); }

// The KHR shader's id 29 (bits: 1 Q straight from global memory, 2 the first K tile's loads before Q's, 4 causal
// tiles past a subgroup's rows skipped). H200, session 10 call 7 (bench/results/2026-11-30_h200_vk_khr_register_softmax), 7
// against 0 on the register-softmax entries, twice interleaved: non-causal d128 +4.2/+1.3/+1.2% at 1k/4k/16k, d64
// +1.1/+0.1/+0.2%; causal d128 +5.2/-1.3/-3.4%, d64 +3.7/+0.6/-1.0%. So 7 for non-causal calls only (an entry that
// refuses causal ones, ahead of the entry without it). Session 11 call 1 (bench/results/2026-11-30_h200_vk_causal_launch_order) split
// the bits on causal calls, each against 0 in the same call: bit 4 (the subgroup skip) cost the long runs (d128 16k
// -3.1%, d64 16k -2.0%), while 1 and 2 together (3) ran d128 +5.4/+1.6/+0.2% at 1k/4k/16k and d64 +0.5/+0.2/+0.1%.
// So causal calls take 3 (the register-softmax entries' second form). FLASHTILE_VKCM_OPT=N sets N on every entry
// instead.
const char* khr_opt_env() { return std::getenv("FLASHTILE_VKCM_OPT"); }

std::vector<KhrTile> khr_tiles(std::uint32_t d) {
  if (const char* env = std::getenv("FLASHTILE_VKCM_TILE")) {
    unsigned nsg = 0, bn = 0, qr = 0, pf = 0;
    if (std::sscanf(env, "%u,%u,%u,%u", &nsg, &bn, &qr, &pf) >= 3) return {{nsg, bn, qr ? 1u : 0u, pf ? 1u : 0u}};
  }
  // 4 subgroups share each K/V tile where it fits; d = 256 keeps Q in registers like FlashAttention-2 (64 + 128
  // accumulator registers), then falls back to Q in shared memory. K/V prefetch costs registers: not at d = 256.
  // H200, 2026-11-29, d 256, S 16384, f16 (host clock): 4,16,1,0 110/121 TFLOP/s (full/causal), 4,32,1,0 94/137
  // (min; medians 77/43 under interference), 4,32,1,1 82/91, 2,32,0,0 59/59.
  // GPU timestamps, 2026-11-29 third session (bench/results/2026-11-29_h200_vk_khr_portable_tiles), S 4096, f16 (non-causal /
  // causal): d 64 4,32,1,1 148.0/137.9, 8,32,1,1 146.8/135.0, 4,64,1,1 115.4/113.7; d 128 (second session, call 1)
  // 4,64,1,1 149.2/143.2, 8,32,1,1 149.6/135.1, 4,32,1,1 136.6/128.3.
  if (d <= 64) return {{4, 32, 1, 1}, {4, 64, 1, 1}, {2, 32, 1, 0}, {2, 16, 1, 0}};
  // d 128 with the register softmax: 8 subgroups on 64-key tiles (36 KB without the score tile), session 10 call 5
  // (bench/results/2026-11-30_h200_vk_khr_register_softmax), against 4,64 in the same call: 153.7/177.8/187.1 TFLOP/s at 1k/4k/16k
  // against 139.4/160.4/168.4 non-causal, causal 116.6/158.6/181.9 against 113.5/146.5/161.4. At d 64 8,64 lost
  // (121.3 against 148.7 at 1k), and 8,32 was mixed (call 4: +4..6% non-causal, causal -2..+3%).
  if (d <= 128) return {{8, 64, 1, 1, true}, {4, 64, 1, 1}, {4, 32, 1, 1}, {2, 32, 1, 0}, {2, 16, 1, 0}};
  // GPU timestamps, 2026-11-29 second session (bench/results/2026-11-29_h200_sm90_short_vk_timing), d 256, S 4096, f16:
  // 4,32,1,0 135.7/130.3 (non-causal/causal), 4,16,1,0 116.9/106.4, 8,16,1,0 112.7/99.9, 2,16,0,0 75.6/68.7.
  return {{4, 32, 1, 0}, {4, 16, 1, 0}, {2, 32, 0, 0}, {2, 16, 0, 0}, {1, 16, 0, 0}};
}

struct Cm2Tile {
  std::uint32_t block_m, block_n, wg;
};

// attn_coopmat2.comp's optional schemes (spec ids 23..27; see the shader).
struct Cm2Opt {
  std::uint32_t aligned = 0, narrow = 0, fold = 0, lazy = 0, qreload = 0;
};

// Narrow row-value matrices: NVIDIA's workgroup-scope granularity is 16 at 128 invocations and 32 at 256 (llama.cpp
// avoids 256 invocations for head dims not a multiple of 32 for this reason).
std::uint32_t cm2_narrow_auto(const Cm2Tile& t) { return std::min(t.wg <= 128 ? 16u : 32u, t.block_n); }

// Defaults, f16, from the H200 (1 s warm-up, GPU timestamps), TFLOP/s at 4k, 4k causal, 16k, 16k causal:
// d 64 aligned+narrow+fold 219/195/232/216 vs 132/117/142/125 without (bench/results/2026-11-29_h200_sm90_short_vk_timing);
// session 4 (bench/results/2026-11-29_h200_sm90_tma_store_vk_clocks), each the same in two processes: d 128 with the 64,64,128 tile
// 224/203/234/219 vs narrow+fold alone 163/147/174/160 and the former 128,64,256 narrow+fold default 183/156/192/176;
// d 256 126/112/130/129 vs 109/98/111/109 (narrow+fold), 102/92/101/101 (none) and 72/67/72/71 (lazy rescaling).
// Session 2's figures against aligned at d 128/256 were taken at the GPU's idle clock (DEVELOPERS.md, "slow mode").
// d 256 reloads Q per tile through its tensor layout (id 27): with Q (64 registers a thread) and the f32 64 x 256
// O in registers its kernel spills 416 bytes; session 9 call 2 (bench/results/2026-11-30_h200_vk_portable_row_groups), one process
// each: 131.3/120.4 at 4k against 125.8/112.1, and 133.7/138.2 at 16k against 129.5/128.3 (non-causal/causal). At d
// 64/128 it lost 14-20%, as did every other d 256 tile with it (64,64 106-110; 64,16 102-116; 32,32 90-102).
// Q staged once in shared memory and loaded per tile gave wrong f16 results at every head dim (call 2; removed), as
// Q in shared memory did in session 5: the driver's shared memory seems to overlap the shader's on the tensor path.
// With O in f16 (o16) d 256 holds Q in registers: O's 64 fewer registers a thread leave room for it, and no spills
// (session 12 call 2, bench/results/2026-11-30_h200_vk_coopmat2_f16_accumulation: 204-214 TFLOP/s against 152-167 reloading Q).
Cm2Opt cm2_default_opt(const Cm2Tile& t, std::uint32_t d, bool o16) {
  Cm2Opt o;
  o.aligned = 1;
  o.narrow = cm2_narrow_auto(t), o.fold = 1;
  o.qreload = d >= 256 && !o16 ? 1 : 0;
  return o;
}

// FLASHTILE_VKCM2_OPT: comma-separated options replacing the defaults: "none", "aligned" (id 23 = 1: aligned calls
// load full K/V tiles unclamped with visibly aligned strides), "alignhint" (id 23 = 2: the same alignment shown, every
// load clamped), "narrow" (id 24 at the granularity above) or "narrowN" (N columns, a multiple of 8 up to block_n),
// "fold" (id 25), "lazy" (id 26; implies narrow and fold), "qgl" (id 27: Q reloaded per tile through its tensor
// layout). Unknown words are reported once and ignored.
Cm2Opt cm2_opt(const Cm2Tile& t, std::uint32_t d, bool o16) {
  const char* env = std::getenv("FLASHTILE_VKCM2_OPT");
  if (!env) return cm2_default_opt(t, d, o16);
  Cm2Opt o;
  std::string s(env);
  for (std::size_t pos = 0; pos <= s.size();) {
    std::size_t end = s.find(',', pos);
    if (end == std::string::npos) end = s.size();
    const std::string w = s.substr(pos, end - pos);
    pos = end + 1;
    unsigned n = 0;
    if (w.empty() || w == "none") {
    } else if (w == "aligned") {
      o.aligned = 1;
    } else if (w == "alignhint") {
      o.aligned = 2;
    } else if (w == "narrow") {
      o.narrow = cm2_narrow_auto(t);
    } else if (std::sscanf(w.c_str(), "narrow%u", &n) == 1 && n && n % 8 == 0 && n <= t.block_n) {
      o.narrow = n;
    } else if (w == "fold") {
      o.fold = 1;
    } else if (w == "lazy") {
      o.lazy = 1;
    } else if (w == "qgl") {
      o.qreload = 1;
    } else {
      static bool warned = false;
      if (!warned) std::fprintf(stderr, "flashtile: FLASHTILE_VKCM2_OPT: ignoring '%s'\n", w.c_str());
      warned = true;
    }
  }
  if (o.lazy) {
    if (!o.narrow) o.narrow = cm2_narrow_auto(t);
    o.fold = 1;
  }
  return o;
}

std::string cm2_opt_name(const Cm2Opt& o) {
  std::string n;
  if (o.aligned) n += o.aligned == 1 ? "_al" : "_ah";
  if (o.narrow) n += "_nw" + std::to_string(o.narrow);
  if (o.fold) n += "_fold";
  if (o.lazy) n += "_lazy";
  if (o.qreload) n += "_qgl";
  return n;
}

// FLASHTILE_VKCM2_TILE for head dim d, where valid: block_n divides d, or (tensor loads, `wide`) is a multiple of it.
bool cm2_env_tile(std::uint32_t d, bool wide, Cm2Tile* out) {
  const char* env = std::getenv("FLASHTILE_VKCM2_TILE");
  unsigned bm = 0, bn = 0, wg = 0;
  if (!env || std::sscanf(env, "%u,%u,%u", &bm, &bn, &wg) != 3 || !bm || !bn || !wg) return false;
  if (d % bn != 0 && !(wide && bn % d == 0)) return false;
  *out = {bm, bn, wg};
  return true;
}

Cm2Tile cm2_tile(std::uint32_t d, DType dt, bool o16) {
  Cm2Tile env;
  if (dt == DType::F16 && cm2_stage_f16()) {
    if (cm2_env_tile(d, false, &env)) return env;
    return d <= 128 ? Cm2Tile{64, 64, 128} : Cm2Tile{32, 32, 128};
  }
  if (dt == DType::F16) {
    if (cm2_env_tile(d, true, &env)) return env;
    // O in f16 (reduced precision) halves O's registers, which lets 128-row tiles run: session 12 calls 3-8
    // (bench/results/2026-11-30_h200_vk_coopmat2_f16_accumulation), one process each, TFLOP/s non-causal 1k/4k/16k, causal 1k/4k/16k:
    // d 64 128,128,128 233/285/298, 172/249/280 (calls 7-8, twice; 128,64,256 198/238/255, 150/208/233; 128,128,256
    // 163/217/237; 128,64,128 197/240/272, 147/205/234; 256,64,256 and 128,32,256 lost 8-30%); d 128 128,64,128
    // 215/266/284, 166/236/270 (128,128,128 67/161/243; 64,128,128
    // 205/245/259, 164/228/258; 128,128,256 194/246/259; 128,64,256 168/219/229); d 256 (4k/16k, Q in registers)
    // 128,64,256 239/248, 227/261 (64,64,128 233/231, 223/245; 64,32,128 206/203, 198/214; 64,128,128 timed out).
    if (o16) return d <= 64 ? Cm2Tile{128, 128, 128} : d <= 128 ? Cm2Tile{128, 64, 128} : Cm2Tile{128, 64, 256};
    // Session 4 (bench/results/2026-11-29_h200_sm90_tma_store_vk_clocks, two processes each, with aligned+narrow+fold): d 128
    // 64,64,128 beat the former 128,64,256 by 22-30%. Earlier single-process sweeps here mixed in idle-clock figures.
    // d 256: 64,32,128 spills (255 registers, 448 bytes local) and still beat every tile with less O per invocation
    // (session 5, call 1, two processes, TFLOP/s at 4k, 4k causal, 16k, 16k causal: 126/113/129/128; 32,32,128,
    // which does not spill, 118/112/107/118; 64,16,128 122/111/119/124; 32,64,128 109/102/111/111; 64,32,256
    // 79/74/70/79; bench/results/2026-11-30_h200_sm90_recheck_experiments).
    // d 128 with 128-key tiles (session 9 call 4, bench/results/2026-11-30_h200_vk_portable_row_groups, one process each, the default
    // timed first and last within 0.3%): non-causal 194.6/231.4/243.2 at 1k/4k/16k against 187.5/221.6/234.2, causal
    // 149.2/205.6/227.4 against 152.9/202.2/219.3, although it spills 320 bytes. d 128: 128,64,256 -13..6%, 64,32,128
    // -24..16%; 128,64,128 -4..12% (session 12 call 5).
    // d 64 128,128,128 (session 12 call 8): 203/240/255, 150/216/245 against 128,64,128's 191/231/256, 148/207/234
    // (call 7, twice) and the former 64,64,128's 182/215/228, 149/196/214 (call 3); 128,128,256 and 64,128,128 lost
    // 9-21% (call 7); earlier, 128,64,256 -35..21%, 64,32,128 -16%, 128,32,256 -13..24% (session 4).
    return d <= 64 ? Cm2Tile{128, 128, 128} : d <= 128 ? Cm2Tile{64, 128, 128} : Cm2Tile{64, 32, 128};
  }
  // bf16 stages K/V (one buffer) and Q in shared memory: keep within 48 KB.
  return d <= 128 ? Cm2Tile{64, 64, 128} : Cm2Tile{32, 32, 128};
}

// A tile for non-causal calls alone, ahead of cm2_tile's, where one beat it there and lost causal: d 128 f16 with f32
// O on tensor loads, 128,128,256 (no spills, where 64,128,128 spills 288 bytes; session 13 call 1,
// bench/results/2026-11-30_h200_head_group_launch_order, one process each, TFLOP/s 1k/4k/16k: non-causal 190.9/241.4/252.7 against
// 186.4/227.4/238.6, causal 143.8/208.0/236.7 against 153.7/209.0/233.9). None while FLASHTILE_VKCM2_TILE sets the
// tile.
bool cm2_noncausal_tile(std::uint32_t d, DType dt, bool o16, Cm2Tile* out) {
  Cm2Tile env;
  if (d != 128 || dt != DType::F16 || o16 || cm2_stage_f16() || cm2_env_tile(d, true, &env)) return false;
  *out = {128, 128, 256};
  return true;
}

std::uint32_t cm2_shared_bytes(std::uint32_t d, DType dt, const Cm2Tile& t) {
  if (dt == DType::F16 && !cm2_stage_f16()) return 16;
  return 2 * t.block_n * (d + 8) + 2 * t.block_m * (d + 8);
}

// One KHR table entry: shape family f, head dim d, tile t, register softmax id 28 = rsm (gated on the probed layout
// unless FLASHTILE_VKCM_REGSM chose it).
ShaderVariant khr_variant(const Family& f, std::uint32_t d, const KhrTile& t, std::uint32_t rsm, std::uint32_t opt = 0,
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
  v.head_dims = {d};
  v.dtypes = {DType::F16, DType::BF16};
  v.shared_bytes = khr_shared_bytes(d, f, t, khr_regsm_layout(rsm));
  v.needs_16bit_storage = true;
  v.needs_float16 = true;
  v.needs_subgroup_shuffle = true;
  v.needs_coopmat = true;
  v.split_kv = true;
  v.rows_outer = true;
  // Groups of 16 pairs: session 13 call 2 (bench/results/2026-11-30_h200_head_group_launch_order), d128 causal, twice each against
  // one group of all heads: +2.6/+2.3% at 1k, +0.9/+1.1% at 4k (64 pairs: +2.4/0%).
  v.head_group = 16;
  v.extra_spec = {{kSpecCmM, f.m},           {kSpecCmN, f.n},           {kSpecCmK, f.k},
                 {kSpecCmQInRegs, t.q_regs}, {kSpecCmPrefetch, t.prefetch}, {kSpecCmRegSoftmax, rsm},
                 {kSpecCmOpt, opt}};
  const std::uint32_t m = f.m, n = f.n, k = f.k;
  const bool gated = khr_regsm_layout(rsm) && !khr_regsm_env();
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

std::vector<ShaderVariant> coopmat_variants() {
  std::vector<ShaderVariant> out;
  for (const Family& f : kFamilies) {
    for (std::uint32_t d : {64u, 128u, 256u}) {
      for (const KhrTile& t : khr_tiles(d)) {
        if (!khr_tile_valid(d, f, t)) continue;
        // Register-softmax entries first (the first usable entry runs), each gated on the probed layout; then the
        // plain one. With FLASHTILE_VKCM_REGSM: one entry with its value.
        std::vector<std::uint32_t> regsm{0};
        if (const char* e = khr_regsm_env(); e && khr_regsm_family(f)) {
          regsm = {static_cast<std::uint32_t>(std::strtoul(e, nullptr, 10))};
        } else if (khr_regsm_family(f) && d <= 128) {
          regsm = {1, 2, 0};
        }
        for (std::uint32_t rsm : regsm) {
          if (t.rsm_only && !khr_regsm_layout(rsm)) continue;
          if (const char* e = khr_opt_env()) {
            out.push_back(khr_variant(f, d, t, rsm, static_cast<std::uint32_t>(std::strtoul(e, nullptr, 10))));
            continue;
          }
          if (khr_regsm_layout(rsm)) {
            out.push_back(khr_variant(f, d, t, rsm, 7, /*noncausal_only=*/true));
            out.push_back(khr_variant(f, d, t, rsm, 3));  // what 7 refuses: causal calls
            continue;
          }
          // d 256 (plain softmax) takes 3 too, on causal and non-causal calls: session 14 call 2
          // (bench/results/2026-11-30_h200_sm90_lazy_rescale_d256), against 0 twice interleaved, +3.6/+1.2/0.0% non-causal and
          // +3.3/+0.6/-0.4% causal at 1k/4k/16k. Other plain entries (devices without the probed layout) keep 0.
          out.push_back(khr_variant(f, d, t, rsm, d > 128 ? 3 : 0));
        }
      }
    }
  }
  return out;
}

bool khr_layout_probe_variant(const Caps& caps, ShaderVariant* out) {
  if (khr_regsm_env()) return false;  // an explicit choice: nothing to probe for
  // One subgroup of the family, d = 64, whatever the tile table holds (FLASHTILE_VKCM_TILE included).
  ShaderVariant v = khr_variant(Family{16, 16, 16, 32}, 64, KhrTile{1, 32, 1, 0}, kCmRegSoftmaxProbe);
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

// One coopmat2 table entry for head dim d and dtype dt on tile t, O in f16 when o16 (reduced precision), and before
// it the entry with one loop body (id 30) where that won; for non-causal calls alone when noncausal_only.
void add_coopmat2(std::vector<ShaderVariant>& out, std::uint32_t d, DType dt, bool o16, const Cm2Tile& t,
                  bool noncausal_only = false) {
  ShaderVariant v;
  v.path = Path::VulkanCoopmat2;
  const bool staged = dt != DType::F16 || cm2_stage_f16();
  Cm2Opt opt = cm2_opt(t, d, o16);
  if (staged) opt.qreload = 0;  // staged Q comes from shared memory
  v.kernel = std::string("vk_coopmat2_") + (staged ? "staged" : "tensor") + "_wg" + std::to_string(t.wg) +
             cm2_opt_name(opt) + (o16 ? "_o16" : "");
  // O accumulated in f16 (attn_coopmat2.comp's FT_O_F16): for calls that allow reduced precision only.
  v.spirv = o16 ? "attn_coopmat2_o16" : "attn_coopmat2";
  v.reduced_precision = o16;
  v.wg_size = t.wg;
  v.block_m = t.block_m;
  v.block_n = t.block_n;
  v.head_dims = {d};
  v.dtypes = {dt};
  v.shared_bytes = cm2_shared_bytes(d, dt, t);
  v.needs_16bit_storage = true;
  v.needs_float16 = true;
  v.needs_coopmat = true;
  v.needs_coopmat2 = true;
  v.split_kv = true;
  v.rows_outer = d == 256;
  // K/V tensor loads are clamped on every tile by default; FLASHTILE_VKCM2_CLAMP=0 loads full tiles through
  // unclamped layouts instead. H200, 2026-11-29, GPU timestamps (bench/results/2026-11-29_h200_vulkan): the
  // unclamped loads ran at 5-39 TFLOP/s on every d and length; the clamped ones were faster on 17 of 18 cells,
  // median 3.1x (d128 4k non-causal 162 vs 23).
  v.extra_spec = {{kSpecCm2Unclamped, env_is("FLASHTILE_VKCM2_CLAMP", '0') ? 1u : 0u},
                  {kSpecCm2StageF16, staged ? 1u : 0u},
                  {kSpecCm2AlignedLoads, opt.aligned},
                  {kSpecCm2Narrow, opt.narrow},
                  {kSpecCm2FoldScale, opt.fold},
                  {kSpecCm2LazyRescale, opt.lazy},
                  {kSpecCm2QReload, opt.qreload}};
  // Tensor-layout loads and stores need 16-byte aligned element offsets (GLSL_NV_cooperative_matrix2); other calls
  // go to the next path with the reason.
  if (!staged) v.align_elems = 8;
  if (noncausal_only)
    v.call_check = [](const Caps&, const detail::AttnArgs& a) -> std::string {
      return a.causal ? "this tile lost to the next entry's on causal calls" : "";
    };
  const std::uint32_t bm = t.block_m, bn = t.block_n, wg = t.wg, sh = v.shared_bytes;
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
  // Id 25 takes the row max of unscaled scores and masks them to -inf before the scale: exact for scale > 0 only.
  // The same tile unfolded follows the folded entries for the other scales.
  const auto base_check = v.call_check;
  auto folded_check = [](const std::function<std::string(const Caps&, const detail::AttnArgs&)>& inner) {
    return [inner](const Caps& c, const detail::AttnArgs& a) -> std::string {
      if (!(a.scale > 0.0f)) return "scale <= 0: id 25 folds the scale in after the row max (exact for scale > 0)";
      return inner ? inner(c, a) : "";
    };
  };
  if (opt.fold) v.call_check = folded_check(base_check);
  // Calls whose K/V tiles are all full (Sk a multiple of BLOCK_N) take an entry with one loop body (id 30)
  // first, on aligned f16 tensor loads, where that won: session 11 call 1 (bench/results/
  // 2026-11-30_h200_vk_causal_launch_order), twice interleaved against the peeled form: d128 causal +4.2/+2.2/+2.8% at
  // 1k/4k/16k, d64 +1.2/+1.3/-0.2% non-causal and +0.6/+0.2/-0.1% causal; but d128 non-causal -0.6/-2.5/-2.5% and
  // d256 causal -1.7/-2.2% at 4k/16k. FLASHTILE_VKCM2_FULL=0 leaves it out (A/B). Session 12 timed the f16-O tiles
  // with this same rule.
  if (!staged && opt.aligned == 1 && d <= 128 && !noncausal_only && !env_is("FLASHTILE_VKCM2_FULL", '0')) {
    ShaderVariant full = v;
    full.kernel += "_full";
    full.extra_spec.push_back({kSpecCm2AllFull, 1u});
    full.call_check = [bn, d](const Caps&, const detail::AttnArgs& a) -> std::string {
      if (!a.causal && d != 64) return "id 30 lost to the peeled form on non-causal d128 calls";
      return a.seqlen_k % bn == 0 ? "" : "seqlen_k is not a multiple of " + std::to_string(bn) + " (id 30)";
    };
    if (opt.fold) full.call_check = folded_check(full.call_check);
    out.push_back(std::move(full));
  }
  if (!opt.fold) {
    out.push_back(std::move(v));
    return;
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

// Per head dim: f16 with O in f16 first (taken only by calls that allow reduced precision), then f16, then bf16.
std::vector<ShaderVariant> coopmat2_variants() {
  std::vector<ShaderVariant> out;
  for (std::uint32_t d : {64u, 128u, 256u}) {
    if (!cm2_stage_f16()) add_coopmat2(out, d, DType::F16, true, cm2_tile(d, DType::F16, true));
    Cm2Tile nc;
    if (cm2_noncausal_tile(d, DType::F16, false, &nc))
      add_coopmat2(out, d, DType::F16, false, nc, /*noncausal_only=*/true);
    add_coopmat2(out, d, DType::F16, false, cm2_tile(d, DType::F16, false));
    add_coopmat2(out, d, DType::BF16, false, cm2_tile(d, DType::BF16, false));
  }
  return out;
}

}  // namespace flashtile::vk
