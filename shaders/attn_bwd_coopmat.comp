#version 450
// flashtile attention backward on VK_KHR_cooperative_matrix (subgroup-scope f16 x f16 -> f32 tiles): the portable
// backward's algorithm (attn_bwd_portable.comp, whose preprocess module runs first and writes lse2 and Delta; no
// atomics, so runs are bit-identical) with every product on cooperative matrices. One module per pass (FT_BWD_PASS):
//   1 dK/dV: one workgroup per (key block of BLOCK_N keys, kv head, batch); NSG = BLOCK_N / CM_M subgroups, each
//     owning CM_M keys. For every query head of the group and every block of BLOCK_M query rows that sees the keys:
//       load_stream    all threads: Q and dO rows -> shared (f16), their lse2 and Delta
//       compute_scores per subgroup: Sᵀ = K·Qᵀ and dPᵀ = V·dOᵀ on accumulators (without id 28: -> f32 staging tiles)
//       compute_p_ds   per subgroup: Pᵀ and dSᵀ (bwd_p_ds: masks, variants) -> its f16 tiles (scores_p_ds runs the
//                      two: the whole block, or with id 21 one score tile at a time)
//       accumulate     per subgroup: dV += Pᵀ·dO, dK += dSᵀ·Q
//   2 dQ: one workgroup per (query block of BLOCK_M rows, head, batch); NSG = BLOCK_M / CM_M subgroups, each owning
//     CM_M rows. For every block of BLOCK_N keys the rows see: load_stream (K and V), compute_scores (S = Q·Kᵀ,
//     dP = dO·Vᵀ), compute_p_ds (dS), accumulate (dQ += dS·K).
// Both passes load their own rows once (load_own) and write the gradients once (store_grads).
// So the two passes share every phase: the owned tiles are use-A operands (row-major) of the scores, the streamed
// tiles use-B (column-major over their rows: the transpose) there and use-B (row-major) of the gradient products.
// Two forms per phase, chosen by specialization constants:
//   id 19 (OWN_IN_REGS): the own rows as use-A fragments in registers for the whole loop (staged once through the
//     streamed tiles), or re-read from their shared tiles every step.
//   id 20 (PREFETCH): the next streamed block's global loads in flight, in registers, during this block's products.
//   id 21 (SCORE_BY_TILE, with id 28): the scores, P and dS one CM_N-row tile of the streamed block at a time (two
//     score accumulators live, not 2 NT_S: the registers for id 20 beside d 128's dK and dV), or all tiles at once.
//   id 28 (REG_SOFTMAX, 1 or 2: the accumulator layout the host's probe found, as attn_coopmat.comp's register
//     softmax): P and dS formed on the score accumulators and written to their f16 tiles, the gradients stored
//     straight from their accumulators; or (0) S and dP staged through f32 tiles, P and dS formed from those, the
//     gradients staged through the same tiles.
// Operands are f16: bf16 inputs are converted on load as in the forward (coopmat_common.glsl: clamped to +-65504,
// flushed below 2^-24); P and dS are rounded to f16 (dS clamped likewise). Scores, dP, P, dS and gradients are f32.
// Shared memory (bytes), R = NSG * CM_M owned rows, T = the streamed block's rows (BLOCK_M for dK/dV, BLOCK_N for dQ):
//   own 4 R (D + 8) (16 with id 19) + stream 4 T (D + 8) + S, dP 8 R (T + 4) (32 with id 28) + P (dK/dV only), dS
//   2 R (T + 8) each + lse2, Delta 8 (T for dK/dV, R for dQ); backends/vulkan/coopmat_paths.cpp computes the same.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#define FT_OWN_ABI 1
#define FT_VARIANT_ABI 1  // window, softcap and ALiBi (VARIANTS; sinks: attn_bwd_portable.comp's dsinks pass)
#include "attn_common.glsl"
#include "attn_bwd_common.glsl"
#include "coopmat_common.glsl"

#if !defined(FT_BWD_PASS) || (FT_BWD_PASS != 1 && FT_BWD_PASS != 2)
#error "FT_BWD_PASS (1 dK/dV, 2 dQ; the preprocess and dsinks are attn_bwd_portable.comp's) must be defined"
#endif

