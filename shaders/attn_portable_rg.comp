#version 450
// flashtile portable attention forward, row-group variant: no cooperative matrices, no shared Q, S or P. TPR lanes of
// one subgroup (a row group) own R query rows; lane j keeps Q and O columns of those rows in registers, as vec4
// columns j + TPR * c (the group's lanes read consecutive vec4 of a K or V row: conflict-free, and the row groups of a
// warp read the same addresses: broadcast). Per KV tile of BLOCK_N keys (K and V in separate shared buffers, loaded
// straight into shared memory, or with PREFETCH fetched one tile ahead through registers):
//   compute_scores: partial S over the lane's columns for R rows x TPR keys at a time (each shared K vec4 feeds 4R
//     FMAs), then a reduce-scatter over the TPR lanes (subgroupShuffleXor): lane j ends with the full scores of keys
//     c * TPR + j of its R rows.
//   online_softmax: row max by subgroupShuffleXor; p, m, alpha and the lane's share of l in registers.
//   accumulate_pv:  P broadcast within the group by subgroupShuffle; O (R rows x the lane's columns) += p * V.
// Two barriers per tile (vs four and two shared round trips of S/P in attn_portable_tile.comp).
// FT_PV_F16 (f16 tensors only; needs shaderFloat16): P·V in packed f16. P is rounded to f16, V is f16 already, each
// product p·v is rounded to f16 and summed in f16 over the tile's BLOCK_N keys only (a short sum: p <= 1), then
// added into the f32 O as O = O * alpha + sum. S = Q·Kᵀ, the softmax state (m, l) and O stay f32 throughout.
// The host (backends/vulkan/portable_paths.cpp, kRgConfigs) picks BLOCK_M = R * WG_SIZE / TPR, BLOCK_N, TPR and
// PREFETCH, and requires subgroups of at least TPR lanes and workgroups of whole subgroups. Registers per lane, about:
// Q and O 2 * R * HEAD_DIM / TPR, scores R * BLOCK_N / TPR, partial scores R * TPR, (FT_PV_F16) the f16 P·V sums
// R * HEAD_DIM / (2 * TPR), PREFETCH BLOCK_N * HEAD_DIM / WG_SIZE (16-bit tensors; twice that for f32).
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#if defined(FT_PV_F16)
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#endif
#include "attn_common.glsl"

layout(constant_id = 10) const uint TPR = 8;  // lanes per row group (a power of two, <= the subgroup size)
layout(constant_id = 11) const uint PREFETCH = 0;  // 1: the next K/V tile's global loads in flight in registers

const uint D4 = HEAD_DIM / 4u;             // vec4 columns per row
const uint DSL4 = D4 / TPR;                // vec4 columns of Q and O per lane
const uint R = BLOCK_M * TPR / WG_SIZE;    // rows per lane
const uint KPT = BLOCK_N / TPR;            // keys per lane after the reduce-scatter (keys c * TPR + lane)
const uint PREF = BLOCK_N * D4 / WG_SIZE;  // vec4 of a K tile per thread
// log2(TPR) as a specialization-constant expression (TPR <= 128): the trip count of the shuffle steps, so that every
// loop below counts 0, 1, ... up to a constant (see "Registers, not local memory").
const uint LOG_TPR = uint(TPR >= 2u) + uint(TPR >= 4u) + uint(TPR >= 8u) + uint(TPR >= 16u) + uint(TPR >= 32u) +
                     uint(TPR >= 64u) + uint(TPR >= 128u);

uint g_b, g_h, g_hk, g_m0, g_kv_begin, g_kv_end;
uint g_lane, g_grp, g_sg_base;  // lane in the row group, row group, the group's first subgroup lane

#include "attn_portable_raw.glsl"

