#version 450
// flashtile portable attention backward: no cooperative matrices, any Vulkan 1.2 device (lavapipe too). Three
// passes, one module each (FT_BWD_PASS), recorded in this order with a barrier between them:
//   0 preprocess: per (batch, head, row) lse2 = lse * log2(e) (+inf for a row that saw no key, so its P is 0) and
//     Delta = rowsum(dO ∘ O), into the f32 workspace (lse2 [B, Hq, Sq], then Delta [B, Hq, Sq]).
//   1 dK/dV: one workgroup per (key block of BLOCK_N keys, kv head, batch). K and V stay in shared memory; for every
//     query head of the group and every query block that can see the keys: load Q and dO, recompute P and
//     dS = P ∘ (dP − Delta) (compute_p_ds), accumulate dV += Pᵀ·dO and dK += dSᵀ·Q in registers; write both once.
//   2 dQ: one workgroup per (query block of BLOCK_M rows, head, batch). Q and dO stay in shared memory; for every key
//     block the rows can see: load K and V, recompute P and dS, accumulate dQ += dS·K; write dQ once.
//   3 dsinks (only for calls that ask for it; one f32 module for every storage mode, after the preprocess): one
//     workgroup per query head, dsinks[h] = -Σ_{b,i} exp2(sink·log2e − lse2) · Delta over the workspace's rows.
//     Sinks change dQ, dK and dV only through the forward's lse, so passes 1 and 2 run as for a call without them.
// Every gradient element is summed by one invocation in a fixed order: no atomics, so runs are bit-identical.
// f32 math; f16/bf16/f32 storage as attn_common.glsl's modes. The host (backends/vulkan/backward.cpp) picks the
// tiles and guarantees the per-thread counts below stay within MAX_OWN.
#extension GL_GOOGLE_include_directive : require
#define FT_OWN_ABI 1
#define FT_VARIANT_ABI 1  // window, softcap and ALiBi (VARIANTS; sinks only in the dsinks pass, bound below)
#include "attn_common.glsl"

#ifndef FT_BWD_PASS
#error "FT_BWD_PASS (0 preprocess, 1 dK/dV, 2 dQ, 3 dsinks) must be defined"
#endif

// ---- ABI, workspace, block ranges, P and dS: attn_bwd_common.glsl (C++ mirror: backward.hpp) ----------------------
#include "attn_bwd_common.glsl"

// Four consecutive elements from element i (the packed mode's host keeps i even) and two stored at i.
#if defined(FT_STORAGE_PACKED)
#define FT_LD2(buf, i) ft_unpack2(buf[(i) >> 1])
#define FT_ST2(buf, i, val) buf[(i) >> 1] = ft_pack2(val)
#elif defined(FT_STORAGE_F32)
#define FT_LD2(buf, i) vec2(buf[i], buf[(i) + 1u])
#define FT_ST2(buf, i, val) { buf[i] = (val).x; buf[(i) + 1u] = (val).y; }
#else
#define FT_LD2(buf, i) vec2(FT_LOAD_SCALAR(buf, i), FT_LOAD_SCALAR(buf, (i) + 1u))
#define FT_ST2(buf, i, val) { buf[i] = FT_ELEM(ft_float_to_bits((val).x)); buf[(i) + 1u] = FT_ELEM(ft_float_to_bits((val).y)); }
#endif
#define FT_LD4(buf, i) vec4(FT_LD2(buf, i), FT_LD2(buf, (i) + 2u))

