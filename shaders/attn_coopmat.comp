#version 450
// flashtile attention forward on VK_KHR_cooperative_matrix (subgroup-scope f16 x f16 -> f32 tiles).
//
// One workgroup computes BLOCK_M query rows of one (batch, head) over all keys (or one KV split); it is
// NSG = BLOCK_M / CM_M subgroups, each owning CM_M rows (full subgroups of SUBGROUP_SIZE lanes, size required by the
// host). Per KV tile of BLOCK_N keys:
//   load_kv_tile   all threads: K rows global -> shared as f16 (16-byte loads when aligned; bf16 converted)
//   compute_scores per subgroup: S = Q·Kᵀ (Q held as use-A coopmats in registers, or in shared: Q_IN_REGS)
//   online_softmax per subgroup: S -> shared, scalar row max / exp2 / row sum (SEGS lanes a row, shuffle
//                  reductions), P -> shared as f16, the row rescale factors -> a CM_M x CM_N broadcast tile over S;
//                  or (id 28, where the host's probe found an accumulator layout this shader knows) all of it on the
//                  accumulators in registers, only P going through shared memory
//   load_kv_tile   V rows into the same buffer (one K/V buffer keeps a workgroup within NVIDIA's 48 KB);
//                  with PREFETCH the global loads of V (and of the next K) are in flight during the compute
//   accumulate_pv  per subgroup: O *= alpha (element-wise with the broadcast tile: accumulators of one type share
//                  their element layout), O += P·V
// The epilogue (store_output) stages O through shared memory, divides by the row sum and writes O and LSE, or, for
// split-KV, the split's record for attn_splitkv_reduce.comp (id 28: store_output_regs, straight from the registers).
// Shared memory (bytes): K/V 2*BLOCK_N*(D+8) + Q (Q_IN_REGS == 0 only) 2*BLOCK_M*(D+8) + S (not with id 28)
//   4*BLOCK_M*(BLOCK_N+8) + P 2*BLOCK_M*(BLOCK_N+8) (coopmat_paths.cpp computes the same).
//
// Attention variants (VARIANTS, attn_common.glsl) in the shared-memory softmax only (the host gives variant calls to
// entries without id 28): window masks and key tiles, softcap and ALiBi on the scores, the sink in the epilogue (or
// the split-KV reduce).
//
// bf16 inputs are converted to f16 on load: values beyond f16's range (|x| > 65504) are clamped to +-65504 and
// values below 2^-24 flush to zero; the host documents this (coopmat_paths.cpp).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_shader_subgroup_vote : require
#include "attn_common.glsl"
#include "coopmat_common.glsl"

// ---- Coopmat shape (ids 16..18: kSpecCmM/N/K), chosen by the host from the device's advertised list ------------------
layout(constant_id = 16) const uint CM_M = 16;
layout(constant_id = 17) const uint CM_N = 16;
layout(constant_id = 18) const uint CM_K = 16;
// id 19: Q as use-A coopmats in registers across the KV loop (1), or re-read from shared memory each tile (0).
layout(constant_id = 19) const uint Q_IN_REGS = 1;
// id 20: software pipelining through registers (1): the V tile's global loads are issued before Q·Kᵀ and the
// softmax, the next K tile's before P·V, and each is stored to shared memory after that compute; or (0) each tile
// is loaded when needed. Costs BLOCK_N * D / WG_SIZE * 2 bytes of registers per thread.
layout(constant_id = 20) const uint PREFETCH = 0;
// id 28: the online softmax on the score accumulators in registers (1, 2: the accumulator layout below that the host's
// probe found on this device, Caps::khr_acc_layout): no S round trip through shared memory and no rescale broadcast
// tile; P still goes through shared memory to become a use-A matrix. 15: the probe itself: workgroup 0's first
// subgroup writes into O, at element 8 l + i, the r * 16 + c that element i of lane l holds, and nothing else.
layout(constant_id = 28) const uint REG_SOFTMAX = 0;
// id 29, bits (short sequences spend a larger share outside the KV loop): 1 Q straight from global memory into its
// use-A tiles (f16 with Q in registers, aligned calls, row tiles inside Sq; no staging through shared memory, no
// barriers), 2 the first K tile's global loads issued before Q's (PREFETCH), 4 causal with id 28: a subgroup skips the
// tiles that start past its rows' diagonal (their scores are all masked; barriers are still met).
layout(constant_id = 29) const uint CM_OPT = 0;

