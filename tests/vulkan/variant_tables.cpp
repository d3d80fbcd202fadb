// Host-side tests of the Vulkan variant tables (backends/vulkan/coopmat_paths.cpp, portable_paths.cpp): which KHR
// cooperative-matrix entry a device picks from its Caps and the call (forward and backward), and the accumulator-layout
// probe's decoder; and the specialization-constant ids of shader_abi.hpp against the shaders' constant_id declarations.
// The tables are plain data, so no Vulkan device is needed: CI checks here the selection that only GPUs exercise.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "backward.hpp"
#include "kernels.hpp"

#include <cstdint>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace flashtile::vk {
// The tables ask whether a shader module was built; here every module counts as built.
const SpirvModule* find_spirv(std::string_view, std::string*) {
  static const std::uint32_t word = 0;
  static const SpirvModule module{"stub", &word, 1};
  return &module;
}
}  // namespace flashtile::vk

using namespace flashtile;
using namespace flashtile::vk;

namespace {

// An H200-like device for the KHR path: the 16x16x16 f16 -> f32 subgroup shape, subgroups of 32, 48 KB of shared
// memory; `layout` is what the device probe found.
Caps nvidia_caps(std::uint32_t layout) {
  Caps c;
  c.name = "test";
  c.subgroup_size = c.min_subgroup_size = c.max_subgroup_size = 32;
  c.subgroup_basic = c.subgroup_shuffle = c.subgroup_vote = c.subgroup_arithmetic = true;
  c.subgroup_size_control = c.compute_full_subgroups = c.required_subgroup_size_compute = true;
  c.storage_buffer_16bit = c.shader_float16 = c.shader_int16 = c.vulkan_memory_model = true;
  c.max_shared_memory = 49152;
  c.max_workgroup_invocations = 1024;
  c.max_workgroup_count[0] = c.max_workgroup_count[1] = c.max_workgroup_count[2] = 65535;
  c.coopmat_khr = true;
  CoopmatShape s;
  s.m = s.n = s.k = 16;
  s.a_type = s.b_type = 0;  // f16
  s.c_type = s.result_type = 1;  // f32
  s.scope = 3;  // subgroup
  c.coopmat_shapes.push_back(s);
  c.khr_acc_layout = layout;
  return c;
}

// A contiguous [B, S, H, D] f16 call.
detail::AttnArgs call(std::int64_t d, std::int64_t s, bool causal) {
  detail::AttnArgs a;
  a.batch = 1, a.seqlen_q = s, a.seqlen_k = s, a.heads_q = 16, a.heads_kv = 16, a.head_dim = d;
  a.dtype = DType::F16;
  a.causal = causal;
  for (detail::TensorArg* t : {&a.q, &a.k, &a.v, &a.o}) {
    t->dtype = DType::F16;
    t->strides = Strides{s * 16 * d, 16 * d, d, 1};
  }
  return a;
}

// The entry the backend runs: the first one whose device and call reasons are empty (vk_device.cpp, pick()).
const ShaderVariant* pick(const std::vector<ShaderVariant>& table, const Caps& c, const detail::AttnArgs& a) {
  for (const ShaderVariant& v : table)
    if (device_reason(v, c).empty() && call_reason(v, c, a).empty()) return &v;
  return nullptr;
}

std::uint32_t spec(const ShaderVariant& v, std::uint32_t id) {
  for (const auto& [i, value] : v.extra_spec)
    if (i == id) return value;
  return ~0u;
}

// f16 bits of small integers (exact), and of -1.
std::uint16_t f16_bits(int x) { return float_to_f16(static_cast<float>(x)); }

// The probe's output for an accumulator whose element i of lane l sits at (row(l, i), col(l, i)).
template <class Row, class Col>
std::vector<std::uint16_t> probe_output(Row row, Col col) {
  std::vector<std::uint16_t> o(256);
  for (int l = 0; l < 32; ++l)
    for (int i = 0; i < 8; ++i) o[std::size_t(8 * l + i)] = f16_bits(row(l, i) * 16 + col(l, i));
  return o;
}

}  // namespace

