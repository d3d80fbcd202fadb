// Tile traits of the sm80 forward and backward families: every number of them, defined once. Plain C++ (host and
// device).
#pragma once

#include "attn/bwd_params.hpp"
#include "attn/fwd_params.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>

namespace flashtile::cuda::sm80 {

inline constexpr int kHeadDims[] = {64, 128, 256};  // instantiated head dims
inline constexpr int kMaxGridYZ = 65535;            // heads_q on grid.y, batch on grid.z
inline constexpr int kMinCc = 80;

// The sm80 forward's tiles, one row per head dim and causality (Traits reads them). A CTA is 4 warps of `rows` query
// rows each (16 or 32: one or two mma M tiles a K/V fragment feeds) with K/V double-buffered in shared memory:
// (4 rows + 4 block_n) * d * 2 bytes, inside every target's opt-in limit, the smallest the A10 / L4 / L40S / RTX
// 30-40 class's (sm_86, sm_89: 99 KiB; sm_80 163 KiB, sm_90 227 KiB), so one table serves every arch. Measured on the
// H200 alone (the sm80 path forced): a row of its own for sm_86/89 belongs here once one is measured there.
struct Sm80FwdShape {
  int d;
  bool causal;
  int rows;        // query rows a warp (a CTA: 4 x rows)
  int block_n;     // keys a K/V tile
  bool q_in_regs;  // the warp's Q fragments in registers for the whole key loop (else re-read from shared memory)
};
inline constexpr Sm80FwdShape kSm80FwdShapes[] = {
    // d  causal rows block_n Q in registers      (bench/results/2026-12-04_h200_sm80_rows32: the shapes tried)
    // d64: 32 rows a warp halve the K/V fragments read a MMA (1.02-1.25x the 16-row kernel, 1.01-1.17x FA2); 64 keys
    // with Q in registers beat 128 keys with Q re-read from shared memory (0.95-1.0x FA2).
    {64, false, 32, 64, true},
    {64, true, 32, 64, true},
    // d128: 32 rows leave no registers for Q (the O accumulator is 128 of them): re-read each K tile. 64 keys
    // (0.91-1.01x FA2; causal 0.96-1.05x) beat 32 (0.86-0.99x) and 48 (even) though ptxas spills 48-64 bytes, and 16
    // rows with Q in registers (causal 0.92-1.01x).
    {128, false, 32, 64, false},
    {128, true, 32, 64, false},
    // d256: 16 rows and 32 keys to fit 99 KiB (sm_86), Q from shared memory (the register budget).
    {256, false, 16, 32, false},
    {256, true, 16, 32, false},
};
inline constexpr std::size_t kSm80SmemLimitSm86 = 99 * 1024;  // the smallest opt-in limit of the sm80 path's targets

constexpr Sm80FwdShape sm80_fwd_shape(int d, bool causal) {
  for (const Sm80FwdShape& s : kSm80FwdShapes)
    if (s.d == d && s.causal == causal) return s;
  return {};
}

template <int D, bool Causal = false>
struct Traits {
  static constexpr Sm80FwdShape kShape = sm80_fwd_shape(D, Causal);
  static_assert(kShape.d == D, "no row of kSm80FwdShapes for this head dim and causality");
  static constexpr int kWarps = 4;
  static constexpr int kThreads = kWarps * 32;
  static constexpr int kRows = kShape.rows;  // query rows a warp: one or two mma M tiles
  static constexpr int kBlockM = kWarps * kRows;  // query rows per CTA
  static constexpr int kBlockN = kShape.block_n;
  static constexpr int kStages = 2;  // K/V double buffering (the kernel's waits assume two)
  static constexpr bool kQInRegs = kShape.q_in_regs;
  static constexpr int kChunks = D / 8;  // 16-byte chunks per row
  static constexpr std::size_t kSmemBytes = std::size_t(kBlockM + 2 * kStages * kBlockN) * D * 2;
  static_assert(kSmemBytes <= kSm80SmemLimitSm86, "sm80 tiles past sm_86's shared memory");
};

// The cp.async / 4-byte-store fast path needs every pointer 16-byte aligned and every stride a multiple of 8
// elements; other views take an element-wise load/store path in the same kernel.
inline bool aligned16(std::initializer_list<const void*> ptrs, std::initializer_list<std::int64_t> strides) {
  for (std::int64_t s : strides)
    if (s % 8 != 0) return false;
  for (const void* x : ptrs)
    if (reinterpret_cast<std::uintptr_t>(x) % 16 != 0) return false;
  return true;
}
inline bool aligned16(const FwdParams& p) {
  return aligned16({p.q, p.k, p.v, p.o}, {p.q_sb, p.q_ss, p.q_sh, p.k_sb, p.k_ss, p.k_sh, p.v_sb, p.v_ss, p.v_sh,
                                          p.o_sb, p.o_ss, p.o_sh});
}

// ---- variants (sm80_mods.cuh) ---------------------------------------------------------------------------------
// A window as offsets from a row's bottom-right diagonal: row i sees keys i + diag - left .. i + diag + right
// (diag = Sk - Sq), causal folded in as right <= 0. kUnbounded stands for a side without a bound: past every key of a
// sequence that fits memory, and small enough that row and key offsets plus it stay inside int32.
inline constexpr int kUnbounded = 1 << 30;
struct Window {
  int left, right;
};
constexpr Window window_of(const FwdParams& p) {
  const int left = p.window_left >= 0 && p.window_left < kUnbounded ? p.window_left : kUnbounded;
  int right = p.window_right >= 0 && p.window_right < kUnbounded ? p.window_right : kUnbounded;
  if (p.causal) right = 0;  // window_right >= 0 always: causal is the tighter bound
  return {left, right};
}

// ---- split-KV decode (sm80_decode.cuh) ------------------------------------------------------------------------
// Dense or paged calls with at most kDecodeMaxSq query rows: a CTA takes one (batch, kv head) and a share of its keys,
// its rows the group's query heads x query rows packed together (16 a warp, up to kDecodeRows), so each K/V tile is
// read once for the whole group. Partials (O / l and the LSE in log2 units, f32) go to the workspace and a combine
// kernel merges them exactly.
inline constexpr int kDecodeMaxSq = 16;
inline constexpr int kDecodeBlockN = 32;  // keys per tile: small tiles keep a one-warp CTA near 36 KiB (d128)
inline constexpr int kDecodeStages = 2;
inline constexpr int kDecodeMaxWarps = 4;
inline constexpr int kDecodeRows = 16 * kDecodeMaxWarps;  // packed rows per CTA
inline constexpr int kDecodeMaxSplits = 128;
inline constexpr int kDecodeMinTiles = 2;                  // per split: amortizes the Q load and the partial's write
inline constexpr std::size_t kDecodeSmemPerSm = 200 << 10;  // what the split count assumes an SM holds (H100/H200 227)
inline constexpr int kCombineRows = 4;                     // rows per combine CTA (a warp each)

inline std::size_t decode_smem(int d, int warps) {
  return std::size_t(2 * kDecodeStages * kDecodeBlockN + 16 * warps) * std::size_t(d) * 2;
}

struct DecodePlan {
  int group = 0, rows = 0;             // query heads per kv head; packed rows group * seqlen_q
  int warps = 0, row_blocks = 0, splits = 0;
  std::int64_t out_rows = 0;           // batch * heads_q * seqlen_q: one partial (O, LSE) per split each
  std::size_t o_part_bytes = 0, bytes = 0;  // the workspace: O partials, then LSE partials
};

inline DecodePlan decode_plan(const FwdParams& p) {
  DecodePlan d;
  d.group = p.heads_q / (p.heads_kv > 0 ? p.heads_kv : 1);
  d.rows = d.group * p.seqlen_q;
  d.row_blocks = (d.rows + kDecodeRows - 1) / kDecodeRows;
  d.warps = d.rows >= kDecodeRows ? kDecodeMaxWarps : (d.rows + 15) / 16;
  if (d.warps < 1) d.warps = 1;
  // Enough CTAs to fill every SM a few times over, no fewer than kDecodeMinTiles tiles a split.
  const std::int64_t per_sm = std::max<std::int64_t>(1, std::min<std::int64_t>(8, std::int64_t(kDecodeSmemPerSm / decode_smem(p.head_dim, d.warps))));
  const std::int64_t base = std::max<std::int64_t>(1, std::int64_t(p.batch) * p.heads_kv * d.row_blocks);
  // Keys the rows can see: a left window bound leaves at most Sq + left of them (the right side ends at Sk - 1 for
  // the last row), in one more tile than they fill when the window does not start on a tile.
  const std::int64_t left = window_of(p).left;
  const std::int64_t tiles =
      left < kUnbounded && p.seqlen_q + left < p.seqlen_k
          ? (p.seqlen_q + left + kDecodeBlockN - 1) / kDecodeBlockN + 1
          : (std::int64_t(p.seqlen_k) + kDecodeBlockN - 1) / kDecodeBlockN;
  std::int64_t splits = (std::int64_t(p.num_sms) * per_sm + base - 1) / base;
  splits = std::min<std::int64_t>({splits, (tiles + kDecodeMinTiles - 1) / kDecodeMinTiles, kDecodeMaxSplits});
  d.splits = int(std::max<std::int64_t>(1, splits));
  d.out_rows = std::int64_t(p.batch) * p.heads_q * p.seqlen_q;
  d.o_part_bytes = (std::size_t(d.splits) * std::size_t(d.out_rows) * std::size_t(p.head_dim) * 4 + 255) / 256 * 256;
  d.bytes = d.o_part_bytes + std::size_t(d.splits) * std::size_t(d.out_rows) * 4;
  return d;
}

// Whether a call takes the split-KV decode path (the grid's y is heads_kv x row blocks).
inline bool use_decode(const FwdParams& p) {
  return p.layout != Layout::Varlen && p.seqlen_q >= 1 && p.seqlen_q <= kDecodeMaxSq &&
         std::int64_t(p.heads_kv) * decode_plan(p).row_blocks <= kMaxGridYZ;
}

// ---- backward ----------------------------------------------------------------------------------------------------
inline constexpr int kBwdRowPad = 64;  // scratch rows padded to the largest query block: every block's rows exist

// Main kernel (bwd_kernel): a CTA owns kBlockN keys of one kv head and walks the query blocks of its GQA group. The
// warps split the keys into groups of 16 (an mma M); kSplit warps share a group, each taking a share of the query rows
// in S/dP and of the head-dim columns in dK/dV. With kSplit == 1 (kOwn) a warp's Sᵀ covers every query row of the
// block, so Pᵀ and dSᵀ feed dV and dK from registers; otherwise they meet in shared memory. dQ goes through dSᵀ in
// shared memory either way (it sums over all keys of the block).
// Deterministic dQ (bwd_dq_kernel): a CTA owns kDqBlockM query rows (16 a warp) and walks the key blocks.
template <int D>
struct BwdTraits {
  // d=128 takes 8 warps that split the keys' queries and columns in two: a warp owning 16 keys x 128 columns of dK
  // and dV (128 f32 registers) plus its 16 x 64 Sᵀ and dPᵀ spilled 340 bytes. d=256 halves both blocks so that dK,
  // dV and the tiles fit 4 warps and 89 KiB, under sm_86's 99 KiB.
  static constexpr int kWarps = D == 128 ? 8 : 4;
  static constexpr int kThreads = kWarps * 32;
  static constexpr int kBlockN = D <= 128 ? 64 : 32;  // keys per CTA
  static constexpr int kBlockM = D <= 128 ? 64 : 32;  // query rows per step
  static constexpr int kKeyGroups = kBlockN / 16;
  static constexpr int kSplit = kWarps / kKeyGroups;
  static constexpr bool kOwn = kSplit == 1;
  static constexpr int kQStages = 2;                      // Q double-buffered; dO single (loaded once it is free)
  static constexpr int kDsCols = kBlockM < 64 ? 64 : kBlockM;  // a shared tile's rows are >= 64 columns (swizzle)
  static constexpr int kDsTiles = kOwn ? 1 : 2;           // dSᵀ, plus Pᵀ when split
  static constexpr int kRowGroups = kBlockM / 16;         // dQ: warps over 16-row groups x head-dim parts
  static constexpr int kDqSplit = kWarps / kRowGroups;
  static constexpr std::size_t kVecBytes = std::size_t(kQStages + 1) * kBlockM * 4;  // lse2 per Q stage, delta
  static constexpr std::size_t kSmemBytes =
      std::size_t((kQStages + 1) * kBlockM * D + 2 * kBlockN * D + kDsTiles * kBlockN * kDsCols) * 2 +
      (kVecBytes + 1023) / 1024 * 1024;
  // Deterministic dQ kernel: 16 query rows a warp; S and dP of 16 x kDqBlockN beside dQ's 16 x D accumulators.
  static constexpr int kDqWarps = 4;
  static constexpr int kDqThreads = kDqWarps * 32;
  static constexpr int kDqBlockM = kDqWarps * 16;
  static constexpr int kDqBlockN = D <= 64 ? 64 : D <= 128 ? 32 : 16;  // d=256: two K/V stages in 96 KiB
  static constexpr int kDqStages = 2;
  static constexpr bool kDqInRegs = D <= 128;  // Q and dO fragments in registers (d=256 re-reads them)
  static constexpr std::size_t kDqSmemBytes = std::size_t(2 * kDqBlockM + 2 * kDqStages * kDqBlockN) * D * 2;
  static_assert(kWarps % kKeyGroups == 0 && kWarps % kRowGroups == 0 && kBlockM % (16 * kSplit) == 0);
};

// The backward's cp.async / 32-bit-store path: q, k, v, dO, dK, dV 16-byte aligned with strides of 8 elements (o and
// dq are read and written element-wise by the shared passes).
inline bool aligned16(const BwdParams& p) {
  const FwdParams& f = p.f;
  return aligned16({f.q, f.k, f.v, p.dout, p.dk, p.dv},
                   {f.q_sb, f.q_ss, f.q_sh, f.k_sb, f.k_ss, f.k_sh, f.v_sb, f.v_ss, f.v_sh, p.do_sb, p.do_ss, p.do_sh,
                    p.dk_sb, p.dk_ss, p.dk_sh, p.dv_sb, p.dv_ss, p.dv_sh});
}

}  // namespace flashtile::cuda::sm80
