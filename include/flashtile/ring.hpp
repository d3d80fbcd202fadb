// Ring attention (context parallelism): the sequence is split over N ranks; K/V blocks travel around the ring while
// each rank runs attention_forward on the block it holds, and the partial results merge exactly through their
// log-sum-exps. The backward passes dK/dV around the ring the same way. This header is backend-agnostic: the
// sharding helpers and the one-device simulation (N ranks in one process, the same algorithm with device copies for
// messages). Over NCCL, one rank per GPU: flashtile/ring_nccl.hpp.
#pragma once

#include <flashtile/attention.hpp>
#include <flashtile/tensor.hpp>

#include <cstdint>
#include <string_view>
#include <vector>

namespace flashtile {

// How a sequence of S tokens is split over N ranks, in chunks of equal length:
//  Contiguous: rank r holds tokens [r·S/N, (r+1)·S/N) (S divisible by N);
//  Zigzag:     the sequence is cut into 2N chunks of S/(2N) and rank r holds chunks r and 2N-1-r, in that order
//              (S divisible by 2N), so that every rank does the same causal work.
enum class Sharding { Contiguous, Zigzag };
std::string_view to_string(Sharding s);
Sharding parse_sharding(std::string_view s);  // "contiguous" or "zigzag"; Error(InvalidArgument) otherwise

struct RingLayout {
  int world = 1;  // N, the number of ranks
  int rank = 0;
  Sharding sharding = Sharding::Contiguous;
};

// The global position of each of a rank's `local_len` rows (local_len = S/N). Error(InvalidArgument) when the layout
// is out of range or zigzag's local_len is odd.
std::vector<std::int64_t> ring_positions(const RingLayout& layout, std::int64_t local_len);

// Copy rank layout.rank's rows of a global [B, S, H, D] tensor into `local` [B, S/N, H, D] (same device and dtype;
// any strides with a contiguous head dim), and back. Checked before anything is written.
void shard_sequence(Tensor& local, const Tensor& global, const RingLayout& layout);
void unshard_sequence(Tensor& global, const Tensor& local, const RingLayout& layout);

// The ring on one device: rank r's tensors are element r of each vector (N = q.size() ranks, the same shapes on every
// rank: q, k, v, out [B, L, H, D] with L = S/N and one L for q and k/v: self-attention; lse f32 [B, Hq, L]). Options
// as attention_forward's: scale, causal (by global position), path, deterministic; the variants, workspace and a
// Vulkan command buffer are refused. The device must have the ring's merge kernels (CPU, CUDA; Vulkan refuses with
// the reason). The Result is the last attention call's, with Result::note naming the ring.
Result ring_attention_forward_simulated(Sharding sharding, const std::vector<Tensor>& q, const std::vector<Tensor>& k,
                                        const std::vector<Tensor>& v, std::vector<Tensor>& out,
                                        std::vector<Tensor>* lse = nullptr, const Options& options = {});
// The backward: out and lse as the ring forward wrote them, dout like out; writes dq, dk, dv (shaped as q, k, v).
Result ring_attention_backward_simulated(Sharding sharding, const std::vector<Tensor>& q, const std::vector<Tensor>& k,
                                         const std::vector<Tensor>& v, const std::vector<Tensor>& out,
                                         const std::vector<Tensor>& lse, const std::vector<Tensor>& dout,
                                         std::vector<Tensor>& dq, std::vector<Tensor>& dk, std::vector<Tensor>& dv,
                                         const Options& options = {});

}  // namespace flashtile