const uint SG = SUBGROUP_SIZE;
const uint NSG = BLOCK_M / CM_M;                 // subgroups per workgroup (WG_SIZE == NSG * SG)
const uint R = CM_M;                             // query rows per subgroup
const uint SEGS = SG >= R ? SG / R : 1u;         // softmax lanes per row
const uint RPT = SG >= R ? 1u : R / SG;          // softmax rows per lane
const uint ROWS_PASS = SG / SEGS;                // rows covered by one pass of the subgroup
const uint CPS = BLOCK_N / SEGS;                 // score columns per softmax lane
const bool Q_REGS = Q_IN_REGS != 0u;
const uint D8 = HEAD_DIM / 8u;                   // 16-byte vectors per row
const uint KS4 = (HEAD_DIM + 8u) / 4u;           // row stride of K/V/Q tiles in f16vec4 (16-byte pad: no conflicts)
const uint SS = BLOCK_N + 8u;                    // row stride of the score tile, floats (interleaved vec4 reads
                                                 // by a row's lanes are bank-conflict free)
const uint SS4 = SS / 4u;
const uint C4 = CPS / 4u;                        // vec4 score chunks per softmax lane
const uint PS4 = (BLOCK_N + 8u) / 4u;            // row stride of the P tile in f16vec4
const uint NT_S = BLOCK_N / CM_N;                // S accumulators per subgroup
const uint KT_S = HEAD_DIM / CM_K;               // k steps of Q·Kᵀ
const uint NT_O = HEAD_DIM / CM_N;               // O accumulators per subgroup
const uint KT_O = BLOCK_N / CM_K;                // k steps of P·V
// The register softmax knows 16 x 16 f32 accumulators at subgroup 32 whose lane l holds rows (l >> 2) + {0, 8} and
// columns 2 (l & 3) + {0, 1, 8, 9} (the mma.m16n8k16 accumulator fragments of two 8-column halves), in one of two
// orders (layout 1 or 2, the H200's; cm_acc_row and cm_acc_col in coopmat_common.glsl). A row's 16 columns sit in the
// 4 lanes of a quad.
const bool PROBE = REG_SOFTMAX == 15u;  // kCmRegSoftmaxProbe
const bool REG_SM = (REG_SOFTMAX == 1u || REG_SOFTMAX == 2u) && CM_M == 16u && CM_N == 16u && SG == 32u &&
                    SEGS == 2u && RPT == 1u;
const uint RH_BIT = REG_SOFTMAX == 2u ? 2u : 1u;
const bool Q_DIRECT = (CM_OPT & 1u) != 0u && Q_REGS && DTYPE == FT_DTYPE_F16;
const bool EARLY_K = (CM_OPT & 2u) != 0u && PREFETCH != 0u;
const bool SKIP_PAST_DIAG = (CM_OPT & 4u) != 0u && REG_SM && CAUSAL != 0u;

shared f16vec4 sh_kv[BLOCK_N * KS4];  // K, then V, of the current tile
shared f16vec4 sh_q[Q_REGS ? 1u : BLOCK_M * KS4];
shared vec4 sh_s[REG_SM ? 1u : NSG * R * SS4];  // S, then the rescale broadcast tile, per subgroup; O staging
shared f16vec4 sh_p[NSG * R * PS4];

coopmat<float16_t, gl_ScopeSubgroup, CM_M, CM_K, gl_MatrixUseA> q_frag[KT_S];
coopmat<float, gl_ScopeSubgroup, CM_M, CM_N, gl_MatrixUseAccumulator> o_acc[NT_O];

uint b, h, hk, m0, sg, lane, sg_row0;
bool in_vec;  // Q, K, V offsets and strides multiples of 8 elements: 16-byte loads
// Register softmax state (id 28): the lane's two rows, slot h = row (lane >> 2) + 8 h; l is the lane's share (4
// columns of each 16), summed over the quad at the end (store_output_regs).
float f_m[2], f_l[2], f_alpha[2];

