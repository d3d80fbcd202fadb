// sm80 split-KV decode instantiations for head_dim 64: {dense, paged} x {bf16, f16} (causality is a runtime mask).
#include "attn/sm80_decode.cuh"

namespace flashtile::cuda::sm80 {
FLASHTILE_SM80_DECODE_INSTANTIATE(64, BF16, Dense)
FLASHTILE_SM80_DECODE_INSTANTIATE(64, F16, Dense)
FLASHTILE_SM80_DECODE_INSTANTIATE(64, BF16, Paged)
FLASHTILE_SM80_DECODE_INSTANTIATE(64, F16, Paged)
}  // namespace flashtile::cuda::sm80