#if FT_BWD_PASS == 0
// ---- Preprocess: one invocation per row ---------------------------------------------------------------------------
void main() {
  const uint row = gl_WorkGroupID.x * WG_SIZE + gl_LocalInvocationID.x, h = gl_WorkGroupID.y, b = gl_WorkGroupID.z;
  if (row >= pc.Sq) return;
  const uint o = bwd_x_base(b, row, h);
  const uint d = bwd_do_base(b, row, h);
  float delta = 0.0;
  for (uint c = 0u; c < HEAD_DIM; c += 4u) delta += dot(FT_LD4(o_data, o + c), FT_LD4(do_data, d + c));
  const float lse = lse_data[pc.lse_off + (b * pc.Hq + h) * pc.Sq + row];
  ws_data[ws_row(b, h, row)] = lse == FT_NEG_INF ? FT_POS_INF : lse * FT_LOG2E;
  ws_data[ws_delta(b, h, row)] = delta;
}
#elif FT_BWD_PASS == 3
// ---- dsinks: one workgroup per query head (x: sinks, y: dsinks); WG_SIZE a power of two ---------------------------
// Each invocation sums a fixed stride of the head's B·Sq rows, then a fixed tree: deterministic. A row with no
// visible key has lse2 = +inf (exp2 gives 0) or, with a sink, Delta = 0 (its output is 0).
shared float sh_part[WG_SIZE];

void main() {
  const uint h = gl_WorkGroupID.x, tid = gl_LocalInvocationID.x;
  const float sink2 = sinks_data[pc.x_off + h] * FT_LOG2E;
  float acc = 0.0;
  for (uint r = tid; r < pc.B * pc.Sq; r += WG_SIZE) {
    const uint b = r / pc.Sq, row = r % pc.Sq;
    acc += exp2(sink2 - ws_data[ws_row(b, h, row)]) * ws_data[ws_delta(b, h, row)];
  }
  sh_part[tid] = acc;
  barrier();
  for (uint n = WG_SIZE / 2u; n > 0u; n >>= 1u) {
    if (tid < n) sh_part[tid] += sh_part[tid + n];
    barrier();
  }
  if (tid == 0u) dsinks_data[pc.y_off + h] = -sh_part[0];
}
#else
// ---- Passes 1 and 2: tiles in shared memory, register-blocked products ----------------------------------------------
// Q, dO, K and V sit in shared memory as raw 4-element groups (RAW4: 16-bit data as its bits, half the bytes of f32,
// so larger blocks fit; converted where read, once per register-blocked use). Every product is register-blocked
// (attn_portable_tile.comp's "SIMT GEMM"): a thread computes S and dP for TM rows x TN keys (strided, so a warp's
// loads are broadcast or hit distinct padded rows), and accumulates its gradient rows as GT rows (keys for dK/dV,
// query rows for dQ) x CT vec4 columns, so each value read from shared memory feeds several FMAs.
#include "attn_portable_raw.glsl"

const uint D4 = HEAD_DIM / 4u;  // vec4 columns (head dims are multiples of 8)
const uint TS = D4 + 1u;        // padded tile row stride, in RAW4
const uint PS = BLOCK_N + 1u;   // padded P / dS row stride, in floats
const uint MAX_OWN = 8u;        // register array bound: the host keeps every per-thread count below within it
// S and dP: TN keys x TM rows per thread; key group kg = tid % S_KG takes keys kg + S_KG b, row group tid / S_KG rows
// rg + S_RG a (rows past BLOCK_M idle). backward.cpp's bwd_micro computes the same and checks its divisibility.
const uint NS = BLOCK_M * BLOCK_N / WG_SIZE > 0u ? BLOCK_M * BLOCK_N / WG_SIZE : 1u;  // scores a thread (at least 1)
const uint TN = NS < 4u ? (NS < BLOCK_N ? NS : BLOCK_N) : (BLOCK_N < 4u ? BLOCK_N : 4u);  // (min and max do not
                                                                                      // fold on spec constants)
const uint S_KG = BLOCK_N / TN;
const uint S_RG = WG_SIZE / S_KG;
const uint TM = (BLOCK_M + S_RG - 1u) / S_RG;
// Gradients: column group tid % CG takes vec4 columns cg + CG b (b < CT, past D4 idle), row group tid / CG rows
// (keys or query rows) rg + G_RG a (a < GT, past the block idle); at least WG_SIZE / OWN column groups, so that
// every thread has a row. 16 column groups where they divide D4 (d 64, 128, 192, 256): a thread converts its CT
// columns of each streamed row from 16 bits once for GT rows, so fewer columns and more rows a thread halve the
// conversions per FMA against 8 column groups (d 128: 16 per 64 FMAs in dK/dV, not 32).
const uint OWN = FT_BWD_PASS == 1 ? BLOCK_N : BLOCK_M;  // the rows whose gradients the workgroup sums
const uint CG0 = D4 % 16u == 0u ? 16u : (D4 >= 8u ? 8u : (D4 >= 4u ? 4u : 2u));
const uint CG = CG0 > WG_SIZE / OWN ? CG0 : WG_SIZE / OWN;
const uint CT = (D4 + CG - 1u) / CG;
const uint G_RG = WG_SIZE / CG;
const uint GT = (OWN + G_RG - 1u) / G_RG;

