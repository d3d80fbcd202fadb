// sm80 forward instantiations for head_dim 256, serving layouts: {paged, varlen} x {bf16, f16} x {causal, not}.
#include "attn/sm80_fwd.cuh"

namespace flashtile::cuda::sm80 {
FLASHTILE_SM80_INSTANTIATE(256, BF16, false, Paged)
FLASHTILE_SM80_INSTANTIATE(256, BF16, true, Paged)
FLASHTILE_SM80_INSTANTIATE(256, F16, false, Paged)
FLASHTILE_SM80_INSTANTIATE(256, F16, true, Paged)
FLASHTILE_SM80_INSTANTIATE(256, BF16, false, Varlen)
FLASHTILE_SM80_INSTANTIATE(256, BF16, true, Varlen)
FLASHTILE_SM80_INSTANTIATE(256, F16, false, Varlen)
FLASHTILE_SM80_INSTANTIATE(256, F16, true, Varlen)
}  // namespace flashtile::cuda::sm80
