// Built when the NCCL transport is not (no CUDA backend, or no nccl.h at build time): every entry point of
// flashtile/ring_nccl.hpp refuses with the reason.
#include <flashtile/ring_nccl.hpp>

namespace flashtile {

namespace {
[[noreturn]] void unavailable(const char* what) {
  throw Error(ErrorCode::BackendUnavailable, std::string(what) + ": " + nccl_unavailable_reason());
}
}  // namespace

std::string nccl_unavailable_reason() {
#ifdef FLASHTILE_STUB_NCCL_REASON
  return FLASHTILE_STUB_NCCL_REASON;
#else
  return "built without the NCCL transport";
#endif
}

Result ring_attention_forward(const NcclRing&, const Tensor&, const Tensor&, const Tensor&, Tensor&, Tensor*,
                              const Options&) {
  unavailable("ring_attention_forward");
}
Result ring_attention_backward(const NcclRing&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                               const Tensor&, const Tensor&, Tensor&, Tensor&, Tensor&, const Options&) {
  unavailable("ring_attention_backward");
}
NcclUniqueId nccl_unique_id() { unavailable("nccl_unique_id"); }
ncclComm* nccl_comm_init(int, int, const NcclUniqueId&, const Device&) { unavailable("nccl_comm_init"); }
void nccl_comm_destroy(ncclComm* comm) {
  if (comm) unavailable("nccl_comm_destroy");
}

}  // namespace flashtile
