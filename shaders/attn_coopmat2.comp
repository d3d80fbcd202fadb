#version 450
// flashtile attention forward on VK_NV_cooperative_matrix2: workgroup-scope tiles, tensor layouts with clamping for
// ragged edges, row reductions and per-element operations; no scalar softmax code.
//
// One workgroup computes BLOCK_M query rows of one (batch, head) over all keys (or one KV split). Per KV tile of
// BLOCK_N keys (attend_tile):
//   load_kv_tile   Kᵀ (transposed tensor view) and V straight from the buffers through clamped tensor layouts (keys
//                  >= Sk read 0; id 23 makes full tiles unclamped with visibly aligned strides on aligned calls);
//                  bf16 goes through one shared K-then-V buffer, converted to f16
//   compute_scores S = Q·Kᵀ (Q a use-A tile held across the loop, or reloaded per tile: id 27), scaled to the log2
//                  domain (or the scale folded into exp2, id 25), masked (ragged keys, causal diagonal) by a per-element operation only on tiles that
//                  need it
//   online_softmax row max by coopMatReduceNV, P = exp2(S - m) per element, row sum by P·1 on the matrix units,
//                  the rescale factor smeared across the O tile's columns by a reduction. l and m are BM x BN
//                  matrices, or BM x NARROW ones (id 24)
//   accumulate_pv  O = O * alpha + P·V, P converted from accumulator to use-A in registers
// The epilogue divides by the row sum and stores O through a clamped tensor layout (f16) or per element (bf16,
// split-KV records), and LSE per row.
//
// Attention variants (VARIANTS, attn_common.glsl; plain pipelines fold every branch away): the key tiles outside every
// row's window are skipped (ft_rows_key_range), softcap and ALiBi transform the scaled scores and the window masks
// them in one per-element operation (variant_op), and the sink joins each row's denominator in the epilogue (split-KV
// leaves it to the reduce). Softcap and ALiBi are not linear in q.k, so their pipelines keep the scale out of exp2
// (id 25 has no effect there).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#define FT_T16 float16_t
#define FT_T16_FLOAT16 1
#include "attn_common.glsl"
#include "coopmat_common.glsl"

// id 23: on aligned calls (every Q/K/V offset and stride a multiple of 8 elements) the Q/K/V tensor layouts get bases
// and row strides that are visibly multiples of 8 elements (x & ~7, a no-op there), so the compiler may use 16-byte
// accesses without a runtime check, and full K/V tiles load unclamped, the ragged last tile being a peeled, clamped
// step (llama.cpp's "aligned" coopmat2 scheme).
layout(constant_id = 23) const uint ALIGNED_LOADS = 0;
// id 24: columns of the l, m, rescale-factor and row-sum matrices; 0 keeps them BM x BN. A multiple of the device's
// N granularity for workgroup-scope matrices (16 at 128 invocations, 32 at 256 on NVIDIA). Fewer accumulator registers,
// BN/NARROW times fewer exp2 for the rescale factor, a BM x BN x NARROW row-sum GEMM instead of BM x BN x BN; costs one
// more reduction per tile (the new row max smeared back to BM x BN for P).
layout(constant_id = 24) const uint NARROW = 0;
// id 25: the softmax scale folded into P's exp2 (fma(s, scale, -m)) and the row max, instead of multiplying every
// score; m starts at the finite FT_M_NONE so exp2 needs no -inf guard. Ignored with softcap or ALiBi (FOLD below).
layout(constant_id = 25) const uint FOLD_SCALE = 0;
// id 27 (tensor loads): 1 reloads Q per tile through its tensor layout (from L1/L2) instead of keeping a use-A tile
// in registers across the loop; frees Q's registers (BM x D f16 over the workgroup: 64 a thread at 64 x 256 and 128
// invocations), which with an f32 BM x D O spill.
layout(constant_id = 27) const uint Q_RELOAD = 0;

// id 30 (with id 23): the host guarantees every K/V tile of the call is full (Sk a multiple of BLOCK_N, so split
// and causal ranges start on tile boundaries and never read past Sk): aligned calls run one loop body of unclamped
// loads, without the peeled ragged tile (llama.cpp compiles its aligned pipeline this way; the peeled form inlines
// attend_tile twice).
layout(constant_id = 30) const uint ALL_FULL = 0;