void store_tile_vec(uint dst_vec4, uvec4 w, bool to_q) {
  f16vec4 lo = f16vec4(unpackFloat2x16(w.x), unpackFloat2x16(w.y));
  f16vec4 hi = f16vec4(unpackFloat2x16(w.z), unpackFloat2x16(w.w));
  if (to_q) {
    sh_q[dst_vec4] = lo;
    sh_q[dst_vec4 + 1u] = hi;
  } else {
    sh_kv[dst_vec4] = lo;
    sh_kv[dst_vec4 + 1u] = hi;
  }
}

// Q rows [m0, m0 + BLOCK_M) -> shared (rows past Sq zero). With Q_REGS they pass through the K/V tile buffer,
// BLOCK_N rows at a time, and each subgroup takes its rows as use-A fragments.
// Q as f16 elements, for Q_DIRECT's loads (16-bit storage, like every binding here).
layout(set = 0, binding = 0, std430) readonly buffer BufQh { float16_t q_data_h[]; };

void load_q() {
  if (Q_DIRECT && in_vec && m0 + BLOCK_M <= pc.Sq) {  // uniform over the workgroup
    const uint base = ft_q_base(b, sg_row0, h);
    [[unroll]] for (uint k = 0u; k < KT_S; ++k)
      coopMatLoad(q_frag[k], q_data_h, base + k * CM_K, pc.q_ss, gl_CooperativeMatrixLayoutRowMajor);
    return;
  }
  const uint CHUNK = Q_REGS ? min(BLOCK_N, BLOCK_M) : BLOCK_M;
  [[unroll]] for (uint r0 = 0u; r0 < BLOCK_M; r0 += CHUNK) {
    [[unroll]] for (uint i = gl_LocalInvocationID.x; i < CHUNK * D8; i += WG_SIZE) {
      uint r = i / D8, c = i % D8;
      uint row = m0 + r0 + r;
      uvec4 w = uvec4(0u);
      if (row < pc.Sq) w = cm_load8_q(ft_q_base(b, row, h) + c * 8u, in_vec);
      store_tile_vec(r * KS4 + 2u * c, w, !Q_REGS);
    }
    barrier();
    if (Q_REGS) {
      if (sg * R >= r0 && sg * R < r0 + CHUNK) {
        [[unroll]] for (uint k = 0u; k < KT_S; ++k)
          coopMatLoad(q_frag[k], sh_kv, (sg * R - r0) * KS4 + k * (CM_K / 4u), KS4, gl_CooperativeMatrixLayoutRowMajor);
      }
      barrier();  // the next chunk or the KV loop overwrites the staging area
    }
  }
}

// Keys [n0, n0 + BLOCK_N) of K (is_v false) or V: global -> registers (fetch_tile) -> shared (put_tile); keys at or
// past kv_end are zero (P is 0 there, and 0 * garbage could be NaN).
const uint LPT = (BLOCK_N * D8 + WG_SIZE - 1u) / WG_SIZE;  // 16-byte vectors per thread per tile
void fetch_tile(uint n0, uint kv_end, bool is_v, out uvec4 regs[LPT]) {
  [[unroll]] for (uint t = 0u; t < LPT; ++t) {
    const uint i = gl_LocalInvocationID.x + t * WG_SIZE;
    const uint r = i / D8, c = i % D8;
    const uint key = n0 + r;
    regs[t] = uvec4(0u);
    if (i < BLOCK_N * D8 && key < kv_end) {
      regs[t] = is_v ? cm_load8_v(ft_v_base(b, key, hk) + c * 8u, in_vec)
                     : cm_load8_k(ft_k_base(b, key, hk) + c * 8u, in_vec);
    }
  }
}
void put_tile(uvec4 regs[LPT]) {
  [[unroll]] for (uint t = 0u; t < LPT; ++t) {
    const uint i = gl_LocalInvocationID.x + t * WG_SIZE;
    if (i < BLOCK_N * D8) store_tile_vec((i / D8) * KS4 + 2u * (i % D8), regs[t], false);
  }
}
void load_kv_tile(uint n0, uint kv_end, bool is_v) {
  uvec4 regs[LPT];
  fetch_tile(n0, kv_end, is_v, regs);
  put_tile(regs);
}

// ---- register softmax (id 28) ----
uint acc_row(uint i) { return cm_acc_row(lane, i, RH_BIT); }
uint acc_col(uint i) { return cm_acc_col(lane, i, RH_BIT); }