// ---- Coopmat shape (ids 16..18: kSpecCmM/N/K), chosen by the host from the device's advertised list ------------------
layout(constant_id = 16) const uint CM_M = 16;
layout(constant_id = 17) const uint CM_N = 16;
layout(constant_id = 18) const uint CM_K = 16;
// id 19: the own rows (K and V, or Q and dO) as use-A fragments in registers (1; the host keeps BLOCK % CM_M == 0 for
// the streamed block they are staged through), or re-read from shared memory every step (0).
layout(constant_id = 19) const uint OWN_IN_REGS = 0;
// id 28: P and dS on the accumulators for accumulator layout 1 or 2 (cm_acc_row, cm_acc_col; 16 x 16 at subgroup 32
// only), or (0) through the f32 staging tiles.
layout(constant_id = 28) const uint REG_SOFTMAX = 0;
// id 20: the next streamed block's global loads issued before this block's products, held in registers until the
// block is done and then stored (1; the host keeps T <= WG_SIZE: one row's lse2 and Delta a thread), or each block
// loaded when it is needed (0). Costs 2 LPT 16-byte vectors a thread.
layout(constant_id = 20) const uint PREFETCH = 0;
// id 21: with id 28, compute_scores and compute_p_ds_regs one score tile (CM_N streamed rows) a round (1), or every
// tile of the block in one round (0).
layout(constant_id = 21) const uint SCORE_BY_TILE = 0;

const bool DKDV = FT_BWD_PASS == 1;
const uint SG = SUBGROUP_SIZE;
const uint OWN = CM_M;                             // keys (dK/dV) or rows (dQ) a subgroup owns
const uint NSG = (DKDV ? BLOCK_N : BLOCK_M) / OWN;  // subgroups per workgroup (WG_SIZE == NSG * SG)
const uint T = DKDV ? BLOCK_M : BLOCK_N;           // rows of the streamed block
const uint D8 = HEAD_DIM / 8u;                     // 16-byte vectors per row
const uint KS4 = (HEAD_DIM + 8u) / 4u;             // row stride of the Q/K/V/dO tiles in f16vec4 (16-byte pad)
const uint SS4 = (T + 4u) / 4u;                    // row stride of the S / dP staging tiles in vec4
const uint PS4 = (T + 8u) / 4u;                    // row stride of the P / dS tiles in f16vec4
const uint NT_S = T / CM_N;                        // score tiles of the streamed block
const uint KT_S = HEAD_DIM / CM_K;                 // k steps of the scores
const uint NT_G = HEAD_DIM / CM_N;                 // accumulators per subgroup of each gradient
const uint KT_G = T / CM_K;                        // k steps of the gradient products
const uint R = NSG * OWN;                          // own rows of the workgroup
const bool OWN_REGS = OWN_IN_REGS != 0u;
const bool REG_PDS = (REG_SOFTMAX == 1u || REG_SOFTMAX == 2u) && CM_M == 16u && CM_N == 16u && SG == 32u;
const uint RH_BIT = REG_SOFTMAX == 2u ? 2u : 1u;
const bool PF = PREFETCH != 0u;
const uint ST = REG_PDS && SCORE_BY_TILE != 0u ? 1u : NT_S;  // score tiles a round (the staged form: all)
const uint LPT = (T * D8 + WG_SIZE - 1u) / WG_SIZE;  // 16-byte vectors of a streamed tensor a thread

shared f16vec4 sh_own0[OWN_REGS ? 1u : R * KS4];  // K (dK/dV) or Q (dQ): the workgroup's own rows
shared f16vec4 sh_own1[OWN_REGS ? 1u : R * KS4];  // V or dO
shared f16vec4 sh_st0[T * KS4];           // Q or K: the streamed block (and the own rows' staging with id 19)
shared f16vec4 sh_st1[T * KS4];           // dO or V
shared vec4 sh_s[REG_PDS ? 1u : R * SS4];   // per subgroup: S (Sᵀ for dK/dV); the gradients' staging in store_grads
shared vec4 sh_dp[REG_PDS ? 1u : R * SS4];  // dP (dPᵀ)
shared f16vec4 sh_p[DKDV ? R * PS4 : 1u];
shared f16vec4 sh_ds[R * PS4];
shared float sh_lse2[DKDV ? T : R];   // of the streamed rows (dK/dV) or the own rows (dQ)
shared float sh_delta[DKDV ? T : R];