const uint BM = BLOCK_M;
const uint BN = BLOCK_N;
const uint D = HEAD_DIM;
const bool STAGED = DTYPE != FT_DTYPE_F16;  // bf16: through shared memory, converted to f16
const bool Q_PER_TILE = Q_RELOAD != 0u && !STAGED;              // id 27 (staged Q is read from shared memory)
const uint NW = NARROW != 0u ? NARROW : BN;                     // columns of the narrow row-value matrices
const bool FOLD = FOLD_SCALE != 0u && !FT_SOFTCAP && !FT_ALIBI;  // their transforms take the scaled score
#define FT_M_NONE uintBitsToFloat(0xfeffffffu)  // -FLT_MAX/2: m of a row that saw no key yet (FOLD)
const uint D8 = D / 8u;
const uint KS4 = (D + 8u) / 4u;              // staged tile row stride in f16vec4
shared f16vec4 sh_kv[STAGED ? BN * KS4 : 1u];  // K, then V, of the current tile
shared f16vec4 sh_q[STAGED ? BM * KS4 : 1u];

#define ACC(r, c) coopmat<float, gl_ScopeWorkgroup, r, c, gl_MatrixUseAccumulator>
#define Q_A coopmat<float16_t, gl_ScopeWorkgroup, BM, D, gl_MatrixUseA>
#define K_T coopmat<float16_t, gl_ScopeWorkgroup, D, BN, gl_MatrixUseB>
#define V_B coopmat<float16_t, gl_ScopeWorkgroup, BN, D, gl_MatrixUseB>
#define P_A coopmat<float16_t, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseA>
// O's accumulator: f32, or f16 in the FT_O_F16 module (attn_coopmat2_o16), which only calls allowing reduced
// precision take (Options::allow_reduced_precision_accumulation). f16 O halves O's registers; llama.cpp's cm2 shader
// accumulates O in f16 too. By default flashtile keeps f32, as FlashAttention and cuDNN do.
// Headroom: P is scaled by 2^-o_shift, o_shift = max(0, floor(log2 Sk) - 10), so that l = sum(P) < 2^11 and
// |O| <= l max|v| stays below f16's 65504 while |v| < 32, at any Sk. l carries the same factor (O / l is unchanged) and
// the LSE adds o_shift back.
#ifdef FT_O_F16
#define O_ACC coopmat<float16_t, gl_ScopeWorkgroup, BM, D, gl_MatrixUseAccumulator>
#define O_CAST(x) O_ACC(x)
#else
#define O_ACC ACC(BM, D)
#define O_CAST(x) x
#endif

float max_op(const in float a, const in float b) { return max(a, b); }
float add_op(const in float a, const in float b) { return a + b; }
float smear_op(const in float a, const in float b) { return a; }

// Scores of keys the row may not see -> -inf. n0: the tile's first key; kv_end: keys >= kv_end are out (ragged or
// outside the split); diag = m0 + Sk - Sq: row r sees keys <= r + diag (causal).
float mask_op(const in uint r, const in uint c, const in float s, const in uint n0, const in uint kv_end,
              const in int diag) {
  uint key = n0 + c;
  bool out_ = key >= kv_end || (CAUSAL != 0u && int(key) > int(r) + diag);
  return out_ ? FT_NEG_INF : s;
}
// P = exp2(s - m). Unfolded: s is already scaled, and rows that saw no key yet (m = -inf) use 0 so that everything
// stays 0. Folded: s is raw, m finite (FT_M_NONE at worst), and masked s = -inf gives 0.
float exp_op(const in uint r, const in uint c, const in float s, const in float m) {
  if (FOLD) return exp2(fma(s, pc.scale_log2, -m));
  return exp2(s - (m == FT_NEG_INF ? 0.0 : m));
}
// Rescale factor exp2(m_old - m_new) (m_new = -inf only while m_old is -inf too: unfolded).
float alpha_op(const in uint r, const in uint c, const in float m_old, const in float m_new) {
  if (FOLD) return exp2(m_old - m_new);
  return exp2(m_old - (m_new == FT_NEG_INF ? 0.0 : m_new));
}
float max2_op(const in uint r, const in uint c, const in float a, const in float b) { return max(a, b); }
float inv_op(const in uint r, const in uint c, const in float l) { return ft_inv_l(l); }

