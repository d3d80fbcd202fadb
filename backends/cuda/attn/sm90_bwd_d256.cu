// sm90 backward instantiations for head dim 256 (bf16/f16; sm90_bwd_dispatch picks causal or not): one file per head
// dim keeps builds parallel.
#include "attn/sm90_bwd.cuh"

namespace flashtile::cuda {
template void sm90_bwd_dispatch<256, tile::bf16>(const BwdParams&);
template void sm90_bwd_dispatch<256, tile::half>(const BwdParams&);
}  // namespace flashtile::cuda
