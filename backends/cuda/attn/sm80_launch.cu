// Launch layer of the sm80 family: maps the runtime flags (head dim, dtype, causal, layout, variants) to the template
// instantiations compiled in sm80_fwd_d*.cu (dense), sm80_serve_d*.cu (paged, varlen) and sm80_decode_d*.cu (split-KV
// decode), and says in one line why a call cannot run here. A paged call with new keys appends them first, on the
// same stream.
#include "attn/fwd_params.hpp"
#include "attn/sm80_dispatch.hpp"
#include "attn/sm80_traits.hpp"

#include <flashtile/types.hpp>

#include <cuda_runtime.h>

#include <string>

namespace flashtile::cuda {

namespace sm80 {
// Defined in sm80_fwd.cuh, instantiated in sm80_fwd_d{64,128,256}.cu and sm80_serve_d{64,128,256}.cu.
template <int D, ElemType E, bool Causal, Layout L, bool Mods>
cudaError_t launch(const FwdParams& p);
template <int D, ElemType E, bool Causal, Layout L, bool Mods>
cudaError_t probe();
// Defined in sm80_decode.cuh, instantiated in sm80_decode_d{64,128,256}.cu.
template <int D, ElemType E, Layout L, bool Mods>
cudaError_t decode_launch(const FwdParams& p);
template <int D, ElemType E, Layout L, bool Mods>
cudaError_t decode_probe();
// decode_common.cu.
cudaError_t append_launch(const FwdParams& p);
cudaError_t serve_probe();

namespace {

// Shared memory of the instantiation a call takes (sm80_dispatch.hpp: variants run Causal false, in their window).
std::size_t smem_for(int d, bool causal) {
  switch (d) {
    case 64: return causal ? Traits<64, true>::kSmemBytes : Traits<64>::kSmemBytes;
    case 128: return causal ? Traits<128, true>::kSmemBytes : Traits<128>::kSmemBytes;
    default: return causal ? Traits<256, true>::kSmemBytes : Traits<256>::kSmemBytes;
  }
}

}  // namespace
}  // namespace sm80

std::string sm80_fwd_name(const FwdParams& p) {
  return "sm80_fwd<d" + std::to_string(p.head_dim) + (p.dtype == ElemType::BF16 ? ",bf16" : ",f16") +
         (p.causal ? ",causal" : "") + (p.has_variant() ? ",mods" : "") +
         (p.layout == Layout::Paged ? ",paged" : p.layout == Layout::Varlen ? ",varlen" : "") +
         (sm80::use_decode(p) ? ",splitkv" + std::to_string(sm80::decode_plan(p).splits) : "") +
         (sm80::aligned16(p) ? "" : ",unaligned") + ">";
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
  const std::size_t need = smem_for(p.head_dim, p.causal && !p.has_variant());
  if (cudaGetDevice(&dev) == cudaSuccess &&
      cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) == cudaSuccess &&
      std::size_t(optin) < need)
    return "head_dim " + std::to_string(p.head_dim) + " needs " + std::to_string(need >> 10) +
           " KiB shared memory per block, device allows " + std::to_string(optin >> 10) + " KiB";
  if (p.layout == Layout::Paged && (p.block_table == nullptr || p.seqlens == nullptr))
    return "paged layout without its block table or sequence lengths";
  if (p.layout == Layout::Varlen && (p.cu_seqlens_q == nullptr || p.cu_seqlens_k == nullptr))
    return "varlen layout without its cu_seqlens";
  cudaError_t err = cudaSuccess;
  if (use_decode(p))
    dispatch_decode(p, [&]<int D, ElemType E, Layout L, bool M>() { err = decode_probe<D, E, L, M>(); });
  else
    dispatch_layout(p, [&]<int D, ElemType E, bool C, Layout L, bool M>() { err = probe<D, E, C, L, M>(); });
  if (err == cudaSuccess && p.layout != Layout::Dense) err = serve_probe();
  if (err != cudaSuccess) {
    cudaGetLastError();
    return "no sm80 kernel binary for " + cc + " in this build (" + cudaGetErrorName(err) +
           "; add it to CMAKE_CUDA_ARCHITECTURES)";
  }
  return "";
}

bool sm80_fwd_is_decode(const FwdParams& p) { return sm80::use_decode(p); }

std::size_t sm80_fwd_workspace(const FwdParams& p) { return sm80::use_decode(p) ? sm80::decode_plan(p).bytes : 0; }

void sm80_fwd_launch(const FwdParams& p) {
  using namespace sm80;
  if (use_decode(p) && p.workspace == nullptr)
    throw Error(ErrorCode::InvalidArgument, "sm80_fwd " + sm80_fwd_name(p) + ": needs a workspace of " +
                                                std::to_string(sm80_fwd_workspace(p)) + " bytes (sm80_fwd_workspace)");
  cudaError_t err = cudaSuccess;
  if (p.layout == Layout::Paged && p.seqlen_new > 0) err = append_launch(p);  // before any reader, same stream
  bool known = false;
  if (err == cudaSuccess && use_decode(p))
    known = dispatch_decode(p, [&]<int D, ElemType E, Layout L, bool M>() { err = decode_launch<D, E, L, M>(p); });
  else if (err == cudaSuccess)
    known = dispatch_layout(p, [&]<int D, ElemType E, bool C, Layout L, bool M>() { err = launch<D, E, C, L, M>(p); });
  else
    known = true;
  if (!known)
    throw Error(ErrorCode::Unsupported, "sm80_fwd: head_dim " + std::to_string(p.head_dim) + " not instantiated");
  if (err != cudaSuccess)
    throw Error(ErrorCode::BackendFailure,
                "sm80_fwd launch " + sm80_fwd_name(p) + ": " + cudaGetErrorName(err) + ": " + cudaGetErrorString(err));
}

}  // namespace flashtile::cuda
