// sm90 forward: the launch layer. Maps runtime head dim / dtype to the instantiations of sm90_dispatch (compiled in
// sm90_fwd_d{64,128,256}.cu, which maps causality and the O path) or, for decode calls (seqlen_q <= 16, dense or paged
// K/V, d 64 and 128), of the split-KV decode kernel (sm90_decode_d*.cu), and says, in one line, why a call does not
// qualify.
#include <flashtile/types.hpp>

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "attn/fwd_params.hpp"
#include "attn/sm80_dispatch.hpp"
#include "attn/sm80_traits.hpp"
#include "attn/sm90_decode.hpp"
#include "attn/sm90_mods.cuh"
#include "attn/sm90_traits.hpp"
#include "tile/base.cuh"
#include "tile/gl.cuh"

namespace flashtile::cuda {

template <int D, typename T>
void sm90_dispatch(const FwdParams& f, int ctas);
template <int D, typename T>
void sm90_dispatch_varlen(const FwdParams& f, int ctas);

namespace sm90 {
// Defined in sm90_decode.cuh, instantiated in sm90_decode_d{64,128}.cu.
template <int D, ElemType E, Layout L, bool Mods>
cudaError_t decode_launch(const FwdParams& p);
}  // namespace sm90
namespace sm80 {
cudaError_t append_launch(const FwdParams& p);  // decode_common.cu: a paged call's new keys, before attention
}  // namespace sm80

#define FT_SM90_EXTERN(F, D)                                    \
  extern template void F<D, tile::bf16>(const FwdParams&, int); \
  extern template void F<D, tile::half>(const FwdParams&, int);
FT_SM90_EXTERN(sm90_dispatch, 64)
FT_SM90_EXTERN(sm90_dispatch, 128)
FT_SM90_EXTERN(sm90_dispatch, 256)
FT_SM90_EXTERN(sm90_dispatch_varlen, 64)
FT_SM90_EXTERN(sm90_dispatch_varlen, 128)
FT_SM90_EXTERN(sm90_dispatch_varlen, 256)
#undef FT_SM90_EXTERN

namespace {
// Why the decode kernel cannot take a decode-shaped call ("" when it can): it bulk-copies 16-byte aligned rows.
std::string decode_why_not(const FwdParams& p) {
  if (p.batch > sm80::kMaxGridYZ || std::int64_t(p.heads_kv) * sm90::decode_plan(p).row_blocks > sm80::kMaxGridYZ)
    return "batch or heads_kv x row blocks above 65535 (grid limit)";
  if (!sm80::aligned16(p)) return "decode: q, k, v, out not 16-byte aligned (base or strides)";
  if (p.layout == Layout::Paged && (p.block_table == nullptr || p.seqlens == nullptr))
    return "paged layout without its block table or sequence lengths";
  return {};
}
bool decode_ok(const FwdParams& p) {
  return p.device_cc == 90 && sm90::use_decode(p) && decode_why_not(p).empty();
}
}  // namespace

bool sm90_fwd_is_decode(const FwdParams& p) { return decode_ok(p); }

std::size_t sm90_fwd_workspace(const FwdParams& p) { return decode_ok(p) ? sm90::decode_plan(p).bytes : 0; }

std::string sm90_fwd_supports(const FwdParams& p) {
  if (p.device_cc != 90) return "needs sm_90 (device is sm_" + std::to_string(p.device_cc) + ")";
  if (p.head_dim != 64 && p.head_dim != 128 && p.head_dim != 256)
    return "head_dim " + std::to_string(p.head_dim) + " not instantiated (64, 128, 256)";
  if (decode_ok(p)) return {};  // the decode kernel scales before the row max: any scale
  // The prefill kernel.
  if (p.layout == Layout::Paged)
    return sm90::use_decode(p)
               ? decode_why_not(p)
               : "paged K/V beyond decode calls (seqlen_q <= 16, d 64 or 128): no such kernel on this path";
  if (p.layout == Layout::Varlen) {
    if (p.has_variant()) return "varlen with variants (windows, softcap, ALiBi, sinks): no such kernel on this path";
    if (p.cu_seqlens_q == nullptr || p.cu_seqlens_k == nullptr) return "varlen layout without its cu_seqlens";
  }
  if (p.batch > 65535 || p.heads_q > 65535) return "batch or heads above 65535 (grid limit)";
  // Row maxima and the masks act on unscaled scores, the scale folded into the exp2 afterwards: exact for scale > 0
  // only (a negative scale turns the max into the min; a zero one makes masked -inf scores NaN).
  if (!(p.scale > 0.0f)) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "scale %g: the kernel needs scale > 0 (row maxima of unscaled scores)", p.scale);
    return buf;
  }
  struct Op {
    const char* name;
    const void* ptr;
    std::int64_t sb, ss, sh;
  };
  // Varlen maps span the packed rows as one batch (sm90_run): the batch stride is not used.
  const bool vl = p.layout == Layout::Varlen;
  const Op ops[3] = {{"q", p.q, vl ? p.q_ss : p.q_sb, p.q_ss, p.q_sh}, {"k", p.k, vl ? p.k_ss : p.k_sb, p.k_ss, p.k_sh},
                     {"v", p.v, vl ? p.v_ss : p.v_sb, p.v_ss, p.v_sh}};
  for (const Op& o : ops) {
    const std::string why = tile::tma_unsupported(o.ptr, o.sb, o.ss, o.sh, 2);
    if (!why.empty()) return std::string(o.name) + ": " + why;
  }
  // The epilogue stores pairs of elements (4 bytes).
  if (reinterpret_cast<std::uintptr_t>(p.o) % 4 != 0 || p.o_sb % 2 != 0 || p.o_ss % 2 != 0 || p.o_sh % 2 != 0)
    return "out: base address or strides not 4-byte aligned";
  return {};
}

