#version 450
// Paged KV cache append (attention_with_kvcache's k_new / v_new), recorded before the attention dispatch with a
// barrier between: key j of sequence b goes to position seqlens[b] + j, i.e. page block_table[b, pos / PAGE_SIZE],
// slot pos % PAGE_SIZE, of both caches. Raw element copies (bit-exact, no conversion). Table values are clamped as
// the attention's are (attn_common.glsl): positions past the sequence's pages are not written, pages stay in the cache.
// Push constants: k_* / v_* the caches, q_* k_new's and o_* v_new's offset and strides. Dispatch: x strides over
// the column pairs of every new key (packed storage copies whole words; head dims are multiples of 8), z = B.
#extension GL_GOOGLE_include_directive : require
#define FT_APPEND_PASS 1
#include "attn_common.glsl"

void main() {
  const uint b = gl_WorkGroupID.z, pairs = pc.Hkv * (HEAD_DIM / 2u);
  ft_seq_init(b);
  const uint first = ft_table_entry(lens_data[pc.lens_off + b], 0u, pc.Sk);  // as ft_seq_init clamps it
  for (uint i = gl_GlobalInvocationID.x; i < pc.s_new * pairs; i += gl_NumWorkGroups.x * WG_SIZE) {
    const uint j = i / pairs, hk = (i % pairs) / (HEAD_DIM / 2u), c = 2u * (i % (HEAD_DIM / 2u));
    const uint pos = first + j;
    if (pos >= ft_sk()) break;  // beyond the pages the table gives (j grows with i)
    const uint page = ft_page(pos), slot = pos % PAGE_SIZE;
    const uint ks = pc.q_off + b * pc.q_sb + j * pc.q_ss + hk * pc.q_sh + c;
    const uint vs = pc.o_off + b * pc.o_sb + j * pc.o_ss + hk * pc.o_sh + c;
    const uint kd = pc.k_off + page * pc.k_sb + slot * pc.k_ss + hk * pc.k_sh + c;
    const uint vd = pc.v_off + page * pc.v_sb + slot * pc.v_ss + hk * pc.v_sh + c;
#if defined(FT_STORAGE_PACKED)
    k_data[kd >> 1] = k_new_data[ks >> 1];
    v_data[vd >> 1] = v_new_data[vs >> 1];
#else
    k_data[kd] = k_new_data[ks];
    k_data[kd + 1u] = k_new_data[ks + 1u];
    v_data[vd] = v_new_data[vs];
    v_data[vd + 1u] = v_new_data[vs + 1u];
#endif
  }
}
