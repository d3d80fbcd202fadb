// The attention backward's ABI and index math, shared by its shaders (attn_bwd_portable.comp, attn_bwd_coopmat.comp):
// push constants and bindings (C++ mirror: BwdPushConstants and BwdBinding in backends/vulkan/backward.hpp: keep
// them identical), the workspace's rows, the blocks a pass visits, and P and dS of one score.
// Include after attn_common.glsl, with FT_OWN_ABI and FT_VARIANT_ABI defined.
#ifndef FT_ATTN_BWD_COMMON_GLSL
#define FT_ATTN_BWD_COMMON_GLSL

// Six tensor slots, 128 bytes: q, k, v, dO, and x, y, the pass's own: O for the preprocess, dK and dV for the dK/dV
// pass, dQ for the dQ pass, sinks and dsinks (offsets only, f32 elements) for the dsinks pass. Offsets and strides are
// in elements. The variants' values and slopes: bindings 10, 11 (attn_common.glsl); sinks and dsinks: 12, 13.
layout(push_constant, std430) uniform BwdPushConstants {
  uint q_off, k_off, v_off, do_off, x_off, y_off;
  uint q_sb, q_ss, q_sh;
  uint k_sb, k_ss, k_sh;
  uint v_sb, v_ss, v_sh;
  uint do_sb, do_ss, do_sh;
  uint x_sb, x_ss, x_sh;
  uint y_sb, y_ss, y_sh;
  uint lse_off, ws_off;  // lse f32 [B, Hq, Sq] contiguous; the workspace's first float
  uint B, Sq, Sk, Hq, Hkv;
  float scale_log2;      // softmax scale * log2(e)
} pc;

layout(set = 0, binding = 0, std430) readonly buffer BufQ { FT_ELEM q_data[]; };
layout(set = 0, binding = 1, std430) readonly buffer BufK { FT_ELEM k_data[]; };
layout(set = 0, binding = 2, std430) readonly buffer BufV { FT_ELEM v_data[]; };
layout(set = 0, binding = 3, std430) readonly buffer BufO { FT_ELEM o_data[]; };
layout(set = 0, binding = 4, std430) readonly buffer BufDO { FT_ELEM do_data[]; };
layout(set = 0, binding = 5, std430) readonly buffer BufLse { float lse_data[]; };
layout(set = 0, binding = 6, std430) buffer BufWs { float ws_data[]; };
layout(set = 0, binding = 7, std430) writeonly buffer BufDQ { FT_ELEM dq_data[]; };
layout(set = 0, binding = 8, std430) writeonly buffer BufDK { FT_ELEM dk_data[]; };
layout(set = 0, binding = 9, std430) writeonly buffer BufDV { FT_ELEM dv_data[]; };
layout(set = 0, binding = 12, std430) readonly buffer BufSinks { float sinks_data[]; };     // f32 [Hq]
layout(set = 0, binding = 13, std430) writeonly buffer BufDsinks { float dsinks_data[]; };  // f32 [Hq]

#define FT_POS_INF uintBitsToFloat(0x7f800000u)

// Element indices of one head row of each tensor (x, y: the pass's own slots).
uint bwd_q_base(uint b, uint row, uint h) { return pc.q_off + b * pc.q_sb + row * pc.q_ss + h * pc.q_sh; }
uint bwd_k_base(uint b, uint key, uint hk) { return pc.k_off + b * pc.k_sb + key * pc.k_ss + hk * pc.k_sh; }
uint bwd_v_base(uint b, uint key, uint hk) { return pc.v_off + b * pc.v_sb + key * pc.v_ss + hk * pc.v_sh; }
uint bwd_do_base(uint b, uint row, uint h) { return pc.do_off + b * pc.do_sb + row * pc.do_ss + h * pc.do_sh; }
uint bwd_x_base(uint b, uint row, uint h) { return pc.x_off + b * pc.x_sb + row * pc.x_ss + h * pc.x_sh; }
uint bwd_y_base(uint b, uint row, uint h) { return pc.y_off + b * pc.y_sb + row * pc.y_ss + h * pc.y_sh; }