namespace {
// What the short or small kernel changes, for its name: ",cC" (C consumers: the small kernel), ",ostage" (staged O),
// ",own" (own blocks), ",qpf" (Q prefetch), ",shift" (shifted rows), ",nN" (its K/V block of N keys), ",narrowS"
// (narrow first blocks in steps of S keys), ",lse" (the kind for calls with an LSE: lazy mode 3's f32 sums).
// Consumers and block against the main kernel's, or the short one's where there is no main kernel (d64).
std::string short_tag(const FwdParams& p, Sm90Kind kind) {
  const int d = p.head_dim;
  const Sm90Kernel s = sm90_kernel(d, p.causal, kind);
  const Sm90Kernel main = sm90_kernel(d, p.causal, sm90_has_kernel(d, p.causal, Sm90Kind::main) ? Sm90Kind::main
                                                                                                : Sm90Kind::short_seq);
  const bool plain = !sm90_mods_loop(sm90_fwd_build(p));  // the variants' loop: no own blocks, shifted or narrow
  return (s.consumers != main.consumers ? ",c" + std::to_string(s.consumers) : "") +
         (s.o == Sm90O::staged ? ",ostage" : "") + (s.own_blocks && plain ? ",own" : "") +
         (s.q_prefetch ? ",qpf" : "") + (s.shift_rows && plain ? ",shift" : "") +
         (s.block_n != main.block_n ? ",n" + std::to_string(s.block_n) : "") +
         (s.narrow_first > 0 && plain ? ",narrow" + std::to_string(s.narrow_first) : "") +
         (sm90_lse_kind(kind) ? ",lse" : "");
}
}  // namespace

