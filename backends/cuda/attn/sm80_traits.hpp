// Tile traits of the sm80 forward family: every number of it, defined once. Plain C++ (host and device).
#pragma once

#include "attn/fwd_params.hpp"

#include <cstddef>
#include <cstdint>

namespace flashtile::cuda::sm80 {

inline constexpr int kHeadDims[] = {64, 128, 256};  // instantiated head dims
inline constexpr int kMaxGridYZ = 65535;            // heads_q on grid.y, batch on grid.z
inline constexpr int kMinCc = 80;

template <int D>
struct Traits {
  static constexpr int kWarps = 4;
  static constexpr int kThreads = kWarps * 32;
  static constexpr int kBlockM = kWarps * 16;         // query rows per CTA (16 per warp: the mma M)
  static constexpr int kBlockN = D <= 128 ? 64 : 32;  // keys per K/V tile; d=256 halves it to fit 99 KiB (sm_86)
  static constexpr int kStages = 2;                   // K/V double buffering
  static constexpr bool kQInRegs = D <= 128;          // d=256 re-reads Q fragments from smem (register budget)
  static constexpr int kChunks = D / 8;               // 16-byte chunks per row
  static constexpr std::size_t kSmemBytes = std::size_t(kBlockM + 2 * kStages * kBlockN) * D * 2;
};

// The cp.async / 4-byte-store fast path needs every pointer 16-byte aligned and every stride a multiple of 8
// elements; other views take an element-wise load/store path in the same kernel.
inline bool aligned16(const FwdParams& p) {
  auto ptr_ok = [](const void* x) { return reinterpret_cast<std::uintptr_t>(x) % 16 == 0; };
  const std::int64_t strides[] = {p.q_sb, p.q_ss, p.q_sh, p.k_sb, p.k_ss, p.k_sh,
                                  p.v_sb, p.v_ss, p.v_sh, p.o_sb, p.o_ss, p.o_sh};
  for (std::int64_t s : strides)
    if (s % 8 != 0) return false;
  return ptr_ok(p.q) && ptr_ok(p.k) && ptr_ok(p.v) && ptr_ok(p.o);
}

}  // namespace flashtile::cuda::sm80