shared RAW4 sh_q[BLOCK_M * TS];
shared RAW4 sh_do[BLOCK_M * TS];
shared RAW4 sh_k[BLOCK_N * TS];
shared RAW4 sh_v[BLOCK_N * TS];
shared float sh_p[BLOCK_M * PS];
shared float sh_ds[BLOCK_M * PS];
shared float sh_lse2[BLOCK_M];
shared float sh_delta[BLOCK_M];

// The thread's gradient accumulators (private globals: arrays sized by specialization constants cannot be function
// parameters): dK and dV, or dQ (g_acc1 unused).
vec4 g_acc0[GT * CT], g_acc1[GT * CT];

// Rows [m0, m0 + BLOCK_M) of Q and dO of head h, with their lse2 and Delta; rows past Sq are 0 with lse2 +inf.
void load_q_do(uint b, uint h, uint m0) {
  const uint n = (BLOCK_M * D4 + WG_SIZE - 1u) / WG_SIZE;
  [[unroll]] for (uint i = 0u; i < MAX_OWN; ++i) {
    const uint idx = gl_LocalInvocationID.x + i * WG_SIZE, r = idx / D4, c4 = idx % D4, row = m0 + r;
    if (i >= n || idx >= BLOCK_M * D4) continue;
    RAW4 q = RAW4(0), dout = RAW4(0);
    if (row < pc.Sq) {
      q = FT_RAW4(q_data, bwd_q_base(b, row, h) + 4u * c4);
      dout = FT_RAW4(do_data, bwd_do_base(b, row, h) + 4u * c4);
    }
    sh_q[r * TS + c4] = q;
    sh_do[r * TS + c4] = dout;
  }
  for (uint r = gl_LocalInvocationID.x; r < BLOCK_M; r += WG_SIZE) {
    const uint row = m0 + r;
    sh_lse2[r] = row < pc.Sq ? ws_data[ws_row(b, h, row)] : FT_POS_INF;
    sh_delta[r] = row < pc.Sq ? ws_data[ws_delta(b, h, row)] : 0.0;
  }
}

// Keys [n0, n0 + BLOCK_N) of K and V of kv head hk; keys past Sk are 0.
void load_k_v(uint b, uint hk, uint n0) {
  const uint n = (BLOCK_N * D4 + WG_SIZE - 1u) / WG_SIZE;
  [[unroll]] for (uint i = 0u; i < MAX_OWN; ++i) {
    const uint idx = gl_LocalInvocationID.x + i * WG_SIZE, j = idx / D4, c4 = idx % D4, key = n0 + j;
    if (i >= n || idx >= BLOCK_N * D4) continue;
    RAW4 k = RAW4(0), v = RAW4(0);
    if (key < pc.Sk) {
      k = FT_RAW4(k_data, bwd_k_base(b, key, hk) + 4u * c4);
      v = FT_RAW4(v_data, bwd_v_base(b, key, hk) + 4u * c4);
    }
    sh_k[j * TS + c4] = k;
    sh_v[j * TS + c4] = v;
  }
}