TEST_CASE("khr_layout_from_probe: the two known layouts, and anything else is 0") {
  // Layout 1: element bit 1 picks the row half, bit 2 the column half; layout 2 the other way round (the H200's).
  auto rows_bit = [](int b) { return [b](int l, int i) { return (l >> 2) + 8 * ((i >> b) & 1); }; };
  auto cols_bit = [](int b) { return [b](int l, int i) { return 2 * (l & 3) + (i & 1) + 8 * ((i >> b) & 1); }; };
  CHECK(khr_layout_from_probe(probe_output(rows_bit(1), cols_bit(2)).data()) == 1);
  CHECK(khr_layout_from_probe(probe_output(rows_bit(2), cols_bit(1)).data()) == 2);
  // Row-major over the subgroup (a lane holds 8 consecutive elements of one row): unknown.
  CHECK(khr_layout_from_probe(probe_output([](int l, int i) { return (8 * l + i) / 16; },
                                           [](int l, int i) { return (8 * l + i) % 16; })
                                  .data()) == 0);
  // One element off (lane 5, element 3 swapped with element 2): unknown.
  std::vector<std::uint16_t> o = probe_output(rows_bit(2), cols_bit(1));
  std::swap(o[8 * 5 + 2], o[8 * 5 + 3]);
  CHECK(khr_layout_from_probe(o.data()) == 0);
  // A probe that wrote nothing (poison) or an accumulator shorter than 8 elements (-1): unknown.
  CHECK(khr_layout_from_probe(std::vector<std::uint16_t>(256, 0xffff).data()) == 0);
  o = probe_output(rows_bit(2), cols_bit(1));
  o[7] = f16_bits(-1);
  CHECK(khr_layout_from_probe(o.data()) == 0);
}

TEST_CASE("KHR table: the register softmax where the probe found its layout, the shared-memory softmax elsewhere") {
  const std::vector<ShaderVariant> table = coopmat_variants();

  SUBCASE("layout 2 probed: d128 runs 8 subgroups on 64-key tiles, id 29 = 7 non-causal and 3 causal") {
    const Caps c = nvidia_caps(2);
    const ShaderVariant* nc = pick(table, c, call(128, 1024, false));
    REQUIRE(nc != nullptr);
    CHECK(nc->kernel == "vk_coopmat_16x16x16_sg32_qreg_pf_rsm2_o7");
    CHECK(nc->block_m == 128);
    CHECK(nc->block_n == 64);
    CHECK(spec(*nc, kSpecCmRegSoftmax) == 2);
    CHECK(spec(*nc, kSpecCmOpt) == 7);
    CHECK(nc->shared_bytes <= c.max_shared_memory);
    const ShaderVariant* ca = pick(table, c, call(128, 1024, true));
    REQUIRE(ca != nullptr);
    CHECK(ca->kernel == "vk_coopmat_16x16x16_sg32_qreg_pf_rsm2_o3");
    CHECK(spec(*ca, kSpecCmOpt) == 3);
    CHECK(ca->rows_outer);  // causal launches longest-first across heads
    CHECK(ca->block_m == 128);
    // d64: the register softmax on its 4,32 tile; d256: the plain shader (the register softmax lost there).
    const ShaderVariant* d64 = pick(table, c, call(64, 1024, false));
    REQUIRE(d64 != nullptr);
    CHECK(d64->kernel == "vk_coopmat_16x16x16_sg32_qreg_pf_rsm2_o7");
    CHECK(d64->block_m == 64);
    // d256 loads Q straight from global memory on both causalities (id 29 = 3).
    for (bool causal : {false, true}) {
      const ShaderVariant* d256 = pick(table, c, call(256, 1024, causal));
      REQUIRE(d256 != nullptr);
      CHECK(spec(*d256, kSpecCmRegSoftmax) == 0);
      CHECK(spec(*d256, kSpecCmOpt) == 3);
      CHECK(d256->kernel == "vk_coopmat_16x16x16_sg32_qreg_o3");
    }
  }

  SUBCASE("layout unknown: the plain shader, and no tile that only fits without the score tile") {
    const Caps c = nvidia_caps(0);
    for (bool causal : {false, true}) {
      const ShaderVariant* v = pick(table, c, call(128, 4096, causal));
      REQUIRE(v != nullptr);
      CHECK(v->kernel == "vk_coopmat_16x16x16_sg32_qreg_pf");
      CHECK(spec(*v, kSpecCmRegSoftmax) == 0);
      CHECK(v->block_m == 64);
      CHECK(v->shared_bytes <= c.max_shared_memory);
    }
    // Every gated entry names the layout it wants.
    for (const ShaderVariant& v : table)
      if (spec(v, kSpecCmRegSoftmax) == 2) CHECK(device_reason(v, c).find("layout 2") != std::string::npos);
  }

  SUBCASE("layout 1 probed: the layout-1 entries") {
    const ShaderVariant* v = pick(table, nvidia_caps(1), call(128, 1024, false));
    REQUIRE(v != nullptr);
    CHECK(v->kernel == "vk_coopmat_16x16x16_sg32_qreg_pf_rsm1_o7");
  }

  SUBCASE("the probe: a one-subgroup d64 entry in probe mode, without split-KV") {
    ShaderVariant p;
    REQUIRE(khr_layout_probe_variant(nvidia_caps(0), &p));
    CHECK(spec(p, kSpecCmRegSoftmax) == 15);
    CHECK(p.wg_size == 32);
    CHECK(p.head_dims == std::vector<std::uint32_t>{64});
    CHECK_FALSE(p.split_kv);
    Caps none = nvidia_caps(0);
    none.coopmat_shapes.clear();  // a device without the shape has nothing to probe
    CHECK_FALSE(khr_layout_probe_variant(none, &p));
  }
}

