// attention_forward: exact softmax(Q·Kᵀ·scale)·V, tiled, never materializing the score matrix.
#pragma once

#include <flashtile/tensor.hpp>
#include <flashtile/types.hpp>

#include <cstddef>
#include <optional>
#include <string>

namespace flashtile {

struct Options {
  std::optional<float> scale;      // default 1/sqrt(head_dim)
  bool causal = false;             // bottom-right aligned when Sq != Sk: row i sees keys j <= i + Sk - Sq
  std::optional<Path> path;        // force one kernel path; otherwise the device picks its fastest that fits
  void* cuda_stream = nullptr;     // cudaStream_t: run asynchronously on the caller's stream
  void* vk_command_buffer = nullptr;  // VkCommandBuffer in the recording state: record only, the caller submits
  // A permission, off by default (cf. PyTorch's allow_fp16_reduced_precision_reduction): paths may accumulate O in
  // f16 where that is faster. Today only vulkan_coopmat2 does, for f16 inputs (as llama.cpp's coopmat2 shader does);
  // Result::reduced_precision says when it happened. Its error bound is looser (README: reduced-precision
  // accumulation), and O cannot overflow while |v| < 32. Every other path ignores it.
  bool allow_reduced_precision_accumulation = false;
  // Variants, with FlashAttention's semantics. Any combination; each composes with GQA, Sq != Sk and causal.
  // Sliding window: row i sees keys j with i + Sk - Sq - window_left <= j <= i + Sk - Sq + window_right; -1 is
  // unbounded on that side (causal is window_right = 0).
  std::int64_t window_left = -1, window_right = -1;
  float softcap = 0.0f;                  // > 0: each score (scale applied) becomes softcap · tanh(score / softcap)
  const Tensor* alibi_slopes = nullptr;  // f32 [Hq] or [B, Hq]: score -= slope · |i + Sk - Sq - j| (after softcap)
  const Tensor* sinks = nullptr;         // f32 [Hq]: a logit per head that joins every row's softmax denominator
                                         // (and its LSE) and carries no value
  // Backward only. dq, dk and dv bit-identical run to run on one device: no float atomics whose order varies
  // (docs/PERFORMANCE.md says what it costs on each path). The CPU reference is always deterministic.
  bool deterministic = false;
  // Backward only. Scratch for the call (the f32 dQ accumulator and row statistics): a contiguous tensor on the
  // call's device of at least Result::workspace_bytes bytes (from plan_attention_backward), any dtype, overlapping no
  // other argument. Null: the device's own stream-ordered pool (CUDA: cudaMallocAsync on the call's stream). Either
  // way a call allocates nothing synchronously and never waits on the host, so it can be captured in a CUDA graph.
  const Tensor* workspace = nullptr;
  // Backward only, optional: f32 [Hq], contiguous, on the call's device, overwritten with ∂loss/∂sinks (needs sinks;
  // overlaps no other argument). With D = rowsum(dout·out) and the LSE L (which includes the sink),
  // dsinks[h] = -Σ_{b,i} exp(sinks[h] - L[b,h,i]) · D[b,h,i]; dq, dk and dv do not depend on it.
  Tensor* dsinks = nullptr;
};

struct Result {
  Backend backend = Backend::Cpu;
  Path path = Path::CpuReference;
  std::string kernel;    // the kernel or shader variant, e.g. "sm90_fwd<d128,bf16,causal>"
  std::string note;      // why faster paths were passed over, one line each; empty when the fastest ran
  bool asynchronous = false;  // true when work was queued on the caller's stream or command buffer
  bool reduced_precision = false;  // the kernel accumulated O in f16 (Options::allow_reduced_precision_accumulation)
  std::size_t workspace_bytes = 0;  // backward: the scratch the path needs, O(B·H·S·D), never O(S²)
};

// q: [B, Sq, Hq, D], k and v: [B, Sk, Hkv, D], out: [B, Sq, Hq, D] (dtype of q), lse (optional): f32 [B, Hq, Sq]
// contiguous, natural log. Hq must be a multiple of Hkv (GQA/MQA). Rows with no visible key give 0 and -inf.
// Asking for lse can pick another kernel (Result::kernel): cuda_sm90 at head dim 64 sums the softmax's denominator
// on the tensor cores from 16-bit probabilities when no lse is asked for, and in f32 when one is (a few % slower).
// All checks run before any work; a rejected call throws Error and writes nothing.
Result attention_forward(const Tensor& q, const Tensor& k, const Tensor& v, Tensor& out, Tensor* lse = nullptr,
                         const Options& options = {});

// The path a call with these tensors and options would take, with the reasons for passing over faster ones,
// without running anything. Throws the same errors attention_forward would.
Result plan_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out, const Tensor* lse,
                      const Options& options = {});

// plan_attention, then build what that path needs so the first attention_forward of this configuration does not:
// Vulkan compiles a pipeline per variant on first use, which took ~4 s on the H200's driver without its shader cache
// (the GPU idles meanwhile and its clock drops). Runs nothing and writes nothing. May run on a loader thread while
// other threads compute on the same device: Vulkan builds outside the device's lock. CPU and CUDA have nothing to
// build (CUDA loads a kernel's module lazily on its first launch: milliseconds).
Result prepare_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out, const Tensor* lse,
                         const Options& options = {});

// The gradients of attention_forward: given its inputs, its output `out` and its `lse` (both as the forward wrote
// them, with the same options), and dout = ∂loss/∂out, write dq = ∂loss/∂q, dk and dv. The backward recomputes the
// attention matrix tile by tile from q, k and lse instead of storing it. dout and dq are shaped like q, dk and dv
// like k and v (any strides with a contiguous head dim; dtype of q); with GQA, dk and dv sum over the query heads of a
// group. Rows that saw no key (lse = -inf) give zero gradients. dq, dk and dv may not overlap any input, each other
// or the workspace. All checks run before any work; a rejected call throws Error and writes nothing.
Result attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out, const Tensor& lse,
                          const Tensor& dout, Tensor& dq, Tensor& dk, Tensor& dv, const Options& options = {});

// The path attention_backward would take, its workspace_bytes and the reasons for passing over faster paths,
// without running anything. Throws the same errors attention_backward would.
Result plan_attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                               const Tensor& lse, const Tensor& dout, const Tensor& dq, const Tensor& dk,
                               const Tensor& dv, const Options& options = {});

}  // namespace flashtile
