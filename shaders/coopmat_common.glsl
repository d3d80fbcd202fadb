// Helpers shared by the cooperative-matrix attention shaders (attn_coopmat.comp, attn_coopmat2.comp,
// attn_bwd_coopmat.comp): 16-byte views of the tensors and 8-element loads/stores that convert to/from the f16 the
// matrix units consume. Include after attn_common.glsl (16-bit storage: FT_T16 arrays q_data, k_data, v_data, o_data;
// with FT_OWN_ABI, the backward's, after attn_bwd_common.glsl: O is an input there, so no O views or stores).
#ifndef FT_COOPMAT_COMMON_GLSL
#define FT_COOPMAT_COMMON_GLSL

// The same bindings seen as 16-byte vectors, for aligned tensors (offsets and strides multiples of 8 elements).
layout(set = 0, binding = 0, std430) readonly buffer BufQ4 { uvec4 q_data4[]; };
layout(set = 0, binding = 1, std430) readonly buffer BufK4 { uvec4 k_data4[]; };
layout(set = 0, binding = 2, std430) readonly buffer BufV4 { uvec4 v_data4[]; };
#ifndef FT_OWN_ABI
layout(set = 0, binding = 3, std430) writeonly buffer BufO4 { uvec4 o_data4[]; };
// O as pairs of elements, for tensors whose offsets and strides are even.
layout(set = 0, binding = 3, std430) writeonly buffer BufO1 { uint o_data1[]; };
#endif

const float FT_F16_MAX = 65504.0;

// Values headed for f16: finite ones beyond its range clamp to +-65504; NaN and +-Inf pass through (clamp would make
// them finite: a NaN in q must give its row NaN, not a finite answer).
vec2 cm_f16_range(vec2 f) {
  const bvec2 special = bvec2(isnan(f.x) || isinf(f.x), isnan(f.y) || isinf(f.y));
  return mix(clamp(f, vec2(-FT_F16_MAX), vec2(FT_F16_MAX)), f, special);
}
// Two 16-bit values of the tensor dtype (packed) -> two f16 (packed).
uint cm_to_f16x2(uint w) {
  if (DTYPE == FT_DTYPE_F16) return w;
  return packHalf2x16(cm_f16_range(ft_unpack2(w)));
}
uvec4 cm_to_f16x8(uvec4 w) {
  return uvec4(cm_to_f16x2(w.x), cm_to_f16x2(w.y), cm_to_f16x2(w.z), cm_to_f16x2(w.w));
}

// Raw bits of 8 consecutive 16-bit elements (FT_T16 may be uint16_t or float16_t: ft_raw16 gives the bits).
#define FT_CM_GATHER8(buf, e) \
  uvec4(ft_raw16(buf[(e)]) | (ft_raw16(buf[(e) + 1u]) << 16), ft_raw16(buf[(e) + 2u]) | (ft_raw16(buf[(e) + 3u]) << 16), \
        ft_raw16(buf[(e) + 4u]) | (ft_raw16(buf[(e) + 5u]) << 16), ft_raw16(buf[(e) + 6u]) | (ft_raw16(buf[(e) + 7u]) << 16))
// 16 raw bits -> an FT_T16 element.
#ifdef FT_T16_FLOAT16
#define FT_CM_FROM_BITS(u) uint16BitsToFloat16(uint16_t(u))
#else
#define FT_CM_FROM_BITS(u) FT_T16(u)
#endif

// Eight consecutive elements from element index e (offset included), as 8 packed f16.
uvec4 cm_load8_q(uint e, bool vec) { return cm_to_f16x8(vec ? q_data4[e >> 3] : FT_CM_GATHER8(q_data, e)); }
uvec4 cm_load8_k(uint e, bool vec) { return cm_to_f16x8(vec ? k_data4[e >> 3] : FT_CM_GATHER8(k_data, e)); }
uvec4 cm_load8_v(uint e, bool vec) { return cm_to_f16x8(vec ? v_data4[e >> 3] : FT_CM_GATHER8(v_data, e)); }

// The accumulator layouts the register softmax knows (attn_coopmat.comp id 28 = 1 or 2, found by the host's probe,
// Caps::khr_acc_layout; also attn_bwd_coopmat.comp's P and dS): 16 x 16 f32 at subgroup 32, lane l's element i at
// row (l >> 2) + 8 bit(i, rh), column 2 (l & 3) + bit(i, 0) + 8 bit(i, 3 - rh), rh = 1 (layout 1) or 2 (layout 2).
uint cm_acc_row(uint l, uint i, uint rh) { return (l >> 2) + 8u * ((i >> rh) & 1u); }
uint cm_acc_col(uint l, uint i, uint rh) { return 2u * (l & 3u) + (i & 1u) + 8u * ((i >> (3u - rh)) & 1u); }

#ifndef FT_OWN_ABI
// Eight floats -> the tensor dtype at element index e of out.
void cm_store8_o(uint e, float v[8], bool vec) {
  if (vec) {
    o_data4[e >> 3] = uvec4(ft_pack2(vec2(v[0], v[1])), ft_pack2(vec2(v[2], v[3])), ft_pack2(vec2(v[4], v[5])),
                            ft_pack2(vec2(v[6], v[7])));
  } else {
    [[unroll]] for (uint j = 0u; j < 8u; ++j) o_data[e + j] = FT_CM_FROM_BITS(ft_float_to_bits(v[j]));
  }
}
#endif

#endif  // FT_COOPMAT_COMMON_GLSL