// An H200-like device for coopmat2 (the features its entries check).
Caps nvidia_cm2_caps() {
  Caps c = nvidia_caps(2);
  c.coopmat2_nv = true;
  c.cm2_workgroup_scope = c.cm2_flexible_dimensions = c.cm2_reductions = c.cm2_conversions = true;
  c.cm2_per_element_operations = c.cm2_tensor_addressing = c.cm2_block_loads = true;
  c.cm2_max_workgroup_size = 256;
  c.cm2_max_dimension = 1024;
  return c;
}

TEST_CASE("coopmat2 table: one loop body (id 30) where every K/V tile is full and it won") {
  const std::vector<ShaderVariant> table = coopmat2_variants();
  const Caps c = nvidia_cm2_caps();
  auto picked = [&](std::int64_t d, std::int64_t sk, bool causal) {
    detail::AttnArgs a = call(d, 4096, causal);
    a.seqlen_k = sk;
    for (detail::TensorArg* t : {&a.k, &a.v}) t->strides = Strides{sk * 16 * d, 16 * d, d, 1};
    const ShaderVariant* v = pick(table, c, a);
    REQUIRE(v != nullptr);
    return v;
  };
  const ShaderVariant* v = picked(128, 4096, true);
  CHECK(v->kernel.find("_full") != std::string::npos);
  CHECK(spec(*v, kSpecCm2AllFull) == 1);
  CHECK(picked(64, 4096, false)->kernel.find("_full") != std::string::npos);
  // Longest-first across heads won only at d256 here (it lost 5-17% at d64/d128 1k-4k causal).
  CHECK_FALSE(v->rows_outer);
  CHECK(picked(256, 4096, true)->rows_outer);
  // A ragged last tile, a non-causal d128 call (it lost there) and d256 (it lost causal): the peeled form.
  for (const ShaderVariant* p : {picked(128, 4096 + 17, true), picked(128, 4096, false), picked(256, 4096, true)}) {
    CHECK(p->kernel.find("_full") == std::string::npos);
    CHECK(spec(*p, kSpecCm2AllFull) == ~0u);
  }
}

TEST_CASE("coopmat2 table: d128 with f32 O takes 128x128 tiles on non-causal calls alone") {
  const std::vector<ShaderVariant> table = coopmat2_variants();
  const Caps c = nvidia_cm2_caps();
  for (std::int64_t sk : {4096, 4096 + 17}) {
    detail::AttnArgs a = call(128, 4096, false);
    a.seqlen_k = sk;
    for (detail::TensorArg* t : {&a.k, &a.v}) t->strides = Strides{sk * 16 * 128, 16 * 128, 128, 1};
    const ShaderVariant* nc = pick(table, c, a);
    REQUIRE(nc != nullptr);
    CHECK(nc->block_m == 128);
    CHECK(nc->block_n == 128);
    CHECK(nc->wg_size == 256);
    a.causal = true;
    const ShaderVariant* causal = pick(table, c, a);
    REQUIRE(causal != nullptr);
    CHECK(causal->block_m == 64);
    CHECK(call_reason(*nc, c, a).find("causal") != std::string::npos);
    // Other head dims and bf16 keep one tile for both.
    a.causal = false;
    a.dtype = DType::BF16;
    for (detail::TensorArg* t : {&a.q, &a.k, &a.v, &a.o}) t->dtype = DType::BF16;
    CHECK(pick(table, c, a)->block_m == 64);
  }
}

TEST_CASE("portable table: every entry launches causal calls longest-first across heads") {
  for (const ShaderVariant& v : portable_variants()) CHECK_MESSAGE(v.rows_outer, v.kernel);
}