// The layout probe (id 15): an accumulator loaded from a tile holding r * 16 + c at (r, c) shows where each element
// lives; workgroup 0's subgroup 0 writes its elements to O (8 per lane; -1 past the accumulator's length).
void layout_probe() {
  [[unroll]] for (uint e = lane; e < 256u; e += SG) sh_s[(sg * R + e / 16u) * SS4 + (e % 16u) / 4u][e % 4u] = float(e);
  subgroupMemoryBarrierShared();
  subgroupBarrier();
  coopmat<float, gl_ScopeSubgroup, CM_M, CM_N, gl_MatrixUseAccumulator> t;
  coopMatLoad(t, sh_s, (sg * R * SS) / 4u, SS4, gl_CooperativeMatrixLayoutRowMajor);
  if (gl_WorkGroupID.x + gl_WorkGroupID.y + gl_WorkGroupID.z == 0u && sg == 0u) {
    float v[8];
    [[unroll]] for (uint i = 0u; i < 8u; ++i) v[i] = i < uint(t.length()) ? t[min(i, uint(t.length()) - 1u)] : -1.0;
    cm_store8_o(8u * lane, v, false);
  }
}

// S = Q·Kᵀ for this subgroup's rows, stored to its score tile in shared memory; or (id 28) the whole online softmax
// on the accumulators: P (f16) to the subgroup's P tile, the rescale factors in f_alpha. Returns whether any factor
// differs from 1 (id 28 only).
bool compute_scores(uint n0, uint kv_end) {
  coopmat<float, gl_ScopeSubgroup, CM_M, CM_N, gl_MatrixUseAccumulator> s_acc[NT_S];
  [[unroll]] for (uint n = 0u; n < NT_S; ++n)
    s_acc[n] = coopmat<float, gl_ScopeSubgroup, CM_M, CM_N, gl_MatrixUseAccumulator>(0.0);
  [[unroll]] for (uint k = 0u; k < KT_S; ++k) {
    coopmat<float16_t, gl_ScopeSubgroup, CM_M, CM_K, gl_MatrixUseA> a;
    if (Q_REGS) {
      a = q_frag[k];
    } else {
      coopMatLoad(a, sh_q, (sg * R) * KS4 + k * (CM_K / 4u), KS4, gl_CooperativeMatrixLayoutRowMajor);
    }
    [[unroll]] for (uint n = 0u; n < NT_S; ++n) {
      // Kᵀ as use-B: element (d, key) = K[key][d], i.e. column-major over the row-major K tile.
      coopmat<float16_t, gl_ScopeSubgroup, CM_K, CM_N, gl_MatrixUseB> kb;
      coopMatLoad(kb, sh_kv, (n * CM_N) * KS4 + k * (CM_K / 4u), KS4, gl_CooperativeMatrixLayoutColumnMajor);
      s_acc[n] = coopMatMulAdd(a, kb, s_acc[n]);
    }
  }
  if (REG_SM) {
    const bool need_mask = n0 + BLOCK_N > kv_end ||
                           (CAUSAL != 0u && int(n0 + BLOCK_N - 1u) > int(sg_row0) + int(pc.Sk) - int(pc.Sq));
    const int lim_end = int(kv_end) - int(n0);                                 // tile columns < lim_end exist
    const int diag = int(sg_row0) + int(pc.Sk) - int(pc.Sq) - int(n0);        // row r sees columns <= r + diag
    float mx[2] = float[2](FT_NEG_INF, FT_NEG_INF);
    [[unroll]] for (uint n = 0u; n < NT_S; ++n)
      [[unroll]] for (int i = 0; i < s_acc[n].length(); ++i) {
        float v = s_acc[n][i] * pc.scale_log2;
        if (need_mask) {
          const int c = int(n * CM_N + acc_col(uint(i))), r = int(acc_row(uint(i)));
          v = c < lim_end && (CAUSAL == 0u || c <= r + diag) ? v : FT_NEG_INF;
        }
        s_acc[n][i] = v;
        mx[(i >> RH_BIT) & 1] = max(mx[(i >> RH_BIT) & 1], v);
      }
    float m_use[2];
    bool rescale = false;
    [[unroll]] for (uint hh = 0u; hh < 2u; ++hh) {
      float m = max(mx[hh], subgroupShuffleXor(mx[hh], 1u));
      m = max(m, subgroupShuffleXor(m, 2u));
      const float m_new = max(f_m[hh], m);
      m_use[hh] = m_new == FT_NEG_INF ? 0.0 : m_new;  // no key seen yet: keep everything 0, not NaN
      f_alpha[hh] = exp2(f_m[hh] - m_use[hh]);
      f_m[hh] = m_new;
      rescale = rescale || f_alpha[hh] != 1.0;
    }
    float sum[2] = float[2](0.0, 0.0);
    [[unroll]] for (uint n = 0u; n < NT_S; ++n)
      [[unroll]] for (int i = 0; i < s_acc[n].length(); i += 2) {
        const uint hh = (uint(i) >> RH_BIT) & 1u;
        const f16vec2 p = f16vec2(exp2(vec2(s_acc[n][i], s_acc[n][i + 1]) - m_use[hh]));
        sum[hh] += float(p.x) + float(p.y);  // the sum of the P that multiplies V
        const uint col = n * CM_N + acc_col(uint(i));  // even: elements i, i + 1 are columns col, col + 1
        const uint idx = (sg * R + acc_row(uint(i))) * PS4 + col / 4u;
        if ((col & 2u) == 0u) {
          sh_p[idx].xy = p;
        } else {
          sh_p[idx].zw = p;
        }
      }
    [[unroll]] for (uint hh = 0u; hh < 2u; ++hh) f_l[hh] = f_l[hh] * f_alpha[hh] + sum[hh];
    subgroupMemoryBarrierShared();
    subgroupBarrier();
    return subgroupAny(rescale);
  }
  [[unroll]] for (uint n = 0u; n < NT_S; ++n)
    coopMatStore(s_acc[n], sh_s, (sg * R * SS + n * CM_N) / 4u, SS4, gl_CooperativeMatrixLayoutRowMajor);
  subgroupMemoryBarrierShared();
  subgroupBarrier();
  return false;
}

