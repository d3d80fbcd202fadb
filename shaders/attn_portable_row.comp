#version 450
// flashtile portable attention forward, row-per-thread-group variant: no cooperative matrices, no shared Q or
// score tiles. TPR = HEAD_DIM / 64 threads own one query row; each keeps 64 of its columns of Q (pre-scaled into
// the log2 domain) and of the output accumulator in registers, as 16 vec4 chunks interleaved across the row's
// threads (chunk j of lane t is vec4 column j * TPR + t). Per KV tile of BLOCK_N keys (K and V both in shared
// memory, f32, BLOCK_N x HEAD_DIM each, within 32 KB):
//   load_kv_tile -> compute_scores (every thread of the warp reads the same K chunk: a shared-memory broadcast;
//   partial dots summed over the TPR lanes with subgroupShuffleXor) -> online_softmax (in registers: every lane
//   of a row holds all its scores) -> accumulate_pv (V chunks broadcast the same way).
// Two barriers per tile; BLOCK_M = WG_SIZE / TPR rows per workgroup (the host sets it). Head dims 64, 128, 192, 256.
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#include "attn_common.glsl"

const uint TPR = HEAD_DIM / 64u;  // threads per row
const uint D4 = HEAD_DIM / 4u;    // vec4 columns per row
const uint C = 16u;               // vec4 chunks per thread (64 columns)
const uint MAX_BN = 64u;          // register bound for a tile's scores (host keeps BLOCK_N <= 64)

shared vec4 sh_k[BLOCK_N * D4];
shared vec4 sh_v[BLOCK_N * D4];

uint g_b, g_h, g_hk, g_row, g_lane, g_kv_begin, g_kv_end;

void load_q(out vec4 q[C]) {
  [[unroll]] for (uint j = 0u; j < C; ++j) {
    q[j] = vec4(0.0);
    if (g_row < pc.Sq) {
      uint base = ft_q_base(g_b, g_row, g_h) + 4u * (j * TPR + g_lane);
      q[j] = vec4(load_q_pair(base), load_q_pair(base + 2u)) * pc.scale_log2;
    }
  }
}

// Keys [n0, n0 + BLOCK_N) of K and V into shared memory; keys past the range are 0 (never NaN).
void load_kv_tile(uint n0) {
  for (uint idx = gl_LocalInvocationID.x; idx < BLOCK_N * D4; idx += WG_SIZE) {
    uint n = idx / D4, c4 = idx % D4, key = n0 + n;
    vec4 k = vec4(0.0), v = vec4(0.0);
    if (key < g_kv_end) {
      uint kb = ft_k_base(g_b, key, g_hk) + 4u * c4, vb = ft_v_base(g_b, key, g_hk) + 4u * c4;
      k = vec4(load_k_pair(kb), load_k_pair(kb + 2u));
      v = vec4(load_v_pair(vb), load_v_pair(vb + 2u));
    }
    sh_k[idx] = k;
    sh_v[idx] = v;
  }
}

// s[n] = q·k_n (log2 domain), -inf where masked (past the range, causal).
void compute_scores(uint n0, int limit, const vec4 q[C], out float s[MAX_BN]) {
  [[unroll]] for (uint n = 0u; n < BLOCK_N; ++n) {
    float acc = 0.0;
    [[unroll]] for (uint j = 0u; j < C; ++j) acc += dot(q[j], sh_k[n * D4 + j * TPR + g_lane]);
    [[unroll]] for (uint o = 1u; o < TPR; o <<= 1) acc += subgroupShuffleXor(acc, o);
    s[n] = int(n0 + n) < limit ? acc : FT_NEG_INF;
  }
}