TEST_CASE("coopmat2 table: O in f16 only for calls that allow reduced precision") {
  const std::vector<ShaderVariant> table = coopmat2_variants();
  const Caps c = nvidia_cm2_caps();
  for (const ShaderVariant& v : table) {
    INFO(v.kernel);
    CHECK(v.reduced_precision == (v.spirv == "attn_coopmat2_o16"));
    CHECK(v.reduced_precision == (v.kernel.find("_o16") != std::string::npos));
    if (v.reduced_precision) {
      CHECK(v.dtypes == std::vector<DType>{DType::F16});
      CHECK(call_reason(v, c, call(v.head_dims[0], 4096, false)).find("allow_reduced_precision_accumulation") !=
            std::string::npos);
    }
  }
  for (std::int64_t d : {64, 128, 256})
    for (bool causal : {false, true}) {
      INFO("d", d, causal ? " causal" : "");
      detail::AttnArgs a = call(d, 4096, causal);
      const ShaderVariant* plain = pick(table, c, a);
      REQUIRE(plain != nullptr);
      CHECK_FALSE(plain->reduced_precision);
      a.allow_reduced_precision = true;
      const ShaderVariant* o16 = pick(table, c, a);
      REQUIRE(o16 != nullptr);
      CHECK(o16->reduced_precision);
      CHECK(o16->block_m == 128);  // f16 O leaves room for 128-row tiles
      // d256: Q held in registers with f16 O, reloaded per tile with f32 O (id 27).
      CHECK(spec(*o16, kSpecCm2QReload) == 0);
      CHECK(spec(*plain, kSpecCm2QReload) == (d == 256 ? 1u : 0u));
      // bf16 stages through shared memory and keeps f32 O, with or without the permission.
      a.dtype = DType::BF16;
      for (detail::TensorArg* t : {&a.q, &a.k, &a.v, &a.o}) t->dtype = DType::BF16;
      const ShaderVariant* bf = pick(table, c, a);
      REQUIRE(bf != nullptr);
      CHECK_FALSE(bf->reduced_precision);
    }
}

// Id 25 (the scale folded in after the row max of unscaled scores) is exact for scale > 0 only: other scales take
// the same tile unfolded.
TEST_CASE("coopmat2 table: scales <= 0 take the unfolded form of the tile") {
  const std::vector<ShaderVariant> table = coopmat2_variants();
  const Caps c = nvidia_cm2_caps();
  auto fold_of = [](const ShaderVariant& v) {
    for (const auto& [id, value] : v.extra_spec)
      if (id == kSpecCm2FoldScale) return value;
    return 0u;
  };
  for (std::int64_t d : {64, 128, 256})
    for (bool causal : {false, true})
      for (DType dt : {DType::F16, DType::BF16}) {
        detail::AttnArgs a = call(d, 4096, causal);
        a.dtype = dt;
        for (detail::TensorArg* t : {&a.q, &a.k, &a.v, &a.o}) t->dtype = dt;
        INFO("d ", d, causal ? " causal " : " ", to_string(dt));
        const ShaderVariant* pos = pick(table, c, a);
        REQUIRE(pos != nullptr);
        CHECK(fold_of(*pos) == 1u);
        for (float s : {-0.125f, 0.0f}) {
          a.scale = s;
          const ShaderVariant* neg = pick(table, c, a);
          REQUIRE(neg != nullptr);
          CHECK(fold_of(*neg) == 0u);
          CHECK(neg->kernel == pos->kernel.substr(0, pos->kernel.find("_full")) + "_unfolded");
        }
      }
}

// The portable row-group shader's packed-f16 P·V sums (rgh) round every partial sum to f16: reduced precision.
TEST_CASE("portable table: f16 P·V sums only for calls that allow reduced precision") {
  for (const ShaderVariant& v : portable_variants()) {
    INFO(v.kernel);
    CHECK(v.reduced_precision == (v.kernel.find("_rgh_") != std::string::npos));
  }
}

