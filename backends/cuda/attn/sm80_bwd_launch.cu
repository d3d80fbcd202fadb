// Launch layer of the sm80 backward family: maps the runtime flags (head dim, dtype, causal, variants) to the template
// instantiations compiled in sm80_bwd_d*.cu, runs preprocess -> main kernel(s) -> dQ convert on the call's stream, and
// says in one line why a call cannot run here.
#include "attn/bwd_params.hpp"
#include "attn/sm80_dispatch.hpp"
#include "attn/sm80_traits.hpp"

#include <flashtile/types.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <string>

namespace flashtile::cuda {

namespace sm80 {
// Defined in sm80_bwd.cuh, instantiated in sm80_bwd_d{64,128,256}.cu.
template <int D, ElemType E, bool Causal, bool Mods>
cudaError_t bwd_launch(const BwdParams& p, const BwdScratch& s);
template <int D, ElemType E, bool Causal, bool Mods>
cudaError_t bwd_probe();

namespace {

template <int D>
std::size_t bwd_smem() {
  return std::max(BwdTraits<D>::kSmemBytes, BwdTraits<D>::kDqSmemBytes);
}
std::size_t bwd_smem_for(int d) {
  switch (d) {
    case 64: return bwd_smem<64>();
    case 128: return bwd_smem<128>();
    default: return bwd_smem<256>();
  }
}

void throw_if(cudaError_t err, const BwdParams& p) {
  if (err != cudaSuccess)
    throw Error(ErrorCode::BackendFailure, "sm80_bwd launch " + sm80_bwd_name(p) + ": " + cudaGetErrorName(err) +
                                               ": " + cudaGetErrorString(err));
}

}  // namespace
}  // namespace sm80

std::string sm80_bwd_name(const BwdParams& p) {
  const FwdParams& f = p.f;
  return "sm80_bwd<d" + std::to_string(f.head_dim) + (f.dtype == ElemType::BF16 ? ",bf16" : ",f16") +
         (f.causal ? ",causal" : "") + (f.has_variant() ? ",mods" : "") + (sm80::aligned16(p) ? "" : ",unaligned") +
         (p.deterministic ? ",deterministic" : "") + ">";
}

std::size_t sm80_bwd_workspace(const BwdParams& p) { return bwd_scratch_bytes(p, sm80::kBwdRowPad); }

std::string sm80_bwd_supports(const BwdParams& p) {
  using namespace sm80;
  const FwdParams& f = p.f;
  const std::string cc = "sm_" + std::to_string(f.device_cc);
  if (f.device_cc < kMinCc) return "device is " + cc + ", needs sm_80 or newer";
  bool known = false;
  for (int d : kHeadDims) known = known || d == f.head_dim;
  if (!known) return "head_dim " + std::to_string(f.head_dim) + " not instantiated (" + head_dim_list() + ")";
  if (f.lse == nullptr) return "the backward needs the forward's lse";
  // grid.y: kv heads (main kernel), query heads (deterministic dQ kernel); grid.z: batch.
  if (f.heads_q > kMaxGridYZ) return "heads_q " + std::to_string(f.heads_q) + " exceeds the launch grid (65535)";
  if (f.batch > kMaxGridYZ) return "batch " + std::to_string(f.batch) + " exceeds the launch grid (65535)";
  int dev = 0, optin = 0;
  if (cudaGetDevice(&dev) == cudaSuccess &&
      cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) == cudaSuccess &&
      std::size_t(optin) < bwd_smem_for(f.head_dim))
    return "head_dim " + std::to_string(f.head_dim) + " backward needs " +
           std::to_string(bwd_smem_for(f.head_dim) >> 10) + " KiB shared memory per block, device allows " +
           std::to_string(optin >> 10) + " KiB";
  cudaError_t err = cudaSuccess;
  dispatch(f, [&]<int D, ElemType E, bool C, bool M>() { err = bwd_probe<D, E, C, M>(); });
  if (err != cudaSuccess) {
    cudaGetLastError();
    return "no sm80 backward binary for " + cc + " in this build (" + cudaGetErrorName(err) +
           "; add it to CMAKE_CUDA_ARCHITECTURES)";
  }
  return "";
}

void sm80_bwd_launch(const BwdParams& p) {
  if (p.workspace == nullptr)
    throw Error(ErrorCode::BackendFailure, "sm80_bwd: no workspace (sm80_bwd_workspace bytes are needed)");
  const BwdScratch s = bwd_scratch(p, sm80::kBwdRowPad);
  bwd_preprocess(p, s);
  cudaError_t err = cudaSuccess;
  if (!sm80::dispatch(p.f, [&]<int D, ElemType E, bool C, bool M>() { err = sm80::bwd_launch<D, E, C, M>(p, s); }))
    throw Error(ErrorCode::Unsupported, "sm80_bwd: head_dim " + std::to_string(p.f.head_dim) + " not instantiated");
  sm80::throw_if(err, p);
  bwd_convert_dq(p, s);
}

}  // namespace flashtile::cuda