// Workspace: lse2 then Delta, each [B, Hq, Sq].
uint ws_row(uint b, uint h, uint row) { return pc.ws_off + (b * pc.Hq + h) * pc.Sq + row; }
uint ws_delta(uint b, uint h, uint row) { return ws_row(b, h, row) + pc.B * pc.Hq * pc.Sq; }

// P = exp2(s·scale_log2 − lse2) and dS = P ∘ (dp − Delta) of query row `row` and key `key`, from the unscaled score s
// (q·k) and dp (dO·v); both 0 where masked (past Sq or Sk, causal, bottom-right aligned, or window). Variants: the
// score takes the softcap and ALiBi (ft_score_at), and dS softcap's 1 − tanh².
vec2 bwd_p_ds(float s, float dp, uint row, uint key, float lse2, float delta) {
  const int diag = int(row) + int(pc.Sk) - int(pc.Sq);
  bool visible = row < pc.Sq && key < pc.Sk;
  if (CAUSAL != 0u && !FT_WINDOW) visible = visible && int(key) < diag + 1;
  if (FT_WINDOW) {
    const ivec2 keys = ft_keys_of(diag, int(pc.Sk));
    visible = visible && int(key) >= keys.x && int(key) < keys.y;
  }
  float score = s * pc.scale_log2, dcap = 1.0;
  if (FT_SOFTCAP || FT_ALIBI) score = ft_score_at(score, diag - int(key), dcap);
  const float p = visible ? exp2(score - lse2) : 0.0;
  return vec2(p, visible ? p * (dp - delta) * dcap : 0.0);
}

// dK/dV pass: the query rows [x, y) that see any key of [n0, n0 + BLOCK_N) (causal and window bounds solved for the
// row), x on the BLOCK_M grid: blocks of rows outside are skipped.
uvec2 bwd_rows_seeing(uint n0) {
  const int shift = int(pc.Sq) - int(pc.Sk);  // row = diag + shift
  int first = 0, end = int(pc.Sq);
  if (CAUSAL != 0u) first = int(n0) + shift;                                               // diag >= n0
  if (FT_WINDOW && ft_var.wr >= 0) first = max(first, int(n0) - ft_var.wr + shift);        // diag + wr >= n0
  if (FT_WINDOW && ft_var.wl >= 0) end = min(end, int(n0 + BLOCK_N) + ft_var.wl + shift);  // diag - wl < n0 + BLOCK_N
  first = clamp(first, 0, int(pc.Sq));
  return uvec2(uint(first) / BLOCK_M * BLOCK_M, uint(clamp(end, first, int(pc.Sq))));
}

// dQ pass: the keys [x, y) that rows [m0, m0 + BLOCK_M) see. Causal: keys past the last row's diagonal are masked for
// the whole block; windows: also those before the first row's window (x on the BLOCK_N grid).
uvec2 bwd_keys_seen(uint m0) {
  uint n_begin = 0u, n_end = pc.Sk;
  if (CAUSAL != 0u) n_end = uint(clamp(int(min(m0 + BLOCK_M, pc.Sq)) + int(pc.Sk) - int(pc.Sq), 0, int(pc.Sk)));
  if (FT_WINDOW) {
    const int shift = int(pc.Sk) - int(pc.Sq);  // diag = row + shift
    n_end = uint(clamp(ft_keys_of(int(min(m0 + BLOCK_M, pc.Sq)) - 1 + shift, int(pc.Sk)).y, 0, int(pc.Sk)));
    n_begin = uint(clamp(ft_keys_of(int(m0) + shift, int(pc.Sk)).x, 0, int(n_end))) / BLOCK_N * BLOCK_N;
  }
  return uvec2(n_begin, n_end);
}

#endif  // FT_ATTN_BWD_COMMON_GLSL