// The attention variants (window, softcap, ALiBi, sinks) run in the portable tiled shader, the KHR shader's
// shared-memory softmax and every coopmat2 entry; the other forms refuse them with the phrase callers read as "not
// implemented".
TEST_CASE("variant tables: calls with attention variants pick the forms that implement them") {
  auto variant_call = [](std::int64_t d, bool causal) {
    detail::AttnArgs a = call(d, 4096, causal);
    a.window_left = 128;
    a.softcap = 30.0f;
    return a;
  };
  for (const ShaderVariant& v : portable_variants()) {
    INFO(v.kernel);
    CHECK(v.variants == (v.spirv.rfind("attn_portable_s", 0) == 0 || v.spirv.rfind("attn_portable_pk", 0) == 0 ||
                         v.spirv.rfind("attn_portable_f32", 0) == 0 || v.spirv == "attn_decode_pk"));
    detail::AttnArgs a = variant_call(v.head_dims[0], false);
    a.allow_reduced_precision = true;  // the rgh modules' own condition, checked first
    if (!v.variants) CHECK(call_reason(v, nvidia_caps(2), a).find("implements these variants yet") != std::string::npos);
  }
  const std::vector<ShaderVariant> khr = coopmat_variants();
  for (std::int64_t d : {64, 128, 256})
    for (bool causal : {false, true}) {
      INFO("d", d, causal ? " causal" : "");
      const ShaderVariant* var = pick(khr, nvidia_caps(2), variant_call(d, causal));
      REQUIRE(var != nullptr);
      CHECK(var->variants);
      CHECK(spec(*var, kSpecCmRegSoftmax) == 0);
    }
  // coopmat2: every entry computes them, so a variant call runs the entry its plain twin runs (id 30's one loop body
  // and the folded scale included: the shader keeps the scale out of exp2 itself where softcap or ALiBi need it).
  const std::vector<ShaderVariant> cm2 = coopmat2_variants();
  for (const ShaderVariant& v : cm2) CHECK_MESSAGE(v.variants, v.kernel);
  for (std::int64_t d : {64, 128, 256})
    for (bool causal : {false, true})
      for (DType dt : {DType::F16, DType::BF16}) {
        INFO("coopmat2 d", d, causal ? " causal " : " ", to_string(dt));
        detail::AttnArgs plain = call(d, 4096, causal), var = variant_call(d, causal);
        for (detail::AttnArgs* a : {&plain, &var}) {
          a->dtype = dt;
          for (detail::TensorArg* t : {&a->q, &a->k, &a->v, &a->o}) t->dtype = dt;
        }
        var.alibi_per_batch = true;
        var.has_alibi = var.has_sinks = true;
        const ShaderVariant* p = pick(cm2, nvidia_cm2_caps(), plain);
        REQUIRE(p != nullptr);
        CHECK(pick(cm2, nvidia_cm2_caps(), var) == p);
      }
}

// A backward call on call()'s shapes: every gradient and dout like q, k and v.
detail::BwdArgs bwd_call(std::int64_t d, std::int64_t s, bool causal, DType dt = DType::F16) {
  detail::BwdArgs b;
  b.fwd = call(d, s, causal);
  b.fwd.dtype = dt;
  for (detail::TensorArg* t : {&b.fwd.q, &b.fwd.k, &b.fwd.v, &b.fwd.o}) t->dtype = dt;
  for (detail::TensorArg* t : {&b.dout, &b.dq, &b.dk, &b.dv}) *t = b.fwd.q;
  return b;
}

