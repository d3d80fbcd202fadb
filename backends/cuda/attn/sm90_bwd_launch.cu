// The sm90 family's backward entry points while it has no backward kernel: plan() passes cuda_sm90 over with this
// reason and cuda_sm80 runs the backward on Hopper.
#include "attn/bwd_params.hpp"

#include <flashtile/types.hpp>

namespace flashtile::cuda {

namespace {
constexpr const char* kNoKernel = "no backward kernel on this path yet (cuda_sm80 runs the backward on Hopper)";
}

std::string sm90_bwd_supports(const BwdParams&) { return kNoKernel; }
std::size_t sm90_bwd_workspace(const BwdParams&) { return 0; }
void sm90_bwd_launch(const BwdParams&) { throw Error(ErrorCode::Unsupported, kNoKernel); }
std::string sm90_bwd_name(const BwdParams&) { return "sm90_bwd<none>"; }

}  // namespace flashtile::cuda