uint b, h, hk, m0, split;
uint kv_end;      // keys >= kv_end are out of this workgroup's range (ragged end, causal limit, split end)
int diag;         // m0 + Sk - Sq: row r sees keys <= r + diag (causal)
int all_lo, all_hi;  // window calls: every row of the workgroup sees the keys [all_lo, all_hi)
uint k_base, v_base;
#ifdef FT_O_F16
float o_shift;    // log2 of P's headroom factor (see O_ACC)
#endif

// Whether tile n0 holds a key that some row may not see (its scores need masking).
bool tile_needs_mask(const uint n0) {
  if (FT_WINDOW) return int(n0) < all_lo || int(n0 + BN) > min(all_hi, int(kv_end));
  return n0 + BN > kv_end || (CAUSAL != 0u && int(n0 + BN - 1u) > diag);
}
// Variant calls' scores: softcap and ALiBi on the scaled score s, then (masked != 0) -inf for keys outside the row's
// window, causal limit or kv_end (ft_keys_of).
float variant_op(const in uint r, const in uint c, const in float s, const in uint n0, const in uint kv_end,
                 const in int diag, const in uint masked) {
  const int key = int(n0 + c), row_diag = int(r) + diag;
  float dcap;
  const float x = ft_score_at(s, row_diag - key, dcap);
  if (masked == 0u) return x;
  const ivec2 keys = ft_keys_of(row_diag, int(kv_end));
  return key < keys.x || key >= keys.y ? FT_NEG_INF : x;
}
// A row's normalizer and log2-domain LSE from its sum l and max m: ft_row_norm, the sink joining the denominator
// unless this is a split-KV partial (the reduce adds it once).
float row_norm(const float l, const float m, out float lse2) {
#ifdef FT_O_F16
  return ft_row_norm(m + o_shift, l, pc.n_splits == 1u, lse2);
#else
  return ft_row_norm(m, l, pc.n_splits == 1u, lse2);
#endif
}
float norm_op(const in uint r, const in uint c, const in float l, const in float m) {
  float lse2;
  return row_norm(l, m, lse2);
}

// Per-element stores (bf16 output, split-KV records): row r of the tile, column c of the head dim.
float store_o_op(const in uint r, const in uint c, const in float o, const in uint unused) {
  uint row = m0 + r;
  if (row < pc.Sq && c < D) {
    if (pc.n_splits > 1u) {
      scratch_data[ft_scratch_record(b, h, row, split) + c] = o;
    } else {
      o_data[ft_o_base(b, row, h) + c] = FT_CM_FROM_BITS(ft_float_to_bits(o));
    }
  }
  return o;
}
// Column 0 of the row-sum tile carries l; m is the matching element of the row-max tile.
float store_lse_op(const in uint r, const in uint c, const in float l, const in float m) {
  uint row = m0 + r;
  if (c == 0u && row < pc.Sq) {
    float lse2;
    row_norm(l, m, lse2);
    if (pc.n_splits > 1u) {
      scratch_data[ft_scratch_record(b, h, row, split) + D] = lse2;
    } else if ((pc.flags & FT_FLAG_WRITE_LSE) != 0u) {
      lse_data[ft_lse_index(b, h, row)] = lse2 == FT_NEG_INF ? FT_NEG_INF : lse2 * FT_LN2;
    }
  }
  return l;
}

bool in_vec;