TEST_CASE("KHR backward: the advertised shape's passes after the portable preprocess; refusals say why") {
  static_assert(kBwdPasses[0] == BwdPass::Preprocess && kBwdPasses[1] == BwdPass::DkDv &&
                kBwdPasses[2] == BwdPass::Dq && kBwdPasses[3] == BwdPass::Dsinks);
  Caps c = nvidia_caps(2);
  c.max_storage_buffer_range = 1ull << 32;
  for (std::int64_t d : {64, 128, 256})
    for (bool causal : {false, true})
      for (DType dt : {DType::F16, DType::BF16}) {
        INFO("d", d, causal ? " causal " : " ", to_string(dt));
        BwdChoice ch;
        REQUIRE(khr_bwd_choose(c, bwd_call(d, 4096, causal, dt), &ch) == "");
        CHECK(ch.kernel.rfind("vk_coopmat_bwd_16x16x16_sg32<", 0) == 0);
        CHECK(ch.passes[0].spirv == "attn_bwd_pre_s16");
        CHECK(ch.passes[0].required_subgroup_size == 0);
        CHECK(ch.passes[3].spirv == "attn_bwd_dsinks");  // the portable dsinks pass, recorded for calls with dsinks
        CHECK(ch.passes[3].required_subgroup_size == 0);
        const BwdPassKernel& kv = ch.passes[1];
        const BwdPassKernel& q = ch.passes[2];
        CHECK(kv.spirv == "attn_bwd_dkdv_cm");
        CHECK(q.spirv == "attn_bwd_dq_cm");
        // A subgroup of 32 owns 16 keys (dK/dV) or rows (dQ); the streamed block is whole 16-row tiles.
        CHECK(kv.wg == kv.block_n / 16 * 32);
        CHECK(q.wg == q.block_m / 16 * 32);
        CHECK(kv.block_m % 16 == 0);
        CHECK(q.block_n % 16 == 0);
        // d 64 and 128: the own rows' fragments in registers (id 19), P and dS on the probed accumulator layout
        // (id 28 = 2), the next block prefetched (id 20), four subgroups; d 128's dK/dV pass eight, with the scores
        // one tile at a time (id 21: the registers for id 20 beside dK and dV); d 256 the first form (all 0: the
        // register forms would spill).
        const std::uint32_t regs = d == 256 ? 0 : 1, layout = d == 256 ? 0 : 2;
        for (const BwdPassKernel* k : {&kv, &q}) {
          const std::uint32_t pf = d == 256 ? 0 : 1, by_tile = d == 128 && k == &kv ? 1 : 0;
          CHECK(k->required_subgroup_size == 32);
          CHECK(k->extra_spec == std::vector<std::pair<std::uint32_t, std::uint32_t>>{
                                     {kSpecCmM, 16}, {kSpecCmN, 16}, {kSpecCmK, 16}, {kSpecCmQInRegs, regs},
                                     {kSpecCmPrefetch, pf}, {kSpecCmScoreByTile, by_tile},
                                     {kSpecCmRegSoftmax, layout}});
          if (d != 256) CHECK(k->wg == (by_tile ? 256u : 128u));
        }
        if (d == 128) CHECK(ch.kernel.find(",kv128x32+regs+pf+acc+tile,q64x32+regs+pf+acc>") != std::string::npos);
        CHECK(ch.workspace_bytes == 2 * 16 * 4096 * 4);
      }
  // Without a probed layout the register forms step aside for the staged P and dS (id 28 = 0).
  Caps unprobed = c;
  unprobed.khr_acc_layout = 0;
  for (std::int64_t d : {64, 128}) {
    BwdChoice ch;
    REQUIRE(khr_bwd_choose(unprobed, bwd_call(d, 4096, false), &ch) == "");
    for (std::size_t i : {1, 2}) {
      INFO("d", d, " pass ", i);
      CHECK(ch.passes[i].extra_spec.back() == std::pair<std::uint32_t, std::uint32_t>{kSpecCmRegSoftmax, 0});
      CHECK(ch.passes[i].extra_spec[3] == std::pair<std::uint32_t, std::uint32_t>{kSpecCmQInRegs, 1});
      CHECK(ch.passes[i].extra_spec[5] == std::pair<std::uint32_t, std::uint32_t>{kSpecCmScoreByTile, 0});
    }
  }
  BwdChoice ch;
  CHECK(khr_bwd_choose(c, bwd_call(64, 128, false, DType::F32), &ch).find("dtype f32 not supported") == 0);
  CHECK(khr_bwd_choose(c, bwd_call(96, 128, false), &ch).find("head_dim 96 not supported") == 0);
  Caps no_khr = c;
  no_khr.coopmat_khr = false;
  no_khr.coopmat_shapes.clear();
  CHECK(khr_bwd_choose(no_khr, bwd_call(64, 128, false), &ch) == "device lacks VK_KHR_cooperative_matrix");
  Caps other_shape = c;
  other_shape.coopmat_shapes[0].k = 8;  // 16x16x8 only: no family of the table
  CHECK(khr_bwd_choose(other_shape, bwd_call(64, 128, false), &ch).find("does not advertise") != std::string::npos);
  Caps small = c;
  small.max_shared_memory = 16384;
  CHECK(khr_bwd_choose(small, bwd_call(256, 128, false), &ch).find("bytes of shared memory") != std::string::npos);
}

