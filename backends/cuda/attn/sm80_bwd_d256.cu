// sm80 backward instantiations for head_dim 256: {bf16, f16} x {causal, not}, each the main kernel and the
// deterministic dQ kernel. One file per head dim keeps the parallel build balanced.
#include "attn/sm80_bwd.cuh"

namespace flashtile::cuda::sm80 {
FLASHTILE_SM80_BWD_INSTANTIATE(256, BF16, false)
FLASHTILE_SM80_BWD_INSTANTIATE(256, BF16, true)
FLASHTILE_SM80_BWD_INSTANTIATE(256, F16, false)
FLASHTILE_SM80_BWD_INSTANTIATE(256, F16, true)
}  // namespace flashtile::cuda::sm80
