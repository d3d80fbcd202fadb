// sm80 forward instantiations for head_dim 128, dense layout: {bf16, f16} x {causal, not, variants}. One file per
// head dim keeps the parallel build balanced; the serving layouts are in sm80_serve_d128.cu.
#include "attn/sm80_fwd.cuh"

namespace flashtile::cuda::sm80 {
FLASHTILE_SM80_INSTANTIATE(128, BF16, false, Dense, false)
FLASHTILE_SM80_INSTANTIATE(128, BF16, true, Dense, false)
FLASHTILE_SM80_INSTANTIATE(128, BF16, false, Dense, true)
FLASHTILE_SM80_INSTANTIATE(128, F16, false, Dense, false)
FLASHTILE_SM80_INSTANTIATE(128, F16, true, Dense, false)
FLASHTILE_SM80_INSTANTIATE(128, F16, false, Dense, true)
}  // namespace flashtile::cuda::sm80