// The decode shader (attn_decode.comp) heads every path's table and takes the calls with few packed GQA rows; the
// rest go on to the path's own shaders, and a path's decode entries need that path's device feature.
TEST_CASE("decode shader: first in every table, for calls with few packed rows") {
  auto decode_call = [](std::int64_t d, std::int64_t sq, std::int64_t hq, std::int64_t hkv) {
    detail::AttnArgs a = call(d, sq, false);
    a.seqlen_k = 65536;
    a.heads_q = hq, a.heads_kv = hkv;
    for (detail::TensorArg* t : {&a.q, &a.o}) t->strides = Strides{sq * hq * d, hq * d, d, 1};
    for (detail::TensorArg* t : {&a.k, &a.v}) t->strides = Strides{a.seqlen_k * hkv * d, hkv * d, d, 1};
    return a;
  };
  const Caps nv = nvidia_cm2_caps();
  Caps no_cm = nv;
  no_cm.coopmat_khr = no_cm.coopmat2_nv = false;
  const std::vector<ShaderVariant> tables[] = {portable_variants(), coopmat_variants(), coopmat2_variants()};
  for (const std::vector<ShaderVariant>& table : tables) {
    REQUIRE(!table.empty());
    CHECK(table.front().packs_gqa);
    for (const ShaderVariant& v : table) {
      if (!v.packs_gqa) continue;
      INFO(to_string(v.path), " ", v.kernel, " d", v.head_dims[0], " bm", v.block_m);
      CHECK(v.spirv == "attn_decode_pk");
      CHECK(v.path == table.back().path);
      CHECK(spec(v, kSpecDecodeTpk) != ~0u);
      CHECK(v.split_kv);
      CHECK(v.serving_layouts);
      CHECK(v.variants);
      CHECK(device_reason(v, no_cm).empty() == (v.path == Path::VulkanPortable));
    }
    for (std::int64_t d : {64, 128, 256}) {
      INFO(to_string(table.back().path), " d", d);
      const ShaderVariant* p = pick(table, nv, decode_call(d, 1, 32, 8));  // group 4
      REQUIRE(p != nullptr);
      CHECK(p->packs_gqa);
      CHECK(p->block_m == 4);
      CHECK(spec(*p, kSpecDecodeTpk) == std::min<std::uint32_t>(16, std::uint32_t(d / 8)));  // subgroups of 32
      CHECK(grid_heads(*p, decode_call(d, 1, 32, 8)) == 8);
      CHECK(grid_row_tiles(*p, decode_call(d, 1, 32, 8)) == 1);
      p = pick(table, nv, decode_call(d, 2, 32, 4));  // group 8 x 2 rows: 16
      REQUIRE(p != nullptr);
      CHECK(p->packs_gqa == (d != 256));  // d 256 takes at most 8 packed rows
      // Speculative rows x group 4 = 64: the prefill shaders.
      p = pick(table, nv, decode_call(d, 16, 32, 8));
      if (p) CHECK(!p->packs_gqa);
      // Group 1 x 16 rows: two row tiles would read K/V twice a head; the per-head shaders read it once.
      p = pick(table, nv, decode_call(d, 16, 8, 8));
      if (p) CHECK(!p->packs_gqa);
      // f32 and odd strides: the path's own shaders.
      detail::AttnArgs odd = decode_call(d, 1, 32, 8);
      odd.k.strides.dims[1] += 4;
      p = pick(table, nv, odd);
      if (p) CHECK(!p->packs_gqa);
    }
  }
  // Subgroups of 8 (lavapipe): the 8-lane entries.
  Caps sg8 = no_cm;
  sg8.subgroup_size = sg8.min_subgroup_size = sg8.max_subgroup_size = 8;
  sg8.max_shared_memory = 32768;
  const std::vector<ShaderVariant> portable = portable_variants();
  for (std::int64_t d : {64, 128, 256}) {
    const ShaderVariant* p = pick(portable, sg8, decode_call(d, 3, 16, 4));  // 12 rows
    REQUIRE(p != nullptr);
    CHECK(p->packs_gqa == (d != 256));
    if (p->packs_gqa) CHECK(spec(*p, kSpecDecodeTpk) == 8);
  }
}