shared vec4 sh_k[BLOCK_N * D4];
RAW4 g_kpref[PREF];
#if defined(FT_PV_F16)
// V as f16, 8 columns (a uvec4) a unit; lane j owns units j + TPR * c, i.e. vec4 columns 2 (j + TPR * c) + {0, 1}.
const uint D8 = HEAD_DIM / 8u;
const uint DSL8 = D8 / TPR;
const uint PREFV = PREF / 2u;
shared uvec4 sh_v[BLOCK_N * D8];
uvec4 g_vpref[PREFV];
#else
shared vec4 sh_v[BLOCK_N * D4];
RAW4 g_vpref[PREF];
#endif

// Registers, not local memory: a per-invocation array stays in registers only where every index is a constant once
// the driver has specialized and unrolled, so each array below is indexed only by counters of [[unroll]] loops that
// count 0, 1, ... up to a (specialization) constant without `continue`, and by arithmetic on those, never by
// lane-dependent values. A loop the driver cannot unroll (a counter stepped by shifts, a trip count depending on an
// enclosing counter, a `continue`) keeps its enclosing loops rolled too, and the arrays they index go to local
// memory: most likely the H200's 144-560 bytes of local memory in every pipeline of an earlier form of this shader
// (spirv-opt left those loops rolled there). Check a change with spirv-opt (freeze the specialization constants, -O:
// no Function-storage array may be left), as DEVELOPERS.md describes.
// Per-thread state in private globals (arrays sized by specialization constants cannot be function parameters).
vec4 g_q[R * DSL4];  // Q rows x the lane's columns (q_col), f32, log2 domain
vec4 g_o[R * DSL4];  // output accumulator, the lane's columns o_col
float g_s[R * KPT];  // scores, then p: row i, key c * TPR + lane at i * KPT + c
float g_m[R], g_l[R], g_alpha[R];  // running max, the lane's share of the row sum, this tile's rescale factor

// Global column (first of 4) of this lane's vec4 j of Q (matching the K reads), and of O (matching the V reads).
uint q_col(uint j) { return 4u * (g_lane + TPR * j); }
uint o_col(uint j) {
#if defined(FT_PV_F16)
  return 8u * (g_lane + TPR * (j / 2u)) + 4u * (j % 2u);
#else
  return q_col(j);
#endif
}

uint row_of(uint i) { return g_m0 + g_grp * R + i; }

void load_q() {
  [[unroll]] for (uint i = 0u; i < R; ++i)
    [[unroll]] for (uint j = 0u; j < DSL4; ++j) {
      vec4 x = vec4(0.0);
      if (row_of(i) < pc.Sq) {
        uint base = ft_q_base(g_b, row_of(i), g_h) + q_col(j);
        x = vec4(load_q_pair(base), load_q_pair(base + 2u)) * pc.scale_log2;
      }
      g_q[i * DSL4 + j] = x;
    }
}

// Global loads of keys [n0, n0 + BLOCK_N) of K and V into registers (PREFETCH: in flight during the previous tile's
// math; else stored into shared memory right after).
void fetch_kv(uint n0) {
  [[unroll]] for (uint i = 0u; i < PREF; ++i) {
    uint idx = gl_LocalInvocationID.x + i * WG_SIZE;
    g_kpref[i] = fetch_raw4(n0 + idx / D4, idx % D4, false);
#if !defined(FT_PV_F16)
    g_vpref[i] = fetch_raw4(n0 + idx / D4, idx % D4, true);
#endif
  }
#if defined(FT_PV_F16)
  [[unroll]] for (uint i = 0u; i < PREFV; ++i) {
    uint idx = gl_LocalInvocationID.x + i * WG_SIZE, key = n0 + idx / D8, c8 = idx % D8;
    g_vpref[i] = uvec4(fetch_raw4(key, 2u * c8, true), fetch_raw4(key, 2u * c8 + 1u, true));
  }
#endif
}

