// The plain parameter struct every CUDA forward-kernel family takes from the backend, and the two entry points each
// family provides. Host-only header (no cuda.h): the stream is a void* holding a cudaStream_t.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace flashtile::cuda {

enum class ElemType { F16, BF16 };

// Where a call's rows live (src/backend.hpp's AttnArgs): dense [B, S, H, D]; a paged KV cache (k and v are
// [num_pages, page_size, Hkv, D], key j of sequence b in page block_table[b, j / page_size]); packed varlen batches
// (q, k, v, o are [1, total, H, D], sequence b's rows from cu_seqlens).
enum class Layout { Dense, Paged, Varlen };

struct FwdParams {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* o = nullptr;
  float* lse = nullptr;  // f32 [B, Hq, Sq] contiguous, or null
  // Strides in elements: batch, seq, head (head dim is contiguous).
  std::int64_t q_sb = 0, q_ss = 0, q_sh = 0;
  std::int64_t k_sb = 0, k_ss = 0, k_sh = 0;
  std::int64_t v_sb = 0, v_ss = 0, v_sh = 0;
  std::int64_t o_sb = 0, o_ss = 0, o_sh = 0;
  int batch = 0, seqlen_q = 0, seqlen_k = 0, heads_q = 0, heads_kv = 0, head_dim = 0;
  ElemType dtype = ElemType::BF16;
  float scale = 1.0f;       // softmax scale
  float scale_log2 = 1.0f;  // scale * log2(e): kernels use exp2
  bool causal = false;      // bottom-right aligned: row i sees keys j <= i + Sk - Sq
  void* stream = nullptr;   // cudaStream_t
  // cudaMemPool_t for the launch's own stream-ordered allocations (sm90's tile counter): the backend's pool, which
  // keeps its memory across synchronizations; null: the device's default pool.
  void* mem_pool = nullptr;
  int num_sms = 0;          // of the current device
  int device_cc = 0;        // compute capability, e.g. 90

  Layout layout = Layout::Dense;
  // Paged: k_sb / v_sb are the page strides, k_ss / v_ss the slot strides; seqlen_k is the capacity of a sequence
  // (pages_per_seq * page_size). Sequence b holds seqlens[b] + seqlen_new keys. Tables are device memory, never read
  // by the host: kernels clamp every index they take from them.
  const std::int32_t* block_table = nullptr;  // i32 [B, pages_per_seq], row stride block_table_sb
  std::int64_t block_table_sb = 0;
  const std::int32_t* seqlens = nullptr;      // i32 [B]: keys in the cache before this call
  int page_size = 0, num_pages = 0, pages_per_seq = 0;
  // The append: k_new / v_new [B, seqlen_new, Hkv, D] are written to positions seqlens[b] .. + seqlen_new - 1 first.
  const void* k_new = nullptr;
  const void* v_new = nullptr;
  std::int64_t kn_sb = 0, kn_ss = 0, kn_sh = 0;
  std::int64_t vn_sb = 0, vn_ss = 0, vn_sh = 0;
  int seqlen_new = 0;
  // Varlen: seqlen_q / seqlen_k are the maxima (they size the grid); lse is [Hq, total_q].
  const std::int32_t* cu_seqlens_q = nullptr;  // i32 [B + 1]
  const std::int32_t* cu_seqlens_k = nullptr;
  int total_q = 0, total_k = 0;

  // Variants (Options in attention.hpp; semantics in src/cpu_backend.cpp's RowRules): window bounds relative to the
  // bottom-right diagonal (row i sees keys i + Sk - Sq - window_left .. i + Sk - Sq + window_right; -1 unbounded),
  // softcap (0 off: score = softcap * tanh(scale * q.k / softcap)), ALiBi (score -= slope * |i + Sk - Sq - j|, slopes
  // f32 [Hq], or [B, Hq] with alibi_sb = Hq), sinks (f32 [Hq]: exp(sink) joins each row's denominator and the LSE).
  // Null pointers and -1 / 0 are off; a family that has not implemented a variant is refused before it is launched
  // (src/device.cpp's variant_support).
  int window_left = -1, window_right = -1;
  float softcap = 0.0f;
  const float* alibi_slopes = nullptr;
  int alibi_sb = 0;
  const float* sinks = nullptr;
  bool has_variant() const {
    return window_left >= 0 || window_right >= 0 || softcap > 0 || alibi_slopes != nullptr || sinks != nullptr;
  }

  // Scratch of *_fwd_workspace(p) bytes, 256-byte aligned, given by the caller (the backend allocates it
  // stream-ordered); null when that is 0.
  void* workspace = nullptr;
};

// Each kernel family (sm80, sm90) implements these two in its own launch file. `supports` returns "" when the
// family can run these params, else a one-line reason ("head_dim 96 not instantiated (64, 128, 256)").
// `launch` maps the runtime flags to template instantiations and launches on params.stream; it throws
// flashtile::Error(BackendFailure) on a launch error.
std::string sm80_fwd_supports(const FwdParams& p);
void sm80_fwd_launch(const FwdParams& p);
// Bytes of p.workspace the sm80 launch needs (its split-KV decode partials), 0 when it needs none.
std::size_t sm80_fwd_workspace(const FwdParams& p);
// Whether the sm80 launch takes its split-KV decode kernel (seqlen_q <= 16, GQA rows packed).
bool sm80_fwd_is_decode(const FwdParams& p);
std::string sm90_fwd_supports(const FwdParams& p);
// Whether the sm90 launch takes its split-KV decode kernel, and the bytes of p.workspace it needs then (0 otherwise).
bool sm90_fwd_is_decode(const FwdParams& p);
std::size_t sm90_fwd_workspace(const FwdParams& p);
// ctas (tests): > 0 caps a persistent grid at this many CTAs, < 0 launches one CTA per tile, 0 the table's choice.
void sm90_fwd_launch(const FwdParams& p, int ctas = 0);
// The kernel variant name for Result::kernel, e.g. "sm90_fwd<d128,bf16,causal>".
std::string sm80_fwd_name(const FwdParams& p);
std::string sm90_fwd_name(const FwdParams& p);
// Whether the sm90 launch is persistent (one CTA a SM looping over tiles); benches label the launch they time.
bool sm90_fwd_persistent(const FwdParams& p);

}  // namespace flashtile::cuda