// Every specialization constant the shaders declare, by file and name, and the SpecId the host passes for it.
TEST_CASE("shader_abi.hpp's SpecIds equal the shaders' constant_ids") {
  struct Decl {
    const char* file;
    const char* name;
    std::uint32_t id;
  };
  const Decl decls[] = {
      {"attn_common.glsl", "HEAD_DIM", kSpecHeadDim},
      {"attn_common.glsl", "CAUSAL", kSpecCausal},
      {"attn_common.glsl", "DTYPE", kSpecDType},
      {"attn_common.glsl", "BLOCK_M", kSpecBlockM},
      {"attn_common.glsl", "BLOCK_N", kSpecBlockN},
      {"attn_common.glsl", "local_size_x_id", kSpecWgSize},
      {"attn_common.glsl", "SUBGROUP_SIZE", kSpecSubgroupSize},
      {"attn_common.glsl", "HEAD_GROUP", kSpecHeadGroup},
      {"attn_common.glsl", "LAYOUT", kSpecLayout},
      {"attn_common.glsl", "PAGE_SIZE", kSpecPageSize},
      {"attn_common.glsl", "VARIANTS", kSpecVariants},
      {"attn_portable_tile.comp", "S_TM", kSpecTileSTm},
      {"attn_portable_tile.comp", "S_TN", kSpecTileSTn},
      {"attn_portable_tile.comp", "O_TM", kSpecTileOTm},
      {"attn_portable_rg.comp", "TPR", kSpecRgTpr},
      {"attn_portable_rg.comp", "PREFETCH", kSpecRgPrefetch},
      {"attn_decode.comp", "TPK", kSpecDecodeTpk},
      {"attn_coopmat.comp", "CM_M", kSpecCmM},
      {"attn_coopmat.comp", "CM_N", kSpecCmN},
      {"attn_coopmat.comp", "CM_K", kSpecCmK},
      {"attn_coopmat.comp", "Q_IN_REGS", kSpecCmQInRegs},
      {"attn_coopmat.comp", "PREFETCH", kSpecCmPrefetch},
      {"attn_coopmat.comp", "REG_SOFTMAX", kSpecCmRegSoftmax},
      {"attn_coopmat.comp", "CM_OPT", kSpecCmOpt},
      {"attn_bwd_coopmat.comp", "CM_M", kSpecCmM},
      {"attn_bwd_coopmat.comp", "CM_N", kSpecCmN},
      {"attn_bwd_coopmat.comp", "CM_K", kSpecCmK},
      {"attn_bwd_coopmat.comp", "OWN_IN_REGS", kSpecCmQInRegs},
      {"attn_bwd_coopmat.comp", "PREFETCH", kSpecCmPrefetch},
      {"attn_bwd_coopmat.comp", "SCORE_BY_TILE", kSpecCmScoreByTile},
      {"attn_bwd_coopmat.comp", "REG_SOFTMAX", kSpecCmRegSoftmax},
      {"attn_coopmat2.comp", "ALIGNED_LOADS", kSpecCm2AlignedLoads},
      {"attn_coopmat2.comp", "NARROW", kSpecCm2Narrow},
      {"attn_coopmat2.comp", "FOLD_SCALE", kSpecCm2FoldScale},
      {"attn_coopmat2.comp", "Q_RELOAD", kSpecCm2QReload},
      {"attn_coopmat2.comp", "ALL_FULL", kSpecCm2AllFull},
  };
  const char* files[] = {"attn_common.glsl",   "attn_coopmat.comp",     "attn_coopmat2.comp",     "attn_portable.comp",
                         "attn_portable_raw.glsl", "attn_portable_rg.comp", "attn_portable_row.comp",
                         "attn_portable_tile.comp", "attn_splitkv_reduce.comp", "attn_kv_append.comp",
                         "coopmat_common.glsl", "attn_bwd_portable.comp", "attn_bwd_common.glsl",
                         "attn_bwd_coopmat.comp", "attn_decode.comp"};
  const std::regex constant(R"(^\s*layout\s*\(\s*constant_id\s*=\s*(\d+)\s*\)\s*const\s+\w+\s+(\w+))");
  const std::regex wg_size(R"(^\s*layout\s*\(\s*(local_size_x_id)\s*=\s*(\d+))");
  std::size_t found = 0;
  for (const char* file : files) {
    std::ifstream in(std::string(FT_SHADER_DIR) + "/" + file);
    REQUIRE_MESSAGE(in, "cannot read shaders/", file);
    for (std::string line; std::getline(in, line);) {
      std::smatch m;
      std::string name;
      std::uint32_t id = 0;
      if (std::regex_search(line, m, constant)) {
        id = static_cast<std::uint32_t>(std::stoul(m[1])), name = m[2];
      } else if (std::regex_search(line, m, wg_size)) {
        name = m[1], id = static_cast<std::uint32_t>(std::stoul(m[2]));
      } else {
        continue;
      }
      INFO("shaders/", file, ": ", line);
      const Decl* d = nullptr;
      for (const Decl& x : decls)
        if (file == std::string(x.file) && name == x.name) d = &x;
      REQUIRE_MESSAGE(d != nullptr, "a constant_id without a SpecId in this test's table");
      CHECK(id == d->id);
      ++found;
    }
  }
  CHECK(found == std::size(decls));  // every SpecId of the table declared once
}
