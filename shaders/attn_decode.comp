#version 450
// flashtile decode forward: few query rows (decode, short speculative steps) against a long K/V, built to stream
// K and V at memory bandwidth. No cooperative matrices: every Vulkan path runs it, lavapipe included.
//   GQA packing: a workgroup takes one KV head's group x seqlen_q query rows (packed row pr = qrow * group + g, query
//   head hk * group + g), BLOCK_M of them a row tile, so each K/V element is read once for the whole group.
//   Split-KV: workgroup x = row_tile * n_splits + split, y = the KV head, z = the batch (attn_common.glsl's ft_wg with
//   heads = Hkv); partials go to the scratch records of the real (head, row), merged by attn_splitkv_reduce.comp.
//   Key slots: TPK lanes of one subgroup share a key (16-byte uvec4 loads of 8 16-bit values, lane t owning chunks
//   c * TPK + t: one key row is one coalesced run); the WG_SIZE / TPK slots stream disjoint keys (slot s takes key
//   n0 + u * KPW + s of each BLOCK_N-key step), each with its own online softmax in registers, so the main loop has
//   no barrier and no shared memory; the next step's K and V are loaded before this step's math (in flight while it
//   runs). Dot products: partial over the lane's columns, summed over the slot's lanes with subgroupShuffleXor.
//   merge_slots combines the slots' (m, l, O) through shared memory at the end, one row at a time.
// Phases: load_q -> [load_kv_step (next) | compute_scores -> softmax_pv] per step -> merge_slots -> store_row.
// Storage: packed uint pairs (FT_STORAGE_PACKED); the host keeps element offsets and strides multiples of 8.
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#include "attn_common.glsl"

layout(constant_id = 15) const uint TPK = 16;  // lanes a key (a power of two, within one subgroup)
const uint C8 = HEAD_DIM / 8u;                 // uvec4 chunks of a key's row
const uint CH = C8 / TPK;                      // uvec4 chunks a lane
const uint CV = 2u * CH;                       // vec4 columns a lane
const uint KPW = WG_SIZE / TPK;                // key slots of the workgroup
const uint U = BLOCK_N / KPW;                  // keys a slot takes per step
const uint D4 = HEAD_DIM / 4u;

// 16-byte views of K and V (attn_common.glsl binds the same buffers as uint pairs).
layout(set = 0, binding = 1, std430) readonly buffer BufK8 { uvec4 k8[]; };
layout(set = 0, binding = 2, std430) readonly buffer BufV8 { uvec4 v8[]; };

shared float sh_m[KPW * BLOCK_M];
shared float sh_l[KPW * BLOCK_M];
shared vec4 sh_o[KPW * D4];

uint g_b, g_hk, g_group, g_rows, g_pr0, g_slot, g_lane, g_kv_stop;

// A packed row's query row and head; valid while pr < g_rows.
uint row_q(uint pr) { return pr / g_group; }
uint row_h(uint pr) { return g_hk * g_group + pr % g_group; }

// The tile's rows: the keys [lo, hi) each sees (none for rows past g_rows), qrow + Sk - Sq (ALiBi's distance
// origin), the ALiBi slope (log2 domain).
int g_lo[BLOCK_M], g_hi[BLOCK_M], g_diag[BLOCK_M];
float g_slope[BLOCK_M];
// The slot's state (private arrays sized by specialization constants, so globals rather than parameters): Q columns
// (pre-scaled into the log2 domain), O accumulators, running max and sum per row; this step's and the next step's raw
// K and V chunks; the step's scores.
vec4 g_q[BLOCK_M * CV], g_o[BLOCK_M * CV];
float g_m[BLOCK_M], g_l[BLOCK_M];
uvec4 g_k[U * CH], g_v[U * CH], g_k_next[U * CH], g_v_next[U * CH];
float g_s[BLOCK_M * U];

// The tile's rows: their Q columns of this lane and their key bounds; rows past g_rows see no key.
void load_q() {
  [[unroll]] for (uint r = 0u; r < BLOCK_M; ++r) {
    const uint pr = g_pr0 + r;
    const bool valid = pr < g_rows;
    const uint qrow = valid ? row_q(pr) : 0u, h = valid ? row_h(pr) : 0u;
    g_diag[r] = int(qrow) + int(ft_sk()) - int(ft_sq());
    const ivec2 keys = ft_keys_of(g_diag[r], int(ft_sk()));
    g_lo[r] = valid ? keys.x : 0;
    g_hi[r] = valid ? keys.y : 0;
    g_slope[r] = 0.0;
    if (FT_ALIBI && valid) g_slope[r] = alibi_data[vp.alibi_off + g_b * vp.alibi_sb + h] * FT_LOG2E;
    [[unroll]] for (uint c = 0u; c < CH; ++c) {
      vec4 a = vec4(0.0), b = vec4(0.0);
      if (valid) {
        const uint base = ft_q_base(g_b, qrow, h) + 8u * (c * TPK + g_lane);
        a = vec4(load_q_pair(base), load_q_pair(base + 2u)) * pc.scale_log2;
        b = vec4(load_q_pair(base + 4u), load_q_pair(base + 6u)) * pc.scale_log2;
      }
      g_q[r * CV + 2u * c] = a;
      g_q[r * CV + 2u * c + 1u] = b;
    }
  }
}

