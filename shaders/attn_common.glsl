// flashtile Vulkan shader ABI, shared by every attention shader (attn_portable.comp, attn_coopmat.comp,
// attn_coopmat2.comp). The C++ mirror is backends/vulkan/shader_abi.hpp: keep the two identical.
//
// The includer writes `#version 450` (or later) first and may define, before including:
//   FT_STORAGE_F32     tensors are f32 (float arrays)
//   FT_STORAGE_PACKED  16-bit tensors read/written as packed uint pairs (devices without storageBuffer16BitAccess;
//                      the host guarantees even element offsets and strides)
//   (neither)          16-bit tensors through 16-bit storage: arrays of FT_T16 (default uint16_t; a shader that
//                      only handles f16 may #define FT_T16 float16_t and FT_T16_FLOAT16, after enabling
//                      GL_EXT_shader_explicit_arithmetic_types_float16, to coopMatLoad straight from the buffer)
//   FT_NO_WG_LAYOUT    do not declare `layout(local_size_x_id = 5) in;` here (the shader declares its own)
//   FT_VARIANT_ABI     with FT_OWN_ABI: still declare the variants' values and slopes (bindings 10, 11) and their
//                      functions (the backward's shader binds them there too)
//   FT_OWN_ABI         declare no push constants, buffers or functions that use them (the backward's shader has
//                      its own: it keeps the specialization constants, storage types and conversions)
//   FT_APPEND_PASS     the paged-KV append (attn_kv_append.comp): K and V writable, k_new and v_new bound (8, 9)
// DTYPE (spec constant) says how 16-bit bits are converted: f16 (IEEE half) or bf16 (upper half of an f32).
#ifndef FT_ATTN_COMMON_GLSL
#define FT_ATTN_COMMON_GLSL

#extension GL_EXT_control_flow_attributes : enable
#if !defined(FT_STORAGE_F32) && !defined(FT_STORAGE_PACKED)
#define FT_STORAGE_16 1
#extension GL_EXT_shader_16bit_storage : require
#ifndef FT_T16
#define FT_T16 uint16_t
#endif
#endif

// ---- Specialization constants (ids = enum SpecId in shader_abi.hpp) -------------------------------------------
layout(constant_id = 0) const uint HEAD_DIM = 128;
layout(constant_id = 1) const uint CAUSAL = 0;        // bool as uint
layout(constant_id = 2) const uint DTYPE = 0;         // 0 f16, 1 bf16, 2 f32
layout(constant_id = 3) const uint BLOCK_M = 64;      // query rows per workgroup
layout(constant_id = 4) const uint BLOCK_N = 64;      // keys per inner tile
// id 5: WG_SIZE, the workgroup size, through local_size_x_id (read it as gl_WorkGroupSize.x).
layout(constant_id = 6) const uint SUBGROUP_SIZE = 32;
layout(constant_id = 31) const uint HEAD_GROUP = 0;   // causal rows-outer launches: pairs a group (ft_wg; 0 = all)
// Serving layouts ("Serving layouts" below): dense calls keep 0, so every layout branch folds away for them.
layout(constant_id = 12) const uint LAYOUT = 0;       // FT_LAYOUT_DENSE, FT_LAYOUT_VARLEN or FT_LAYOUT_PAGED
layout(constant_id = 13) const uint PAGE_SIZE = 16;   // paged: keys a page
// Attention variants ("Attention variants" below): plain calls keep 0, so every variant branch folds away for them.
layout(constant_id = 14) const uint VARIANTS = 0;     // FT_VAR_* bits (VariantBits in shader_abi.hpp)
// ids 7..15: the portable shaders' own (7..9 attn_portable_tile.comp, 10 attn_portable_rg.comp; 12, 13 above;
// 15 attn_decode.comp).
// ids 16 and up: reserved for coopmat shapes (vk-coopmat):
//   16 CM_M, 17 CM_N, 18 CM_K, 19 and up as coopmat_paths.cpp defines (declared in the coopmat shaders).
#ifndef FT_NO_WG_LAYOUT
layout(local_size_x_id = 5, local_size_y = 1, local_size_z = 1) in;
#endif
#define WG_SIZE gl_WorkGroupSize.x