void store_kv_tile() {
  [[unroll]] for (uint i = 0u; i < PREF; ++i) {
    uint idx = gl_LocalInvocationID.x + i * WG_SIZE;
    sh_k[idx] = raw4_to_vec4(g_kpref[i]);
#if !defined(FT_PV_F16)
    sh_v[idx] = raw4_to_vec4(g_vpref[i]);
#endif
  }
#if defined(FT_PV_F16)
  [[unroll]] for (uint i = 0u; i < PREFV; ++i) sh_v[gl_LocalInvocationID.x + i * WG_SIZE] = g_vpref[i];
#endif
}

// Scores of this lane's keys (log2 domain), -inf where masked (past the range, causal, rows past Sq).
void compute_scores(uint n0) {
  [[unroll]] for (uint c = 0u; c < KPT; ++c) {
    float part[R * TPR];  // partial dots over the lane's columns: row i, key c * TPR + k at i * TPR + k
    [[unroll]] for (uint e = 0u; e < R * TPR; ++e) part[e] = 0.0;
    [[unroll]] for (uint j = 0u; j < DSL4; ++j)
      [[unroll]] for (uint k = 0u; k < TPR; ++k) {
        vec4 kv = sh_k[(c * TPR + k) * D4 + g_lane + TPR * j];
        [[unroll]] for (uint i = 0u; i < R; ++i) {
          vec4 q = g_q[i * DSL4 + j];
          float a = part[i * TPR + k];
          a = fma(q.x, kv.x, a);
          a = fma(q.y, kv.y, a);
          a = fma(q.z, kv.z, a);
          a = fma(q.w, kv.w, a);
          part[i * TPR + k] = a;
        }
      }
    // Reduce-scatter: at step s (h = TPR / 2^(s + 1) keys left per half) the lane keeps the half of its keys whose
    // bit h matches its own and adds the partner's partials of that half; after the last step part[i * TPR] is row
    // i's full score of key lane. The lane picks between two registers (a select), never an index; k runs to the
    // constant TPR / 2 with k >= h skipped (a bound of h would depend on s: not unrolled by every compiler).
    [[unroll]] for (uint s = 0u; s < LOG_TPR; ++s) {
      uint h = TPR >> (s + 1u);
      bool hi = (g_lane & h) != 0u;
      [[unroll]] for (uint i = 0u; i < R; ++i)
        [[unroll]] for (uint k = 0u; k < TPR / 2u; ++k)
          if (k < h) {
            float lo_v = part[i * TPR + k], hi_v = part[i * TPR + h + k];
            part[i * TPR + k] = (hi ? hi_v : lo_v) + subgroupShuffleXor(hi ? lo_v : hi_v, h);
          }
    }
    uint key = n0 + c * TPR + g_lane;
    [[unroll]] for (uint i = 0u; i < R; ++i) {
      uint row = row_of(i);
      int limit = CAUSAL != 0u ? min(ft_causal_limit(row), int(g_kv_end)) : int(g_kv_end);
      g_s[i * KPT + c] = row < pc.Sq && int(key) < limit ? part[i * TPR] : FT_NEG_INF;
    }
  }
}

float group_max(float x) {
  [[unroll]] for (uint s = 0u; s < LOG_TPR; ++s) x = max(x, subgroupShuffleXor(x, 1u << s));
  return x;
}

float group_sum(float x) {
  [[unroll]] for (uint s = 0u; s < LOG_TPR; ++s) x += subgroupShuffleXor(x, 1u << s);
  return x;
}

// p = exp2(s - m_new) over g_s, the running max m, alpha and the lane's share of l (alpha is equal in the group's
// lanes, so the shares rescale consistently).
void online_softmax() {
  [[unroll]] for (uint i = 0u; i < R; ++i) {
    float mx = FT_NEG_INF;
    [[unroll]] for (uint c = 0u; c < KPT; ++c) mx = max(mx, g_s[i * KPT + c]);
    float m_new = max(g_m[i], group_max(mx));
    float m_use = m_new == FT_NEG_INF ? 0.0 : m_new;  // a row with nothing visible yet: p = 0, not NaN
    float alpha = exp2(g_m[i] - m_use), sum = 0.0;
    [[unroll]] for (uint c = 0u; c < KPT; ++c) {
      float p = exp2(g_s[i * KPT + c] - m_use);
      g_s[i * KPT + c] = p;
      sum += p;
    }
    g_l[i] = g_l[i] * alpha + sum;
    g_m[i] = m_new;
    g_alpha[i] = alpha;
  }
}