float subgroup_row_max(float x) {
  [[unroll]] for (uint o = SEGS / 2u; o >= 1u; o /= 2u) x = max(x, subgroupShuffleXor(x, o));
  return x;
}
float subgroup_row_sum(float x) {
  [[unroll]] for (uint o = SEGS / 2u; o >= 1u; o /= 2u) x += subgroupShuffleXor(x, o);
  return x;
}

// Online softmax over this subgroup's score tile: updates the running max m and (per-lane partial) sum l of each
// row this lane serves, writes P (f16) and the row rescale factors (a CM_M x CM_N tile over the first columns of
// the score tile, once every lane has read its scores). Returns whether any factor differs from 1.
// A row's SEGS lanes take interleaved vec4 chunks of its scores: chunk j of lane seg is columns 4*(j*SEGS+seg)..+3.
bool online_softmax(uint n0, uint kv_end, inout float m_run[RPT], inout float l_run[RPT]) {
  const uint seg = lane % SEGS;
  // Masking only where the tile crosses kv_end or the causal diagonal of the subgroup's first row (every tile with a
  // window).
  const bool need_mask = FT_WINDOW || n0 + BLOCK_N > kv_end ||
                         (CAUSAL != 0u && int(n0 + BLOCK_N - 1u) > int(sg_row0) + int(pc.Sk) - int(pc.Sq));
  bool rescale = false;
  [[unroll]] for (uint rr = 0u; rr < RPT; ++rr) {
    const uint r = rr * ROWS_PASS + lane / SEGS;
    const uint row = sg_row0 + r;
    const uint srow = (sg * R + r) * SS4;
    // Keys of this tile the row may see: [0, lim).
    int lim = int(kv_end) - int(n0);
    if (CAUSAL != 0u) lim = min(lim, int(row) + int(pc.Sk) - int(pc.Sq) + 1 - int(n0));
    int first = 0;  // window: and from `first` on
    if (FT_WINDOW) {
      const ivec2 keys = ft_row_keys(row);
      lim = min(lim, keys.y - int(n0));
      first = keys.x - int(n0);
    }
    vec4 x[C4];
    float mx = FT_NEG_INF;
    [[unroll]] for (uint j = 0u; j < C4; ++j) {
      const uint ch = j * SEGS + seg;
      vec4 v = sh_s[srow + ch] * pc.scale_log2;
      if (FT_SOFTCAP || FT_ALIBI) {
        const uint key = n0 + ch * 4u;
        v = vec4(ft_variant_score(v.x, row, key), ft_variant_score(v.y, row, key + 1u),
                 ft_variant_score(v.z, row, key + 2u), ft_variant_score(v.w, row, key + 3u));
      }
      if (need_mask) {
        const int col = int(ch * 4u);
        const ivec4 cols = ivec4(col, col + 1, col + 2, col + 3);
        v = mix(v, vec4(FT_NEG_INF), lessThanEqual(ivec4(lim), cols));
        if (FT_WINDOW) v = mix(v, vec4(FT_NEG_INF), lessThan(cols, ivec4(first)));
      }
      x[j] = v;
      mx = max(mx, max(max(v.x, v.y), max(v.z, v.w)));
    }
    mx = subgroup_row_max(mx);
    const float m_new = max(m_run[rr], mx);
    const float m_use = m_new == FT_NEG_INF ? 0.0 : m_new;  // no key seen yet: keep everything 0, not NaN
    const float alpha = exp2(m_run[rr] - m_use);
    float sum = 0.0;
    [[unroll]] for (uint j = 0u; j < C4; ++j) {
      const f16vec4 ph = f16vec4(exp2(x[j] - m_use));
      sum += dot(vec4(ph), vec4(1.0));  // the sum of the P that multiplies V
      sh_p[(sg * R + r) * PS4 + j * SEGS + seg] = ph;
    }
    l_run[rr] = l_run[rr] * alpha + sum;
    m_run[rr] = m_new;
    rescale = rescale || alpha != 1.0;
    subgroupMemoryBarrierShared();
    subgroupBarrier();  // every lane has read row r's scores
    [[unroll]] for (uint j = seg; j < CM_N; j += SEGS) sh_s[srow + j / 4u][j % 4u] = alpha;
  }
  subgroupMemoryBarrierShared();
  subgroupBarrier();
  return subgroupAny(rescale);
}

