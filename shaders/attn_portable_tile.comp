#version 450
// flashtile portable attention forward, register-blocked ("SIMT GEMM") variant: no cooperative matrices, no
// subgroup operations, runs on any Vulkan 1.2 device. The row shader reads one shared vec4 per 4 FMAs; here every
// thread computes micro-tiles, so a shared vec4 of Q feeds 4 * S_TN FMAs, of K 4 * S_TM, of P 16 * O_TD4, of V
// 4 * O_TM:
//   compute_scores: S_TM rows x S_TN keys of S = Q·Kᵀ per thread. With more threads than score micro-tiles the
//     head dim is split over DS thread groups, each writing a partial score tile; online_softmax sums them.
//   accumulate_pv:  O_TM rows x O_TD4 vec4 columns of O per thread, in registers for the whole KV loop.
// Rows and keys of a micro-tile are strided (rg + S_RG * i), so a warp's loads hit distinct padded rows
// (conflict-free) and each address is shared (broadcast) by the threads of one row or key group.
// Q, K/V and S/P sit in shared memory as f32 (16-bit data is converted once, on the way in: converting at every
// shared read would cost an instruction per element). Q is pre-scaled into the log2 domain: p = exp2(s - m).
// Per KV tile of BLOCK_N keys (K, then V, in one buffer; each fetched from global one phase ahead, in registers
// as raw bits): load_kv_tile(K) -> compute_scores -> load_kv_tile(V), online_softmax -> accumulate_pv.
// The host (backends/vulkan/portable_paths.cpp, kTileConfigs) picks BLOCK_M, BLOCK_N, WG_SIZE and the micro-tile
// shape per head dim, checks the divisibility rules and counts the shared bytes (tile_shared_bytes()).
#extension GL_GOOGLE_include_directive : require
#include "attn_common.glsl"

layout(constant_id = 7) const uint S_TM = 4;  // score rows per thread
layout(constant_id = 8) const uint S_TN = 4;  // score keys per thread
layout(constant_id = 9) const uint O_TM = 4;  // output rows per thread

const uint D4 = HEAD_DIM / 4u;             // vec4 columns per row (head dims 64, 128, 256)
const uint QS = D4 + 1u;                   // padded row stride of the Q and K/V tiles (vec4): rows 4 banks apart
const uint S_RG = BLOCK_M / S_TM;          // score row groups
const uint S_KG = BLOCK_N / S_TN;          // score key groups
const uint S_GROUP = S_RG * S_KG;          // threads per head-dim group
const uint DS = WG_SIZE / S_GROUP;         // head-dim groups (partial score tiles)
const uint DS4 = D4 / DS;                  // vec4 columns per group
const uint SS4 = BLOCK_N / 4u + 1u;        // padded row stride of the score tile (vec4)
const uint O_RG = BLOCK_M / O_TM;          // output row groups
const uint O_CG = WG_SIZE / O_RG;          // output column groups
const uint O_TD4 = D4 / O_CG;              // vec4 output columns per thread
const uint TPR = WG_SIZE / BLOCK_M;        // softmax threads per row
const uint KPT = BLOCK_N / TPR;            // softmax keys per thread (contiguous)
const uint PREF = BLOCK_N * D4 / WG_SIZE;  // vec4 of a K or V tile per thread

shared vec4 sh_q[BLOCK_M * QS];
shared vec4 sh_kv[BLOCK_N * QS];
shared vec4 sh_s[DS * BLOCK_M * SS4];  // DS partial score tiles; P is written over partial 0
shared float sh_red[WG_SIZE];          // row reductions: BLOCK_M x TPR
shared float sh_alpha[BLOCK_M];        // per-tile rescale factor of each row; in the epilogue 1 / l

uint g_b, g_h, g_hk, g_m0, g_kv_begin, g_kv_end;

#include "attn_portable_raw.glsl"

RAW4 g_pref[PREF];
// Per-thread state in private globals (arrays sized by specialization constants cannot be function parameters:
// each use would get its own array type).
vec4 g_o[O_TM * O_TD4];  // output accumulator
float g_s[KPT];          // this thread's softmax scores

// The BLOCK_M x D query tile as f32, scaled into the log2 domain; rows past Sq are 0.
void load_q() {
  for (uint idx = gl_LocalInvocationID.x; idx < BLOCK_M * D4; idx += WG_SIZE) {
    uint r = idx / D4, c4 = idx % D4, row = g_m0 + r;
    vec4 x = vec4(0.0);
    if (row < pc.Sq) {
      uint base = ft_q_base(g_b, row, g_h) + 4u * c4;
      x = vec4(load_q_pair(base), load_q_pair(base + 2u)) * pc.scale_log2;
    }
    sh_q[r * QS + c4] = x;
  }
}

// Global loads of keys [n0, n0 + BLOCK_N) of K (is_v false) or V into g_pref.
void fetch_kv(uint n0, bool is_v) {
  [[unroll]] for (uint i = 0u; i < PREF; ++i) {
    uint idx = gl_LocalInvocationID.x + i * WG_SIZE;
    g_pref[i] = fetch_raw4(n0 + idx / D4, idx % D4, is_v);
  }
}

