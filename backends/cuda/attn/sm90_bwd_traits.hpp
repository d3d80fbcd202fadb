// Tile shapes of the sm90 backward kernel (sm90_bwd.cuh): the one place these numbers live.
//
// One CTA = 1 producer warpgroup (a TMA thread, a dQ writer thread) + `consumers` consumer warpgroups (wgmma) on one
// key block of block_n keys of one (batch, kv head). Query blocks of block_m rows (every query head of the GQA group)
// stream through a stages-deep ring. A consumer's wgmma tiles have 64 rows (keys) each, so the consumers share a key
// block either by keys (each owns 64 of them: block_n = 64 · consumers, dK/dV of all head-dim columns) or by head dim
// (all own the same 64 keys, each the dK/dV of D / consumers columns, S and dP computed by each): d256's dK and dV of
// 64 keys x 256 columns would need 256 registers a thread.
#pragma once

#include "attn/bwd_params.hpp"
#include "attn/sm90_traits.hpp"

namespace flashtile::cuda {

enum class Sm90BwdSplit : int { keys, dims };

struct Sm90BwdKernel {
  int d;
  bool causal;
  int block_m, block_n, consumers;
  Sm90BwdSplit split;
  int stages;  // Q / dO / lse2 / delta ring depth
};

inline constexpr Sm90BwdSplit kSm90BwdKeys = Sm90BwdSplit::keys, kSm90BwdDims = Sm90BwdSplit::dims;

inline constexpr Sm90BwdKernel kSm90BwdKernels[] = {
    // d  causal  M   N  cons  split        stages
    {64, false, 64, 128, 2, kSm90BwdKeys, 3},
    {64, true, 64, 128, 2, kSm90BwdKeys, 3},
    {128, false, 64, 128, 2, kSm90BwdKeys, 2},
    {128, true, 64, 128, 2, kSm90BwdKeys, 2},
    // d256: shared memory allows one stage (K, V, Q, dO of 256 columns, dS and the f32 dQ staging: 209 KiB).
    {256, false, 64, 64, 2, kSm90BwdDims, 1},
    {256, true, 64, 64, 2, kSm90BwdDims, 1},
};

constexpr Sm90BwdKernel sm90_bwd_kernel(int d, bool causal) {
  for (const Sm90BwdKernel& k : kSm90BwdKernels)
    if (k.d == d && k.causal == causal) return k;
  return {};
}

// Named barrier (bar.sync id; 0 is __syncthreads'): the consumers' dS tile is complete.
enum Sm90BwdBar : int { kSm90BwdBarDs = 1 };

template <int D, bool kCausal>
struct Sm90BwdShape {
  static constexpr Sm90BwdKernel kK = sm90_bwd_kernel(D, kCausal);
  static_assert(kK.d == D, "no row of kSm90BwdKernels for this kernel");
  static constexpr int kHeadDim = D;
  static constexpr int kBlockM = kK.block_m, kBlockN = kK.block_n, kConsumers = kK.consumers, kStages = kK.stages;
  static constexpr bool kSplitKeys = kK.split == Sm90BwdSplit::keys;
  static constexpr int kKeysPerWg = kSplitKeys ? kBlockN / kConsumers : kBlockN;  // rows of its S^T, dK, dV
  static constexpr int kDimsPerWg = kSplitKeys ? D : D / kConsumers;             // columns of its dK, dV
  static constexpr int kDqCols = D / kConsumers;                                 // columns of its dQ
  static constexpr int kThreads = kSm90WgThreads * (kConsumers + 1);
  static constexpr int kElemBytes = 2;
  static constexpr int kSmemBytes = kElemBytes * (2 * kBlockN * D + 2 * kStages * kBlockM * D + 2 * kBlockM * kBlockN) +
                                    4 * (kBlockM * D + 2 * kStages * kBlockM) + 1024 /*barriers*/ +
                                    1024 /*alignment slack*/;
  static_assert(kSmemBytes <= kSm90SmemLimit, "sm90 backward tiles exceed shared memory");
  static_assert(kKeysPerWg == kSm90Rows && kBlockM == kSm90Rows, "wgmma tiles: 64 keys (S^T, dK, dV), 64 rows (dQ)");
  static_assert(kDqCols % 16 == 0 && (kDqCols % 64 == 0 || 64 % kDqCols == 0), "dQ columns: a wgmma width in a block");
  static_assert(kBlockN % 64 == 0 && kBlockN <= 256, "dS tile columns and TMA boxes");
  static constexpr int kProducerRegs = 24;  // TMA issue and the dQ writer only
  static constexpr int kEntryRegs = 65536 / kThreads / 8 * 8;
  static constexpr int kConsumerRegs =
      std::min(240, (kEntryRegs * kThreads - kProducerRegs * kSm90WgThreads) / (kSm90WgThreads * kConsumers) / 8 * 8);
  // Query rows the scratch rows are padded to: a query block's lse2, delta and dQ rows never leave their (batch, head).
  static constexpr int kRowPad = kBlockM;
};

// Every backward kernel pads the scratch rows the same way (sm90_bwd_workspace is shape-independent).
inline constexpr int kSm90BwdRowPad = kSm90Rows;

// Bytes of the deterministic launches' counters past the shared scratch: one int per query block of each (b, head).
inline std::size_t sm90_bwd_sem_bytes(const BwdParams& p) {
  const std::size_t m_blocks = (static_cast<std::size_t>(p.f.seqlen_q) + kSm90BwdRowPad - 1) / kSm90BwdRowPad;
  return static_cast<std::size_t>(p.f.batch) * static_cast<std::size_t>(p.f.heads_q) * m_blocks * sizeof(int);
}

}  // namespace flashtile::cuda
