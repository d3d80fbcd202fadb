// Launch layer of the sm80 family: maps the runtime flags (head dim, dtype, causal) to the template instantiations
// compiled in sm80_fwd_d*.cu, and says in one line why a call cannot run here.
#include "attn/fwd_params.hpp"
#include "attn/sm80_dispatch.hpp"
#include "attn/sm80_traits.hpp"

#include <flashtile/types.hpp>

#include <cuda_runtime.h>

#include <string>

namespace flashtile::cuda {

namespace sm80 {
// Defined in sm80_fwd.cuh, instantiated in sm80_fwd_d{64,128,256}.cu.
template <int D, ElemType E, bool Causal>
cudaError_t launch(const FwdParams& p);
template <int D, ElemType E, bool Causal>
cudaError_t probe();

namespace {

std::size_t smem_for(int d) {
  switch (d) {
    case 64: return Traits<64>::kSmemBytes;
    case 128: return Traits<128>::kSmemBytes;
    default: return Traits<256>::kSmemBytes;
  }
}

}  // namespace
}  // namespace sm80

std::string sm80_fwd_name(const FwdParams& p) {
  return "sm80_fwd<d" + std::to_string(p.head_dim) + (p.dtype == ElemType::BF16 ? ",bf16" : ",f16") +
         (p.causal ? ",causal" : "") + (sm80::aligned16(p) ? "" : ",unaligned") + ">";
}

std::string sm80_fwd_supports(const FwdParams& p) {
  using namespace sm80;
  const std::string cc = "sm_" + std::to_string(p.device_cc);
  if (p.device_cc < kMinCc) return "device is " + cc + ", needs sm_80 or newer";
  bool known = false;
  for (int d : kHeadDims) known = known || d == p.head_dim;
  if (!known) return "head_dim " + std::to_string(p.head_dim) + " not instantiated (" + head_dim_list() + ")";
  if (p.heads_q > kMaxGridYZ) return "heads_q " + std::to_string(p.heads_q) + " exceeds the launch grid (65535)";
  if (p.batch > kMaxGridYZ) return "batch " + std::to_string(p.batch) + " exceeds the launch grid (65535)";
  int dev = 0, optin = 0;
  if (cudaGetDevice(&dev) == cudaSuccess &&
      cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) == cudaSuccess &&
      std::size_t(optin) < smem_for(p.head_dim))
    return "head_dim " + std::to_string(p.head_dim) + " needs " + std::to_string(smem_for(p.head_dim) >> 10) +
           " KiB shared memory per block, device allows " + std::to_string(optin >> 10) + " KiB";
  cudaError_t err = cudaSuccess;
  dispatch(p, [&]<int D, ElemType E, bool C>() { err = probe<D, E, C>(); });
  if (err != cudaSuccess) {
    cudaGetLastError();
    return "no sm80 kernel binary for " + cc + " in this build (" + cudaGetErrorName(err) +
           "; add it to CMAKE_CUDA_ARCHITECTURES)";
  }
  return "";
}

void sm80_fwd_launch(const FwdParams& p) {
  cudaError_t err = cudaSuccess;
  if (!sm80::dispatch(p, [&]<int D, ElemType E, bool C>() { err = sm80::launch<D, E, C>(p); }))
    throw Error(ErrorCode::Unsupported, "sm80_fwd: head_dim " + std::to_string(p.head_dim) + " not instantiated");
  if (err != cudaSuccess)
    throw Error(ErrorCode::BackendFailure,
                "sm80_fwd launch " + sm80_fwd_name(p) + ": " + cudaGetErrorName(err) + ": " + cudaGetErrorString(err));
}

}  // namespace flashtile::cuda