void load_kv_tile() {  // the fetched tile into shared memory, as f32
  [[unroll]] for (uint i = 0u; i < PREF; ++i) {
    uint idx = gl_LocalInvocationID.x + i * WG_SIZE;
    sh_kv[(idx / D4) * QS + idx % D4] = raw4_to_vec4(g_pref[i]);
  }
}

// This thread's partial scores (its head-dim group's columns) into partial tile g. Masking is online_softmax's.
void compute_scores() {
  uint t = gl_LocalInvocationID.x;
  uint g = t / S_GROUP, w = t % S_GROUP, kg = w % S_KG, rg = w / S_KG;
  float acc[S_TM * S_TN];
  [[unroll]] for (uint i = 0u; i < S_TM * S_TN; ++i) acc[i] = 0.0;
  uint c0 = g * DS4;
  for (uint c = 0u; c < DS4; ++c) {
    uint c4 = c0 + c;
    vec4 k[S_TN];
    [[unroll]] for (uint j = 0u; j < S_TN; ++j) k[j] = sh_kv[(kg + S_KG * j) * QS + c4];
    [[unroll]] for (uint i = 0u; i < S_TM; ++i) {
      vec4 q = sh_q[(rg + S_RG * i) * QS + c4];
      [[unroll]] for (uint j = 0u; j < S_TN; ++j) {
        float a = acc[i * S_TN + j];
        a = fma(q.x, k[j].x, a);
        a = fma(q.y, k[j].y, a);
        a = fma(q.z, k[j].z, a);
        a = fma(q.w, k[j].w, a);
        acc[i * S_TN + j] = a;
      }
    }
  }
  [[unroll]] for (uint i = 0u; i < S_TM; ++i)
    [[unroll]] for (uint j = 0u; j < S_TN; ++j) {
      uint n = kg + S_KG * j;
      sh_s[(g * BLOCK_M + rg + S_RG * i) * SS4 + n / 4u][n % 4u] = acc[i * S_TN + j];
    }
}

// Row r's TPR threads own KPT contiguous keys each. Pass 1: sum the partial scores of this thread's keys, mask
// them (-inf: past the range, causal, rows past Sq), and publish the thread's max.
void online_softmax_scores(uint n0) {
  uint r = gl_LocalInvocationID.x / TPR, lane = gl_LocalInvocationID.x % TPR, row = g_m0 + r;
  int limit = CAUSAL != 0u ? min(ft_causal_limit(row), int(g_kv_end)) : int(g_kv_end);
  float mx = FT_NEG_INF;
  [[unroll]] for (uint j = 0u; j < KPT; ++j) {
    uint n = lane * KPT + j;
    float x = 0.0;
    [[unroll]] for (uint g = 0u; g < DS; ++g) x += sh_s[(g * BLOCK_M + r) * SS4 + n / 4u][n % 4u];
    g_s[j] = row < pc.Sq && int(n0 + n) < limit ? x : FT_NEG_INF;
    mx = max(mx, g_s[j]);
  }
  if (TPR > 1u) sh_red[gl_LocalInvocationID.x] = mx;
}

// Pass 2 (after a barrier when TPR > 1): the row max, P over partial 0 (this thread's keys only: nobody else reads
// them now), the running max m (identical in the row's threads) and this thread's share l of the row sum.
void online_softmax(inout float m, inout float l) {
  uint r = gl_LocalInvocationID.x / TPR, lane = gl_LocalInvocationID.x % TPR;
  float mx = FT_NEG_INF;
  if (TPR > 1u) {
    [[unroll]] for (uint i = 0u; i < TPR; ++i) mx = max(mx, sh_red[r * TPR + i]);
  } else {
    [[unroll]] for (uint j = 0u; j < KPT; ++j) mx = max(mx, g_s[j]);
  }
  float m_new = max(m, mx);
  float m_use = m_new == FT_NEG_INF ? 0.0 : m_new;  // a row with nothing visible yet: p = 0, not NaN
  float alpha = exp2(m - m_use);
  float sum = 0.0;
  [[unroll]] for (uint j = 0u; j < KPT; ++j) {
    uint n = lane * KPT + j;
    float p = exp2(g_s[j] - m_use);
    sh_s[r * SS4 + n / 4u][n % 4u] = p;
    sum += p;
  }
  l = l * alpha + sum;
  m = m_new;
  if (lane == 0u) sh_alpha[r] = alpha;
}

