// sm90 forward instantiations for head dim 128 (bf16/f16 x causal/not): one file per head dim keeps builds parallel.
#include "attn/sm90_fwd.cuh"

namespace flashtile::cuda {
template void sm90_run<128, tile::bf16, false>(const FwdParams&);
template void sm90_run<128, tile::bf16, true>(const FwdParams&);
template void sm90_run<128, tile::half, false>(const FwdParams&);
template void sm90_run<128, tile::half, true>(const FwdParams&);
}  // namespace flashtile::cuda
