// Ring attention over NCCL: one rank per GPU, over a communicator the application passes in (ncclComm_t, which is
// `ncclComm*`: this header declares the struct and needs no nccl.h). flashtile/ring.hpp has the sharding, the
// helpers and the one-device simulation of the same algorithm.
//
// Built when the CUDA backend is, with nccl.h present at build time; libnccl.so.2 is loaded at the first call (the
// application's own when it already loaded one: a communicator must be used with the library that made it).
// Otherwise every function here throws Error(BackendUnavailable) with the reason (nccl_unavailable_reason()).
#pragma once

#include <flashtile/ring.hpp>

#include <array>
#include <string>

struct ncclComm;

namespace flashtile {

// NCCL_UNIQUE_ID_BYTES: the size of ncclUniqueId.
inline constexpr std::size_t kNcclUniqueIdBytes = 128;
using NcclUniqueId = std::array<char, kNcclUniqueIdBytes>;

struct NcclRing {
  ncclComm* comm = nullptr;  // one rank per GPU; rank and world come from the communicator
  Sharding sharding = Sharding::Contiguous;
};

// "" when this build has the NCCL transport and libnccl loads; otherwise why not.
std::string nccl_unavailable_reason();

// This rank's part of ring attention. Every rank calls it with the same shapes and options (NCCL cannot check that:
// a rank with other shapes makes the collective fail or hang). q, k, v, out [B, L, H, D] on the CUDA device of the
// communicator's rank, L = S / world (the rank's shard: shard_sequence), lse f32 [B, Hq, L]. Options as
// attention_forward's; options.cuda_stream is the compute stream (NULL: one of the call's own); the next K/V block
// travels on a communication stream of the call's own while the current one computes. The call returns when its
// work is done (its scratch is freed).
Result ring_attention_forward(const NcclRing& ring, const Tensor& q, const Tensor& k, const Tensor& v, Tensor& out,
                              Tensor* lse = nullptr, const Options& options = {});
// The backward, with the ring forward's out and lse: dq like q, dk and dv like k and v (this rank's shards).
Result ring_attention_backward(const NcclRing& ring, const Tensor& q, const Tensor& k, const Tensor& v,
                               const Tensor& out, const Tensor& lse, const Tensor& dout, Tensor& dq, Tensor& dk,
                               Tensor& dv, const Options& options = {});

// Communicators for applications without an NCCL set-up of their own (the Python layer broadcasts the id through a
// torch.distributed store): rank 0 makes the id, every rank passes it to nccl_comm_init with the CUDA device it runs
// on. nccl_comm_destroy frees what nccl_comm_init made.
NcclUniqueId nccl_unique_id();
ncclComm* nccl_comm_init(int world, int rank, const NcclUniqueId& id, const Device& device);
void nccl_comm_destroy(ncclComm* comm);

}  // namespace flashtile