const uint FT_DTYPE_F16 = 0u;
const uint FT_DTYPE_BF16 = 1u;
const uint FT_DTYPE_F32 = 2u;
const uint FT_FLAG_WRITE_LSE = 1u;  // flags bit 0
const uint FT_FLAG_REVERSE_ROWS = 2u;  // flags bit 1: row tiles in reverse order (causal: the longest rows first)
const uint FT_FLAG_ROWS_OUTER = 4u;    // flags bit 2: the row tile is the launch order's slowest index (ft_wg)
const uint FT_LAYOUT_DENSE = 0u;
const uint FT_LAYOUT_VARLEN = 1u;  // packed q/k/v/o [1, total, H, D], rows through cu_seqlens
const uint FT_LAYOUT_PAGED = 2u;   // k/v are a paged cache [num_pages, PAGE_SIZE, Hkv, D], keys through block_table
const float FT_LN2 = 0.69314718055994530942;    // LSE: natural log = log2 domain * ln 2
const float FT_LOG2E = 1.44269504088896340736;  // natural-log-domain values into the log2 domain
const uint FT_VAR_WINDOW = 1u;
const uint FT_VAR_SOFTCAP = 2u;
const uint FT_VAR_ALIBI = 4u;
const uint FT_VAR_SINKS = 8u;
const bool FT_WINDOW = (VARIANTS & FT_VAR_WINDOW) != 0u;
const bool FT_SOFTCAP = (VARIANTS & FT_VAR_SOFTCAP) != 0u;
const bool FT_ALIBI = (VARIANTS & FT_VAR_ALIBI) != 0u;
const bool FT_SINKS = (VARIANTS & FT_VAR_SINKS) != 0u;
#define FT_NEG_INF uintBitsToFloat(0xff800000u)

#ifndef FT_OWN_ABI
// ---- Push constants (std430, 32-bit members, 124 bytes) -------------------------------------------------------
// The append pass (FT_APPEND_PASS) reads q_* as k_new's offset and strides, o_* as v_new's.
layout(push_constant, std430) uniform PushConstants {
  uint q_off, k_off, v_off, o_off, lse_off;  // element offsets of element 0 within the bound buffer
  uint q_sb, q_ss, q_sh;                     // strides in elements: batch, seq, head (head dim contiguous)
  uint k_sb, k_ss, k_sh;
  uint v_sb, v_ss, v_sh;
  uint o_sb, o_ss, o_sh;
  uint B, Sq, Sk, Hq, Hkv;
  float scale_log2;                          // softmax scale * log2(e): shaders use exp2
  uint flags;                                // bit 0: write LSE; bits 1, 2: row order (below)
  uint n_splits;                             // split-KV: number of KV splits (1 = none)
  // Serving layouts (0 for dense calls). table_off / lens_off: element offsets of the i32 tables (paged:
  // block_table, seqlens; varlen: cu_seqlens_q, cu_seqlens_k); table_sb: block_table's row stride; q_rows / kv_rows:
  // rows of the packed q and k/v (varlen), of the cache (paged: num_pages * PAGE_SIZE); s_new: keys appended (paged).
  uint table_off, lens_off, table_sb, q_rows, kv_rows, s_new;
} pc;
#endif