void stage_q() {
  [[unroll]] for (uint i = gl_LocalInvocationID.x; i < BM * D8; i += WG_SIZE) {
    uint r = i / D8, c = i % D8;
    uvec4 w = uvec4(0u);
    if (m0 + r < pc.Sq) w = cm_load8_q(ft_q_base(b, m0 + r, h) + c * 8u, in_vec);
    sh_q[r * KS4 + 2u * c] = f16vec4(unpackFloat2x16(w.x), unpackFloat2x16(w.y));
    sh_q[r * KS4 + 2u * c + 1u] = f16vec4(unpackFloat2x16(w.z), unpackFloat2x16(w.w));
  }
}
void stage_kv(uint n0, bool is_v) {
  [[unroll]] for (uint i = gl_LocalInvocationID.x; i < BN * D8; i += WG_SIZE) {
    uint r = i / D8, c = i % D8;
    uvec4 w = uvec4(0u);
    if (n0 + r < pc.Sk)
      w = is_v ? cm_load8_v(ft_v_base(b, n0 + r, hk) + c * 8u, in_vec) : cm_load8_k(ft_k_base(b, n0 + r, hk) + c * 8u, in_vec);
    sh_kv[r * KS4 + 2u * c] = f16vec4(unpackFloat2x16(w.x), unpackFloat2x16(w.y));
    sh_kv[r * KS4 + 2u * c + 1u] = f16vec4(unpackFloat2x16(w.z), unpackFloat2x16(w.w));
  }
}

// ---- load_kv_tile (tensor loads) ----
// How a K/V tile loads (id 23): an unaligned call or id 23 off, a full tile of an aligned call, its ragged last tile.
const uint KV_PLAIN = 0u, KV_ALIGNED_FULL = 1u, KV_ALIGNED_RAGGED = 2u;
// KV_PLAIN: clamped (keys >= Sk read 0). Aligned calls: the base and stride visibly multiples of 8 elements; full
// tiles unclamped.
void load_k(out K_T k_t, const uint n0, const uint mode) {
  tensorViewNV<2, false, 1, 0> view_t = createTensorViewNV(2, false, 1, 0);
  if (mode == KV_ALIGNED_FULL) {
    tensorLayoutNV<2, gl_CooperativeMatrixClampModeUndefinedNV> t = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeUndefinedNV);
    t = setTensorLayoutDimensionNV(t, pc.Sk, D);
    t = setTensorLayoutStrideNV(t, pc.k_ss & ~7u, 1);
    coopMatLoadTensorNV(k_t, k_data, k_base & ~7u, sliceTensorLayoutNV(t, n0, BN, 0, D), view_t);
  } else if (mode != KV_PLAIN) {
    tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> t = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    t = setTensorLayoutDimensionNV(t, pc.Sk, D);
    t = setTensorLayoutStrideNV(t, pc.k_ss & ~7u, 1);
    coopMatLoadTensorNV(k_t, k_data, k_base & ~7u, sliceTensorLayoutNV(t, n0, BN, 0, D), view_t);
  } else {
    tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> t = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    t = setTensorLayoutDimensionNV(t, pc.Sk, D);
    t = setTensorLayoutStrideNV(t, pc.k_ss, 1);
    coopMatLoadTensorNV(k_t, k_data, k_base, sliceTensorLayoutNV(t, n0, BN, 0, D), view_t);
  }
}
void load_v(out V_B v_b, const uint n0, const uint mode) {
  if (mode == KV_ALIGNED_FULL) {
    tensorLayoutNV<2, gl_CooperativeMatrixClampModeUndefinedNV> t = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeUndefinedNV);
    t = setTensorLayoutDimensionNV(t, pc.Sk, D);
    t = setTensorLayoutStrideNV(t, pc.v_ss & ~7u, 1);
    coopMatLoadTensorNV(v_b, v_data, v_base & ~7u, sliceTensorLayoutNV(t, n0, BN, 0, D));
  } else if (mode != KV_PLAIN) {
    tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> t = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    t = setTensorLayoutDimensionNV(t, pc.Sk, D);
    t = setTensorLayoutStrideNV(t, pc.v_ss & ~7u, 1);
    coopMatLoadTensorNV(v_b, v_data, v_base & ~7u, sliceTensorLayoutNV(t, n0, BN, 0, D));
  } else {
    tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> t = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    t = setTensorLayoutDimensionNV(t, pc.Sk, D);
    t = setTensorLayoutStrideNV(t, pc.v_ss, 1);
    coopMatLoadTensorNV(v_b, v_data, v_base, sliceTensorLayoutNV(t, n0, BN, 0, D));
  }
}

