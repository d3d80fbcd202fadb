#version 450
// flashtile portable attention forward: no cooperative matrices, runs on any Vulkan 1.2 device (lavapipe too).
//
// One workgroup computes BLOCK_M query rows of one (batch, head), over all keys (or one KV split). Per KV tile:
//   load_kv_tile(K, fetched from global one phase earlier)
//   -> compute_scores (register-tiled Q·Kᵀ from shared memory, RM x RN scores per thread)
//   -> online_softmax (TPR threads per row: row max, exp2, rescale factor) while V is loaded into K's buffer
//   -> accumulate_pv (register-tiled P·V, ROWS_PV rows x 4 columns per thread) -> next tile.
// Q is pre-multiplied by scale_log2 on load, so scores are already in the log2 domain: p = exp2(s - m).
// Shared memory (floats): Q [BLOCK_M][DP+4] + K/V [BLOCK_N][DP+4] + S/P [BLOCK_M][BLOCK_N+1] + BLOCK_M rescale
// factors + BLOCK_M*TPR reduction slots; the host's tiles (backends/vulkan/portable_paths.cpp) keep this within
// 32 KB, and wider ones within 48 KB for devices that have it.
//
// Variants (compile-time defines, one module each): storage (FT_STORAGE_F32 / FT_STORAGE_PACKED / 16-bit
// storage, see attn_common.glsl) x row reductions (FT_SUBGROUP: subgroupShuffleXor across the TPR threads of a
// row; else through shared memory). Serving layouts (LAYOUT, attn_common.glsl): rows and keys through cu_seqlens or the
// block table, with the sequence's own lengths. Attention variants (VARIANTS, attn_common.glsl): window masks and key
// tiles, softcap and ALiBi on the scores, the sink in the epilogue (or the split-KV reduce).
#extension GL_GOOGLE_include_directive : require
#ifdef FT_SUBGROUP
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#endif
#include "attn_common.glsl"

// Head dims that are multiples of 8 run in a tile of DP columns (the next of 32, 64, 128, 256); the padding
// columns are never loaded or stored (accumulate_pv's threads on them compute values that are dropped).
const uint DP = HEAD_DIM <= 32u ? 32u : (HEAD_DIM <= 64u ? 64u : (HEAD_DIM <= 128u ? 128u : 256u));
const uint D4 = DP / 4u;                          // vec4 columns per tile row
const uint DV4 = HEAD_DIM / 4u;                   // ... of which hold data
const uint QS = D4 + 1u;                          // padded row stride of Q/K/V tiles, in vec4
const uint SS = BLOCK_N + 1u;                     // padded row stride of the score tile, in floats
const uint TPR = WG_SIZE / BLOCK_M;               // softmax threads per query row
const uint KPT = BLOCK_N / TPR;                   // keys per softmax thread
const uint E = (BLOCK_M * BLOCK_N) / WG_SIZE;     // scores per thread in compute_scores
const uint RN = E >= 2u ? 2u : 1u;                // ... as RM rows x RN keys
const uint RM = E / RN;
const uint KG = BLOCK_N / RN;                     // key groups in compute_scores
const uint ROWS_PV = (BLOCK_M * D4) / WG_SIZE;    // output rows per thread (one vec4 column each)
const uint RG_PV = WG_SIZE / D4;                  // row groups in accumulate_pv
const uint MAX_E = 8u;                            // register array bounds (host keeps E, ROWS_PV <= 8)
const uint MAX_ROWS = 8u;

shared vec4 sh_q[BLOCK_M * QS];
shared vec4 sh_kv[BLOCK_N * QS];
shared float sh_s[BLOCK_M * SS];
shared float sh_alpha[BLOCK_M];  // per-tile rescale factor of each row; in the epilogue: 1 / l
shared float sh_red[BLOCK_M * TPR];  // cross-thread row reductions (shared-memory variant, and l at the end)

uint g_b, g_h, g_hk, g_m0, g_kv_begin, g_kv_end;

// Load the BLOCK_M x D query tile into shared memory as f32, scaled into the log2 domain; rows past Sq are 0.
void load_q() {
  for (uint idx = gl_LocalInvocationID.x; idx < BLOCK_M * DV4; idx += WG_SIZE) {
    uint r = idx / DV4, c4 = idx % DV4, row = g_m0 + r;
    vec4 x = vec4(0.0);
    if (row < ft_sq()) {
      uint base = ft_q_base(g_b, row, g_h) + 4u * c4;
      x = vec4(load_q_pair(base), load_q_pair(base + 2u)) * pc.scale_log2;
    }
    sh_q[r * QS + c4] = x;
  }
}

// K/V tiles travel through registers, one phase ahead (fetch_kv: global loads into g_pref, in flight while the
// previous phase computes; stash_kv: into sh_kv after the barrier), so global latency overlaps the math.
const uint PREF = (BLOCK_N * DV4 + WG_SIZE - 1u) / WG_SIZE;  // vec4 per thread per tile (host keeps it <= 8)
vec4 g_pref[8];