// dK or dQ, and dV (dK/dV only), for the subgroup's rows.
coopmat<float, gl_ScopeSubgroup, CM_M, CM_N, gl_MatrixUseAccumulator> g0_acc[NT_G];
coopmat<float, gl_ScopeSubgroup, CM_M, CM_N, gl_MatrixUseAccumulator> g1_acc[DKDV ? NT_G : 1u];
// The own rows as use-A fragments (id 19): K or Q, and V or dO.
coopmat<float16_t, gl_ScopeSubgroup, CM_M, CM_K, gl_MatrixUseA> own0_frag[OWN_REGS ? KT_S : 1u];
coopmat<float16_t, gl_ScopeSubgroup, CM_M, CM_K, gl_MatrixUseA> own1_frag[OWN_REGS ? KT_S : 1u];
// The round's score tiles and dP (their transposes for dK/dV): ST of the block's NT_S.
coopmat<float, gl_ScopeSubgroup, CM_M, CM_N, gl_MatrixUseAccumulator> s_acc[ST], dp_acc[ST];

// Id 20: the next streamed block in flight (Q and dO with a row's lse2 and Delta, or K and V), as raw f16.
uvec4 pf0[PF ? LPT : 1u], pf1[PF ? LPT : 1u];
float pf_lse2, pf_delta;

uint b, h, hk, m0, n0, sg, lane;
bool in_vec;  // q, k, v, dO offsets and strides multiples of 8 elements: 16-byte loads

// dO seen as 16-byte vectors (the forward's views of q, k, v: coopmat_common.glsl).
layout(set = 0, binding = 4, std430) readonly buffer BufDO4 { uvec4 do_data4[]; };
uvec4 cm_load8_do(uint e, bool vec) { return cm_to_f16x8(vec ? do_data4[e >> 3] : FT_CM_GATHER8(do_data, e)); }

const uint TILE_OWN0 = 0u, TILE_OWN1 = 1u, TILE_ST0 = 2u, TILE_ST1 = 3u;
const uint TENSOR_Q = 0u, TENSOR_K = 1u, TENSOR_V = 2u, TENSOR_DO = 3u;

// Eight f16 at vector i (two f16vec4) of a tile (the argument is a constant at every call: the switch folds away).
void put8(uint tile, uint i, uvec4 w) {
  const f16vec4 lo = f16vec4(unpackFloat2x16(w.x), unpackFloat2x16(w.y));
  const f16vec4 hi = f16vec4(unpackFloat2x16(w.z), unpackFloat2x16(w.w));
  switch (tile) {
    case TILE_OWN0: sh_own0[i] = lo; sh_own0[i + 1u] = hi; break;
    case TILE_OWN1: sh_own1[i] = lo; sh_own1[i + 1u] = hi; break;
    case TILE_ST0: sh_st0[i] = lo; sh_st0[i + 1u] = hi; break;
    default: sh_st1[i] = lo; sh_st1[i + 1u] = hi; break;
  }
}

// Elements 8 c .. 8 c + 7 of row `row` of a tensor, head hh, as f16.
uvec4 load8(uint tensor, uint row, uint hh, uint c) {
  switch (tensor) {
    case TENSOR_Q: return cm_load8_q(bwd_q_base(b, row, hh) + 8u * c, in_vec);
    case TENSOR_K: return cm_load8_k(bwd_k_base(b, row, hh) + 8u * c, in_vec);
    case TENSOR_V: return cm_load8_v(bwd_v_base(b, row, hh) + 8u * c, in_vec);
    default: return cm_load8_do(bwd_do_base(b, row, hh) + 8u * c, in_vec);
  }
}

// Rows [r0, r0 + n) of a tensor, head hh -> a tile (row r0 + r at r * KS4); rows at or past `end` are zero (their
// P and dS are 0, and 0 * garbage could be NaN).
void load_rows(uint tile, uint tensor, uint hh, uint r0, uint n, uint end) {
  for (uint i = gl_LocalInvocationID.x; i < n * D8; i += WG_SIZE) {
    const uint r = i / D8, c = i % D8;
    uvec4 w = uvec4(0u);
    if (r0 + r < end) w = load8(tensor, r0 + r, hh, c);
    put8(tile, r * KS4 + 2u * c, w);
  }
}

