// Serving layouts: attention over a paged KV cache (with an optional append of new keys), and over packed
// variable-length batches. Same semantics as attention_forward otherwise (attention.hpp).
#pragma once

#include <flashtile/attention.hpp>

#include <cstdint>

namespace flashtile {

// A paged KV cache. Key j of sequence b lives in page block_table[b, j / page_size], slot j % page_size.
struct PagedKv {
  Tensor k_cache, v_cache;  // [num_pages, page_size, Hkv, D], head dim contiguous; page_size a multiple of 16
  Tensor block_table;       // i32 [B, pages_per_seq]: entries in [0, num_pages) for every page a sequence uses
  Tensor seqlens;           // i32 [B], contiguous: keys each sequence holds in the cache before this call
};

// q [B, Sq, Hq, D] attends over sequence b's seqlens[b] + S_new keys of the cache, where S_new is k_new's length (0
// without k_new). k_new and v_new [B, S_new, Hkv, D], when given, are first written into the cache at positions
// seqlens[b] .. seqlens[b] + S_new - 1 (block_table must map those pages); seqlens itself is not changed (the caller
// advances it). Causal is bottom-right per sequence: row i sees keys j <= i + seqlens[b] + S_new - Sq. out like q;
// lse f32 [B, Hq, Sq]. Cache slots past a sequence's keys and unused pages are never read.
// Table contents the host can read (CPU tensors) are checked before any work (entries in range, lengths within the
// pages given); device-resident tables are not read back (that would need a sync): kernels clamp every index, so a
// bad entry gives wrong numbers for its sequence, never an access outside the cache.
Result attention_with_kvcache(const Tensor& q, const PagedKv& cache, Tensor& out, Tensor* lse = nullptr,
                              const Tensor* k_new = nullptr, const Tensor* v_new = nullptr,
                              const Options& options = {});
Result plan_attention_with_kvcache(const Tensor& q, const PagedKv& cache, const Tensor& out, const Tensor* lse = nullptr,
                                   const Tensor* k_new = nullptr, const Tensor* v_new = nullptr,
                                   const Options& options = {});

// A packed batch of B sequences: sequence b's query rows are q[cu_seqlens_q[b] .. cu_seqlens_q[b+1]), its keys
// k[cu_seqlens_k[b] .. cu_seqlens_k[b+1]).
struct Varlen {
  Tensor cu_seqlens_q, cu_seqlens_k;  // i32 [B + 1], contiguous: 0, then non-decreasing, ending at the totals
  std::int64_t max_seqlen_q = 0, max_seqlen_k = 0;  // at least every sequence's length (kernels size grids by them)
};

// q [total_q, Hq, D], k and v [total_k, Hkv, D], out like q, lse f32 [Hq, total_q]. Causal is bottom-right per
// sequence; a sequence with no keys gives 0 and -inf. Table contents are checked as attention_with_kvcache's are.
Result attention_varlen(const Tensor& q, const Tensor& k, const Tensor& v, Tensor& out, Tensor* lse,
                        const Varlen& lengths, const Options& options = {});
Result plan_attention_varlen(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out, const Tensor* lse,
                             const Varlen& lengths, const Options& options = {});

}  // namespace flashtile
