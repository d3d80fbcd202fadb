// The plain parameter struct every CUDA backward-kernel family takes from the backend, the scratch layout they share,
// and the entry points each family provides. Host-only header (no cuda.h).
//
// The backward recomputes P = exp(S·scale - lse) tile by tile from q, k and the forward's lse (never stored), with
//   Delta = rowsum(dO ∘ O),  dP = dO·Vᵀ,  dS = P ∘ (dP - Delta),
//   dV = Pᵀ·dO,  dK = scale · dSᵀ·Q,  dQ = scale · dS·K.
// GQA: dK and dV of a kv head are summed over the query heads of its group.
#pragma once

#include "attn/fwd_params.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

namespace flashtile::cuda {

struct BwdParams {
  FwdParams f;  // q, k, v, o (the forward's output), lse (required), sizes, scale, causal, stream, device
  const void* dout = nullptr;
  void* dq = nullptr;
  void* dk = nullptr;
  void* dv = nullptr;
  // Strides in elements: batch, seq, head (head dim is contiguous).
  std::int64_t do_sb = 0, do_ss = 0, do_sh = 0;
  std::int64_t dq_sb = 0, dq_ss = 0, dq_sh = 0;
  std::int64_t dk_sb = 0, dk_ss = 0, dk_sh = 0;
  std::int64_t dv_sb = 0, dv_ss = 0, dv_sh = 0;
  // Sinks (f32 [Hq]) and their gradient, f32 [Hq] (null: not asked for): dsinks[h] = -Σ_{b,i} exp(sinks[h] -
  // lse[b,h,i]) · Delta[b,h,i], from the preprocess's rows in a fixed order. Sinks enter dq, dk and dv only through
  // the forward's lse, so the main kernels never see them (f.sinks is null there).
  const float* sinks = nullptr;
  float* dsinks = nullptr;
  bool deterministic = false;  // dq, dk, dv bit-identical run to run: no float atomics whose order varies
  // Scratch of at least the family's *_bwd_workspace(p) bytes, 256-byte aligned, contents undefined on entry. The
  // backend provides it (the caller's workspace or a stream-ordered allocation), so a launch allocates nothing.
  void* workspace = nullptr;
};

// Scratch every family carves the same way (offsets 256-byte aligned), from rows padded to `row_pad`:
//   delta  f32 [B, Hq, Sq_pad]      rowsum(dO ∘ O)
//   lse2   f32 [B, Hq, Sq_pad]      lse · log2(e); +inf for rows with no visible key (so P = 0 there)
//   dq_acc f32 [B, Hq, Sq_pad, D]   dQ / scale, accumulated over key blocks, zeroed by the preprocess
struct BwdScratch {
  float* delta = nullptr;
  float* lse2 = nullptr;
  float* dq_acc = nullptr;
  std::int64_t sq_pad = 0;  // Sq rounded up to row_pad
};
std::size_t bwd_scratch_bytes(const BwdParams& p, int row_pad);
BwdScratch bwd_scratch(const BwdParams& p, int row_pad);  // carves p.workspace

// Shared passes (attn/bwd_common.cu, built for every arch):
// preprocess: delta, lse2 and a zeroed dq_acc; convert: dq = scale · dq_acc, in dq's dtype and strides.
void bwd_preprocess(const BwdParams& p, const BwdScratch& s);  // and dsinks where p.dsinks
void bwd_convert_dq(const BwdParams& p, const BwdScratch& s);

// Each kernel family implements these in its own launch file, as the forward does: `supports` returns "" or a
// one-line reason, `workspace` the scratch bytes a launch needs, `launch` runs preprocess, main kernel(s) and
// convert on p.f.stream (throws Error(BackendFailure) on a launch error), `name` the variant for Result::kernel.
std::string sm80_bwd_supports(const BwdParams& p);
std::size_t sm80_bwd_workspace(const BwdParams& p);
void sm80_bwd_launch(const BwdParams& p);
std::string sm80_bwd_name(const BwdParams& p);
std::string sm90_bwd_supports(const BwdParams& p);
std::size_t sm90_bwd_workspace(const BwdParams& p);
void sm90_bwd_launch(const BwdParams& p);
std::string sm90_bwd_name(const BwdParams& p);

}  // namespace flashtile::cuda