// lse2 and Delta of query rows [r0, r0 + n) of head hh; rows past Sq get +inf (P = 0) and 0.
void load_row_stats(uint hh, uint r0, uint n) {
  for (uint r = gl_LocalInvocationID.x; r < n; r += WG_SIZE) {
    const uint row = r0 + r;
    sh_lse2[r] = row < pc.Sq ? ws_data[ws_row(b, hh, row)] : FT_POS_INF;
    sh_delta[r] = row < pc.Sq ? ws_data[ws_delta(b, hh, row)] : 0.0;
  }
}

// Id 19: the own rows of tensors t0 and t1 (head hh, from row `first`, rows at or past `end` zero) into each
// subgroup's fragments, staged through the streamed tiles T rows at a time (T % OWN == 0: a subgroup's rows lie in
// one chunk). Ends with a barrier: the staging tiles are free again.
void load_own_frags(uint t0, uint t1, uint hh, uint first, uint end) {
  [[unroll]] for (uint r0 = 0u; r0 < R; r0 += T) {
    const uint n = min(T, R - r0);
    load_rows(TILE_ST0, t0, hh, first + r0, n, end);
    load_rows(TILE_ST1, t1, hh, first + r0, n, end);
    barrier();
    if (sg * OWN >= r0 && sg * OWN < r0 + n) {
      [[unroll]] for (uint k = 0u; k < KT_S; ++k) {
        const uint at = (sg * OWN - r0) * KS4 + k * (CM_K / 4u);
        coopMatLoad(own0_frag[k], sh_st0, at, KS4, gl_CooperativeMatrixLayoutRowMajor);
        coopMatLoad(own1_frag[k], sh_st1, at, KS4, gl_CooperativeMatrixLayoutRowMajor);
      }
    }
    barrier();
  }
}

// The workgroup's own rows: keys [n0, n0 + BLOCK_N) of K and V (dK/dV), or rows [m0, m0 + BLOCK_M) of Q and dO with
// their lse2 and Delta (dQ). Visible to every subgroup after the next barrier.
void load_own() {
  if (DKDV) {
    if (OWN_REGS) {
      load_own_frags(TENSOR_K, TENSOR_V, hk, n0, pc.Sk);
    } else {
      load_rows(TILE_OWN0, TENSOR_K, hk, n0, BLOCK_N, pc.Sk);
      load_rows(TILE_OWN1, TENSOR_V, hk, n0, BLOCK_N, pc.Sk);
    }
  } else {
    if (OWN_REGS) {
      load_own_frags(TENSOR_Q, TENSOR_DO, h, m0, pc.Sq);
    } else {
      load_rows(TILE_OWN0, TENSOR_Q, h, m0, BLOCK_M, pc.Sq);
      load_rows(TILE_OWN1, TENSOR_DO, h, m0, BLOCK_M, pc.Sq);
    }
    load_row_stats(h, m0, BLOCK_M);
  }
}

// The streamed block from row s0: Q and dO rows of head h with their lse2 and Delta (dK/dV), or K and V keys (dQ).
void load_stream(uint s0) {
  if (DKDV) {
    load_rows(TILE_ST0, TENSOR_Q, h, s0, T, pc.Sq);
    load_rows(TILE_ST1, TENSOR_DO, h, s0, T, pc.Sq);
    load_row_stats(h, s0, T);
  } else {
    load_rows(TILE_ST0, TENSOR_K, hk, s0, T, pc.Sk);
    load_rows(TILE_ST1, TENSOR_V, hk, s0, T, pc.Sk);
  }
}