// ---- Descriptor set 0: whole storage buffers, addressed by element offsets --------------------------------------
#if defined(FT_STORAGE_F32)
#define FT_ELEM float
#elif defined(FT_STORAGE_PACKED)
#define FT_ELEM uint
#else
#define FT_ELEM FT_T16
#endif
#ifndef FT_OWN_ABI
layout(set = 0, binding = 0, std430) readonly buffer BufQ { FT_ELEM q_data[]; };
#ifdef FT_APPEND_PASS
#define FT_KV_ACCESS
#else
#define FT_KV_ACCESS readonly
#endif
layout(set = 0, binding = 1, std430) FT_KV_ACCESS buffer BufK { FT_ELEM k_data[]; };
layout(set = 0, binding = 2, std430) FT_KV_ACCESS buffer BufV { FT_ELEM v_data[]; };
layout(set = 0, binding = 3, std430) writeonly buffer BufO { FT_ELEM o_data[]; };
layout(set = 0, binding = 4, std430) writeonly buffer BufLse { float lse_data[]; };
layout(set = 0, binding = 5, std430) buffer BufScratch { float scratch_data[]; };  // split-KV partials
layout(set = 0, binding = 6, std430) readonly buffer BufTable { int table_data[]; };  // block_table / cu_seqlens_q
layout(set = 0, binding = 7, std430) readonly buffer BufLens { int lens_data[]; };    // seqlens / cu_seqlens_k
#ifdef FT_APPEND_PASS
layout(set = 0, binding = 8, std430) readonly buffer BufKNew { FT_ELEM k_new_data[]; };
layout(set = 0, binding = 9, std430) readonly buffer BufVNew { FT_ELEM v_new_data[]; };
#endif
#endif  // FT_OWN_ABI

