// Tile shapes and schedule of the sm90 forward kernel, per head dim and causality: the one place these numbers live.
//
// One CTA = 1 producer warpgroup (TMA) + kConsumers consumer warpgroups (wgmma), each consumer owning 64 query rows,
// so kBlockM = 64 * kConsumers. K and V tiles of kBlockN keys stream through kStages-deep shared-memory rings.
// Shared memory: Q (kBlockM x D) + kStages x (K + V) (kBlockN x D each), 16-bit, must stay under 227 KB.
// kSchedule: 0 = one block at a time (S = Q·Kᵀ, softmax, O += P·V); 1 = S(n) and P(n-1)·V(n-1) in flight together,
// softmax(n) overlapping the P·V wgmma; 2 = 1 plus pingpong (two consumers take turns issuing wgmmas).
// FT_SM90_SCHEDULE / FT_SM90_SHAPES override these for experiments (tests/cuda/results/ has the measurements).
#pragma once

namespace flashtile::cuda {

struct Sm90Config {
  int consumers, block_n, stages, schedule;
};

constexpr Sm90Config sm90_config(int d, bool causal) {
#if defined(FT_SM90_SHAPES) && FT_SM90_SHAPES == 0
  Sm90Config c = d == 64    ? Sm90Config{2, 128, 4, 2}
                 : d == 128 ? Sm90Config{2, 128, 2, causal ? 1 : 0}
                            : Sm90Config{2, 64, 2, 0};
#else
  // Chosen from run 2 (tests/cuda/results/NOTES.md): each entry is the fastest variant measured for that case.
  Sm90Config c = d == 64    ? Sm90Config{3, 128, 4, 1}
                 : d == 128 ? (causal ? Sm90Config{2, 128, 2, 1} : Sm90Config{2, 176, 2, 1})
                            : (causal ? Sm90Config{2, 80, 2, 1} : Sm90Config{2, 80, 2, 0});
#endif
#ifdef FT_SM90_SCHEDULE
  c.schedule = FT_SM90_SCHEDULE;
#endif
  return c;
}

template <int D, bool kCausal>
struct Sm90Shape {
  static constexpr Sm90Config kCfg = sm90_config(D, kCausal);
  static constexpr int kHeadDim = D;
  static constexpr int kConsumers = kCfg.consumers;
  static constexpr int kBlockN = kCfg.block_n;
  static constexpr int kStages = kCfg.stages;
  static constexpr int kBlockM = 64 * kConsumers;
  static constexpr int kThreads = 128 * (kConsumers + 1);
  static constexpr bool kOverlap = kCfg.schedule >= 1;
  static constexpr bool kPingpong = kCfg.schedule >= 2 && kConsumers == 2;
  static constexpr int kProducerRegs = 24;                           // the producer only issues TMA
  static constexpr int kConsumerRegs = kConsumers == 2 ? 240 : 160;  // 24*128 + regs*128*consumers <= 64K
  static constexpr int kSmemBytes =
      2 * (kBlockM * D + 2 * kStages * kBlockN * D) + 1024 /*barriers*/ + 1024 /*alignment slack*/;
  static_assert(kSmemBytes <= 227 * 1024, "sm90 tiles exceed shared memory");
  static_assert(kBlockM <= 256 && kBlockN <= 256 && kBlockN % 16 == 0, "TMA box / wgmma shape limits");
};

}  // namespace flashtile::cuda