// Id 20: the global loads of the streamed block from row s0 (of head hh for Q and dO) into registers; rows at or past
// the tensor's end are zero, and so are the stats of rows past Sq (as load_rows and load_row_stats).
void fetch_stream(uint hh, uint s0) {
  const uint end = DKDV ? pc.Sq : pc.Sk;
  [[unroll]] for (uint t = 0u; t < LPT; ++t) {
    const uint i = gl_LocalInvocationID.x + t * WG_SIZE, r = i / D8, c = i % D8;
    pf0[t] = pf1[t] = uvec4(0u);
    if (i < T * D8 && s0 + r < end) {
      pf0[t] = load8(DKDV ? TENSOR_Q : TENSOR_K, s0 + r, hh, c);
      pf1[t] = load8(DKDV ? TENSOR_DO : TENSOR_V, s0 + r, hh, c);
    }
  }
  if (DKDV && gl_LocalInvocationID.x < T) {  // one streamed row's stats a thread (put_stream stores these)
    const uint row = s0 + gl_LocalInvocationID.x;
    pf_lse2 = row < pc.Sq ? ws_data[ws_row(b, hh, row)] : FT_POS_INF;
    pf_delta = row < pc.Sq ? ws_data[ws_delta(b, hh, row)] : 0.0;
  }
}

// Id 20: the fetched block -> the streamed tiles (and the rows' stats).
void put_stream() {
  [[unroll]] for (uint t = 0u; t < LPT; ++t) {
    const uint i = gl_LocalInvocationID.x + t * WG_SIZE;
    if (i < T * D8) {
      put8(TILE_ST0, (i / D8) * KS4 + 2u * (i % D8), pf0[t]);
      put8(TILE_ST1, (i / D8) * KS4 + 2u * (i % D8), pf1[t]);
    }
  }
  if (DKDV && gl_LocalInvocationID.x < T) {
    sh_lse2[gl_LocalInvocationID.x] = pf_lse2;
    sh_delta[gl_LocalInvocationID.x] = pf_delta;
  }
}

