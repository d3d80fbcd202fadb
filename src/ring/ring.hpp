// Ring attention's one algorithm (ring.cpp), written once over a small transport interface with two transports: the
// one-device simulation (simulated.cpp) and NCCL (backends/cuda/ring_nccl.cpp). Internal; not installed.
//
// At step t rank r holds the K/V block of rank (r - t) mod N. Per step it runs attention_forward (with LSE) on its
// queries against that block, with the causal structure of the global positions (step_block), and merges the partial
// (O, LSE) exactly in f32. The backward replays the steps with the final O and LSE: attention_backward gives exact
// partial dq (summed in f32 over the steps) and partial dk/dv of the held block, which travel around the ring in f32
// accumulators with the block's K/V and arrive at their owner after N sends.
#pragma once

#include <flashtile/ring.hpp>

#include "backend.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace flashtile::detail {

// Two kinds of message: the K/V block for the next step, and (backward) the dK/dV accumulators of the held block.
enum class Channel { Kv = 0, Dkv = 1 };
inline constexpr std::size_t kChannels = 2;

// A rank's link to its ring: send to rank + 1, receive from rank - 1. Every rank posts the same sequence of messages.
class RingTransport {
 public:
  virtual ~RingTransport() = default;
  // Start sending `send` and receiving into `recv` (same shapes and dtypes, contiguous). Until wait(c) the caller
  // neither writes `send` nor reads `recv`. One message per channel in flight. Delivery writes the recv tensors'
  // memory (NCCL; the simulation copies).
  virtual void post(Channel c, const std::vector<Tensor>& send, const std::vector<Tensor*>& recv) = 0;
  virtual void wait(Channel c) = 0;
};

// The work of one step, in local rows. With chunks of equal length and disjoint global ranges, a (query chunk, key
// chunk) pair is entirely past (full), entirely future (skipped) or the same chunk (causal, Sq = Sk, where
// attention_forward's bottom-right causal mask is the global one). Zigzag (rank r holds chunks r and 2N-1-r, block
// from rank s holds s and 2N-1-s):
//   s == r: one causal call on everything: local row i sees local keys j <= i, which is chunk r's diagonal, none of
//           chunk 2N-1-r for chunk r's rows, and all of chunk r plus the diagonal of chunk 2N-1-r for the others;
//   s <  r: chunk s lies before both query chunks, chunk 2N-1-s after both: every query row, the first half of the
//           keys, full;
//   s >  r: both key chunks lie after chunk r and before chunk 2N-1-r: the second half of the query rows, every key,
//           full.
// Contiguous: s == r causal, s < r full, s > r skipped. Not causal: everything, full.
struct StepBlock {
  bool skip = false;
  std::int64_t q_begin = 0, q_len = 0, k_begin = 0, k_len = 0;
  bool causal = false;
};
StepBlock step_block(const RingLayout& layout, int src, std::int64_t local_len, bool causal);

// The ring's checks on one rank's call, after attention_forward's own (plan_attention): self-attention (q and k/v of
// one length), zigzag's even length, options the ring takes, a device with the merge kernels. `what` names the API.
void check_ring_call(const RingLayout& layout, const Tensor& q, const Tensor& k, const Options& options,
                     const char* what);

// The K/V blocks a rank holds in turn: its own (contiguous: itself or a copy), then two buffers that receive
// alternately, so that a block is never overwritten while it is being sent or read.
class KvBlocks {
 public:
  KvBlocks(const Tensor& k, const Tensor& v, int world, void* stream);
  void post(RingTransport& tr, int t);    // t + 1 < world: send the held block on, receive the next
  void finish(RingTransport& tr, int t);  // wait for it; it becomes the held block
  const Tensor& k() const { return k_[std::size_t(held_)]; }
  const Tensor& v() const { return v_[std::size_t(held_)]; }

 private:
  int world_;
  std::array<Tensor, 3> k_, v_;
  int held_ = 0;
};

// One rank of the ring, in the phases a driver interleaves with the transport: for each step t, post(t) starts the
// next block's transfer, compute(t) runs on the held one, finish(t) waits for the transfer. Then finalize().
class RingRank {
 public:
  RingRank(RingTransport& transport, const RingLayout& layout, const Tensor& k, const Tensor& v, const Options& options)
      : tr_(transport), layout_(layout), opt_(options), kv_(k, v, layout.world, options.cuda_stream) {}
  virtual ~RingRank() = default;
  int steps() const { return layout_.world; }
  void post(int t) { kv_.post(tr_, t); }
  virtual void compute(int t) = 0;
  void finish(int t) { kv_.finish(tr_, t); }
  virtual Result finalize() = 0;

 protected:
  StepBlock block(int t) const;  // the work of step t
  Result noted(Result r) const;  // the last call's Result, its note naming the ring

  RingTransport& tr_;
  RingLayout layout_;
  Options opt_;
  KvBlocks kv_;
  Result result_;
};

class RingForward final : public RingRank {
 public:
  RingForward(RingTransport& transport, const RingLayout& layout, const Tensor& q, const Tensor& k, const Tensor& v,
              Tensor& out, Tensor* lse, const Options& options);
  void compute(int t) override;
  Result finalize() override;

 private:
  Tensor q_, out_;
  Tensor o_acc_, lse_acc_, o_blk_, lse_blk_;  // f32 O and LSE; one step's O (q's dtype) and LSE
};

// The backward: out and lse are the ring forward's final ones.
class RingBackward final : public RingRank {
 public:
  RingBackward(RingTransport& transport, const RingLayout& layout, const Tensor& q, const Tensor& k, const Tensor& v,
               const Tensor& out, const Tensor& lse, const Tensor& dout, Tensor& dq, Tensor& dk, Tensor& dv,
               const Options& options);
  void compute(int t) override;
  Result finalize() override;

 private:
  void take_incoming();  // wait for the dK/dV accumulators and make them the held block's

  Tensor q_, out_, lse_, dout_, dq_, dk_, dv_;
  Tensor dq_acc_, dk_acc_, dv_acc_, dk_in_, dv_in_;  // f32; the accumulators of the held block and the incoming ones
  Tensor dq_blk_, dk_blk_, dv_blk_, lse_rows_;       // one step's gradients (dtype of q), its rows of lse
};

// The rows [begin, begin + len) of a [B, L, H, D] tensor, and of an [B, H, L] LSE.
Tensor seq_rows(const Tensor& t, std::int64_t begin, std::int64_t len);
Tensor lse_rows(const Tensor& t, std::int64_t begin, std::int64_t len);
// One elementwise op of the ring on t's device (backend.hpp, RingOpArgs), on `stream` (CUDA) or synchronously.
void ring_op(RingOpKind kind, const Tensor& dst, const Tensor& src, const Tensor* dst_lse = nullptr,
             const Tensor* src_lse = nullptr, void* stream = nullptr);
bool is_contiguous(const Tensor& t);

}  // namespace flashtile::detail