// ---- load_q: rows past Sq read 0 (clamped layout) ----
void load_q(out Q_A q_a) {
  if (STAGED) {
    coopMatLoad(q_a, sh_q, 0, KS4, gl_CooperativeMatrixLayoutRowMajor);
    return;
  }
  const bool hint = ALIGNED_LOADS != 0u && in_vec;  // id 23: alignment visible (x & ~7 is a no-op when in_vec)
  tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> tl_q = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
  tl_q = setTensorLayoutDimensionNV(tl_q, pc.Sq, D);
  if (hint) {
    tl_q = setTensorLayoutStrideNV(tl_q, pc.q_ss & ~7u, 1);
    coopMatLoadTensorNV(q_a, q_data, ft_q_base(b, 0u, h) & ~7u, sliceTensorLayoutNV(tl_q, m0, BM, 0, D));
  } else {
    tl_q = setTensorLayoutStrideNV(tl_q, pc.q_ss, 1);
    coopMatLoadTensorNV(q_a, q_data, ft_q_base(b, 0u, h), sliceTensorLayoutNV(tl_q, m0, BM, 0, D));
  }
}

// One KV tile: scores, online softmax, O update. l_w/m_w (BM x BN) are used when NARROW is 0, l_n/m_n (BM x NW)
// otherwise; the unused pair is dead code.
void attend_tile(const uint n0, const uint kv_mode, const in Q_A q_a, inout O_ACC o, inout ACC(BM, BN) l_w,
                 inout ACC(BM, BN) m_w, inout ACC(BM, NW) l_n, inout ACC(BM, NW) m_n) {
  // ---- load_kv_tile + compute_scores ----
  K_T k_t;
  V_B v_b;
  if (STAGED) {
    barrier();  // the previous tile's V is in registers
    stage_kv(n0, false);
    barrier();
    coopMatLoad(k_t, sh_kv, 0, KS4, gl_CooperativeMatrixLayoutColumnMajor);
    barrier();
    stage_kv(n0, true);
    barrier();
    coopMatLoad(v_b, sh_kv, 0, KS4, gl_CooperativeMatrixLayoutRowMajor);
  } else {
    load_k(k_t, n0, kv_mode);
  }
  ACC(BM, BN) s = ACC(BM, BN)(0.0);
  if (Q_PER_TILE) {
    Q_A q_t;  // id 27: Q for this tile only
    load_q(q_t);
    s = coopMatMulAdd(q_t, k_t, s);
  } else {
    s = coopMatMulAdd(q_a, k_t, s);
  }
  if (!FOLD) s *= pc.scale_log2;
  const bool masked = tile_needs_mask(n0);
  if (FT_WINDOW || FT_SOFTCAP || FT_ALIBI) {
    if (masked || FT_SOFTCAP || FT_ALIBI) coopMatPerElementNV(s, s, variant_op, n0, kv_end, diag, masked ? 1u : 0u);
  } else if (masked) {
    coopMatPerElementNV(s, s, mask_op, n0, kv_end, diag);
  }

  // ---- online_softmax ----
  P_A p_a;
  if (NARROW == 0u) {
    ACC(BM, BN) rowmax, m_new, p, alpha;
    coopMatReduceNV(rowmax, s, gl_CooperativeMatrixReduceRowNV, max_op);
    if (FOLD) rowmax *= pc.scale_log2;  // max(s) * scale = max(s * scale): rounding is monotonic
    coopMatPerElementNV(m_new, rowmax, max2_op, m_w);
#ifdef FT_O_F16
    coopMatPerElementNV(p, s, exp_op, m_new + ACC(BM, BN)(o_shift));
#else
    coopMatPerElementNV(p, s, exp_op, m_new);
#endif
    coopMatPerElementNV(alpha, m_w, alpha_op, m_new);
    m_w = m_new;
    p_a = P_A(p);
    const coopmat<float16_t, gl_ScopeWorkgroup, BN, BN, gl_MatrixUseB> ones =
        coopmat<float16_t, gl_ScopeWorkgroup, BN, BN, gl_MatrixUseB>(1.0);
    ACC(BM, BN) rowsum = ACC(BM, BN)(0.0);
    rowsum = coopMatMulAdd(p_a, ones, rowsum);  // row sums of the f16 P that multiplies V
    l_w = alpha * l_w + rowsum;
    if (!STAGED) load_v(v_b, n0, kv_mode);
    ACC(BM, D) alpha_d;
    coopMatReduceNV(alpha_d, alpha, gl_CooperativeMatrixReduceRowNV, smear_op);
    o *= O_CAST(alpha_d);
  } else {
    // Row values as BM x NW matrices; a row reduction may produce any number of columns (GLSL_NV_cooperative_matrix2).
    ACC(BM, NW) rowmax, m_new, alpha;
    coopMatReduceNV(rowmax, s, gl_CooperativeMatrixReduceRowNV, max_op);
    if (FOLD) rowmax *= pc.scale_log2;
    coopMatPerElementNV(m_new, rowmax, max2_op, m_n);
    coopMatPerElementNV(alpha, m_n, alpha_op, m_new);
    m_n = m_new;
    ACC(BM, BN) m_wide, p;
#ifdef FT_O_F16
    coopMatReduceNV(m_wide, m_n + ACC(BM, NW)(o_shift), gl_CooperativeMatrixReduceRowNV, smear_op);
#else
    coopMatReduceNV(m_wide, m_n, gl_CooperativeMatrixReduceRowNV, smear_op);
#endif
    coopMatPerElementNV(p, s, exp_op, m_wide);
    p_a = P_A(p);
    const coopmat<float16_t, gl_ScopeWorkgroup, BN, NW, gl_MatrixUseB> ones =
        coopmat<float16_t, gl_ScopeWorkgroup, BN, NW, gl_MatrixUseB>(1.0);
    ACC(BM, NW) rowsum = ACC(BM, NW)(0.0);
    rowsum = coopMatMulAdd(p_a, ones, rowsum);
    l_n = alpha * l_n + rowsum;
    if (!STAGED) load_v(v_b, n0, kv_mode);
    ACC(BM, D) alpha_d;
    coopMatReduceNV(alpha_d, alpha, gl_CooperativeMatrixReduceRowNV, smear_op);
    o *= O_CAST(alpha_d);
  }

  // ---- accumulate_pv ----
  o = coopMatMulAdd(p_a, v_b, o);
}

