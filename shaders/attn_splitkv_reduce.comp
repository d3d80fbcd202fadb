#version 450
// Split-KV reduce pass, shared by every attention path: combines the n_splits partial records of each query row
// (layout in attn_common.glsl) into O and LSE. Dispatch: x = Sq, y = Hq, z = B; threads stride over the head dim.
// Same bindings, push constants and spec constants as the attention shaders (only HEAD_DIM, DTYPE, WG_SIZE and the
// layout's used). A sink (VARIANTS) joins each row's denominator here, once, not in the splits.
#extension GL_GOOGLE_include_directive : require
#include "attn_common.glsl"

void main() {
  uint row = gl_WorkGroupID.x, h = gl_WorkGroupID.y, b = gl_WorkGroupID.z;
  ft_seq_init(b);
  ft_variants_init(b, h);
  if (LAYOUT != FT_LAYOUT_DENSE && row >= ft_sq()) return;  // past a shorter sequence's rows: no record, no output
  // Largest split LSE (log2 domain), then weights 2^(lse_s - max) and their sum.
  float mx = FT_NEG_INF;
  for (uint s = 0u; s < pc.n_splits; ++s) mx = max(mx, scratch_data[ft_scratch_record(b, h, row, s) + HEAD_DIM]);
  float m_use = mx == FT_NEG_INF ? 0.0 : mx;
  float wsum = 0.0;
  for (uint s = 0u; s < pc.n_splits; ++s) wsum += exp2(scratch_data[ft_scratch_record(b, h, row, s) + HEAD_DIM] - m_use);
  float lse2;
  float inv = ft_row_norm(mx, wsum, true, lse2);  // mx, not m_use: -inf when no split saw a key
  if (gl_LocalInvocationID.x == 0u && (pc.flags & FT_FLAG_WRITE_LSE) != 0u)
    lse_data[ft_lse_index(b, h, row)] = lse2 * FT_LN2;
  // Each thread writes column pairs (packed 16-bit storage writes whole pairs).
  for (uint c = 2u * gl_LocalInvocationID.x; c < HEAD_DIM; c += 2u * WG_SIZE) {
    vec2 o = vec2(0.0);
    for (uint s = 0u; s < pc.n_splits; ++s) {
      uint rec = ft_scratch_record(b, h, row, s);
      float w = exp2(scratch_data[rec + HEAD_DIM] - m_use);
      o += w * vec2(scratch_data[rec + c], scratch_data[rec + c + 1u]);
    }
    store_o_pair(ft_o_base(b, row, h) + c, o * inv);
  }
}
