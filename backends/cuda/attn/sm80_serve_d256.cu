// sm80 forward instantiations for head_dim 256, serving layouts: {paged, varlen} x {bf16, f16} x
// {causal, not, variants}.
#include "attn/sm80_fwd.cuh"

namespace flashtile::cuda::sm80 {
FLASHTILE_SM80_INSTANTIATE(256, BF16, false, Paged, false)
FLASHTILE_SM80_INSTANTIATE(256, BF16, true, Paged, false)
FLASHTILE_SM80_INSTANTIATE(256, BF16, false, Paged, true)
FLASHTILE_SM80_INSTANTIATE(256, F16, false, Paged, false)
FLASHTILE_SM80_INSTANTIATE(256, F16, true, Paged, false)
FLASHTILE_SM80_INSTANTIATE(256, F16, false, Paged, true)
FLASHTILE_SM80_INSTANTIATE(256, BF16, false, Varlen, false)
FLASHTILE_SM80_INSTANTIATE(256, BF16, true, Varlen, false)
FLASHTILE_SM80_INSTANTIATE(256, BF16, false, Varlen, true)
FLASHTILE_SM80_INSTANTIATE(256, F16, false, Varlen, false)
FLASHTILE_SM80_INSTANTIATE(256, F16, true, Varlen, false)
FLASHTILE_SM80_INSTANTIATE(256, F16, false, Varlen, true)
}  // namespace flashtile::cuda::sm80