// O = O * alpha + P·V: rows org + O_RG * i, vec4 columns ocg + O_CG * j.
void accumulate_pv() {
  uint ocg = gl_LocalInvocationID.x % O_CG, org = gl_LocalInvocationID.x / O_CG;
  [[unroll]] for (uint i = 0u; i < O_TM; ++i) {
    float a = sh_alpha[org + O_RG * i];
    [[unroll]] for (uint j = 0u; j < O_TD4; ++j) g_o[i * O_TD4 + j] *= a;
  }
  for (uint n4 = 0u; n4 < BLOCK_N / 4u; ++n4) {
    vec4 p[O_TM];
    [[unroll]] for (uint i = 0u; i < O_TM; ++i) p[i] = sh_s[(org + O_RG * i) * SS4 + n4];
    [[unroll]] for (uint k = 0u; k < 4u; ++k)
      [[unroll]] for (uint j = 0u; j < O_TD4; ++j) {
        vec4 v = sh_kv[(4u * n4 + k) * QS + ocg + O_CG * j];
        [[unroll]] for (uint i = 0u; i < O_TM; ++i) g_o[i * O_TD4 + j] = fma(vec4(p[i][k]), v, g_o[i * O_TD4 + j]);
      }
  }
}

// Epilogue: row sums, then normalized O (and LSE), or this split's record in the scratch buffer.
void store_output(float m, float l) {
  uint r = gl_LocalInvocationID.x / TPR, lane = gl_LocalInvocationID.x % TPR, row = g_m0 + r;
  barrier();  // the last P·V is done with sh_alpha; the last softmax with sh_red
  float l_row = l;
  if (TPR > 1u) {
    sh_red[gl_LocalInvocationID.x] = l;
    barrier();
    l_row = 0.0;
    [[unroll]] for (uint i = 0u; i < TPR; ++i) l_row += sh_red[r * TPR + i];
  }
  if (lane == 0u) {
    float lse2 = ft_lse2(m, l_row);
    sh_alpha[r] = ft_inv_l(l_row);
    if (row < pc.Sq) {
      if (pc.n_splits > 1u) scratch_data[ft_scratch_record(g_b, g_h, row, ft_split()) + HEAD_DIM] = lse2;
      else if ((pc.flags & FT_FLAG_WRITE_LSE) != 0u) lse_data[ft_lse_index(g_b, g_h, row)] = lse2 * FT_LN2;
    }
  }
  barrier();
  uint ocg = gl_LocalInvocationID.x % O_CG, org = gl_LocalInvocationID.x / O_CG;
  [[unroll]] for (uint i = 0u; i < O_TM; ++i) {
    uint rr = org + O_RG * i, orow = g_m0 + rr;
    if (orow >= pc.Sq) continue;
    float inv = sh_alpha[rr];
    [[unroll]] for (uint j = 0u; j < O_TD4; ++j) {
      uint c = 4u * (ocg + O_CG * j);
      vec4 x = g_o[i * O_TD4 + j] * inv;
      if (pc.n_splits > 1u) {
        uint rec = ft_scratch_record(g_b, g_h, orow, ft_split()) + c;
        scratch_data[rec] = x.x; scratch_data[rec + 1u] = x.y;
        scratch_data[rec + 2u] = x.z; scratch_data[rec + 3u] = x.w;
      } else {
        uint base = ft_o_base(g_b, orow, g_h) + c;
        store_o_pair(base, x.xy);
        store_o_pair(base + 2u, x.zw);
      }
    }
  }
}

void main() {
  g_b = ft_batch();
  g_h = ft_head();
  g_hk = ft_kv_head(g_h);
  // Causal: the host sets FT_FLAG_REVERSE_ROWS, so ft_row_tile() starts the last row tiles (the most keys) first.
  g_m0 = ft_row_tile() * BLOCK_M;
  ft_split_range(ft_split(), g_kv_begin, g_kv_end);
  // Causal: keys past the last row's diagonal are masked for the whole tile, so those tiles are skipped.
  uint kv_stop = g_kv_end;
  if (CAUSAL != 0u) kv_stop = uint(clamp(ft_causal_limit(min(g_m0 + BLOCK_M, pc.Sq) - 1u), 0, int(g_kv_end)));

  load_q();
  [[unroll]] for (uint i = 0u; i < O_TM * O_TD4; ++i) g_o[i] = vec4(0.0);
  float m = FT_NEG_INF, l = 0.0;
  if (g_kv_begin < kv_stop) fetch_kv(g_kv_begin, false);
  for (uint n0 = g_kv_begin; n0 < kv_stop; n0 += BLOCK_N) {
    barrier();  // the previous tile's P·V is done with sh_kv and sh_s (and Q is stored, the first time)
    load_kv_tile();  // K
    barrier();
    fetch_kv(n0, true);  // V, in flight during the scores
    compute_scores();
    barrier();  // partial scores complete; K no longer read
    load_kv_tile();  // V
    online_softmax_scores(n0);
    if (TPR > 1u) barrier();  // the row's partial maxima
    online_softmax(m, l);
    barrier();  // P, alpha and V complete
    if (n0 + BLOCK_N < kv_stop) fetch_kv(n0 + BLOCK_N, false);  // next K, in flight during P·V
    accumulate_pv();
  }
  store_output(m, l);
}