#if defined(FT_PV_F16)
// O = O * alpha + P·V, the tile's sum in packed f16 (see the header), P sent as f16 pairs of rows (2i, 2i + 1; with
// odd R the last pair's second half unused).
void accumulate_pv() {
  const uint RH = (R + 1u) / 2u;
  uint p2[RH * KPT];  // pair h of key c * TPR + lane at h * KPT + c
  [[unroll]] for (uint h = 0u; h < RH; ++h)
    [[unroll]] for (uint c = 0u; c < KPT; ++c) {
      // min(): the index stays in range where the select drops it (odd R)
      float second = 2u * h + 1u < R ? g_s[min(2u * h + 1u, R - 1u) * KPT + c] : 0.0;
      p2[h * KPT + c] = packHalf2x16(vec2(g_s[2u * h * KPT + c], second));
    }
  f16vec2 acc[R * DSL8 * 4u];  // row i, unit u, pair e at (i * DSL8 + u) * 4 + e
  [[unroll]] for (uint e = 0u; e < R * DSL8 * 4u; ++e) acc[e] = f16vec2(0.0);
  // key n = c * TPR + k, its p from lane k of the group (two loops: no n / TPR, n % TPR in the indices)
  [[unroll]] for (uint c = 0u; c < KPT; ++c)
    [[unroll]] for (uint k = 0u; k < TPR; ++k) {
      f16vec2 pp[RH];
      [[unroll]] for (uint h = 0u; h < RH; ++h)
        pp[h] = unpackFloat2x16(subgroupShuffle(p2[h * KPT + c], g_sg_base + k));
      [[unroll]] for (uint u = 0u; u < DSL8; ++u) {
        uvec4 w = sh_v[(c * TPR + k) * D8 + g_lane + TPR * u];
        f16vec2 v[4] = f16vec2[4](unpackFloat2x16(w.x), unpackFloat2x16(w.y), unpackFloat2x16(w.z),
                                  unpackFloat2x16(w.w));
        [[unroll]] for (uint i = 0u; i < R; ++i) {
          f16vec2 p = i % 2u == 0u ? pp[i / 2u].xx : pp[i / 2u].yy;
          [[unroll]] for (uint e = 0u; e < 4u; ++e) {
            uint a = (i * DSL8 + u) * 4u + e;
            acc[a] = fma(p, v[e], acc[a]);
          }
        }
      }
    }
  [[unroll]] for (uint i = 0u; i < R; ++i)
    [[unroll]] for (uint j = 0u; j < DSL4; ++j) {
      uint a = (i * DSL8 + j / 2u) * 4u + 2u * (j % 2u);
      g_o[i * DSL4 + j] = fma(g_o[i * DSL4 + j], vec4(g_alpha[i]), vec4(vec2(acc[a]), vec2(acc[a + 1u])));
    }
}
#else
// O = O * alpha + P·V in f32, p of key n broadcast from its owner lane.
void accumulate_pv() {
  [[unroll]] for (uint i = 0u; i < R; ++i)
    [[unroll]] for (uint j = 0u; j < DSL4; ++j) g_o[i * DSL4 + j] *= g_alpha[i];
  // key n = c * TPR + k, its p from lane k of the group (two loops: no n / TPR, n % TPR in the indices)
  [[unroll]] for (uint c = 0u; c < KPT; ++c)
    [[unroll]] for (uint k = 0u; k < TPR; ++k) {
      float p[R];
      [[unroll]] for (uint i = 0u; i < R; ++i) p[i] = subgroupShuffle(g_s[i * KPT + c], g_sg_base + k);
      [[unroll]] for (uint j = 0u; j < DSL4; ++j) {
        vec4 v = sh_v[(c * TPR + k) * D4 + g_lane + TPR * j];
        [[unroll]] for (uint i = 0u; i < R; ++i) g_o[i * DSL4 + j] = fma(vec4(p[i]), v, g_o[i * DSL4 + j]);
      }
    }
}
#endif