// O = O * alpha (row-wise) + P·V.
void accumulate_pv(bool rescale) {
  if (REG_SM) {
    if (rescale) {
      [[unroll]] for (uint d = 0u; d < NT_O; ++d)
        [[unroll]] for (int i = 0; i < o_acc[d].length(); ++i) o_acc[d][i] *= f_alpha[(i >> RH_BIT) & 1];
    }
  } else if (rescale) {
    coopmat<float, gl_ScopeSubgroup, CM_M, CM_N, gl_MatrixUseAccumulator> al;
    coopMatLoad(al, sh_s, (sg * R * SS) / 4u, SS4, gl_CooperativeMatrixLayoutRowMajor);
    [[unroll]] for (uint d = 0u; d < NT_O; ++d)
      [[unroll]] for (int i = 0; i < o_acc[d].length(); ++i) o_acc[d][i] *= al[i];
  }
  [[unroll]] for (uint k = 0u; k < KT_O; ++k) {
    coopmat<float16_t, gl_ScopeSubgroup, CM_M, CM_K, gl_MatrixUseA> pa;
    coopMatLoad(pa, sh_p, (sg * R) * PS4 + k * (CM_K / 4u), PS4, gl_CooperativeMatrixLayoutRowMajor);
    [[unroll]] for (uint d = 0u; d < NT_O; ++d) {
      coopmat<float16_t, gl_ScopeSubgroup, CM_K, CM_N, gl_MatrixUseB> vb;
      coopMatLoad(vb, sh_kv, (k * CM_K) * KS4 + d * (CM_N / 4u), KS4, gl_CooperativeMatrixLayoutRowMajor);
      o_acc[d] = coopMatMulAdd(pa, vb, o_acc[d]);
    }
  }
}

// A row's log2-domain LSE: natural log to lse, or log2 to this split's record.
void store_lse(uint split, uint row, float lse2) {
  if (pc.n_splits > 1u) {
    scratch_data[ft_scratch_record(b, h, row, split) + HEAD_DIM] = lse2;
  } else if ((pc.flags & FT_FLAG_WRITE_LSE) != 0u) {
    lse_data[ft_lse_index(b, h, row)] = lse2 == FT_NEG_INF ? FT_NEG_INF : lse2 * FT_LN2;
  }
}

