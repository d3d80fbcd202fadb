// sm90 backward: the launch layer. Maps runtime head dim / dtype to the instantiations of sm90_bwd_dispatch (compiled
// in sm90_bwd_d{64,128,256}.cu, which maps causality) and says, in one line, why a call does not qualify.
#include <flashtile/types.hpp>

#include <cstdint>
#include <string>

#include "attn/bwd_params.hpp"
#include "attn/sm90_bwd_traits.hpp"
#include "tile/base.cuh"
#include "tile/gl.cuh"

namespace flashtile::cuda {

template <int D, typename T>
void sm90_bwd_dispatch(const BwdParams& p);

#define FT_SM90_BWD_EXTERN(D)                                                \
  extern template void sm90_bwd_dispatch<D, tile::bf16>(const BwdParams&); \
  extern template void sm90_bwd_dispatch<D, tile::half>(const BwdParams&);
FT_SM90_BWD_EXTERN(64)
FT_SM90_BWD_EXTERN(128)
FT_SM90_BWD_EXTERN(256)
#undef FT_SM90_BWD_EXTERN

namespace {
constexpr std::size_t kScratchAlign = 256;  // bwd_params.hpp: the workspace and its parts are 256-byte aligned
constexpr int kMaxGridYZ = 65535;           // grid (key blocks, kv heads, batch)
constexpr std::int64_t kMaxAccRows = std::int64_t{1} << 31;
}  // namespace

std::string sm90_bwd_supports(const BwdParams& p) {
  const FwdParams& f = p.f;
  if (f.device_cc != 90) return "needs sm_90 (device is sm_" + std::to_string(f.device_cc) + ")";
  if (f.head_dim != 64 && f.head_dim != 128 && f.head_dim != 256)
    return "head_dim " + std::to_string(f.head_dim) + " not instantiated (64, 128, 256)";
  if (f.batch > kMaxGridYZ || f.heads_kv > kMaxGridYZ) return "batch or kv heads above 65535 (grid limit)";
  if (f.seqlen_q < 1 || f.seqlen_k < 1) return "empty sequence";
  if (f.lse == nullptr) return "needs the forward's lse";
  // The variants' scores are taken on raw q·k (sm90_mods.cuh), the scale folded in afterwards.
  if (f.has_variant() && !(f.scale > 0.0f)) return "variants need scale > 0 on this path (scores on raw q·k)";
  // dq_acc's rows are one TMA coordinate (int32).
  const std::int64_t sq_pad = (std::int64_t(f.seqlen_q) + kSm90BwdRowPad - 1) / kSm90BwdRowPad * kSm90BwdRowPad;
  if (std::int64_t(f.batch) * f.heads_q * sq_pad > kMaxAccRows) return "batch x heads x seqlen_q above 2^31 rows";
  struct Op {
    const char* name;
    const void* ptr;
    std::int64_t sb, ss, sh;
  };
  const Op loads[4] = {{"q", f.q, f.q_sb, f.q_ss, f.q_sh}, {"k", f.k, f.k_sb, f.k_ss, f.k_sh},
                       {"v", f.v, f.v_sb, f.v_ss, f.v_sh}, {"dout", p.dout, p.do_sb, p.do_ss, p.do_sh}};
  for (const Op& o : loads) {
    const std::string why = tile::tma_unsupported(o.ptr, o.sb, o.ss, o.sh, 2);
    if (!why.empty()) return std::string(o.name) + ": " + why;
  }
  // dK and dV leave as pairs of elements (4 bytes); o and dq are read and written one element at a time.
  const Op stores[2] = {{"dk", p.dk, p.dk_sb, p.dk_ss, p.dk_sh}, {"dv", p.dv, p.dv_sb, p.dv_ss, p.dv_sh}};
  for (const Op& o : stores)
    if (reinterpret_cast<std::uintptr_t>(o.ptr) % 4 != 0 || o.sb % 2 != 0 || o.ss % 2 != 0 || o.sh % 2 != 0)
      return std::string(o.name) + ": base address or strides not 4-byte aligned";
  return {};
}

std::size_t sm90_bwd_workspace(const BwdParams& p) {
  const std::size_t sem = (sm90_bwd_sem_bytes(p) + kScratchAlign - 1) / kScratchAlign * kScratchAlign;
  return bwd_scratch_bytes(p, kSm90BwdRowPad) + (p.deterministic ? sem : 0);
}

std::string sm90_bwd_name(const BwdParams& p) {
  return "sm90_bwd<d" + std::to_string(p.f.head_dim) + (p.f.dtype == ElemType::BF16 ? ",bf16" : ",f16") +
         (p.f.causal ? ",causal" : "") + (p.deterministic ? ",deterministic" : "") + (p.f.has_variant() ? ",mods" : "") +
         ">";
}

namespace {
template <int D>
void launch_d(const BwdParams& p) {
  if (p.f.dtype == ElemType::BF16) sm90_bwd_dispatch<D, tile::bf16>(p);
  else sm90_bwd_dispatch<D, tile::half>(p);
}
}  // namespace

void sm90_bwd_launch(const BwdParams& p) {
  const std::string why = sm90_bwd_supports(p);
  if (!why.empty()) throw Error(ErrorCode::Unsupported, why);
  if (p.workspace == nullptr) throw Error(ErrorCode::InvalidArgument, "sm90 bwd: workspace is null");
  switch (p.f.head_dim) {
    case 64: launch_d<64>(p); break;
    case 128: launch_d<128>(p); break;
    default: launch_d<256>(p); break;
  }
}

}  // namespace flashtile::cuda
