// sm80 forward instantiations for head_dim 64: {bf16, f16} x {causal, not}. One file per head dim keeps the
// parallel build balanced.
#include "attn/sm80_fwd.cuh"

namespace flashtile::cuda::sm80 {
FLASHTILE_SM80_INSTANTIATE(64, BF16, false)
FLASHTILE_SM80_INSTANTIATE(64, BF16, true)
FLASHTILE_SM80_INSTANTIATE(64, F16, false)
FLASHTILE_SM80_INSTANTIATE(64, F16, true)
}  // namespace flashtile::cuda::sm80