// Per subgroup: own0 · st0ᵀ -> s_acc and own1 · st1ᵀ -> dp_acc, its CM_M rows (S and dP, or their transposes), for
// score tiles n_first .. n_first + ST - 1 (streamed rows from n_first CM_N); without id 28 (ST = NT_S, n_first 0)
// staged to sh_s and sh_dp.
void compute_scores(uint n_first) {
  [[unroll]] for (uint j = 0u; j < ST; ++j) {
    s_acc[j] = coopmat<float, gl_ScopeSubgroup, CM_M, CM_N, gl_MatrixUseAccumulator>(0.0);
    dp_acc[j] = coopmat<float, gl_ScopeSubgroup, CM_M, CM_N, gl_MatrixUseAccumulator>(0.0);
  }
  const uint own = sg * OWN * KS4;
  [[unroll]] for (uint k = 0u; k < KT_S; ++k) {
    coopmat<float16_t, gl_ScopeSubgroup, CM_M, CM_K, gl_MatrixUseA> a0, a1;
    if (OWN_REGS) {
      a0 = own0_frag[k];
      a1 = own1_frag[k];
    } else {
      coopMatLoad(a0, sh_own0, own + k * (CM_K / 4u), KS4, gl_CooperativeMatrixLayoutRowMajor);
      coopMatLoad(a1, sh_own1, own + k * (CM_K / 4u), KS4, gl_CooperativeMatrixLayoutRowMajor);
    }
    [[unroll]] for (uint j = 0u; j < ST; ++j) {
      // The streamed rows transposed as use-B: element (d, r) = tile[r][d], column-major over the row-major tile.
      const uint n = n_first + j;
      coopmat<float16_t, gl_ScopeSubgroup, CM_K, CM_N, gl_MatrixUseB> b0, b1;
      coopMatLoad(b0, sh_st0, (n * CM_N) * KS4 + k * (CM_K / 4u), KS4, gl_CooperativeMatrixLayoutColumnMajor);
      coopMatLoad(b1, sh_st1, (n * CM_N) * KS4 + k * (CM_K / 4u), KS4, gl_CooperativeMatrixLayoutColumnMajor);
      s_acc[j] = coopMatMulAdd(a0, b0, s_acc[j]);
      dp_acc[j] = coopMatMulAdd(a1, b1, dp_acc[j]);
    }
  }
  if (REG_PDS) return;
  [[unroll]] for (uint n = 0u; n < NT_S; ++n) {
    coopMatStore(s_acc[n], sh_s, sg * OWN * SS4 + n * (CM_N / 4u), SS4, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(dp_acc[n], sh_dp, sg * OWN * SS4 + n * (CM_N / 4u), SS4, gl_CooperativeMatrixLayoutRowMajor);
  }
  subgroupMemoryBarrierShared();
  subgroupBarrier();
}

// Per subgroup, from its staging tiles: P (dK/dV only) and dS as f16 tiles of its CM_M rows, for the streamed block
// from row s0. Element (r, c) is (key own + r, query row s0 + c) for dK/dV, (query row own + r, key s0 + c) for dQ.
void compute_p_ds(uint s0) {
  const uint own = (DKDV ? n0 : m0) + sg * OWN;
  for (uint e = lane; e < OWN * T; e += SG) {
    const uint r = e / T, c = e % T;
    const uint si = (sg * OWN + r) * SS4 * 4u + c, pi = (sg * OWN + r) * PS4 * 4u + c;
    const uint stat = DKDV ? c : sg * OWN + r;
    const uint row = DKDV ? s0 + c : own + r, key = DKDV ? own + r : s0 + c;
    const vec2 p_ds = bwd_p_ds(sh_s[si / 4u][si % 4u], sh_dp[si / 4u][si % 4u], row, key, sh_lse2[stat],
                               sh_delta[stat]);
    if (DKDV) sh_p[pi / 4u][pi % 4u] = float16_t(p_ds.x);
    sh_ds[pi / 4u][pi % 4u] = float16_t(cm_f16_range(p_ds.yy).x);
  }
  subgroupMemoryBarrierShared();
  subgroupBarrier();
}

// Id 28: compute_p_ds on the accumulators of score tiles n_first .. n_first + ST - 1 (compute_scores' round), without
// the subgroup barrier that makes the tiles visible (the caller's, after the block's last round). Element (r, c) of
// tile n is (key own + r, query row s0 + c) for dK/dV, (query row own + r, key s0 + c) for dQ, c = n CM_N +
// cm_acc_col; elements i, i + 1 (i even) are columns c, c + 1 of one row. A block every row and key of which exists
// and is visible (no variant) skips bwd_p_ds's masks.
void compute_p_ds_regs(uint s0, uint n_first) {
  const uint own = (DKDV ? n0 : m0) + sg * OWN;
  const int shift = int(pc.Sk) - int(pc.Sq);  // key <= row + shift: causal-visible
  const uint last_key = DKDV ? own + OWN - 1u : s0 + T - 1u, first_row = DKDV ? s0 : own;
  const bool plain = !FT_WINDOW && !FT_SOFTCAP && !FT_ALIBI && last_key < pc.Sk &&
                     (DKDV ? s0 + T : own + OWN) <= pc.Sq &&
                     (CAUSAL == 0u || int(last_key) <= int(first_row) + shift);  // subgroup-uniform
  [[unroll]] for (uint j = 0u; j < ST; ++j)
    [[unroll]] for (int i = 0; i < s_acc[j].length(); i += 2) {
      const uint r = cm_acc_row(lane, uint(i), RH_BIT), c = (n_first + j) * CM_N + cm_acc_col(lane, uint(i), RH_BIT);
      vec2 p, ds;
      [[unroll]] for (uint u = 0u; u < 2u; ++u) {
        const uint stat = DKDV ? c + u : sg * OWN + r;
        const float s = s_acc[j][i + int(u)], dp = dp_acc[j][i + int(u)];
        const float lse2 = sh_lse2[stat], delta = sh_delta[stat];
        if (plain) {
          p[u] = exp2(s * pc.scale_log2 - lse2);
          ds[u] = p[u] * (dp - delta);
        } else {
          const vec2 p_ds = bwd_p_ds(s, dp, DKDV ? s0 + c + u : own + r, DKDV ? own + r : s0 + c + u, lse2, delta);
          p[u] = p_ds.x;
          ds[u] = p_ds.y;
        }
      }
      const uint idx = (sg * OWN + r) * PS4 + c / 4u;
      const f16vec2 ph = f16vec2(p), dsh = f16vec2(cm_f16_range(ds));
      if ((c & 2u) == 0u) {
        if (DKDV) sh_p[idx].xy = ph;
        sh_ds[idx].xy = dsh;
      } else {
        if (DKDV) sh_p[idx].zw = ph;
        sh_ds[idx].zw = dsh;
      }
    }
}

// Per subgroup: the streamed block from row s0's scores, then P and dS into the subgroup's f16 tiles, visible to its
// lanes at the end: on the accumulators (id 28) in rounds of ST score tiles, or staged (compute_p_ds).
void scores_p_ds(uint s0) {
  if (REG_PDS) {
    [[unroll]] for (uint n = 0u; n < NT_S; n += ST) {
      compute_scores(n);
      compute_p_ds_regs(s0, n);
    }
    subgroupMemoryBarrierShared();
    subgroupBarrier();
  } else {
    compute_scores(0u);
    compute_p_ds(s0);
  }
}

// Per subgroup: g0 += dS · st0 (dK += dSᵀ·Q, or dQ += dS·K) and, for dK/dV, g1 += Pᵀ · st1 (dV += Pᵀ·dO).
void accumulate() {
  const uint own = sg * OWN * PS4;
  [[unroll]] for (uint k = 0u; k < KT_G; ++k) {
    coopmat<float16_t, gl_ScopeSubgroup, CM_M, CM_K, gl_MatrixUseA> ds_a, p_a;
    coopMatLoad(ds_a, sh_ds, own + k * (CM_K / 4u), PS4, gl_CooperativeMatrixLayoutRowMajor);
    if (DKDV) coopMatLoad(p_a, sh_p, own + k * (CM_K / 4u), PS4, gl_CooperativeMatrixLayoutRowMajor);
    [[unroll]] for (uint d = 0u; d < NT_G; ++d) {
      coopmat<float16_t, gl_ScopeSubgroup, CM_K, CM_N, gl_MatrixUseB> b0;
      coopMatLoad(b0, sh_st0, (k * CM_K) * KS4 + d * (CM_N / 4u), KS4, gl_CooperativeMatrixLayoutRowMajor);
      g0_acc[d] = coopMatMulAdd(ds_a, b0, g0_acc[d]);
      if (DKDV) {
        coopmat<float16_t, gl_ScopeSubgroup, CM_K, CM_N, gl_MatrixUseB> b1;
        coopMatLoad(b1, sh_st1, (k * CM_K) * KS4 + d * (CM_N / 4u), KS4, gl_CooperativeMatrixLayoutRowMajor);
        g1_acc[DKDV ? d : 0u] = coopMatMulAdd(p_a, b1, g1_acc[DKDV ? d : 0u]);
      }
    }
  }
}

// Element `col` of gradient row `row` (grad 0: dK or dQ, 1: dV), already scaled.
void store_grad(uint grad, uint row, uint col, float x) {
  const uint bits = ft_float_to_bits(x);
  if (grad == 1u) {
    dv_data[bwd_y_base(b, row, hk) + col] = FT_CM_FROM_BITS(bits);
  } else if (DKDV) {
    dk_data[bwd_x_base(b, row, hk) + col] = FT_CM_FROM_BITS(bits);
  } else {
    dq_data[bwd_x_base(b, row, h) + col] = FT_CM_FROM_BITS(bits);
  }
}

// One staged CM_M x CM_N gradient tile (columns d0..) of the subgroup's rows -> the gradient (grad 0: dK or dQ, times
// the softmax scale; 1: dV), rows past `end` skipped.
void store_staged(uint grad, uint d0, uint end, float mul) {
  const uint first = (DKDV ? n0 : m0) + sg * OWN;
  for (uint e = lane; e < OWN * CM_N; e += SG) {
    const uint r = e / CM_N, c = e % CM_N, row = first + r;
    if (row >= end) continue;
    const uint si = (sg * OWN + r) * SS4 * 4u + c;
    store_grad(grad, row, d0 + c, sh_s[si / 4u][si % 4u] * mul);
  }
}

// The subgroup's gradients through its staging tile, one accumulator at a time. dK = scale · Σ dSᵀ·Q and
// dQ = scale · Σ dS·K (P was formed in the log2 domain; the gradients take the plain scale).
void store_grads() {
  const float scale = pc.scale_log2 / FT_LOG2E;
  const uint end = DKDV ? pc.Sk : pc.Sq;
  if (REG_PDS) {  // straight from the accumulators (cm_acc_row, cm_acc_col)
    const uint first = (DKDV ? n0 : m0) + sg * OWN;
    [[unroll]] for (uint d = 0u; d < NT_G; ++d)
      [[unroll]] for (int i = 0; i < g0_acc[d].length(); ++i) {
        const uint row = first + cm_acc_row(lane, uint(i), RH_BIT), col = d * CM_N + cm_acc_col(lane, uint(i), RH_BIT);
        if (row < end) {
          store_grad(0u, row, col, g0_acc[d][i] * scale);
          if (DKDV) store_grad(1u, row, col, g1_acc[DKDV ? d : 0u][i]);
        }
      }
    return;
  }
  [[unroll]] for (uint d = 0u; d < NT_G; ++d) {
    subgroupBarrier();  // the lanes are done with the staging tile
    coopMatStore(g0_acc[d], sh_s, sg * OWN * SS4, SS4, gl_CooperativeMatrixLayoutRowMajor);
    subgroupMemoryBarrierShared();
    subgroupBarrier();
    store_staged(0u, d * CM_N, end, scale);
    if (DKDV) {
      subgroupBarrier();
      coopMatStore(g1_acc[DKDV ? d : 0u], sh_s, sg * OWN * SS4, SS4, gl_CooperativeMatrixLayoutRowMajor);
      subgroupMemoryBarrierShared();
      subgroupBarrier();
      store_staged(1u, d * CM_N, end, 1.0);
    }
  }
}

// The streamed blocks from row `first` to `end` (the dQ pass: keys) of each of `heads` query heads from h0 (the
// dK/dV pass: the group's; dQ: one), in that order: every subgroup runs every block (uniform control flow around the
// barriers). With id 20 block it + 1's loads are in flight during block it's products.
void run_blocks(uint first, uint end, uint h0, uint heads) {
  const uint nb = (end - first + T - 1u) / T;  // blocks a head (end >= first)
  const uint total = nb * heads;
  if (PF && total > 0u) fetch_stream(DKDV ? h0 : hk, first);
  for (uint it = 0u; it < total; ++it) {
    const uint s0 = first + (it % nb) * T;
    if (DKDV) {
      h = h0 + it / nb;
      if (FT_ALIBI && it % nb == 0u) ft_variants_init(b, h);  // this head's slope
    }
    barrier();  // every subgroup is done with the previous block's tiles
    if (PF) {
      put_stream();
    } else {
      load_stream(s0);
    }
    barrier();  // (the first time: the own rows stored too)
    if (PF && it + 1u < total) fetch_stream(DKDV ? h0 + (it + 1u) / nb : hk, first + ((it + 1u) % nb) * T);
    scores_p_ds(s0);
    accumulate();
  }
}

void main() {
  b = gl_WorkGroupID.z;
  sg = gl_SubgroupID;
  lane = gl_SubgroupInvocationID;
  in_vec = ((pc.q_off | pc.q_sb | pc.q_ss | pc.q_sh | pc.k_off | pc.k_sb | pc.k_ss | pc.k_sh | pc.v_off | pc.v_sb |
             pc.v_ss | pc.v_sh | pc.do_off | pc.do_sb | pc.do_ss | pc.do_sh) & 7u) == 0u;
  [[unroll]] for (uint d = 0u; d < NT_G; ++d) {
    g0_acc[d] = coopmat<float, gl_ScopeSubgroup, CM_M, CM_N, gl_MatrixUseAccumulator>(0.0);
    if (DKDV) g1_acc[DKDV ? d : 0u] = coopmat<float, gl_ScopeSubgroup, CM_M, CM_N, gl_MatrixUseAccumulator>(0.0);
  }
  if (DKDV) {
    n0 = gl_WorkGroupID.x * BLOCK_N;
    hk = gl_WorkGroupID.y;
    const uint group = pc.Hq / pc.Hkv;
    ft_variants_init(b, hk * group);
    load_own();
    // Causal and windows: blocks of rows that see none of these keys are skipped.
    const uvec2 rows = bwd_rows_seeing(n0);
    run_blocks(rows.x, rows.y, hk * group, group);
  } else {
    m0 = gl_WorkGroupID.x * BLOCK_M;
    h = gl_WorkGroupID.y;
    hk = h / (pc.Hq / pc.Hkv);
    ft_variants_init(b, h);
    load_own();
    // Causal and windows: blocks of keys these rows do not see are skipped.
    const uvec2 keys = bwd_keys_seen(m0);
    run_blocks(keys.x, keys.y, h, 1u);
  }
  store_grads();
}