// From the tiles in shared memory: P and dS for rows m0.. and keys n0.. (bwd_p_ds: masks and variants).
void compute_p_ds(uint m0, uint n0) {
  const uint kg = gl_LocalInvocationID.x % S_KG, rg = gl_LocalInvocationID.x / S_KG;
  float s[TM * TN], dp[TM * TN];
  [[unroll]] for (uint i = 0u; i < TM * TN; ++i) s[i] = dp[i] = 0.0;
  // Two vec4 columns an iteration: llvmpipe counts loop iterations (backward.cpp's loop budget).
  for (uint c4 = 0u; c4 < D4; c4 += 2u) {
    [[unroll]] for (uint u = 0u; u < 2u; ++u) {
      vec4 k[TN], v[TN];
      [[unroll]] for (uint bb = 0u; bb < TN; ++bb) {
        k[bb] = raw4_to_vec4(sh_k[(kg + S_KG * bb) * TS + c4 + u]);
        v[bb] = raw4_to_vec4(sh_v[(kg + S_KG * bb) * TS + c4 + u]);
      }
      [[unroll]] for (uint a = 0u; a < TM; ++a) {
        const uint r = min(rg + S_RG * a, BLOCK_M - 1u);  // rows past the block: a copy of the last, never stored
        const vec4 q = raw4_to_vec4(sh_q[r * TS + c4 + u]), dout = raw4_to_vec4(sh_do[r * TS + c4 + u]);
        [[unroll]] for (uint bb = 0u; bb < TN; ++bb) {
          s[a * TN + bb] += dot(q, k[bb]);
          dp[a * TN + bb] += dot(dout, v[bb]);
        }
      }
    }
  }
  [[unroll]] for (uint a = 0u; a < TM; ++a) {
    const uint r = rg + S_RG * a;
    if (r >= BLOCK_M) continue;
    [[unroll]] for (uint bb = 0u; bb < TN; ++bb) {
      const uint j = kg + S_KG * bb;
      const vec2 p_ds = bwd_p_ds(s[a * TN + bb], dp[a * TN + bb], m0 + r, n0 + j, sh_lse2[r], sh_delta[r]);
      sh_p[r * PS + j] = p_ds.x;
      sh_ds[r * PS + j] = p_ds.y;
    }
  }
}

// The thread's gradient element (a, bb): row `row` (key or query row of the block) and vec4 column c4; false past the
// block or the head dim.
bool grad_at(uint a, uint bb, out uint row, out uint c4) {
  row = gl_LocalInvocationID.x / CG + G_RG * a;
  c4 = gl_LocalInvocationID.x % CG + CG * bb;
  return row < OWN && c4 < D4;
}

#if FT_BWD_PASS == 1
// ---- dK/dV: dV += Pᵀ·dO and dK += dSᵀ·Q for the thread's keys and columns (grad_at) ------------------------------
void accumulate_dk_dv() {
  const uint cg = gl_LocalInvocationID.x % CG, jg = gl_LocalInvocationID.x / CG;
  for (uint r = 0u; r < BLOCK_M; r += 2u) {
    [[unroll]] for (uint u = 0u; u < 2u; ++u) {
      vec4 dout[CT], q[CT];
      [[unroll]] for (uint bb = 0u; bb < CT; ++bb) {
        const uint c4 = min(cg + CG * bb, D4 - 1u);  // columns past D4: a copy of the last, never stored
        dout[bb] = raw4_to_vec4(sh_do[(r + u) * TS + c4]);
        q[bb] = raw4_to_vec4(sh_q[(r + u) * TS + c4]);
      }
      [[unroll]] for (uint a = 0u; a < GT; ++a) {
        const uint j = min(jg + G_RG * a, BLOCK_N - 1u);
        const float p = sh_p[(r + u) * PS + j], ds = sh_ds[(r + u) * PS + j];
        [[unroll]] for (uint bb = 0u; bb < CT; ++bb) {
          g_acc1[a * CT + bb] += p * dout[bb];
          g_acc0[a * CT + bb] += ds * q[bb];
        }
      }
    }
  }
}