// Keys [n0, n0 + BLOCK_N) of K (is_v false) or V; keys past the range are 0 (never NaN: p = 0 multiplies them).
void fetch_kv(uint n0, bool is_v) {
  [[unroll]] for (uint i = 0u; i < PREF; ++i) {
    uint idx = gl_LocalInvocationID.x + i * WG_SIZE;
    uint n = idx / DV4, c4 = idx % DV4, key = n0 + n;
    vec4 x = vec4(0.0);
    if (idx < BLOCK_N * DV4 && key < g_kv_end) {
      if (is_v) {
        uint base = ft_v_base(g_b, key, g_hk) + 4u * c4;
        x = vec4(load_v_pair(base), load_v_pair(base + 2u));
      } else {
        uint base = ft_k_base(g_b, key, g_hk) + 4u * c4;
        x = vec4(load_k_pair(base), load_k_pair(base + 2u));
      }
    }
    g_pref[i] = x;
  }
}

void load_kv_tile() {  // stash the fetched tile into shared memory
  [[unroll]] for (uint i = 0u; i < PREF; ++i) {
    uint idx = gl_LocalInvocationID.x + i * WG_SIZE;
    if (idx < BLOCK_N * DV4) sh_kv[(idx / DV4) * QS + idx % DV4] = g_pref[i];
  }
}

// S = Q·Kᵀ for the tile; masked entries (past the range, causal or window, rows past Sq) become -inf.
void compute_scores(uint n0) {
  uint t = gl_LocalInvocationID.x;
  uint kg = t % KG, rg = t / KG;
  float acc[MAX_E];
  [[unroll]] for (uint i = 0u; i < MAX_E; ++i) acc[i] = 0.0;
  for (uint c4 = 0u; c4 < DV4; ++c4) {
    vec4 kv[2];
    [[unroll]] for (uint j = 0u; j < RN; ++j) kv[j] = sh_kv[(kg + j * KG) * QS + c4];
    [[unroll]] for (uint i = 0u; i < RM; ++i) {
      vec4 q = sh_q[(rg + i * (BLOCK_M / RM)) * QS + c4];
      [[unroll]] for (uint j = 0u; j < RN; ++j) acc[i * RN + j] += dot(q, kv[j]);
    }
  }
  [[unroll]] for (uint i = 0u; i < RM; ++i) {
    uint r = rg + i * (BLOCK_M / RM), row = g_m0 + r;
    // Plain calls keep their masks' arithmetic exactly (ft_causal_limit, or kv_end alone).
    const ivec2 keys = FT_WINDOW ? ft_row_keys(row) : ivec2(0, CAUSAL != 0u ? ft_causal_limit(row) : int(g_kv_end));
    const int limit = min(keys.y, int(g_kv_end));
    [[unroll]] for (uint j = 0u; j < RN; ++j) {
      uint n = kg + j * KG;
      bool visible = row < ft_sq() && int(n0 + n) < limit && (!FT_WINDOW || int(n0 + n) >= keys.x);
      sh_s[r * SS + n] = visible ? ft_variant_score(acc[i * RN + j], row, n0 + n) : FT_NEG_INF;
    }
  }
}

float row_max(float x) {
#ifdef FT_SUBGROUP
  [[unroll]] for (uint o = 1u; o < TPR; o <<= 1) x = max(x, subgroupShuffleXor(x, o));
  return x;
#else
  uint r = gl_LocalInvocationID.x / TPR, lane = gl_LocalInvocationID.x % TPR;
  sh_red[r * TPR + lane] = x;
  barrier();
  float m = FT_NEG_INF;
  for (uint i = 0u; i < TPR; ++i) m = max(m, sh_red[r * TPR + i]);
  barrier();
  return m;
#endif
}

float row_sum(float x) {
#ifdef FT_SUBGROUP
  [[unroll]] for (uint o = 1u; o < TPR; o <<= 1) x += subgroupShuffleXor(x, o);
  return x;
#else
  uint r = gl_LocalInvocationID.x / TPR, lane = gl_LocalInvocationID.x % TPR;
  sh_red[r * TPR + lane] = x;
  barrier();
  float s = 0.0;
  for (uint i = 0u; i < TPR; ++i) s += sh_red[r * TPR + i];
  barrier();
  return s;
#endif
}

// Row r's TPR threads each own KPT keys (lane, lane + TPR, ...). m: running row max (log2 domain, identical in
// the row's threads); l: this thread's share of the running row sum. Writes P over S and the rescale factor.
void online_softmax(inout float m, inout float l) {
  uint r = gl_LocalInvocationID.x / TPR, lane = gl_LocalInvocationID.x % TPR;
  float tile_max = FT_NEG_INF;
  for (uint j = 0u; j < KPT; ++j) tile_max = max(tile_max, sh_s[r * SS + lane + j * TPR]);
  float m_new = max(m, row_max(tile_max));
  float m_use = m_new == FT_NEG_INF ? 0.0 : m_new;  // a row with nothing visible yet: p = 0, not NaN
  float alpha = exp2(m - m_use);
  float sum = 0.0;
  for (uint j = 0u; j < KPT; ++j) {
    uint i = r * SS + lane + j * TPR;
    float p = exp2(sh_s[i] - m_use);
    sh_s[i] = p;
    sum += p;
  }
  l = l * alpha + sum;
  m = m_new;
  if (lane == 0u) sh_alpha[r] = alpha;
}

