// The case lists shared by the conformance suite, the CLI and the benchmark: one definition of what gets tested and
// timed, and of the tolerances a result is held to. Not installed (target flashtile_cases).
#pragma once

#include <flashtile/types.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace flashtile::cases {

// FLOPs of a forward call, as every table in this project counts them: 4·B·Hq·Sq·Sk·D, halved when causal.
inline double attention_flops(std::int64_t batch, std::int64_t heads_q, std::int64_t seqlen_q, std::int64_t seqlen_k,
                              std::int64_t head_dim, bool causal) {
  const double f = 4.0 * static_cast<double>(batch) * static_cast<double>(heads_q) * static_cast<double>(seqlen_q) *
                   static_cast<double>(seqlen_k) * static_cast<double>(head_dim);
  return causal ? f / 2 : f;
}

// FLOPs of a backward call: 2.5 x the forward's. The backward runs five matmuls the size of the forward's two
// (S = Q·Kᵀ again, dP = dO·Vᵀ, dV = Pᵀ·dO, dK = dSᵀ·Q, dQ = dS·K), as FlashAttention's benchmarks count
// them.
inline double backward_flops(std::int64_t batch, std::int64_t heads_q, std::int64_t seqlen_q, std::int64_t seqlen_k,
                             std::int64_t head_dim, bool causal) {
  return 2.5 * attention_flops(batch, heads_q, seqlen_q, seqlen_k, head_dim, causal);
}

struct Case {
  std::int64_t batch = 1, seqlen_q = 1, seqlen_k = 1, heads_q = 1, heads_kv = 1, head_dim = 64;
  bool causal = false;
  DType dtype = DType::F16;
  bool packed_qkv = false;  // q, k, v as strided views into one [B, S, 3, H, D] buffer, out with a padded row
  // Every GPU path must run this case (f16/bf16, head dims 64/128/256); other cases may be refused with a reason.
  bool required = true;
  std::int64_t elem_offset = 0;  // q, k, v and out start this many elements into their buffers (alignment rules)
  std::optional<float> scale;    // the softmax scale; default 1/sqrt(head_dim)

  double flops() const { return attention_flops(batch, heads_q, seqlen_q, seqlen_k, head_dim, causal); }
  std::string name() const;
};

// Tolerances against the CPU reference (relative L2 error of out; LSE error relative to max(1, |lse|)), by dtype.
inline double out_tolerance(DType dt) { return dt == DType::BF16 ? 1e-2 : dt == DType::F16 ? 2e-3 : 1e-5; }
inline double lse_tolerance(DType dt) { return dt == DType::F32 ? 1e-5 : 1e-3; }
// Kernels that accumulated O in f16 (Result::reduced_precision; Options::allow_reduced_precision_accumulation): bf16's
// bound for every 16-bit dtype. f16 O rounds once per key tile, so its error grows with Sk (4.7-6.8e-3 at Sk 16384:
// bench/results/2026-11-30_h200_vk_coopmat2_f16_accumulation).
inline double reduced_out_tolerance(DType dt) { return dt == DType::F32 ? 1e-5 : 1e-2; }
// Gradients (relative L2 error of each of dq, dk, dv against the CPU reference backward given the same q, k, v, out,
// lse and dout): twice out's bound in 16-bit dtypes. Each gradient is rounded to the dtype once, like out, but GPU
// paths feed the tensor cores P and dS rounded to 16 bits, and dS = P ∘ (dP - Delta) subtracts nearly equal numbers,
// which magnifies their relative error (FlashAttention tests its gradients likewise looser than its output). f32:
// the CPU reference against itself up to f32 rounding.
inline double grad_tolerance(DType dt) { return dt == DType::BF16 ? 2e-2 : dt == DType::F16 ? 5e-3 : 1e-5; }

// Conformance: Sq, Sk in {1, 17, 64, 257, 1000}, Sq != Sk both ways, batch > 1, GQA 4:1, MQA, causal or not, head
// dims 64/128/256, f16 and bf16 (required on every path), f32 and an odd head dim (paths may refuse them).
// Heads and batch shrink on the large sizes so the CPU oracle and lavapipe stay fast on two cores.
std::vector<Case> conformance_cases();

// Gradient conformance: Sq, Sk in {1, 17, 257} and a longer pair, Sq != Sk both ways (rows with no visible key when
// causal and Sq > Sk), MHA/MQA/GQA, batch > 1, head dims 64/128/256, f16 and bf16 (required on every backward path),
// a strided layout, f32 and odd element offsets (optional). Smaller than the forward's: the CPU oracle's backward does
// three times the work.
std::vector<Case> backward_cases();

// The benchmark's standard grid: hidden 2048 (heads = 2048 / d), batch x seqlen = 16384, seqlen 512 .. 16384.
std::vector<Case> bench_grid(DType dtype);

}  // namespace flashtile::cases
