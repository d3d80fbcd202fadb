#version 450
// flashtile attention forward on VK_NV_cooperative_matrix2: workgroup-scope tiles, tensor layouts with clamping for
// ragged edges, row reductions and per-element operations; no scalar softmax code.
//
// One workgroup computes BLOCK_M query rows of one (batch, head) over all keys (or one KV split). Per KV tile of
// BLOCK_N keys:
//   load_kv_tile   Kᵀ (transposed tensor view) and V straight from the buffers through clamped tensor layouts (keys
//                  >= Sk read 0; id 21 makes full tiles unclamped); bf16 (and f16 with id 22) goes through one shared
//                  K-then-V buffer, converted to f16
//   compute_scores S = Q·Kᵀ (Q a use-A tile held across the loop), scaled to the log2 domain, masked (ragged keys,
//                  causal diagonal) by a per-element operation only on tiles that need it
//   online_softmax row max by coopMatReduceNV, P = exp2(S - m) per element, row sum by P·1 on the matrix units,
//                  the rescale factor smeared across the O tile's columns by a reduction
//   accumulate_pv  O = O * alpha + P·V, P converted from accumulator to use-A in registers
// The epilogue divides by the row sum and stores O through a clamped tensor layout (f16) or per element (bf16,
// split-KV records), and LSE per row.
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

// id 21: full K/V tiles load through unclamped tensor layouts (1), or every tile is bounds-checked (0, the default:
// on the H200's driver the unclamped loads ran 2.5-4x slower, bench/results/2026-11-29_h200_vulkan).
layout(constant_id = 21) const uint UNCLAMPED_FULL_TILES = 0;
// id 22: f16 too goes through the shared staging buffers (1), like bf16, instead of tensor-layout loads (0).
layout(constant_id = 22) const uint STAGE_F16 = 0;

const uint BM = BLOCK_M;
const uint BN = BLOCK_N;
const uint D = HEAD_DIM;
const bool STAGED = DTYPE != FT_DTYPE_F16 || STAGE_F16 != 0u;  // bf16: through shared memory, converted to f16
const uint D8 = D / 8u;
const uint KS4 = (D + 8u) / 4u;              // staged tile row stride in f16vec4
shared f16vec4 sh_kv[STAGED ? BN * KS4 : 1u];  // K, then V, of the current tile
shared f16vec4 sh_q[STAGED ? BM * KS4 : 1u];

#define ACC(r, c) coopmat<float, gl_ScopeWorkgroup, r, c, gl_MatrixUseAccumulator>

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
// exp2(s - m), with rows that saw no key yet (m = -inf) using 0 so that everything stays 0.
float exp_op(const in uint r, const in uint c, const in float s, const in float m) {
  return exp2(s - (m == FT_NEG_INF ? 0.0 : m));
}
float max2_op(const in uint r, const in uint c, const in float a, const in float b) { return max(a, b); }
float inv_op(const in uint r, const in uint c, const in float l) { return l > 0.0 ? 1.0 / l : 0.0; }

uint b, h, hk, m0, split;

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
    float lse2 = l > 0.0 ? m + log2(l) : FT_NEG_INF;
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

