// The shared case lists (cases.hpp).
#include "cases.hpp"

#include <utility>

namespace flashtile::cases {

namespace {
// Conformance cases above this many FLOPs shed batch and heads (the CPU oracle and lavapipe on two cores).
constexpr double kConformanceMaxFlops = 4e8;
// The standard grid: hidden size (heads = kGridHidden / d) and tokens a call (batch = kGridTokens / seqlen).
constexpr std::int64_t kGridHidden = 2048;
constexpr std::int64_t kGridTokens = 16384;
constexpr std::int64_t kGridMinSeq = 512;
}  // namespace

std::string Case::name() const {
  return std::string(to_string(dtype)) + " B" + std::to_string(batch) + " Sq" + std::to_string(seqlen_q) + " Sk" +
         std::to_string(seqlen_k) + " H" + std::to_string(heads_q) + "/" + std::to_string(heads_kv) + " D" +
         std::to_string(head_dim) + (causal ? " causal" : "") + (packed_qkv ? " packed" : "") +
         (elem_offset ? " offset" + std::to_string(elem_offset) : "") +
         (scale ? " scale " + std::to_string(*scale) : "");
}

std::vector<Case> conformance_cases() {
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
          while (c.flops() > kConformanceMaxFlops && (c.batch > 1 || c.heads_q > c.heads_kv || c.heads_q > 1)) {
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

std::vector<Case> backward_cases() {
  const std::pair<std::int64_t, std::int64_t> sizes[] = {{1, 1}, {17, 17}, {257, 257}, {17, 257},
                                                         {257, 17}, {1, 300}, {300, 1}, {600, 450}};
  const struct { std::int64_t hq, hkv; } heads[] = {{2, 2}, {4, 1}, {4, 2}};  // MHA, MQA, GQA 2:1
  std::vector<Case> out;
  int n = 0;
  for (std::int64_t d : {64, 128, 256})
    for (DType dt : {DType::F16, DType::BF16})
      for (bool causal : {false, true})
        for (const auto& [sq, sk] : sizes) {
          const auto& h = heads[n % 3];
          Case c{(n % 2) ? 2 : 1, sq, sk, h.hq, h.hkv, d, causal, dt};
          if (sq * sk > 100000) c.batch = 1;
          ++n;
          out.push_back(c);
        }
  for (DType dt : {DType::F16, DType::BF16}) out.push_back(Case{2, 100, 100, 4, 4, 64, dt == DType::BF16, dt, true});
  out.push_back(Case{2, 33, 77, 4, 2, 64, true, DType::F32, false, false});
  // Odd element offsets: no 16-byte or packed-pair loads (vulkan_portable's 16-bit storage module; paths whose
  // loads need alignment may refuse).
  out.push_back(Case{1, 33, 70, 4, 2, 128, true, DType::BF16, false, false, 1});
  return out;
}

std::vector<Case> bench_grid(DType dtype) {
  std::vector<Case> out;
  for (std::int64_t d : {64, 128, 256})
    for (bool causal : {false, true})
      for (std::int64_t s = kGridMinSeq; s <= kGridTokens; s *= 2) {
        const std::int64_t h = kGridHidden / d;
        out.push_back(Case{kGridTokens / s, s, s, h, h, d, causal, dtype, false, true});
      }
  return out;
}

}  // namespace flashtile::cases
