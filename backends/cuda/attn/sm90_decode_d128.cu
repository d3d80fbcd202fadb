// sm90 split-KV decode instantiations for head_dim 128: {dense, paged} x {bf16, f16} x {plain, variants} (causality is
// a runtime mask).
#include "attn/sm90_decode.cuh"

namespace flashtile::cuda::sm90 {
FLASHTILE_SM90_DECODE_INSTANTIATE(128, BF16, Dense, false)
FLASHTILE_SM90_DECODE_INSTANTIATE(128, BF16, Dense, true)
FLASHTILE_SM90_DECODE_INSTANTIATE(128, F16, Dense, false)
FLASHTILE_SM90_DECODE_INSTANTIATE(128, F16, Dense, true)
FLASHTILE_SM90_DECODE_INSTANTIATE(128, BF16, Paged, false)
FLASHTILE_SM90_DECODE_INSTANTIATE(128, BF16, Paged, true)
FLASHTILE_SM90_DECODE_INSTANTIATE(128, F16, Paged, false)
FLASHTILE_SM90_DECODE_INSTANTIATE(128, F16, Paged, true)
}  // namespace flashtile::cuda::sm90