void main() {
  b = gl_WorkGroupID.z;
  h = gl_WorkGroupID.y;
  hk = ft_kv_head(h);
  split = ft_split();
  m0 = ft_row_tile() * BM;
  in_vec = ((pc.q_off | pc.q_sb | pc.q_ss | pc.q_sh | pc.k_off | pc.k_sb | pc.k_ss | pc.k_sh | pc.v_off | pc.v_sb |
             pc.v_ss | pc.v_sh) & 7u) == 0u;

  uint kv_begin, kv_end;
  ft_split_range(split, kv_begin, kv_end);
  const int diag = int(m0) + int(pc.Sk) - int(pc.Sq);
  if (CAUSAL != 0u) {
    int lim = int(min(m0 + BM, pc.Sq)) - 1 + int(pc.Sk) - int(pc.Sq) + 1;
    kv_end = uint(clamp(lim, int(kv_begin), int(kv_end)));
  }

  // ---- load_q: rows past Sq read 0 (clamped layout) ----
  tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> tl_q = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
  tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> tl_k = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
  tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> tl_v = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
  tl_q = setTensorLayoutDimensionNV(tl_q, pc.Sq, D);
  tl_k = setTensorLayoutDimensionNV(tl_k, pc.Sk, D);
  tl_v = setTensorLayoutDimensionNV(tl_v, pc.Sk, D);
  tl_q = setTensorLayoutStrideNV(tl_q, pc.q_ss, 1);
  tl_k = setTensorLayoutStrideNV(tl_k, pc.k_ss, 1);
  tl_v = setTensorLayoutStrideNV(tl_v, pc.v_ss, 1);
  // Full tiles need no bounds checks: unclamped layouts over the same tensors (the ragged last tile uses tl_k/tl_v).
  tensorLayoutNV<2, gl_CooperativeMatrixClampModeUndefinedNV> tl_ku = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeUndefinedNV);
  tensorLayoutNV<2, gl_CooperativeMatrixClampModeUndefinedNV> tl_vu = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeUndefinedNV);
  tl_ku = setTensorLayoutDimensionNV(tl_ku, pc.Sk, D);
  tl_vu = setTensorLayoutDimensionNV(tl_vu, pc.Sk, D);
  tl_ku = setTensorLayoutStrideNV(tl_ku, pc.k_ss, 1);
  tl_vu = setTensorLayoutStrideNV(tl_vu, pc.v_ss, 1);
  tensorViewNV<2, false, 1, 0> view_t = createTensorViewNV(2, false, 1, 0);
  const uint q_base = ft_q_base(b, 0u, h), k_base = ft_k_base(b, 0u, hk), v_base = ft_v_base(b, 0u, hk);

  coopmat<float16_t, gl_ScopeWorkgroup, BM, D, gl_MatrixUseA> q_a;
  if (STAGED) {
    stage_q();
    barrier();
    coopMatLoad(q_a, sh_q, 0, KS4, gl_CooperativeMatrixLayoutRowMajor);
  } else {
    coopMatLoadTensorNV(q_a, q_data, q_base, sliceTensorLayoutNV(tl_q, m0, BM, 0, D));
  }

  ACC(BM, D) o = ACC(BM, D)(0.0);
  ACC(BM, BN) l = ACC(BM, BN)(0.0);
  ACC(BM, BN) m = ACC(BM, BN)(FT_NEG_INF);
  const coopmat<float16_t, gl_ScopeWorkgroup, BN, BN, gl_MatrixUseB> ones =
      coopmat<float16_t, gl_ScopeWorkgroup, BN, BN, gl_MatrixUseB>(1.0);

  [[dont_unroll]] for (uint n0 = kv_begin; n0 < kv_end; n0 += BN) {
    // ---- load_kv_tile + compute_scores ----
    coopmat<float16_t, gl_ScopeWorkgroup, D, BN, gl_MatrixUseB> k_t;
    coopmat<float16_t, gl_ScopeWorkgroup, BN, D, gl_MatrixUseB> v_b;
    if (STAGED) {
      barrier();  // the previous tile's V is in registers
      stage_kv(n0, false);
      barrier();
      coopMatLoad(k_t, sh_kv, 0, KS4, gl_CooperativeMatrixLayoutColumnMajor);
      barrier();
      stage_kv(n0, true);
      barrier();
      coopMatLoad(v_b, sh_kv, 0, KS4, gl_CooperativeMatrixLayoutRowMajor);
    } else if (UNCLAMPED_FULL_TILES != 0u && n0 + BN <= pc.Sk) {
      coopMatLoadTensorNV(k_t, k_data, k_base, sliceTensorLayoutNV(tl_ku, n0, BN, 0, D), view_t);
    } else {
      coopMatLoadTensorNV(k_t, k_data, k_base, sliceTensorLayoutNV(tl_k, n0, BN, 0, D), view_t);
    }
    ACC(BM, BN) s = ACC(BM, BN)(0.0);
    s = coopMatMulAdd(q_a, k_t, s);
    s *= pc.scale_log2;
    if (n0 + BN > kv_end || (CAUSAL != 0u && int(n0 + BN - 1u) > diag)) {
      coopMatPerElementNV(s, s, mask_op, n0, kv_end, diag);
    }

    // ---- online_softmax ----
    ACC(BM, BN) rowmax, m_new, p, alpha;
    coopMatReduceNV(rowmax, s, gl_CooperativeMatrixReduceRowNV, max_op);
    coopMatPerElementNV(m_new, rowmax, max2_op, m);
    coopMatPerElementNV(p, s, exp_op, m_new);
    coopMatPerElementNV(alpha, m, exp_op, m_new);
    m = m_new;
    coopmat<float16_t, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseA> p_a =
        coopmat<float16_t, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseA>(p);
    ACC(BM, BN) rowsum = ACC(BM, BN)(0.0);
    rowsum = coopMatMulAdd(p_a, ones, rowsum);  // row sums of the f16 P that multiplies V
    l = alpha * l + rowsum;

    // ---- accumulate_pv ----
    if (!STAGED) {
      if (UNCLAMPED_FULL_TILES != 0u && n0 + BN <= pc.Sk) {
        coopMatLoadTensorNV(v_b, v_data, v_base, sliceTensorLayoutNV(tl_vu, n0, BN, 0, D));
      } else {
        coopMatLoadTensorNV(v_b, v_data, v_base, sliceTensorLayoutNV(tl_v, n0, BN, 0, D));
      }
    }
    ACC(BM, D) alpha_d;
    coopMatReduceNV(alpha_d, alpha, gl_CooperativeMatrixReduceRowNV, smear_op);
    o *= alpha_d;
    o = coopMatMulAdd(p_a, v_b, o);
  }

  // ---- store_output ----
  coopMatPerElementNV(l, l, store_lse_op, m);
  ACC(BM, BN) inv_l;
  coopMatPerElementNV(inv_l, l, inv_op);
  ACC(BM, D) inv_d;
  coopMatReduceNV(inv_d, inv_l, gl_CooperativeMatrixReduceRowNV, smear_op);
  o *= inv_d;
  if (DTYPE == FT_DTYPE_F16 && pc.n_splits == 1u) {
    tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> tl_o = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    tl_o = setTensorLayoutDimensionNV(tl_o, pc.Sq, D);
    tl_o = setTensorLayoutStrideNV(tl_o, pc.o_ss, 1);
    coopmat<float16_t, gl_ScopeWorkgroup, BM, D, gl_MatrixUseAccumulator> o16 =
        coopmat<float16_t, gl_ScopeWorkgroup, BM, D, gl_MatrixUseAccumulator>(o);
    coopMatStoreTensorNV(o16, o_data, ft_o_base(b, 0u, h), sliceTensorLayoutNV(tl_o, m0, BM, 0, D));
  } else {
    coopMatPerElementNV(o, o, store_o_op, 0u);
  }
}