void main() {
  const uint n0 = gl_WorkGroupID.x * BLOCK_N, hk = gl_WorkGroupID.y, b = gl_WorkGroupID.z;
  const uint group = pc.Hq / pc.Hkv;
  ft_variants_init(b, hk * group);
  load_k_v(b, hk, n0);
  [[unroll]] for (uint i = 0u; i < GT * CT; ++i) g_acc0[i] = g_acc1[i] = vec4(0.0);
  // Causal and windows: blocks of rows that see none of these keys are skipped.
  const uvec2 rows = bwd_rows_seeing(n0);
  for (uint g = 0u; g < group; ++g) {
    const uint h = hk * group + g;
    if (FT_ALIBI) ft_variants_init(b, h);  // this head's slope
    for (uint m0 = rows.x; m0 < rows.y; m0 += BLOCK_M) {
      barrier();  // the previous block's accumulation is done with the Q, dO, P and dS tiles
      load_q_do(b, h, m0);
      barrier();  // (the first time: K and V stored too)
      compute_p_ds(m0, n0);
      barrier();
      accumulate_dk_dv();
    }
  }
  // dK = scale · Σ dSᵀ·Q (P was formed in the log2 domain; the gradient takes the plain scale).
  const float scale = pc.scale_log2 / FT_LOG2E;
  [[unroll]] for (uint a = 0u; a < GT; ++a)
    [[unroll]] for (uint bb = 0u; bb < CT; ++bb) {
      uint j, c4;
      if (!grad_at(a, bb, j, c4) || n0 + j >= pc.Sk) continue;
      const uint ek = bwd_x_base(b, n0 + j, hk) + 4u * c4;
      const uint ev = bwd_y_base(b, n0 + j, hk) + 4u * c4;
      const vec4 k = g_acc0[a * CT + bb] * scale, v = g_acc1[a * CT + bb];
      FT_ST2(dk_data, ek, k.xy);
      FT_ST2(dk_data, ek + 2u, k.zw);
      FT_ST2(dv_data, ev, v.xy);
      FT_ST2(dv_data, ev + 2u, v.zw);
    }
}

#else
// ---- dQ: dQ += dS·K for the thread's query rows and columns (grad_at) --------------------------------------------
void accumulate_dq() {
  const uint cg = gl_LocalInvocationID.x % CG, rg = gl_LocalInvocationID.x / CG;
  for (uint j = 0u; j < BLOCK_N; j += 2u) {
    [[unroll]] for (uint u = 0u; u < 2u; ++u) {
      vec4 k[CT];
      [[unroll]] for (uint bb = 0u; bb < CT; ++bb)
        k[bb] = raw4_to_vec4(sh_k[(j + u) * TS + min(cg + CG * bb, D4 - 1u)]);
      [[unroll]] for (uint a = 0u; a < GT; ++a) {
        const float ds = sh_ds[min(rg + G_RG * a, BLOCK_M - 1u) * PS + j + u];
        [[unroll]] for (uint bb = 0u; bb < CT; ++bb) g_acc0[a * CT + bb] += ds * k[bb];
      }
    }
  }
}

void main() {
  const uint m0 = gl_WorkGroupID.x * BLOCK_M, h = gl_WorkGroupID.y, b = gl_WorkGroupID.z;
  const uint hk = h / (pc.Hq / pc.Hkv);
  ft_variants_init(b, h);
  load_q_do(b, h, m0);
  [[unroll]] for (uint i = 0u; i < GT * CT; ++i) g_acc0[i] = vec4(0.0);
  // Causal and windows: blocks of keys these rows do not see are skipped.
  const uvec2 keys = bwd_keys_seen(m0);
  for (uint n0 = keys.x; n0 < keys.y; n0 += BLOCK_N) {
    barrier();  // the previous block's accumulation is done with the K, V, P and dS tiles
    load_k_v(b, hk, n0);
    barrier();  // (the first time: Q and dO stored too)
    compute_p_ds(m0, n0);
    barrier();
    accumulate_dq();
  }
  const float scale = pc.scale_log2 / FT_LOG2E;
  [[unroll]] for (uint a = 0u; a < GT; ++a)
    [[unroll]] for (uint bb = 0u; bb < CT; ++bb) {
      uint r, c4;
      if (!grad_at(a, bb, r, c4) || m0 + r >= pc.Sq) continue;
      const uint e = bwd_x_base(b, m0 + r, h) + 4u * c4;
      const vec4 q = g_acc0[a * CT + bb] * scale;
      FT_ST2(dq_data, e, q.xy);
      FT_ST2(dq_data, e + 2u, q.zw);
    }
}
#endif
#endif