// The slot's U keys of the step at n0, raw, into g_k_next / g_v_next; keys at or past g_kv_stop are zeros, never
// read (NaN in unused cache slots stays there).
void load_kv_step(uint n0) {
  [[unroll]] for (uint u = 0u; u < U; ++u) {
    const uint key = n0 + u * KPW + g_slot;
    const bool in_range = key < g_kv_stop;
    const uint kb = in_range ? ft_k_base(g_b, key, g_hk) / 8u : 0u;
    const uint vb = in_range ? ft_v_base(g_b, key, g_hk) / 8u : 0u;
    [[unroll]] for (uint c = 0u; c < CH; ++c) {
      g_k_next[u * CH + c] = in_range ? k8[kb + c * TPK + g_lane] : uvec4(0u);
      g_v_next[u * CH + c] = in_range ? v8[vb + c * TPK + g_lane] : uvec4(0u);
    }
  }
}

vec4 unpack_lo(uvec4 w) { return vec4(ft_unpack2(w.x), ft_unpack2(w.y)); }
vec4 unpack_hi(uvec4 w) { return vec4(ft_unpack2(w.z), ft_unpack2(w.w)); }

// Softcap, then ALiBi (attn_common.glsl's ft_score_at with the row's own slope: a workgroup spans several heads).
float row_score(float s, uint r, int key) {
  if (FT_SOFTCAP) s = ft_var.cap2 * ft_tanh(s * ft_var.inv_cap2);
  if (FT_ALIBI) s -= g_slope[r] * abs(float(g_diag[r] - key));
  return s;
}

// g_s[r * U + u]: row r's score of the slot's key u (log2 domain), -inf where the row does not see the key.
void compute_scores(uint n0) {
  [[unroll]] for (uint u = 0u; u < U; ++u) {
    vec4 kf[CV];
    [[unroll]] for (uint c = 0u; c < CH; ++c) {
      kf[2u * c] = unpack_lo(g_k[u * CH + c]);
      kf[2u * c + 1u] = unpack_hi(g_k[u * CH + c]);
    }
    const int key = int(n0 + u * KPW + g_slot);
    [[unroll]] for (uint r = 0u; r < BLOCK_M; ++r) {
      float acc = 0.0;
      [[unroll]] for (uint c = 0u; c < CV; ++c) acc += dot(g_q[r * CV + c], kf[c]);
      [[unroll]] for (uint o = 1u; o < TPK; o <<= 1) acc += subgroupShuffleXor(acc, o);
      g_s[r * U + u] = key >= g_lo[r] && key < g_hi[r] ? row_score(acc, r, key) : FT_NEG_INF;
    }
  }
}

// The slot's online softmax over the step's U keys (g_s becomes P), one rescale of O per row and step; then P·V key
// by key, each V chunk unpacked once for every row (fewer live registers than unpacking the step's V at once).
void softmax_pv() {
  [[unroll]] for (uint r = 0u; r < BLOCK_M; ++r) {
    float mx = g_m[r];
    [[unroll]] for (uint u = 0u; u < U; ++u) mx = max(mx, g_s[r * U + u]);
    const float m_use = mx == FT_NEG_INF ? 0.0 : mx;  // nothing visible yet: p = 0, not NaN
    const float alpha = exp2(g_m[r] - m_use);
    float sum = 0.0;
    [[unroll]] for (uint u = 0u; u < U; ++u) {
      g_s[r * U + u] = exp2(g_s[r * U + u] - m_use);
      sum += g_s[r * U + u];
    }
    g_l[r] = g_l[r] * alpha + sum;
    g_m[r] = mx;
    [[unroll]] for (uint c = 0u; c < CV; ++c) g_o[r * CV + c] *= alpha;
  }
  [[unroll]] for (uint u = 0u; u < U; ++u) {
    vec4 vf[CV];
    [[unroll]] for (uint c = 0u; c < CH; ++c) {
      vf[2u * c] = unpack_lo(g_v[u * CH + c]);
      vf[2u * c + 1u] = unpack_hi(g_v[u * CH + c]);
    }
    [[unroll]] for (uint r = 0u; r < BLOCK_M; ++r)
      [[unroll]] for (uint c = 0u; c < CV; ++c) g_o[r * CV + c] += g_s[r * U + u] * vf[c];
  }
}