// ",clusterN": a launch in clusters of N CTAs (sm90_cluster_launch); the variants' build (Sm90Mods): ",sinks" (the
// plain kernel with the sinks), or ",mods" (the variants' loop, Sm90Shape::kMods) with ",softcap" or ",alibi" where it
// is that build.
std::string sm90_fwd_name(const FwdParams& p) {
  if (decode_ok(p))
    return "sm90_decode<d" + std::to_string(p.head_dim) + (p.dtype == ElemType::BF16 ? ",bf16" : ",f16") +
           (p.causal ? ",causal" : "") + (p.layout == Layout::Paged ? ",paged" : "") +
           (p.has_variant() ? ",mods" : "") + ",splitkv" + std::to_string(sm90::decode_plan(p).splits) + ">";
  const std::string head = "sm90_fwd<d" + std::to_string(p.head_dim) + (p.dtype == ElemType::BF16 ? ",bf16" : ",f16") +
                           (p.causal ? ",causal" : "");
  if (p.layout == Layout::Varlen) {
    const Sm90Kind kind = sm90_varlen_kind(p.head_dim, p.causal);
    return head + (kind != Sm90Kind::main ? ",short" : "") + (sm90_lse_kind(kind) ? ",lse" : "") + ",varlen>";
  }
  const Sm90Mods build = sm90_fwd_build(p);
  const bool mods = sm90_mods_loop(build);
  const Sm90Kind kind = sm90_kind(p.head_dim, p.causal, p.seqlen_k, p.lse != nullptr, mods);
  const int cluster = sm90_cluster_launch(p.head_dim, p.causal, p.seqlen_k, mods);
  return head + (kind != Sm90Kind::main ? short_tag(p, kind) : "") +
         (cluster > 1 ? ",cluster" + std::to_string(cluster) : "") +
         (build == Sm90Mods::sinks ? ",sinks" : mods ? ",mods" : "") +
         (build == Sm90Mods::softcap ? ",softcap" : build == Sm90Mods::alibi ? ",alibi" : "") + ">";
}

bool sm90_fwd_persistent(const FwdParams& p) {
  return p.layout == Layout::Varlen || sm90_persistent_launch(sm90_launch_config(p.head_dim, p.causal), p.seqlen_k);
}

namespace {
template <int D>
void launch_d(const FwdParams& p, int ctas) {
  const bool vl = p.layout == Layout::Varlen;
  if (p.dtype == ElemType::BF16) vl ? sm90_dispatch_varlen<D, tile::bf16>(p, ctas) : sm90_dispatch<D, tile::bf16>(p, ctas);
  else vl ? sm90_dispatch_varlen<D, tile::half>(p, ctas) : sm90_dispatch<D, tile::half>(p, ctas);
}
}  // namespace

namespace {
void decode_launch(const FwdParams& p) {
  if (p.workspace == nullptr && sm90_fwd_workspace(p) > 0)
    throw Error(ErrorCode::InvalidArgument, sm90_fwd_name(p) + ": needs a workspace of " +
                                                std::to_string(sm90_fwd_workspace(p)) + " bytes (sm90_fwd_workspace)");
  cudaError_t err = cudaSuccess;
  if (p.layout == Layout::Paged && p.seqlen_new > 0) err = sm80::append_launch(p);  // before any reader, same stream
  if (err == cudaSuccess)
    // sm80's decode dispatch (the same flags); head dims without an sm90 decode shape never get here (decode_ok).
    sm80::dispatch_decode(p, [&]<int D, ElemType E, Layout L, bool M>() {
      if constexpr (sm90::has_decode_shape(D)) err = sm90::decode_launch<D, E, L, M>(p);
    });
  if (err != cudaSuccess)
    throw Error(ErrorCode::BackendFailure,
                "launch " + sm90_fwd_name(p) + ": " + cudaGetErrorName(err) + ": " + cudaGetErrorString(err));
}
}  // namespace

void sm90_fwd_launch(const FwdParams& p, int ctas) {
  const std::string why = sm90_fwd_supports(p);
  if (!why.empty()) throw Error(ErrorCode::Unsupported, why);
  if (decode_ok(p)) return decode_launch(p);
  switch (p.head_dim) {
    case 64: launch_d<64>(p, ctas); break;
    case 128: launch_d<128>(p, ctas); break;
    default: launch_d<256>(p, ctas); break;
  }
}

}  // namespace flashtile::cuda