// Epilogue: O / l per row -> out (or this split's record), LSE (natural log) -> lse (or the record, log2 domain).
void store_output(uint split, float m_run[RPT], float l_run[RPT]) {
  const uint seg = lane % SEGS;
  const bool o_vec = ((pc.o_off | pc.o_sb | pc.o_ss | pc.o_sh) & 7u) == 0u;
  float inv_l[RPT];
  [[unroll]] for (uint rr = 0u; rr < RPT; ++rr) {
    float l = subgroup_row_sum(l_run[rr]), lse2;
    inv_l[rr] = ft_row_norm(m_run[rr], l, pc.n_splits == 1u, lse2);  // the sink joins here (or in the reduce)
    const uint row = sg_row0 + rr * ROWS_PASS + lane / SEGS;
    if (seg == 0u && row < pc.Sq) store_lse(split, row, lse2);
  }
  // O in chunks of BLOCK_N columns through this subgroup's score tile (the host keeps HEAD_DIM % BLOCK_N == 0).
  [[unroll]] for (uint ch = 0u; ch < HEAD_DIM / BLOCK_N; ++ch) {
    [[unroll]] for (uint n = 0u; n < NT_S; ++n)
      coopMatStore(o_acc[ch * NT_S + n], sh_s, (sg * R * SS + n * CM_N) / 4u, SS4,
                   gl_CooperativeMatrixLayoutRowMajor);
    subgroupMemoryBarrierShared();
    subgroupBarrier();
    [[unroll]] for (uint rr = 0u; rr < RPT; ++rr) {
      const uint r = rr * ROWS_PASS + lane / SEGS;
      const uint row = sg_row0 + r;
      if (row < pc.Sq) {
        const uint col0 = ch * BLOCK_N + seg * CPS;
        const uint srow = (sg * R + r) * SS4 + seg * (CPS / 4u);
        if (pc.n_splits > 1u) {
          const uint rec = ft_scratch_record(b, h, row, split);
          [[unroll]] for (uint c = 0u; c < CPS; ++c) scratch_data[rec + col0 + c] = sh_s[srow + c / 4u][c % 4u] * inv_l[rr];
        } else {
          const uint ob = ft_o_base(b, row, h) + col0;
          [[unroll]] for (uint c = 0u; c < CPS; c += 8u) {
            const vec4 lo = sh_s[srow + c / 4u] * inv_l[rr], hi = sh_s[srow + c / 4u + 1u] * inv_l[rr];
            float v[8] = float[8](lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w);
            cm_store8_o(ob + c, v, o_vec);
          }
        }
      }
    }
    subgroupBarrier();  // the next chunk overwrites the tile
  }
}

// The register softmax's epilogue (id 28): row sums over the quad, LSE from the quad's first lane, and O straight
// from the accumulators, two adjacent columns a store (no staging: the score tile does not exist in this form).
void store_output_regs(uint split) {
  const bool o_pairs = ((pc.o_off | pc.o_sb | pc.o_ss | pc.o_sh) & 1u) == 0u;
  float inv[2];
  [[unroll]] for (uint hh = 0u; hh < 2u; ++hh) {
    float l = f_l[hh] + subgroupShuffleXor(f_l[hh], 1u);
    l += subgroupShuffleXor(l, 2u);
    inv[hh] = ft_inv_l(l);
    const uint row = sg_row0 + (lane >> 2) + 8u * hh;
    if ((lane & 3u) == 0u && row < pc.Sq) store_lse(split, row, ft_lse2(f_m[hh], l));
  }
  [[unroll]] for (uint d = 0u; d < NT_O; ++d)
    [[unroll]] for (int i = 0; i < o_acc[d].length(); i += 2) {
      const uint row = sg_row0 + acc_row(uint(i)), col = d * CM_N + acc_col(uint(i));  // col even
      if (row < pc.Sq) {
        const vec2 x = vec2(o_acc[d][i], o_acc[d][i + 1]) * inv[(uint(i) >> RH_BIT) & 1u];
        if (pc.n_splits > 1u) {
          const uint rec = ft_scratch_record(b, h, row, split) + col;
          scratch_data[rec] = x.x;
          scratch_data[rec + 1u] = x.y;
        } else {
          const uint e = ft_o_base(b, row, h) + col;
          if (o_pairs) {
            o_data1[e >> 1] = ft_pack2(x);
          } else {
            store_o_pair(e, x);
          }
        }
      }
    }
}

