// Raw 4-element loads for the register-blocked portable shaders (attn_portable_tile.comp, attn_portable_rg.comp,
// attn_bwd_portable.comp): prefetch registers and shared tiles keep 16-bit data as bits (half the bytes of f32),
// converted where they are used. The forward's includer declares g_b, g_hk and g_kv_end (the batch, KV head and end
// of this workgroup's key range) first; the backward (FT_OWN_ABI) takes the raw loads alone.
#ifndef FT_ATTN_PORTABLE_RAW_GLSL
#define FT_ATTN_PORTABLE_RAW_GLSL

#if defined(FT_STORAGE_F32)
#define RAW4 vec4
#define FT_RAW4(buf, i) vec4(buf[i], buf[(i) + 1u], buf[(i) + 2u], buf[(i) + 3u])
vec4 raw4_to_vec4(RAW4 x) { return x; }
#elif defined(FT_STORAGE_PACKED)
#define RAW4 uvec2
#define FT_RAW4(buf, i) uvec2(buf[(i) >> 1], buf[((i) >> 1) + 1u])
vec4 raw4_to_vec4(RAW4 x) { return vec4(ft_unpack2(x.x), ft_unpack2(x.y)); }
#else
#define RAW4 uvec2
#define FT_RAW_PAIR(buf, i) (ft_raw16(buf[i]) | (ft_raw16(buf[(i) + 1u]) << 16))
#define FT_RAW4(buf, i) uvec2(FT_RAW_PAIR(buf, i), FT_RAW_PAIR(buf, (i) + 2u))
vec4 raw4_to_vec4(RAW4 x) { return vec4(ft_unpack2(x.x), ft_unpack2(x.y)); }
#endif

#ifndef FT_OWN_ABI
RAW4 raw4_k(uint i) { return FT_RAW4(k_data, i); }
RAW4 raw4_v(uint i) { return FT_RAW4(v_data, i); }

// Vec4 column c4 of key `key` of K (is_v false) or V; keys past the range are 0 (never NaN: p = 0 multiplies them).
RAW4 fetch_raw4(uint key, uint c4, bool is_v) {
  if (key >= g_kv_end) return RAW4(0);
  return is_v ? raw4_v(ft_v_base(g_b, key, g_hk) + 4u * c4) : raw4_k(ft_k_base(g_b, key, g_hk) + 4u * c4);
}

#endif  // FT_OWN_ABI

#endif  // FT_ATTN_PORTABLE_RAW_GLSL