void main() {
  b = ft_batch();
  h = ft_head();
  hk = ft_kv_head(h);
  split = ft_split();
  m0 = ft_row_tile() * BM;
  in_vec = ((pc.q_off | pc.q_sb | pc.q_ss | pc.q_sh | pc.k_off | pc.k_sb | pc.k_ss | pc.k_sh | pc.v_off | pc.v_sb |
             pc.v_ss | pc.v_sh) & 7u) == 0u;

  uint kv_begin;
  ft_split_range(split, kv_begin, kv_end);
  diag = int(m0) + int(pc.Sk) - int(pc.Sq);
  if (VARIANTS != 0u) ft_variants_init(b, h);
  if (FT_WINDOW) {
    // Key tiles no row of this workgroup sees (past the last row's window, before the first row's) are skipped.
    const uvec2 keys = ft_rows_key_range(m0, min(m0 + BM, pc.Sq) - 1u, kv_begin, kv_end);
    kv_begin = keys.x;
    kv_end = keys.y;
    all_lo = ft_row_keys(m0 + BM - 1u).x;  // both bounds grow with the row
    all_hi = ft_row_keys(m0).y;
  } else if (CAUSAL != 0u) {
    int lim = int(min(m0 + BM, pc.Sq)) - 1 + int(pc.Sk) - int(pc.Sq) + 1;
    kv_end = uint(clamp(lim, int(kv_begin), int(kv_end)));
  }
  k_base = ft_k_base(b, 0u, hk);
  v_base = ft_v_base(b, 0u, hk);
#ifdef FT_O_F16
  o_shift = float(max(0, findMSB(pc.Sk) - 10));
#endif

  // ---- load_q ----
  Q_A q_a;
  if (STAGED) {
    stage_q();
    barrier();
  }
  if (!Q_PER_TILE) {
    load_q(q_a);
  } else {
    q_a = Q_A(float16_t(0.0));  // unused (attend_tile loads its own)
  }

  const float m_init = FOLD ? FT_M_NONE : FT_NEG_INF;
  O_ACC o = O_ACC(0.0);
  ACC(BM, BN) l_w = ACC(BM, BN)(0.0);
  ACC(BM, BN) m_w = ACC(BM, BN)(m_init);
  ACC(BM, NW) l_n = ACC(BM, NW)(0.0);
  ACC(BM, NW) m_n = ACC(BM, NW)(m_init);

  if (ALL_FULL != 0u && ALIGNED_LOADS != 0u && !STAGED && in_vec) {
    // Every tile is full in memory (n0 + BN <= Sk); causal / split ends inside a tile are masked by attend_tile.
    [[dont_unroll]] for (uint n0 = kv_begin; n0 < kv_end; n0 += BN) {
      attend_tile(n0, KV_ALIGNED_FULL, q_a, o, l_w, m_w, l_n, m_n);
    }
  } else if (ALIGNED_LOADS != 0u && !STAGED && in_vec) {
    // Full tiles (n0 + BN <= Sk), then at most one ragged tile, peeled. kv_begin and Sk / BN * BN are multiples of
    // BN, so every tile before full_end is full.
    const uint full_end = max(kv_begin, min(kv_end, pc.Sk / BN * BN));
    uint n0 = kv_begin;
    [[dont_unroll]] for (; n0 < full_end; n0 += BN) {
      attend_tile(n0, KV_ALIGNED_FULL, q_a, o, l_w, m_w, l_n, m_n);
    }
    if (n0 < kv_end) attend_tile(n0, KV_ALIGNED_RAGGED, q_a, o, l_w, m_w, l_n, m_n);
  } else {
    [[dont_unroll]] for (uint n0 = kv_begin; n0 < kv_end; n0 += BN) {
      attend_tile(n0, KV_PLAIN, q_a, o, l_w, m_w, l_n, m_n);
    }
  }

  // ---- store_output ----
  ACC(BM, D) inv_d;
  if (NARROW == 0u) {
    coopMatPerElementNV(l_w, l_w, store_lse_op, m_w);
    ACC(BM, BN) inv_l;
    if (FT_SINKS) {
      coopMatPerElementNV(inv_l, l_w, norm_op, m_w);
    } else {
      coopMatPerElementNV(inv_l, l_w, inv_op);
    }
    coopMatReduceNV(inv_d, inv_l, gl_CooperativeMatrixReduceRowNV, smear_op);
  } else {
    coopMatPerElementNV(l_n, l_n, store_lse_op, m_n);
    ACC(BM, NW) inv_l;
    if (FT_SINKS) {
      coopMatPerElementNV(inv_l, l_n, norm_op, m_n);
    } else {
      coopMatPerElementNV(inv_l, l_n, inv_op);
    }
    coopMatReduceNV(inv_d, inv_l, gl_CooperativeMatrixReduceRowNV, smear_op);
  }
#ifdef FT_O_F16
  ACC(BM, D) of = ACC(BM, D)(o);
#else
#define of o
#endif
  of *= inv_d;
  if (DTYPE == FT_DTYPE_F16 && pc.n_splits == 1u) {
    tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> tl_o = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    tl_o = setTensorLayoutDimensionNV(tl_o, pc.Sq, D);
    tl_o = setTensorLayoutStrideNV(tl_o, pc.o_ss, 1);
    coopmat<float16_t, gl_ScopeWorkgroup, BM, D, gl_MatrixUseAccumulator> o16 =
        coopmat<float16_t, gl_ScopeWorkgroup, BM, D, gl_MatrixUseAccumulator>(of);
    coopMatStoreTensorNV(o16, o_data, ft_o_base(b, 0u, h), sliceTensorLayoutNV(tl_o, m0, BM, 0, D));
  } else {
    coopMatPerElementNV(of, of, store_o_op, 0u);
  }
#undef of
}
