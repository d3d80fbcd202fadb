// The case lists shared by the conformance suite, the CLI and the benchmark: one definition of what gets tested.
#pragma once

#include <flashtile/types.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace flashtile::cases {

struct Case {
  std::int64_t batch = 1, seqlen_q = 1, seqlen_k = 1, heads_q = 1, heads_kv = 1, head_dim = 64;
  bool causal = false;
  DType dtype = DType::F16;
  bool packed_qkv = false;  // q, k, v as strided views into one [B, S, 3, H, D] buffer, out with a padded row
  // Every GPU path must run this case (f16/bf16, head dims 64/128/256); other cases may be refused with a reason.
  bool required = true;
  std::int64_t elem_offset = 0;  // q, k, v and out start this many elements into their buffers (alignment rules)
  std::optional<float> scale;    // the softmax scale; default 1/sqrt(head_dim)

  double flops() const {
    const double f = 4.0 * static_cast<double>(batch * heads_q * seqlen_q * seqlen_k * head_dim);
    return causal ? f / 2 : f;
  }
  std::string name() const {
    return std::string(to_string(dtype)) + " B" + std::to_string(batch) + " Sq" + std::to_string(seqlen_q) + " Sk" +
           std::to_string(seqlen_k) + " H" + std::to_string(heads_q) + "/" + std::to_string(heads_kv) + " D" +
           std::to_string(head_dim) + (causal ? " causal" : "") + (packed_qkv ? " packed" : "") +
           (elem_offset ? " offset" + std::to_string(elem_offset) : "") +
           (scale ? " scale " + std::to_string(*scale) : "");
  }
};

// Tolerances against the CPU reference (relative L2 error of out; LSE error relative to max(1, |lse|)), by dtype.
inline double out_tolerance(DType dt) { return dt == DType::BF16 ? 1e-2 : dt == DType::F16 ? 2e-3 : 1e-5; }
inline double lse_tolerance(DType dt) { return dt == DType::F32 ? 1e-5 : 1e-3; }
// Kernels that accumulated O in f16 (Result::reduced_precision; Options::allow_reduced_precision_accumulation): bf16's
// bound for every 16-bit dtype. f16 O rounds once per key tile, so its error grows with Sk (session 12: 4.7-6.8e-3
// at Sk 16384; DEVELOPERS.md).
inline double reduced_out_tolerance(DType dt) { return dt == DType::F32 ? 1e-5 : 1e-2; }

// Conformance: Sq, Sk in {1, 17, 64, 257, 1000}, Sq != Sk both ways, batch > 1, GQA 4:1, MQA, causal or not, head
// dims 64/128/256, f16 and bf16 (required on every path), f32 and an odd head dim (paths may refuse them).
// Heads and batch shrink on the large sizes so the CPU oracle and lavapipe stay fast on two cores.
inline std::vector<Case> conformance_cases() {
  const std::pair<std::int64_t, std::int64_t> sizes[] = {{1, 1},    {17, 17},   {64, 64},   {257, 257}, {1, 1000},
                                                         {17, 257}, {64, 1000}, {1000, 64}, {257, 17},  {1000, 1000}};
  const struct { std::int64_t hq, hkv; } heads[] = {{4, 4}, {4, 1}, {8, 2}};  // MHA, MQA, GQA 4:1
  std::vector<Case> out;
  int n = 0;
  for (std::int64_t d : {64, 128, 256})
    for (DType dt : {DType::F16, DType::BF16})
      for (bool causal : {false, true})
        for (const auto& [sq, sk] : sizes) {
          if (d > 64 && sq == 1000 && sk == 1000) continue;
          const auto& h = heads[n % 3];
          Case c;
          c.batch = (n % 2) ? 2 : 1;
          c.seqlen_q = sq;
          c.seqlen_k = sk;
          c.heads_q = h.hq;
          c.heads_kv = h.hkv;
          c.head_dim = d;
          c.causal = causal;
          c.dtype = dt;
          while (c.flops() > 4e8 && (c.batch > 1 || c.heads_q > c.heads_kv || c.heads_q > 1)) {
            if (c.batch > 1) c.batch = 1;
            else if (c.heads_q > c.heads_kv) c.heads_q /= 2;
            else c.heads_q = c.heads_kv = c.heads_q / 2;
          }
          ++n;
          out.push_back(c);
        }
  // Strided views: packed QKV (Sq == Sk, MHA) and a padded output row.
  for (DType dt : {DType::F16, DType::BF16})
    for (std::int64_t d : {64, 128}) {
      Case c{2, 100, 100, 4, 4, d, d == 128, dt, true, true};
      out.push_back(c);
    }
  // Optional: f32 inputs, an odd head dim.
  out.push_back(Case{2, 33, 77, 4, 2, 64, true, DType::F32, false, false});
  out.push_back(Case{1, 65, 65, 2, 2, 128, false, DType::F32, false, false});
  out.push_back(Case{1, 40, 50, 2, 1, 72, false, DType::F16, false, false});
  return out;
}

// The benchmark's standard grid: hidden 2048 (heads = 2048 / d), batch x seqlen = 16384, seqlen 512 .. 16384.
inline std::vector<Case> bench_grid(DType dtype) {
  std::vector<Case> out;
  for (std::int64_t d : {64, 128, 256})
    for (bool causal : {false, true})
      for (std::int64_t s = 512; s <= 16384; s *= 2) {
        const std::int64_t h = 2048 / d;
        out.push_back(Case{16384 / s, s, s, h, h, d, causal, dtype, false, true});
      }
  return out;
}

}  // namespace flashtile::cases
