// The C++ mirror of shaders/attn_common.glsl: push constants, specialization-constant ids, descriptor bindings and
// the split-KV scratch layout shared by every flashtile attention shader. Keep the two files identical.
#pragma once

#include <cstddef>
#include <cstdint>

namespace flashtile::vk {

// Descriptor set 0: whole storage buffers; tensors are addressed by element offsets in PushConstants.
enum Binding : std::uint32_t {
  kBindingQ = 0,
  kBindingK = 1,
  kBindingV = 2,
  kBindingO = 3,
  kBindingLse = 4,      // f32 [B, Hq, Sq] contiguous
  kBindingScratch = 5,  // f32 split-KV partials; a dummy buffer when unused
  // Serving layouts (dummy buffers for dense calls): i32 tables, and the append pass's new keys and values.
  kBindingTable = 6,    // paged: block_table; varlen: cu_seqlens_q
  kBindingLens = 7,     // paged: seqlens; varlen: cu_seqlens_k
  kBindingKNew = 8,     // paged: k_new (attn_kv_append.comp only)
  kBindingVNew = 9,     // paged: v_new
  // Attention variants (dummy buffers for plain calls): the call's VariantParams, the f32 ALiBi slopes and sinks.
  kBindingVariant = 10,
  kBindingAlibi = 11,   // [Hq] or [B, Hq]
  kBindingSinks = 12,   // [Hq]
  kBindingCount = 13,
};

// Specialization-constant ids: equal to the GLSL constant_id values.
enum SpecId : std::uint32_t {
  kSpecHeadDim = 0,
  kSpecCausal = 1,       // bool as uint
  kSpecDType = 2,        // ShaderDType
  kSpecBlockM = 3,       // query rows per workgroup
  kSpecBlockN = 4,       // keys per inner tile
  kSpecWgSize = 5,       // local_size_x_id = 5
  kSpecSubgroupSize = 6,
  // 7..15: portable shaders (and the decode shader, 15).
  kSpecTileSTm = 7,  // attn_portable_tile.comp: score rows per thread
  kSpecTileSTn = 8,  //   score columns (keys) per thread
  kSpecTileOTm = 9,  //   output rows per thread
  kSpecRgTpr = 10,   // attn_portable_rg.comp: lanes per row group
  kSpecRgPrefetch = 11,  //   next K/V tile through registers (1) or straight into shared memory (0)
  kSpecLayout = 12,      // attn_common.glsl, serving layouts: ShaderLayout (0 dense: the layout code folds away)
  kSpecPageSize = 13,    //   paged: keys a page
  kSpecVariants = 14,    // attn_common.glsl, attention variants: VariantBits (0 plain: the variant code folds away)
  kSpecDecodeTpk = 15,   // attn_decode.comp: lanes that share one key
  // ---- 16 and up: cooperative-matrix shaders ----
  kSpecCmM = 16,
  kSpecCmN = 17,
  kSpecCmK = 18,
  kSpecCmQInRegs = 19,        // attn_coopmat.comp: Q as use-A fragments in registers (attn_bwd_coopmat.comp: the
                              //   own rows, K and V or Q and dO)
  kSpecCmPrefetch = 20,       //   K/V global loads one phase ahead through registers (attn_bwd_coopmat.comp: the
                              //   next streamed block's)
  kSpecCmScoreByTile = 21,    // attn_bwd_coopmat.comp: scores, P and dS one streamed tile at a time (with id 28)
  // 22: free.
  kSpecCm2AlignedLoads = 23,  // attn_coopmat2.comp: aligned calls: strides visibly aligned, full tiles unclamped
  kSpecCm2Narrow = 24,        //   columns of the l / m / row-sum matrices (0: BLOCK_N)
  kSpecCm2FoldScale = 25,     //   softmax scale folded into exp2, finite initial max
  // 26: free.
  kSpecCm2QReload = 27,       //   Q reloaded per tile through its tensor layout instead of held in registers
  kSpecCmRegSoftmax = 28,     // attn_coopmat.comp: softmax on the accumulators where their layout is known
                              //   (attn_bwd_coopmat.comp: P and dS on them)
  kSpecCmOpt = 29,            //   bits: Q loaded straight from global, K0 before Q, causal tiles past a subgroup skipped
  kSpecCm2AllFull = 30,       // attn_coopmat2.comp: every K/V tile full (Sk % BLOCK_N == 0): one aligned loop body
  // ---- every shader ----
  kSpecHeadGroup = 31,  // causal rows-outer launches in groups of this many (batch, head) pairs (ft_wg; 0: one group)
};

// attn_coopmat.comp's id 28 value for the accumulator-layout probe (the shader's PROBE).
inline constexpr std::uint32_t kCmRegSoftmaxProbe = 15;

// Tensors are addressed by uint element indices in every shader: element offset plus extent stay below this.
inline constexpr std::uint64_t kMaxIndex = 1ull << 32;

enum ShaderDType : std::uint32_t { kShaderF16 = 0, kShaderBF16 = 1, kShaderF32 = 2 };
enum ShaderLayout : std::uint32_t { kLayoutDense = 0, kLayoutVarlen = 1, kLayoutPaged = 2 };  // FT_LAYOUT_*

// The attention variants a pipeline computes (spec id kSpecVariants, FT_VAR_* in attn_common.glsl).
enum VariantBits : std::uint32_t { kVarWindow = 1u, kVarSoftcap = 2u, kVarAlibi = 4u, kVarSinks = 8u };

// The variants' values (binding kBindingVariant, std430, 32-bit members): 128 bytes of push constants hold no more,
// so the host writes these into a small buffer in the command stream (vkCmdUpdateBuffer) for variant calls only.
struct VariantParams {
  std::int32_t window_left, window_right;  // -1 unbounded; else clamped to Sq + Sk (same keys, no int overflow)
  float softcap_log2;                      // softcap * log2(e): scores are in the log2 domain
  std::uint32_t alibi_off, alibi_sb;       // slopes' element offset; per-batch stride (0: one [Hq] row for all)
  std::uint32_t sinks_off;                 // sinks' element offset
};
static_assert(sizeof(VariantParams) == 24, "VariantParams must match attn_common.glsl (std430)");

inline constexpr std::uint32_t kFlagWriteLse = 1u;  // PushConstants::flags bit 0
inline constexpr std::uint32_t kFlagReverseRows = 2u;  // bit 1: row tiles in reverse order (causal: long rows first)
inline constexpr std::uint32_t kFlagRowsOuter = 4u;    // bit 2: launch order row tile slowest (ft_wg in attn_common)

// std430, all 32-bit members: the C++ layout is the same with natural alignment.
struct PushConstants {
  std::uint32_t q_off, k_off, v_off, o_off, lse_off;  // element offsets of element 0 in the bound buffer
  std::uint32_t q_sb, q_ss, q_sh;                     // strides (elements): batch, seq, head
  std::uint32_t k_sb, k_ss, k_sh;
  std::uint32_t v_sb, v_ss, v_sh;
  std::uint32_t o_sb, o_ss, o_sh;
  std::uint32_t B, Sq, Sk, Hq, Hkv;
  float scale_log2;      // softmax scale * log2(e)
  std::uint32_t flags;   // kFlagWriteLse | kFlagReverseRows | kFlagRowsOuter
  std::uint32_t n_splits;  // split-KV splits (1 = none)
  // Serving layouts (0 for dense calls): the i32 tables' element offsets (paged: block_table, seqlens; varlen:
  // cu_seqlens_q, cu_seqlens_k), block_table's row stride, rows of the packed q and k/v (varlen) or of the cache
  // (paged: num_pages * page_size), keys appended (paged). The append pass reads q_* as k_new's, o_* as v_new's.
  std::uint32_t table_off, lens_off, table_sb, q_rows, kv_rows, s_new;
};
static_assert(sizeof(PushConstants) == 124, "PushConstants must match attn_common.glsl (std430)");
static_assert(sizeof(PushConstants) <= 128, "Vulkan guarantees only 128 bytes of push constants");
static_assert(offsetof(PushConstants, q_off) == 0);
static_assert(offsetof(PushConstants, lse_off) == 16);
static_assert(offsetof(PushConstants, q_sb) == 20);
static_assert(offsetof(PushConstants, k_sb) == 32);
static_assert(offsetof(PushConstants, v_sb) == 44);
static_assert(offsetof(PushConstants, o_sb) == 56);
static_assert(offsetof(PushConstants, o_sh) == 64);
static_assert(offsetof(PushConstants, B) == 68);
static_assert(offsetof(PushConstants, Hkv) == 84);
static_assert(offsetof(PushConstants, scale_log2) == 88);
static_assert(offsetof(PushConstants, flags) == 92);
static_assert(offsetof(PushConstants, n_splits) == 96);
static_assert(offsetof(PushConstants, table_off) == 100);
static_assert(offsetof(PushConstants, s_new) == 120);

// Split-KV scratch: per (b, h, row, split) a record of head_dim + 1 floats (normalized partial output, then the
// split's log2-domain LSE). Workgroup x = row_tile * n_splits + split.
inline std::uint64_t scratch_floats(std::uint64_t B, std::uint64_t Hq, std::uint64_t Sq, std::uint64_t n_splits,
                                    std::uint64_t head_dim) {
  return B * Hq * Sq * n_splits * (head_dim + 1);
}

}  // namespace flashtile::vk