// Epilogue: row sums over the group, then normalized O (and LSE), or this split's record in the scratch buffer.
void store_output() {
  [[unroll]] for (uint i = 0u; i < R; ++i) {
    uint row = row_of(i);
    float l_row = group_sum(g_l[i]);
    if (row < pc.Sq) {  // not `continue`: a loop with one can be left rolled (g_o then in local memory)
      float lse2 = ft_lse2(g_m[i], l_row);
      float inv = ft_inv_l(l_row);
      if (g_lane == 0u) {
        if (pc.n_splits > 1u) scratch_data[ft_scratch_record(g_b, g_h, row, ft_split()) + HEAD_DIM] = lse2;
        else if ((pc.flags & FT_FLAG_WRITE_LSE) != 0u) lse_data[ft_lse_index(g_b, g_h, row)] = lse2 * FT_LN2;
      }
      [[unroll]] for (uint j = 0u; j < DSL4; ++j) {
        uint c = o_col(j);
        vec4 x = g_o[i * DSL4 + j] * inv;
        if (pc.n_splits > 1u) {
          uint rec = ft_scratch_record(g_b, g_h, row, ft_split()) + c;
          scratch_data[rec] = x.x; scratch_data[rec + 1u] = x.y;
          scratch_data[rec + 2u] = x.z; scratch_data[rec + 3u] = x.w;
        } else {
          uint base = ft_o_base(g_b, row, g_h) + c;
          store_o_pair(base, x.xy);
          store_o_pair(base + 2u, x.zw);
        }
      }
    }
  }
}

void main() {
  g_b = ft_batch();
  g_h = ft_head();
  g_hk = ft_kv_head(g_h);
  // Row groups from subgroup ids, so that a group's lanes are one subgroup's (shuffles stay inside the group).
  uint t = gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID;
  g_lane = t % TPR;
  g_grp = t / TPR;
  g_sg_base = gl_SubgroupInvocationID - g_lane;
  // Causal: the host sets FT_FLAG_REVERSE_ROWS, so ft_row_tile() starts the last row tiles (the most keys) first.
  g_m0 = ft_row_tile() * BLOCK_M;
  ft_split_range(ft_split(), g_kv_begin, g_kv_end);
  // Causal: keys past the last row's diagonal are masked for the whole tile, so those tiles are skipped.
  uint kv_stop = g_kv_end;
  if (CAUSAL != 0u) kv_stop = uint(clamp(ft_causal_limit(min(g_m0 + BLOCK_M, pc.Sq) - 1u), 0, int(g_kv_end)));

  load_q();
  [[unroll]] for (uint i = 0u; i < R * DSL4; ++i) g_o[i] = vec4(0.0);
  [[unroll]] for (uint i = 0u; i < R; ++i) {
    g_m[i] = FT_NEG_INF;
    g_l[i] = 0.0;
  }
  if (PREFETCH != 0u && g_kv_begin < kv_stop) fetch_kv(g_kv_begin);
  for (uint n0 = g_kv_begin; n0 < kv_stop; n0 += BLOCK_N) {
    barrier();  // the previous tile's scores and P·V are done with sh_k and sh_v
    if (PREFETCH == 0u) fetch_kv(n0);
    store_kv_tile();
    barrier();
    if (PREFETCH != 0u && n0 + BLOCK_N < kv_stop) fetch_kv(n0 + BLOCK_N);  // next K and V, in flight during the math
    compute_scores(n0);
    online_softmax();
    accumulate_pv();
  }
  store_output();
}