// Row pr's output from its merged max mx, sum l and the unnormalized O columns x (vec4 column c4): the split's
// scratch record, or O and LSE (with the row's sink) when the call has one split.
void store_row(uint pr, uint c4, vec4 x, float mx, float l) {
  const uint qrow = row_q(pr), h = row_h(pr);
  if (pc.n_splits > 1u) {
    const uint rec = ft_scratch_record(g_b, h, qrow, ft_split());
    const vec4 y = x * ft_inv_l(l);
    if (c4 == 0u) scratch_data[rec + HEAD_DIM] = ft_lse2(mx, l);
    scratch_data[rec + 4u * c4] = y.x;
    scratch_data[rec + 4u * c4 + 1u] = y.y;
    scratch_data[rec + 4u * c4 + 2u] = y.z;
    scratch_data[rec + 4u * c4 + 3u] = y.w;
    return;
  }
  if (FT_SINKS) ft_var.sink2 = sinks_data[vp.sinks_off + h] * FT_LOG2E;
  float lse2;
  const vec4 y = x * ft_row_norm(mx, l, true, lse2);
  if (c4 == 0u && (pc.flags & FT_FLAG_WRITE_LSE) != 0u) lse_data[ft_lse_index(g_b, h, qrow)] = lse2 * FT_LN2;
  const uint base = ft_o_base(g_b, qrow, h) + 4u * c4;
  store_o_pair(base, y.xy);
  store_o_pair(base + 2u, y.zw);
}

// Combines the KPW slots' states row by row: the rows' max and sum from every slot's (m, l), then each slot's O
// rescaled to that max and summed column by column.
void merge_slots() {
  if (g_lane == 0u)
    [[unroll]] for (uint r = 0u; r < BLOCK_M; ++r) {
      sh_m[g_slot * BLOCK_M + r] = g_m[r];
      sh_l[g_slot * BLOCK_M + r] = g_l[r];
    }
  barrier();
  [[unroll]] for (uint r = 0u; r < BLOCK_M; ++r) {
    if (g_pr0 + r >= g_rows) break;  // uniform: the rest of the tile is past the packed rows
    float mx = FT_NEG_INF;
    for (uint s = 0u; s < KPW; ++s) mx = max(mx, sh_m[s * BLOCK_M + r]);
    const float m_use = mx == FT_NEG_INF ? 0.0 : mx;
    float lt = 0.0;
    for (uint s = 0u; s < KPW; ++s) lt += sh_l[s * BLOCK_M + r] * exp2(sh_m[s * BLOCK_M + r] - m_use);
    const float f = exp2(g_m[r] - m_use);
    [[unroll]] for (uint c = 0u; c < CH; ++c) {
      const uint c4 = 2u * (c * TPK + g_lane);
      sh_o[g_slot * D4 + c4] = g_o[r * CV + 2u * c] * f;
      sh_o[g_slot * D4 + c4 + 1u] = g_o[r * CV + 2u * c + 1u] * f;
    }
    barrier();
    for (uint c4 = gl_LocalInvocationID.x; c4 < D4; c4 += WG_SIZE) {
      vec4 x = vec4(0.0);
      for (uint s = 0u; s < KPW; ++s) x += sh_o[s * D4 + c4];
      store_row(g_pr0 + r, c4, x, mx, lt);
    }
    barrier();  // sh_o is rewritten by the next row
  }
}

void main() {
  g_b = ft_batch();
  g_hk = ft_head();
  ft_seq_init(g_b);
  g_group = pc.Hq / pc.Hkv;
  g_rows = g_group * ft_sq();
  g_pr0 = ft_row_tile() * BLOCK_M;
  if (g_pr0 >= g_rows) return;  // a shorter sequence (varlen): the whole workgroup leaves, no record is read
  g_slot = gl_LocalInvocationID.x / TPK;
  g_lane = gl_LocalInvocationID.x % TPK;
  ft_variants_init(g_b, g_hk * g_group);  // window and softcap; slopes and sinks are per row (load_q, store_row)
  uint kv_begin, kv_end;
  ft_split_range(ft_split(), kv_begin, kv_end);
  // The keys any row of the tile sees: tiles outside every row's causal / window bounds are never loaded.
  const uint last = min(g_pr0 + BLOCK_M, g_rows) - 1u;
  const uvec2 range = ft_rows_key_range(row_q(g_pr0), row_q(last), kv_begin, kv_end);
  g_kv_stop = range.y;

  load_q();
  [[unroll]] for (uint r = 0u; r < BLOCK_M; ++r) {
    g_m[r] = FT_NEG_INF;
    g_l[r] = 0.0;
    [[unroll]] for (uint c = 0u; c < CV; ++c) g_o[r * CV + c] = vec4(0.0);
  }
  load_kv_step(range.x);
  for (uint n0 = range.x; n0 < range.y; n0 += BLOCK_N) {
    [[unroll]] for (uint i = 0u; i < U * CH; ++i) {
      g_k[i] = g_k_next[i];
      g_v[i] = g_v_next[i];
    }
    load_kv_step(n0 + BLOCK_N);  // in flight during this step's math
    compute_scores(n0);
    softmax_pv();
  }
  merge_slots();
}
