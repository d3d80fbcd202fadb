// sm90 forward instantiations for head dim 128 (bf16/f16; sm90_dispatch picks causal or not and the kernel kind):
// one file per head dim keeps builds parallel.
#include "attn/sm90_run.cuh"

namespace flashtile::cuda {
template void sm90_dispatch<128, tile::bf16>(const FwdParams&, int);
template void sm90_dispatch<128, tile::half>(const FwdParams&, int);
}  // namespace flashtile::cuda
