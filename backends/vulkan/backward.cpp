// The Vulkan portable backward's choices: tiles, storage mode, reasons for refusing a call; and what every path's
// backward shares: the calls' checks, push constants and grids (backward.hpp). VulkanDevice (vk_device.cpp) records
// the passes.
#include "backward.hpp"

#include "checked.hpp"
#include "constants.hpp"

#include <algorithm>
#include <bit>

namespace flashtile::vk {

namespace {

// Fastest first, by shared memory: 48 KB (GPUs) with 16-bit tensors, then 32 KB (the portable path's floor, lavapipe)
// with 16-bit tensors, then the f32 tiles (their shared tiles take twice the bytes) for 48 and 32 KB. Every entry
// keeps attn_bwd_portable.comp's per-thread counts within its MAX_OWN and its micro-tiles whole (checked below, for
// every head dim of its range), and BLOCK_M, BLOCK_N even (its loops take two rows or keys an iteration).
constexpr BwdTile kBwdTiles[] = {{8, 64, 32, 32, 128},   {72, 128, 32, 32, 128}, {136, 256, 16, 16, 128},
                                 {72, 128, 32, 16, 128}, {136, 256, 16, 8, 128}, {72, 128, 16, 16, 128},
                                 {136, 256, 8, 8, 64},   {8, 64, 16, 16, 128},   {72, 128, 8, 16, 128},
                                 {136, 256, 8, 4, 64}};
constexpr std::uint32_t kShaderMaxOwn = 8;     // attn_bwd_portable.comp's MAX_OWN
constexpr std::uint32_t kPreprocessWg = 64;    // rows per preprocess workgroup, one an invocation
constexpr std::uint32_t kDsinksWg = 256;       // invocations of a dsinks workgroup (a head): a power of two
static_assert((kDsinksWg & (kDsinksWg - 1)) == 0, "attn_bwd_portable.comp's dsinks tree halves WG_SIZE");

constexpr std::uint32_t ceil_div(std::uint32_t a, std::uint32_t b) { return (a + b - 1) / b; }

// attn_bwd_portable.comp's register blocking for head dim d (its TN .. GT): S and dP as tm rows x tn keys a thread in
// s_kg key groups, the gradients (own rows: keys for dK/dV, query rows for dQ) as gt rows x ct vec4 columns in cg
// column groups.
struct BwdMicro {
  std::uint32_t tn, s_kg, tm, cg, ct, gt;
};
constexpr BwdMicro bwd_micro(const BwdTile& t, std::uint32_t d, std::uint32_t own) {
  const std::uint32_t d4 = d / 4;
  BwdMicro m{};
  m.tn = std::min({4u, t.block_n, std::max(1u, t.block_m * t.block_n / t.wg)});
  m.s_kg = t.block_n / m.tn;
  m.tm = ceil_div(t.block_m, t.wg / m.s_kg);
  m.cg = std::max(d4 % 16 == 0 ? 16u : d4 >= 8 ? 8u : d4 >= 4 ? 4u : 2u, t.wg / own);
  m.ct = ceil_div(d4, m.cg);
  m.gt = ceil_div(own, t.wg / m.cg);
  return m;
}
constexpr bool fits_shader(const BwdTile& t) {
  if (t.block_m % 2 != 0 || t.block_n % 2 != 0) return false;
  for (std::uint32_t d = t.min_dim; d <= t.max_dim; d += 8) {
    const std::uint32_t d4 = d / 4;
    if (ceil_div(t.block_m * d4, t.wg) > kShaderMaxOwn || ceil_div(t.block_n * d4, t.wg) > kShaderMaxOwn) return false;
    for (std::uint32_t own : {t.block_n, t.block_m}) {
      const BwdMicro m = bwd_micro(t, d, own);
      if (t.block_n % m.tn != 0 || t.wg % m.s_kg != 0 || t.wg % m.cg != 0) return false;
      if (m.tm * m.tn > kShaderMaxOwn || m.gt * m.ct > kShaderMaxOwn) return false;
    }
  }
  return true;
}
constexpr bool all_fit() {
  for (const BwdTile& t : kBwdTiles)
    if (!fits_shader(t)) return false;
  return true;
}
static_assert(all_fit(), "a backward tile exceeds attn_bwd_portable.comp's register arrays or micro-tiles");

// The shader's shared arrays: Q, dO, K, V tiles (raw 4-element groups: 8 bytes for 16-bit tensors, 16 for f32; rows
// padded by one), P and dS (f32, rows padded), lse2 and Delta.
std::uint32_t bwd_shared_bytes(const BwdTile& t, std::uint32_t d, bool f32) {
  const std::uint32_t ts = d / 4 + 1;
  return (f32 ? 16 : 8) * ts * (2 * t.block_m + 2 * t.block_n) + 8 * t.block_m * (t.block_n + 1) + 8 * t.block_m;
}

// llvmpipe ends a shader's loops after Mesa's LP_MAX_TGSI_LOOP_ITERATIONS (65535) iterations, counted over the whole
// invocation (vk_instance.cpp): a pass would silently skip rows or keys. Calls whose loop count could pass a quarter
// of it, the forward's margin (kLlvmpipeLoopKeys), are refused there.
constexpr std::uint64_t kLlvmpipeLoopLimit = 65535;
constexpr std::uint64_t kLlvmpipeLoopBudget = kLlvmpipeLoopLimit / 4;

// Upper bounds of one invocation's loop iterations in the dK/dV and dQ passes: per block, the score loop (two vec4
// columns an iteration), the accumulation (two rows or keys an iteration) and the block loop and row loads; and in
// the dsinks pass (its rows, then the tree), when the call has it.
std::uint64_t loop_iterations(const BwdTile& t, const detail::BwdArgs& a) {
  const detail::AttnArgs& f = a.fwd;
  const std::uint64_t d4 = static_cast<std::uint64_t>(f.head_dim) / 4, group = f.heads_q / f.heads_kv;
  const std::uint64_t row_blocks = (static_cast<std::uint64_t>(f.seqlen_q) + t.block_m - 1) / t.block_m;
  const std::uint64_t key_blocks = (static_cast<std::uint64_t>(f.seqlen_k) + t.block_n - 1) / t.block_n;
  const std::uint64_t dsinks =
      a.has_dsinks ? (static_cast<std::uint64_t>(f.batch) * f.seqlen_q + kDsinksWg - 1) / kDsinksWg +
                         static_cast<std::uint64_t>(std::countr_zero(kDsinksWg))
                   : 0;
  return std::max({group * row_blocks * (d4 / 2 + t.block_m / 2 + 2), key_blocks * (d4 / 2 + t.block_n / 2 + 2),
                   dsinks});
}

// One past the last element a tensor addresses, from element 0 of its buffer.
std::uint64_t element_end(const detail::TensorArg& t) {
  std::uint64_t end = t.buf.offset / dtype_size(t.dtype) + 1;
  for (int i = 0; i < t.shape.rank; ++i)
    end += static_cast<std::uint64_t>(t.shape[i] - 1) * static_cast<std::uint64_t>(t.strides[i]);
  return end;
}

struct Named {
  const char* name;
  const detail::TensorArg* t;
};
std::array<Named, 8> tensors_of(const detail::BwdArgs& a) {
  return {{{"q", &a.fwd.q}, {"k", &a.fwd.k}, {"v", &a.fwd.v}, {"out", &a.fwd.o}, {"dout", &a.dout}, {"dq", &a.dq},
           {"dk", &a.dk}, {"dv", &a.dv}}};
}

std::uint64_t workspace_floats(const detail::BwdArgs& a) {
  const auto what = "backward workspace: 2 * batch * heads_q * seqlen_q floats";
  const std::uint64_t rows = detail::checked_mul(
      detail::checked_mul(static_cast<std::uint64_t>(a.fwd.batch), static_cast<std::uint64_t>(a.fwd.heads_q), what),
      static_cast<std::uint64_t>(a.fwd.seqlen_q), what);
  return detail::checked_mul(rows, std::uint64_t{2}, what);
}

const char* pass_name(BwdPass p) {
  switch (p) {
    case BwdPass::Preprocess: return "pre";
    case BwdPass::DkDv: return "dkdv";
    case BwdPass::Dsinks: return "dsinks";
    default: return "dq";
  }
}

}  // namespace

std::string bwd_choose(const Caps& caps, const detail::BwdArgs& a, BwdChoice* out) {
  const detail::AttnArgs& f = a.fwd;
  const auto d = static_cast<std::uint32_t>(f.head_dim);
  std::uint32_t max_dim = 0;
  for (const BwdTile& t : kBwdTiles) max_dim = std::max(max_dim, t.max_dim);
  if (d % 8 != 0 || d > max_dim)
    return "head_dim " + std::to_string(d) + " not supported (multiples of 8 up to " + std::to_string(max_dim) + ")";
  BwdChoice c;
  // 16-bit tensors as packed uint pairs where every element offset and stride is even (half the load instructions
  // of 16-bit ones, as the forward's register-blocked shaders), else through 16-bit storage where the device has it.
  const char* odd = nullptr;  // the first tensor with an odd element offset or stride
  for (const Named& n : tensors_of(a)) {
    bool even = (n.t->buf.offset / dtype_size(n.t->dtype)) % 2 == 0;
    for (int i = 0; i < 3; ++i) even = even && n.t->strides[i] % 2 == 0;
    if (!even && !odd) odd = n.name;
  }
  c.storage = f.dtype == DType::F32 ? "f32" : !odd ? "pk" : caps.storage_buffer_16bit ? "s16" : "";
  if (c.storage.empty())
    return std::string(odd) + ": element offset and strides must be even (no 16-bit storage: packed pairs)";
  const BwdTile* tile = nullptr;
  for (const BwdTile& t : kBwdTiles)
    if (d >= t.min_dim && d <= t.max_dim && bwd_shared_bytes(t, d, c.storage == "f32") <= caps.max_shared_memory) {
      tile = &t;
      break;
    }
  if (!tile) return "no backward tile for head_dim " + std::to_string(d) + " fits the device's shared memory";
  c.tile = *tile;
  for (std::size_t i = 0; i < std::size(kBwdPasses); ++i) {
    const BwdPass p = kBwdPasses[i];
    if (p == BwdPass::Preprocess) {
      c.passes[i] = bwd_preprocess_kernel(c.storage);
    } else if (p == BwdPass::Dsinks) {
      c.passes[i] = bwd_dsinks_kernel();
    } else {
      c.passes[i].spirv = std::string("attn_bwd_") + pass_name(p) + "_" + c.storage;
      c.passes[i].block_m = c.tile.block_m, c.passes[i].block_n = c.tile.block_n, c.passes[i].wg = c.tile.wg;
    }
  }
  if (std::string why = bwd_call_reason(caps, a, c); !why.empty()) return why;
  if (caps.max_loop_keys != 0 && loop_iterations(c.tile, a) > kLlvmpipeLoopBudget)
    return "seqlen_q * heads_q / heads_kv, seqlen_k or (with dsinks) batch * seqlen_q too long for this driver's "
           "loop limit (it ends a shader's loops after " + std::to_string(kLlvmpipeLoopLimit) + " iterations)";
  c.kernel = "vk_portable_bwd_" + c.storage + "<d" + std::to_string(d) + "," + std::string(to_string(f.dtype)) +
             (f.causal ? ",causal" : "") + ",bm" + std::to_string(c.tile.block_m) + ",bn" +
             std::to_string(c.tile.block_n) + ">";
  *out = std::move(c);
  return "";
}

std::string bwd_call_reason(const Caps& caps, const detail::BwdArgs& a, BwdChoice& c) {
  const detail::AttnArgs& f = a.fwd;
  for (std::size_t i = 0; i < std::size(kBwdPasses); ++i) {
    std::string why;
    if (!find_spirv(c.passes[i].spirv, &why)) return why;
    const auto g = bwd_grid(kBwdPasses[i], c.passes[i], a);
    for (int j = 0; j < 3; ++j)
      if (g[j] > caps.max_workgroup_count[j])
        return std::string("backward grid (") + pass_name(kBwdPasses[i]) + ") exceeds maxComputeWorkGroupCount";
  }
  for (const Named& n : tensors_of(a))
    if (element_end(*n.t) > kMaxIndex)
      return std::string(n.name) + " addresses elements beyond 2^32 of its buffer (uint indices)";
  if (f.lse.buf.offset / 4 + static_cast<std::uint64_t>(f.lse.shape.numel()) > kMaxIndex)
    return "lse addresses elements beyond 2^32 of its buffer (uint indices)";
  const std::uint64_t ws_floats = workspace_floats(a);
  if (a.has_workspace && a.workspace.buf.offset % 4 != 0)
    return "options.workspace: its byte offset must be a multiple of 4 (f32 scratch)";
  const std::uint64_t ws_first = a.has_workspace ? a.workspace.buf.offset / 4 : 0;
  if (ws_first + ws_floats > kMaxIndex || ws_floats * 4 > caps.max_storage_buffer_range)
    return "the backward workspace (" + std::to_string(ws_floats * 4) + " bytes) is beyond the shader's indices";
  c.workspace_bytes = ws_floats * 4;
  return "";
}

BwdPassKernel bwd_preprocess_kernel(const std::string& storage) {
  BwdPassKernel k;
  k.spirv = std::string("attn_bwd_") + pass_name(BwdPass::Preprocess) + "_" + storage;
  k.wg = kPreprocessWg;
  return k;
}

BwdPassKernel bwd_dsinks_kernel() {
  BwdPassKernel k;
  k.spirv = std::string("attn_bwd_") + pass_name(BwdPass::Dsinks);
  k.wg = kDsinksWg;
  return k;
}

std::array<std::uint32_t, 3> bwd_grid(BwdPass pass, const BwdPassKernel& k, const detail::BwdArgs& a) {
  const detail::AttnArgs& f = a.fwd;
  auto blocks = [](std::int64_t n, std::uint32_t per) {
    return static_cast<std::uint32_t>((static_cast<std::uint64_t>(n) + per - 1) / per);
  };
  const auto B = static_cast<std::uint32_t>(f.batch);
  switch (pass) {
    case BwdPass::Preprocess: return {blocks(f.seqlen_q, k.wg), static_cast<std::uint32_t>(f.heads_q), B};
    case BwdPass::DkDv: return {blocks(f.seqlen_k, k.block_n), static_cast<std::uint32_t>(f.heads_kv), B};
    case BwdPass::Dsinks: return {static_cast<std::uint32_t>(f.heads_q), 1, 1};
    default: return {blocks(f.seqlen_q, k.block_m), static_cast<std::uint32_t>(f.heads_q), B};
  }
}

BwdPushConstants bwd_push_constants(BwdPass pass, const detail::BwdArgs& a, std::uint32_t ws_off) {
  const detail::AttnArgs& f = a.fwd;
  BwdPushConstants pc{};
  auto u = [](std::int64_t x) { return static_cast<std::uint32_t>(x); };
  auto slot = [&](const detail::TensorArg& t, std::uint32_t& off, std::uint32_t& sb, std::uint32_t& ss,
                  std::uint32_t& sh) {
    off = static_cast<std::uint32_t>(t.buf.offset / dtype_size(t.dtype));
    sb = u(t.strides[0]), ss = u(t.strides[1]), sh = u(t.strides[2]);
  };
  slot(f.q, pc.q_off, pc.q_sb, pc.q_ss, pc.q_sh);
  slot(f.k, pc.k_off, pc.k_sb, pc.k_ss, pc.k_sh);
  slot(f.v, pc.v_off, pc.v_sb, pc.v_ss, pc.v_sh);
  slot(a.dout, pc.do_off, pc.do_sb, pc.do_ss, pc.do_sh);
  switch (pass) {
    case BwdPass::Preprocess: slot(f.o, pc.x_off, pc.x_sb, pc.x_ss, pc.x_sh); break;
    case BwdPass::DkDv:
      slot(a.dk, pc.x_off, pc.x_sb, pc.x_ss, pc.x_sh);
      slot(a.dv, pc.y_off, pc.y_sb, pc.y_ss, pc.y_sh);
      break;
    case BwdPass::Dsinks:  // f32 [Hq], contiguous (validated): offsets alone
      if (a.has_dsinks) pc.x_off = u(f.sinks.buf.offset / 4), pc.y_off = u(a.dsinks.buf.offset / 4);
      break;
    default: slot(a.dq, pc.x_off, pc.x_sb, pc.x_ss, pc.x_sh); break;
  }
  pc.lse_off = static_cast<std::uint32_t>(f.lse.buf.offset / 4);
  pc.ws_off = ws_off;
  pc.B = u(f.batch), pc.Sq = u(f.seqlen_q), pc.Sk = u(f.seqlen_k), pc.Hq = u(f.heads_q), pc.Hkv = u(f.heads_kv);
  pc.scale_log2 = f.scale * detail::kLog2e;
  return pc;
}

}  // namespace flashtile::vk
