// sm90 forward instantiations for head dim 128, varlen layout (bf16/f16; sm90_dispatch_varlen picks causal or not):
// apart from the dense ones, so that both build in parallel.
#include "attn/sm90_run.cuh"

namespace flashtile::cuda {
template void sm90_dispatch_varlen<128, tile::bf16>(const FwdParams&, int);
template void sm90_dispatch_varlen<128, tile::half>(const FwdParams&, int);
}  // namespace flashtile::cuda