// Running max m and sum l (identical in the row's lanes); s becomes p; returns the rescale factor for O.
float online_softmax(inout float s[MAX_BN], inout float m, inout float l) {
  float mx = FT_NEG_INF;
  [[unroll]] for (uint n = 0u; n < BLOCK_N; ++n) mx = max(mx, s[n]);
  float m_new = max(m, mx);
  float m_use = m_new == FT_NEG_INF ? 0.0 : m_new;  // nothing visible yet: p = 0, not NaN
  float alpha = exp2(m - m_use);
  float sum = 0.0;
  [[unroll]] for (uint n = 0u; n < BLOCK_N; ++n) {
    s[n] = exp2(s[n] - m_use);
    sum += s[n];
  }
  l = l * alpha + sum;
  m = m_new;
  return alpha;
}

void accumulate_pv(const float p[MAX_BN], float alpha, inout vec4 o[C]) {
  [[unroll]] for (uint j = 0u; j < C; ++j) o[j] *= alpha;
  [[unroll]] for (uint n = 0u; n < BLOCK_N; ++n)
    [[unroll]] for (uint j = 0u; j < C; ++j) o[j] += p[n] * sh_v[n * D4 + j * TPR + g_lane];
}

void store_output(const vec4 o[C], float m, float l) {
  if (g_row >= pc.Sq) return;
  float inv = ft_inv_l(l);
  float lse2 = ft_lse2(m, l);
  if (pc.n_splits > 1u) {
    uint rec = ft_scratch_record(g_b, g_h, g_row, ft_split());
    if (g_lane == 0u) scratch_data[rec + HEAD_DIM] = lse2;
    [[unroll]] for (uint j = 0u; j < C; ++j) {
      uint c = rec + 4u * (j * TPR + g_lane);
      vec4 x = o[j] * inv;
      scratch_data[c] = x.x; scratch_data[c + 1u] = x.y; scratch_data[c + 2u] = x.z; scratch_data[c + 3u] = x.w;
    }
    return;
  }
  if (g_lane == 0u && (pc.flags & FT_FLAG_WRITE_LSE) != 0u) lse_data[ft_lse_index(g_b, g_h, g_row)] = lse2 * FT_LN2;
  [[unroll]] for (uint j = 0u; j < C; ++j) {
    uint base = ft_o_base(g_b, g_row, g_h) + 4u * (j * TPR + g_lane);
    vec4 x = o[j] * inv;
    store_o_pair(base, x.xy);
    store_o_pair(base + 2u, x.zw);
  }
}

void main() {
  g_b = ft_batch();
  g_h = ft_head();
  g_hk = ft_kv_head(g_h);
  // Causal: the host sets FT_FLAG_REVERSE_ROWS, so ft_row_tile() starts the last row tiles (the most keys) first.
  uint row_tile = ft_row_tile();
  uint m0 = row_tile * BLOCK_M;
  g_row = m0 + gl_LocalInvocationID.x / TPR;
  g_lane = gl_LocalInvocationID.x % TPR;
  ft_split_range(ft_split(), g_kv_begin, g_kv_end);
  int limit = CAUSAL != 0u ? min(ft_causal_limit(g_row), int(g_kv_end)) : int(g_kv_end);
  // Causal: tiles past the last row's diagonal are masked for the whole workgroup, so they are skipped.
  uint kv_stop = g_kv_end;
  if (CAUSAL != 0u) kv_stop = uint(clamp(ft_causal_limit(min(m0 + BLOCK_M, pc.Sq) - 1u), 0, int(g_kv_end)));

  vec4 q[C];
  load_q(q);
  vec4 o[C];
  [[unroll]] for (uint j = 0u; j < C; ++j) o[j] = vec4(0.0);
  float m = FT_NEG_INF, l = 0.0;
  float s[MAX_BN];
  for (uint n0 = g_kv_begin; n0 < kv_stop; n0 += BLOCK_N) {
    barrier();  // the previous tile's reads of sh_k and sh_v are done
    load_kv_tile(n0);
    barrier();
    compute_scores(n0, limit, q, s);
    float alpha = online_softmax(s, m, l);
    accumulate_pv(s, alpha, o);
  }
  store_output(o, m, l);
}