// ---- dtype conversion helpers ------------------------------------------------------------------------------------
// 16 raw bits -> float, by DTYPE (bf16: the bits are the upper half of an f32).
float ft_bits_to_float(uint bits) {
  return DTYPE == FT_DTYPE_BF16 ? uintBitsToFloat(bits << 16) : unpackHalf2x16(bits).x;
}
// float -> 16 raw bits, round to nearest even (bf16: NaN stays NaN).
uint ft_float_to_bits(float f) {
  if (DTYPE == FT_DTYPE_BF16) {
    uint u = floatBitsToUint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (u >> 16) | 0x40u;
    return (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  }
  return packHalf2x16(vec2(f, 0.0)) & 0xffffu;
}
// Two packed 16-bit values (low half first) -> vec2.
vec2 ft_unpack2(uint w) {
  return DTYPE == FT_DTYPE_BF16 ? vec2(uintBitsToFloat(w << 16), uintBitsToFloat(w & 0xffff0000u))
                                : unpackHalf2x16(w);
}
uint ft_pack2(vec2 f) {
  return DTYPE == FT_DTYPE_BF16 ? (ft_float_to_bits(f.x) | (ft_float_to_bits(f.y) << 16)) : packHalf2x16(f);
}

// tanh to f32 precision on every driver (softcap): the builtin may be approximate (NVIDIA's to 2^-11), lose digits
// to 1 - e^-2|x| near 0 (llvmpipe's) or give inf / inf for large arguments. Odd Taylor terms below |x| = 1/4 (the
// next one is below 1e-8 relative there), the exponential form above (it loses under 2 bits there).
float ft_tanh(float x) {
  const float a = abs(x), x2 = x * x;
  const float series = x * (1.0 + x2 * (-1.0 / 3.0 + x2 * (2.0 / 15.0 + x2 * (-17.0 / 315.0 + x2 * (62.0 / 2835.0)))));
  const float e = exp2(-2.0 * FT_LOG2E * a), t = (1.0 - e) / (1.0 + e);
  return a < 0.25 ? series : (x < 0.0 ? -t : t);
}

#if defined(FT_STORAGE_F32)
#define FT_LOAD_SCALAR(buf, i) (buf[i])
#elif defined(FT_STORAGE_16)
// FT_T16 is uint16_t or float16_t; both give their raw bits here (macros: 16-bit types may not be parameters
// without the 16-bit arithmetic extensions).
#ifdef FT_T16_FLOAT16
#define ft_raw16(x) uint(float16BitsToUint16(x))
#else
#define ft_raw16(x) uint(x)
#endif
#define FT_LOAD_SCALAR(buf, i) ft_bits_to_float(ft_raw16(buf[i]))
#endif

// ---- Attention variants (VARIANTS; each branch below folds away for pipelines without its bit) -----------------------
// Shared with the backward (FT_VARIANT_ABI: it binds the values and slopes at the same bindings). Scores are in the
// log2 domain (scale * log2(e) * q.k), so softcap c becomes c * log2(e) there (c tanh(x / c) scales with its
// argument), and slopes and sinks are multiplied by log2(e) once. ft_variants_init(b, h) caches the workgroup's values.
#if !defined(FT_OWN_ABI) || defined(FT_VARIANT_ABI)
layout(set = 0, binding = 10, std430) readonly buffer BufVariant {  // VariantParams; a dummy buffer for plain calls
  int window_left, window_right;  // -1 unbounded
  float softcap_log2;             // softcap * log2(e)
  uint alibi_off, alibi_sb;       // slopes: element offset, per-batch stride (0: [Hq])
  uint sinks_off;
} vp;
layout(set = 0, binding = 11, std430) readonly buffer BufAlibi { float alibi_data[]; };  // f32 [Hq] or [B, Hq]
#ifndef FT_OWN_ABI
layout(set = 0, binding = 12, std430) readonly buffer BufSinks { float sinks_data[]; };  // f32 [Hq]
#endif
struct FtVar {
  int wl, wr;            // window bounds, -1 unbounded
  float cap2, inv_cap2;  // softcap in the log2 domain and its inverse
  float slope2, sink2;   // this (batch, head)'s ALiBi slope and sink, log2 domain
};
FtVar ft_var;
void ft_variants_init(uint b, uint h) {
  if (FT_WINDOW) {
    ft_var.wl = vp.window_left;
    ft_var.wr = vp.window_right;
  }
  if (FT_SOFTCAP) {
    ft_var.cap2 = vp.softcap_log2;
    ft_var.inv_cap2 = 1.0 / vp.softcap_log2;
  }
  if (FT_ALIBI) ft_var.slope2 = alibi_data[vp.alibi_off + b * vp.alibi_sb + h] * FT_LOG2E;
#ifndef FT_OWN_ABI
  if (FT_SINKS) ft_var.sink2 = sinks_data[vp.sinks_off + h] * FT_LOG2E;
#endif
}
// The keys [x, y) that a row with diagonal diag = i + Sk - Sq sees of sk keys: causal and window bounds (y <= x: none).
ivec2 ft_keys_of(int diag, int sk) {
  int lo = 0, hi = sk;
  if (CAUSAL != 0u) hi = min(hi, diag + 1);
  if (FT_WINDOW) {
    if (ft_var.wr >= 0) hi = min(hi, diag + ft_var.wr + 1);
    if (ft_var.wl >= 0) lo = max(lo, diag - ft_var.wl);
  }
  return ivec2(lo, hi);
}
// The score of a key at signed distance dist = i + Sk - Sq - j from s = scale * log2(e) * q.k: softcap, then ALiBi;
// dcap: d(score) / d(s), softcap's 1 - tanh^2 (the backward's; the forward's compiler drops it).
float ft_score_at(float s, int dist, out float dcap) {
  dcap = 1.0;
  if (FT_SOFTCAP) {
    const float t = ft_tanh(s * ft_var.inv_cap2);
    s = ft_var.cap2 * t;
    dcap = 1.0 - t * t;
  }
  if (FT_ALIBI) s -= ft_var.slope2 * abs(float(dist));
  return s;
}
#endif

#ifndef FT_OWN_ABI
// Element loads (element index i, already including the tensor's offset) and the output store.
#if defined(FT_STORAGE_PACKED)
float load_q_elem(uint i) { uint w = q_data[i >> 1]; return ft_bits_to_float((i & 1u) != 0u ? w >> 16 : w & 0xffffu); }
float load_k_elem(uint i) { uint w = k_data[i >> 1]; return ft_bits_to_float((i & 1u) != 0u ? w >> 16 : w & 0xffffu); }
float load_v_elem(uint i) { uint w = v_data[i >> 1]; return ft_bits_to_float((i & 1u) != 0u ? w >> 16 : w & 0xffffu); }
// Two adjacent elements; i even.
vec2 load_q_pair(uint i) { return ft_unpack2(q_data[i >> 1]); }
vec2 load_k_pair(uint i) { return ft_unpack2(k_data[i >> 1]); }
vec2 load_v_pair(uint i) { return ft_unpack2(v_data[i >> 1]); }
void store_o_pair(uint i, vec2 x) { o_data[i >> 1] = ft_pack2(x); }
#else
float load_q_elem(uint i) { return FT_LOAD_SCALAR(q_data, i); }
float load_k_elem(uint i) { return FT_LOAD_SCALAR(k_data, i); }
float load_v_elem(uint i) { return FT_LOAD_SCALAR(v_data, i); }
vec2 load_q_pair(uint i) { return vec2(load_q_elem(i), load_q_elem(i + 1u)); }
vec2 load_k_pair(uint i) { return vec2(load_k_elem(i), load_k_elem(i + 1u)); }
vec2 load_v_pair(uint i) { return vec2(load_v_elem(i), load_v_elem(i + 1u)); }
void store_o_elem(uint i, float x) {
#if defined(FT_STORAGE_F32)
  o_data[i] = x;
#else
  o_data[i] = FT_ELEM(ft_float_to_bits(x));
#endif
}
void store_o_pair(uint i, vec2 x) { store_o_elem(i, x.x); store_o_elem(i + 1u, x.y); }
#endif

// ---- Serving layouts -----------------------------------------------------------------------------------------------
// A workgroup works on one sequence b (ft_seq_init(b) first): its query rows and keys, and where they start. Table
// values come from the device and are never trusted: starts and lengths are clamped into the tensors and the grid
// (pc.Sq, pc.Sk), page numbers into the cache, so a bad table gives wrong numbers, never an access out of range.
struct FtSeq {
  uint sq, sk;  // query rows, keys
  uint q0, k0;  // varlen: the sequence's first row of q/o/lse, of k/v
  uint table;   // paged: element index of block_table[b, 0]
};
FtSeq ft_seq;
uint ft_pages() { return pc.kv_rows / PAGE_SIZE; }
// Clamped table entry: uint in [lo, hi].
uint ft_table_entry(int x, uint lo, uint hi) { return clamp(uint(max(x, 0)), lo, hi); }
void ft_seq_init(uint b) {
  if (LAYOUT == FT_LAYOUT_VARLEN) {
    ft_seq.q0 = ft_table_entry(table_data[pc.table_off + b], 0u, pc.q_rows);
    ft_seq.k0 = ft_table_entry(lens_data[pc.lens_off + b], 0u, pc.kv_rows);
    ft_seq.sq = min(ft_table_entry(table_data[pc.table_off + b + 1u], ft_seq.q0, pc.q_rows) - ft_seq.q0, pc.Sq);
    ft_seq.sk = min(ft_table_entry(lens_data[pc.lens_off + b + 1u], ft_seq.k0, pc.kv_rows) - ft_seq.k0, pc.Sk);
  } else if (LAYOUT == FT_LAYOUT_PAGED) {
    // pc.Sk = pages_per_seq * PAGE_SIZE bounds every key's table column; no pages at all: no keys.
    ft_seq.sq = pc.Sq;
    ft_seq.sk = ft_pages() == 0u ? 0u : min(ft_table_entry(lens_data[pc.lens_off + b], 0u, pc.Sk) + pc.s_new, pc.Sk);
    ft_seq.table = pc.table_off + b * pc.table_sb;
  }
}
uint ft_sq() { return LAYOUT == FT_LAYOUT_DENSE ? pc.Sq : ft_seq.sq; }
uint ft_sk() { return LAYOUT == FT_LAYOUT_DENSE ? pc.Sk : ft_seq.sk; }
// Paged: the cache page holding key `key` (< ft_sk()) of the current sequence.
uint ft_page(uint key) { return ft_table_entry(table_data[ft_seq.table + key / PAGE_SIZE], 0u, ft_pages() - 1u); }

// ---- Shared index math --------------------------------------------------------------------------------------------
// Causal, bottom-right aligned: query row i sees keys j <= i + Sk - Sq (the sequence's lengths). Returns the number of
// visible keys of row i (0 .. Sk), as a signed int so rows before the diagonal's start give <= 0.
int ft_causal_limit(uint row) { return int(row) + int(ft_sk()) - int(ft_sq()) + 1; }
uint ft_kv_head(uint h) { return h / (pc.Hq / pc.Hkv); }
uint ft_q_base(uint b, uint row, uint h) {
  if (LAYOUT == FT_LAYOUT_VARLEN) return pc.q_off + (ft_seq.q0 + row) * pc.q_ss + h * pc.q_sh;
  return pc.q_off + b * pc.q_sb + row * pc.q_ss + h * pc.q_sh;
}
uint ft_k_base(uint b, uint key, uint hk) {
  if (LAYOUT == FT_LAYOUT_VARLEN) return pc.k_off + (ft_seq.k0 + key) * pc.k_ss + hk * pc.k_sh;
  if (LAYOUT == FT_LAYOUT_PAGED) return pc.k_off + ft_page(key) * pc.k_sb + (key % PAGE_SIZE) * pc.k_ss + hk * pc.k_sh;
  return pc.k_off + b * pc.k_sb + key * pc.k_ss + hk * pc.k_sh;
}
uint ft_v_base(uint b, uint key, uint hk) {
  if (LAYOUT == FT_LAYOUT_VARLEN) return pc.v_off + (ft_seq.k0 + key) * pc.v_ss + hk * pc.v_sh;
  if (LAYOUT == FT_LAYOUT_PAGED) return pc.v_off + ft_page(key) * pc.v_sb + (key % PAGE_SIZE) * pc.v_ss + hk * pc.v_sh;
  return pc.v_off + b * pc.v_sb + key * pc.v_ss + hk * pc.v_sh;
}
uint ft_o_base(uint b, uint row, uint h) {
  if (LAYOUT == FT_LAYOUT_VARLEN) return pc.o_off + (ft_seq.q0 + row) * pc.o_ss + h * pc.o_sh;
  return pc.o_off + b * pc.o_sb + row * pc.o_ss + h * pc.o_sh;
}
// A row's epilogue from its softmax sum l (log2-domain max m): a row that saw no key has l == 0 exactly (every P is
// exp2(-inf)) and gives O = 0, LSE -inf. Tested as l == 0, not l > 0, so that NaN in l (NaN in q, k or v) stays NaN
// in O and LSE instead of reading as "no key".
float ft_inv_l(float l) { return l == 0.0 ? 0.0 : 1.0 / l; }
float ft_lse2(float m, float l) { return l == 0.0 ? FT_NEG_INF : m + log2(l); }
// LSE is f32 [B, Hq, Sq] contiguous; varlen: [Hq, total_q].
uint ft_lse_index(uint b, uint h, uint row) {
  if (LAYOUT == FT_LAYOUT_VARLEN) return pc.lse_off + h * pc.q_rows + ft_seq.q0 + row;
  return pc.lse_off + (b * pc.Hq + h) * pc.Sq + row;
}

// ---- Attention variants, the forward's (the shared part is above) ---------------------------------------------------
// The keys [x, y) of the sequence that row `row` may see (ft_keys_of). Both bounds grow with the row, so a run of rows
// sees [x of its first, y of its last).
ivec2 ft_row_keys(uint row) { return ft_keys_of(int(row) + int(ft_sk()) - int(ft_sq()), int(ft_sk())); }
// The keys within [kv_begin, kv_end) that rows first..last (valid rows) visit: key tiles wholly outside every row's
// window are never loaded. The start stays on the split's BLOCK_N grid (aligned loads).
uvec2 ft_rows_key_range(uint first, uint last, uint kv_begin, uint kv_end) {
  if (CAUSAL == 0u && !FT_WINDOW) return uvec2(kv_begin, kv_end);
  const uint stop = uint(clamp(ft_row_keys(last).y, int(kv_begin), int(kv_end)));
  if (!FT_WINDOW) return uvec2(kv_begin, stop);
  const uint start = uint(clamp(ft_row_keys(first).x, int(kv_begin), int(stop)));
  return uvec2(kv_begin + (start - kv_begin) / BLOCK_N * BLOCK_N, stop);
}
float ft_variant_score(float s, uint row, uint key) {
  float dcap;
  return ft_score_at(s, int(row) + int(ft_sk()) - int(ft_sq()) - int(key), dcap);
}
// A row's epilogue from its max m and sum l (log2 domain), with the sink joining the denominator where with_sink (a
// split-KV partial leaves it to the reduce, which adds it once): the factor that normalizes the row's accumulator,
// and its log2-domain LSE. A row that saw no key gives 0 and the sink as its LSE.
float ft_row_norm(float m, float l, bool with_sink, out float lse2) {
  if (!FT_SINKS || !with_sink) {
    lse2 = ft_lse2(m, l);
    return ft_inv_l(l);
  }
  const float mm = max(m, ft_var.sink2), a = exp2(m - mm), lt = l * a + exp2(ft_var.sink2 - mm);
  lse2 = mm + log2(lt);
  return a / lt;
}

// ---- Split-KV (n_splits > 1) -------------------------------------------------------------------------------------
// Workgroup x index = row_tile * n_splits + split. Split s covers whole BLOCK_N key tiles [begin, end).
// Scratch layout (f32): per (b, h, row, split) a record of HEAD_DIM + 1 floats: the split's normalized output
// O_s = acc / l (HEAD_DIM floats) then its log2-domain LSE m + log2(l) (-inf when the split saw no key; O_s = 0).
// The reduce pass (attn_splitkv_reduce.comp, shared by every path) combines the records and writes O and LSE.

// ---- Launch order -------------------------------------------------------------------------------------------------
// The workgroup's (row tile * n_splits + split, head, batch). A grid launches in linear order, x fastest. With
// FT_FLAG_ROWS_OUTER (causal) that order is read with the row tile slowest within groups of HEAD_GROUP (batch,
// head) pairs instead (0: one group of all): the longest rows of a group's heads first and the shortest last (list
// scheduling's longest-first), where x fastest leaves a tail of mixed lengths; groups keep fewer heads' K/V in flight.
// HEAD_GROUP is a specialization constant, so shaders without groups keep the plain form (as a push constant the
// extra code cost the portable shaders 20-23%: docs/PERFORMANCE.md).
uvec3 ft_wg() {
  const uvec3 g = gl_WorkGroupID, n = gl_NumWorkGroups;
  if ((pc.flags & FT_FLAG_ROWS_OUTER) == 0u) return g;
  const uint pairs = n.y * n.z, lin = g.x + n.x * (g.y + n.y * g.z);
  if (HEAD_GROUP == 0u) {
    const uint bh = lin % pairs;
    return uvec3(lin / pairs, bh % n.y, bh / n.y);
  }
  const uint size = min(HEAD_GROUP, pairs), per = size * n.x, first = lin / per * size, r = lin % per;
  const uint in_group = min(size, pairs - first);  // the last group may be smaller
  const uint bh = first + r % in_group;
  return uvec3(r / in_group, bh % n.y, bh / n.y);
}
uint ft_head() { return ft_wg().y; }
uint ft_batch() { return ft_wg().z; }
// With FT_FLAG_REVERSE_ROWS (set for causal calls) the first workgroups take the last row tiles, which see the most
// keys, so the grid's tail is short work instead of the longest rows.
uint ft_row_tile() {
  uint t = ft_wg().x / pc.n_splits;
  return (pc.flags & FT_FLAG_REVERSE_ROWS) != 0u ? gl_NumWorkGroups.x / pc.n_splits - 1u - t : t;
}
uint ft_split() { return ft_wg().x % pc.n_splits; }
void ft_split_range(uint split, out uint kv_begin, out uint kv_end) {
  uint n_tiles = (ft_sk() + BLOCK_N - 1u) / BLOCK_N;
  uint per = (n_tiles + pc.n_splits - 1u) / pc.n_splits;
  kv_begin = min(split * per * BLOCK_N, ft_sk());
  kv_end = min((split + 1u) * per * BLOCK_N, ft_sk());
}
uint ft_scratch_record(uint b, uint h, uint row, uint split) {
  return (((b * pc.Hq + h) * pc.Sq + row) * pc.n_splits + split) * (HEAD_DIM + 1u);
}

#endif  // FT_OWN_ABI

#endif  // FT_ATTN_COMMON_GLSL