void main() {
  b = ft_batch();
  h = ft_head();
  hk = ft_kv_head(h);
  const uint split = ft_split();
  m0 = ft_row_tile() * BLOCK_M;
  sg = gl_SubgroupID;
  lane = gl_SubgroupInvocationID;
  sg_row0 = m0 + sg * R;
  in_vec = ((pc.q_off | pc.q_sb | pc.q_ss | pc.q_sh | pc.k_off | pc.k_sb | pc.k_ss | pc.k_sh | pc.v_off | pc.v_sb |
             pc.v_ss | pc.v_sh) & 7u) == 0u;
  if (PROBE) {
    layout_probe();
    return;
  }

  uint kv_begin, kv_end;
  ft_split_range(split, kv_begin, kv_end);
  ft_variants_init(b, h);
  if (FT_WINDOW) {
    // Key tiles no row of this tile sees (past the last row's window, before the first row's) are skipped.
    const uvec2 keys = ft_rows_key_range(m0, min(m0 + BLOCK_M, pc.Sq) - 1u, kv_begin, kv_end);
    kv_begin = keys.x;
    kv_end = keys.y;
  } else if (CAUSAL != 0u) {
    // The workgroup's last row bounds the keys any of its rows sees.
    int lim = int(min(m0 + BLOCK_M, pc.Sq)) - 1 + int(pc.Sk) - int(pc.Sq) + 1;
    kv_end = uint(clamp(lim, int(kv_begin), int(kv_end)));
  }

  uvec4 regs[LPT];
  if (EARLY_K) fetch_tile(kv_begin, kv_end, false, regs);  // in flight while Q loads
  load_q();
  [[unroll]] for (uint d = 0u; d < NT_O; ++d)
    o_acc[d] = coopmat<float, gl_ScopeSubgroup, CM_M, CM_N, gl_MatrixUseAccumulator>(0.0);
  float m_run[RPT], l_run[RPT];
  [[unroll]] for (uint rr = 0u; rr < RPT; ++rr) {
    m_run[rr] = FT_NEG_INF;
    l_run[rr] = 0.0;
  }
  [[unroll]] for (uint hh = 0u; hh < 2u; ++hh) {
    f_m[hh] = FT_NEG_INF;
    f_l[hh] = 0.0;
    f_alpha[hh] = 1.0;
  }
  // Every subgroup runs every tile: with BLOCK_M <= BLOCK_N no subgroup's rows are all above the diagonal of a
  // tile the workgroup needs, and rows past Sq only occur in the last row tile (uniform control flow is cheaper
  // than the skip, and lavapipe mishandles subgroups that skip cooperative-matrix work between barriers).
  if (PREFETCH != 0u && !EARLY_K) fetch_tile(kv_begin, kv_end, false, regs);
  [[dont_unroll]] for (uint n0 = kv_begin; n0 < kv_end; n0 += BLOCK_N) {
    barrier();  // every subgroup is done with the previous V tile
    if (PREFETCH != 0u) {
      put_tile(regs);
    } else {
      load_kv_tile(n0, kv_end, false);
    }
    barrier();
    if (PREFETCH != 0u) fetch_tile(n0, kv_end, true, regs);
    // SKIP_PAST_DIAG: the subgroup's last row sees no key of this tile (subgroup-uniform).
    const bool skip = SKIP_PAST_DIAG && int(n0) > int(sg_row0 + R - 1u) + int(pc.Sk) - int(pc.Sq);
    bool rescale = false;
    if (!skip) rescale = compute_scores(n0, kv_end);
    if (!REG_SM) rescale = online_softmax(n0, kv_end, m_run, l_run);
    barrier();  // every subgroup is done with the K tile
    if (PREFETCH != 0u) {
      put_tile(regs);
    } else {
      load_kv_tile(n0, kv_end, true);
    }
    barrier();
    if (PREFETCH != 0u) fetch_tile(n0 + BLOCK_N, kv_end, false, regs);  // keys >= kv_end read nothing
    if (!skip) accumulate_pv(rescale);
  }
  if (REG_SM) {
    store_output_regs(split);
  } else {
    store_output(split, m_run, l_run);
  }
}
