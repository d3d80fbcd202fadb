// sm80 backward instantiations for head_dim 256: {bf16, f16} x {causal, not, variants}, each the main kernel and the
// deterministic dQ kernel. One file per head dim keeps the parallel build balanced.
#include "attn/sm80_bwd.cuh"

namespace flashtile::cuda::sm80 {
FLASHTILE_SM80_BWD_INSTANTIATE(256, BF16, false, false)
FLASHTILE_SM80_BWD_INSTANTIATE(256, BF16, true, false)
FLASHTILE_SM80_BWD_INSTANTIATE(256, BF16, false, true)
FLASHTILE_SM80_BWD_INSTANTIATE(256, F16, false, false)
FLASHTILE_SM80_BWD_INSTANTIATE(256, F16, true, false)
FLASHTILE_SM80_BWD_INSTANTIATE(256, F16, false, true)
}  // namespace flashtile::cuda::sm80