// O = O * alpha + P·V: this thread owns rows rg + i*RG_PV (i < ROWS_PV) of vec4 column c4.
void accumulate_pv(inout vec4 acc[MAX_ROWS]) {
  uint c4 = gl_LocalInvocationID.x % D4, rg = gl_LocalInvocationID.x / D4;
  [[unroll]] for (uint i = 0u; i < ROWS_PV; ++i) acc[i] *= sh_alpha[rg + i * RG_PV];
  for (uint n = 0u; n < BLOCK_N; ++n) {
    vec4 v = sh_kv[n * QS + c4];
    [[unroll]] for (uint i = 0u; i < ROWS_PV; ++i) acc[i] += sh_s[(rg + i * RG_PV) * SS + n] * v;
  }
}

// Epilogue: normalize and write O (and LSE), or this split's record in the scratch buffer.
void store_output(vec4 acc[MAX_ROWS], float m, float l) {
  uint r = gl_LocalInvocationID.x / TPR, lane = gl_LocalInvocationID.x % TPR;
  float l_row = row_sum(l);
  // log2-domain LSE of this row (or split); -inf when no key was visible (without a sink).
  float lse2;
  const float norm = ft_row_norm(m, l_row, pc.n_splits == 1u, lse2);
  if (lane == 0u) sh_alpha[r] = norm;
  uint row = g_m0 + r;
  if (lane == 0u && row < ft_sq()) {
    if (pc.n_splits > 1u) {
      scratch_data[ft_scratch_record(g_b, g_h, row, ft_split()) + HEAD_DIM] = lse2;
    } else if ((pc.flags & FT_FLAG_WRITE_LSE) != 0u) {
      lse_data[ft_lse_index(g_b, g_h, row)] = lse2 * FT_LN2;
    }
  }
  barrier();
  uint c4 = gl_LocalInvocationID.x % D4, rg = gl_LocalInvocationID.x / D4;
  [[unroll]] for (uint i = 0u; i < ROWS_PV; ++i) {
    uint rr = rg + i * RG_PV, orow = g_m0 + rr;
    if (orow >= ft_sq() || c4 >= DV4) continue;
    vec4 o = acc[i] * sh_alpha[rr];
    if (pc.n_splits > 1u) {
      uint rec = ft_scratch_record(g_b, g_h, orow, ft_split()) + 4u * c4;
      scratch_data[rec] = o.x; scratch_data[rec + 1u] = o.y;
      scratch_data[rec + 2u] = o.z; scratch_data[rec + 3u] = o.w;
    } else {
      uint base = ft_o_base(g_b, orow, g_h) + 4u * c4;
      store_o_pair(base, o.xy);
      store_o_pair(base + 2u, o.zw);
    }
  }
}

void main() {
  g_b = ft_batch();
  g_h = ft_head();
  g_hk = ft_kv_head(g_h);
  ft_seq_init(g_b);
  ft_variants_init(g_b, g_h);
  // Causal: the host sets FT_FLAG_REVERSE_ROWS, so ft_row_tile() starts the last row tiles (the most keys) first.
  uint row_tile = ft_row_tile();
  g_m0 = row_tile * BLOCK_M;
  // Serving layouts: row tiles past a shorter sequence's rows have nothing to write (uniform: no barrier skipped).
  if (LAYOUT != FT_LAYOUT_DENSE && g_m0 >= ft_sq()) return;
  ft_split_range(ft_split(), g_kv_begin, g_kv_end);
  // Causal and windows: key tiles no row of this tile sees (past the last row's bound, before the first row's) are
  // skipped.
  const uvec2 kv_range = ft_rows_key_range(g_m0, min(g_m0 + BLOCK_M, ft_sq()) - 1u, g_kv_begin, g_kv_end);
  const uint kv_start = kv_range.x, kv_stop = kv_range.y;

  load_q();
  vec4 acc[MAX_ROWS];
  [[unroll]] for (uint i = 0u; i < MAX_ROWS; ++i) acc[i] = vec4(0.0);
  float m = FT_NEG_INF, l = 0.0;
  if (kv_start < kv_stop) fetch_kv(kv_start, false);
  for (uint n0 = kv_start; n0 < kv_stop; n0 += BLOCK_N) {
    barrier();  // previous tile's P·V done with sh_kv and sh_s (and Q stored, first time)
    load_kv_tile();  // K
    barrier();
    fetch_kv(n0, true);  // V, in flight during the scores
    compute_scores(n0);
    barrier();  // scores complete; K no longer read
    load_kv_tile();  // V
    online_softmax(m, l);
    barrier();
    if (n0 + BLOCK_N < kv_stop) fetch_kv(n0 + BLOCK_N, false);  // next K, in flight during P·V
    accumulate_pv(acc);
  }
  barrier();  // the last P·V is done reading sh_alpha
  store_output(acc, m, l);
}
