// Stand-in for the sm90 kernel family when it is not compiled (no 90a in CMAKE_CUDA_ARCHITECTURES, or the family's
// sources are absent). plan() asks sm90_fwd_supports() and passes the path over with this reason.
#include "attn/bwd_params.hpp"

#include <flashtile/types.hpp>

namespace flashtile::cuda {

namespace {
constexpr const char* kNotBuilt = "sm90 kernel not built (needs 90a in CMAKE_CUDA_ARCHITECTURES)";
}

std::string sm90_fwd_supports(const FwdParams&) { return kNotBuilt; }
void sm90_fwd_launch(const FwdParams&, int) { throw Error(ErrorCode::Unsupported, kNotBuilt); }
std::string sm90_fwd_name(const FwdParams&) { return "sm90_fwd<not built>"; }
bool sm90_fwd_persistent(const FwdParams&) { return false; }
bool sm90_fwd_is_decode(const FwdParams&) { return false; }
std::size_t sm90_fwd_workspace(const FwdParams&) { return 0; }
std::string sm90_bwd_supports(const BwdParams&) { return kNotBuilt; }
std::size_t sm90_bwd_workspace(const BwdParams&) { return 0; }
void sm90_bwd_launch(const BwdParams&) { throw Error(ErrorCode::Unsupported, kNotBuilt); }
std::string sm90_bwd_name(const BwdParams&) { return "sm90_bwd<not built>"; }

}  // namespace flashtile::cuda
