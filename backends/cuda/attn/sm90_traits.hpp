// Tile shapes and schedule of the sm90 forward kernel: the one place these numbers live, as two tables. Why each
// value is what it is (the measurement behind it, by results folder): docs/PERFORMANCE.md, "sm90 configuration".
//
// One CTA = 1 producer warpgroup (TMA) + `consumers` consumer warpgroups (wgmma) of kSm90Rows query rows each, so a
// tile is kSm90Rows x consumers rows of one (batch, head). K and V blocks of block_n keys stream through
// stages-deep shared-memory rings. Every call of one head dim and causality runs one of up to three kernels by
// seqlen_k (Sm90Launch): small, short, main; calls with an LSE run the *_lse kinds where the plain kernel's l would
// put the LSE out of tolerance (lazy mode 4).
#pragma once

#include <algorithm>

#include "attn/fwd_params.hpp"
#include "tile/base.cuh"

namespace flashtile::cuda {

inline constexpr int kSm90Always = 1 << 30;        // a seqlen limit no call reaches
inline constexpr int kSm90Rows = 64;               // query rows a consumer warpgroup owns (one wgmma M)
inline constexpr int kSm90WgThreads = tile::warpgroup::kThreads;
inline constexpr int kSm90SmemLimit = 227 * 1024;  // dynamic shared memory a CTA may opt into on sm_90

// The kernels of one head dim and causality: small (to Sm90Launch::small_max_sk), short (to short_max_sk), main (the
// rest); small_lse / short_lse run the same shapes in lazy mode 3 for calls that ask for the LSE where the plain
// kernel runs mode 4 (d64), whose l sums P after its rounding to 16 bits (bf16: LSE off by up to 2^-9, past
// conformance's 1e-3; O is normalized by the same sum, so it is not).
enum class Sm90Kind : int { main = 0, short_seq = 1, small = 2, short_lse = 3, small_lse = 4 };
constexpr bool sm90_lse_kind(Sm90Kind k) { return k == Sm90Kind::short_lse || k == Sm90Kind::small_lse; }

// How O leaves the kernel. direct: predicated 4-byte stores from registers. tma: through the tile's Q buffer and one
// TMA store a consumer. staged: into O buffers of its own that a storer thread of the producer warpgroup writes out by
// TMA. tma and staged fall back to direct stores where O is not TMA-addressable.
enum class Sm90O : int { direct, tma, staged };

// Launch rules of one head dim and causality (sm90_kind, sm90_persistent_launch, sm90_launch_group,
// sm90_cluster_launch).
struct Sm90Launch {
  int d;
  bool causal;
  int small_max_sk, short_max_sk;  // the small kernel to here, the short one to here (0: none), the main one past
  int persistent_max_sk;           // one CTA a SM looping over tiles to here, else one CTA per tile
  bool dynamic;                    // persistent launches take tiles from a counter past static_max_sk keys
  int static_max_sk;
  int head_group;        // causal, one CTA per tile: (batch, head) pairs a group, where sm90_launch_group says it pays
  int persistent_group;  // causal, persistent, static order: pairs a group (0: one group of all pairs)
  int cluster, cluster_min_sk;  // the main non-causal kernel in clusters of this many CTAs past cluster_min_sk keys
};

inline constexpr Sm90Launch kSm90Launches[] = {
    // d  causal small  short        persistent   dynamic static head  persist cluster cluster
    //        max_sk  max_sk       max_sk               max_sk  group group          min_sk
    {64, false, 1024, kSm90Always, kSm90Always, true, 0, 0, 0, 1, 4096},
    {64, true, 2048, kSm90Always, kSm90Always, true, 0, 8, 0, 1, 4096},
    {128, false, 0, 4096, kSm90Always, true, 0, 0, 0, 2, 4096},
    {128, true, 0, 8192, 8192, true, 512, 8, 4, 1, 4096},
    {256, false, 0, 512, kSm90Always, true, 0, 0, 0, 2, 4096},
    {256, true, 0, 4096, 4096, true, 512, 8, 4, 1, 4096},
};

// One kernel (one instantiation per dtype).
struct Sm90Kernel {
  int d;
  bool causal;
  Sm90Kind kind;
  int consumers, block_n, stages;
  bool pingpong;  // two consumers take turns issuing wgmmas (else each overlaps its softmax with its own P·V alone)
  int lazy;       // lazy rescaling (Sm90Softmax): 3 checks the row sums of P, 4 also takes l from the P·V's wgmmas
  Sm90O o;
  bool q_prefetch;   // Q double-buffered: the next tile's Q loads while this one finishes
  bool own_blocks;   // each consumer skips the K/V blocks its own rows do not need
  bool shift_rows;   // causal: the ragged tile first (tiles start before row 0), where it sees the fewest keys
  int narrow_first;  // the tile's first block only as wide as a consumer's rows need, in steps of this many keys
};

inline constexpr Sm90Kind kSm90Main = Sm90Kind::main, kSm90Short = Sm90Kind::short_seq, kSm90Small = Sm90Kind::small,
                          kSm90ShortLse = Sm90Kind::short_lse, kSm90SmallLse = Sm90Kind::small_lse;
inline constexpr Sm90O kSm90Direct = Sm90O::direct, kSm90Tma = Sm90O::tma, kSm90Staged = Sm90O::staged;

inline constexpr Sm90Kernel kSm90Kernels[] = {
    // d  causal kind         cons  N  stages ping  lazy  O           q_pf   own    shift  narrow
    {64, false, kSm90Small, 4, 64, 8, false, 4, kSm90Staged, false, true, false, 0},
    {64, false, kSm90SmallLse, 4, 64, 8, false, 3, kSm90Staged, false, true, false, 0},
    {64, false, kSm90Short, 3, 128, 4, false, 4, kSm90Staged, false, true, false, 0},
    {64, false, kSm90ShortLse, 3, 128, 4, false, 3, kSm90Staged, false, true, false, 0},
    {64, true, kSm90Small, 4, 64, 8, false, 4, kSm90Staged, false, true, true, 64},
    {64, true, kSm90SmallLse, 4, 64, 8, false, 3, kSm90Staged, false, true, true, 64},
    {64, true, kSm90Short, 3, 128, 4, false, 4, kSm90Tma, true, true, true, 64},
    {64, true, kSm90ShortLse, 3, 128, 4, false, 3, kSm90Tma, true, true, true, 64},
    {128, false, kSm90Short, 2, 128, 2, true, 3, kSm90Staged, true, false, false, 0},
    {128, false, kSm90Main, 2, 176, 2, true, 3, kSm90Direct, false, false, false, 0},
    {128, true, kSm90Short, 2, 128, 2, true, 3, kSm90Tma, true, false, false, 0},
    {128, true, kSm90Main, 2, 128, 2, true, 3, kSm90Tma, false, false, false, 0},
    {256, false, kSm90Short, 2, 64, 2, false, 3, kSm90Staged, false, false, false, 0},
    {256, false, kSm90Main, 2, 80, 2, false, 3, kSm90Tma, false, false, false, 0},
    {256, true, kSm90Short, 2, 64, 2, false, 3, kSm90Staged, false, false, false, 0},
    {256, true, kSm90Main, 2, 80, 2, false, 3, kSm90Tma, false, false, false, 0},
};

// The row of (d, causal), or one with d = 0 where there is none.
constexpr Sm90Launch sm90_launch_config(int d, bool causal) {
  for (const Sm90Launch& l : kSm90Launches)
    if (l.d == d && l.causal == causal) return l;
  return {};
}
constexpr bool sm90_has_kernel(int d, bool causal, Sm90Kind kind) {
  for (const Sm90Kernel& k : kSm90Kernels)
    if (k.d == d && k.causal == causal && k.kind == kind) return true;
  return false;
}
constexpr Sm90Kernel sm90_kernel(int d, bool causal, Sm90Kind kind) {
  for (const Sm90Kernel& k : kSm90Kernels)
    if (k.d == d && k.causal == causal && k.kind == kind) return k;
  return {};
}

// kLazy's threshold in the exp2 domain: P <= 2^8, far inside f16/bf16 and f32 range.
inline constexpr int kSm90LazyBits = 8;
inline constexpr float kSm90LazyLog2 = float(kSm90LazyBits);
inline constexpr float kSm90LazyPow = float(1 << kSm90LazyBits);  // 2^kSm90LazyLog2
// kLazy 3: a lane's block sum of P past 2^64 (or inf, NaN) has the block's S recomputed rather than P rescaled. The
// rescale's corr = 1 / max P must stay a normal float: ex2.approx.ftz flushes anything below 2^-126 to 0, which
// zeroed l for rows whose block max landed 126..128 past the reference.
inline constexpr float kSm90LazyRedoPow = 0x1p64f;

// Where head groups paid: at least two groups, 8 to 64 m-blocks a head.
inline constexpr int kSm90GroupMinMBlocks = 8, kSm90GroupMaxMBlocks = 64;

// The (batch, head) pairs a group of this launch's tile order (Sm90Params::head_group, Sm90Scheduler::tile): for persistent
// causal launches the row's persistent_group, else all of them (longest tiles first across heads); the row's
// head_group for causal launches of one CTA per tile where it pays, else 0 (m-block innermost).
// Dynamic persistent launches (kv_bytes: one pair's K and V) with at least kSm90GroupMinMBlocks m-blocks a head take
// groups whose K/V come to about kSm90DynamicGroupKV bytes (a group's K/V stays in L2 while the CTAs work through it).
inline constexpr long long kSm90DynamicGroupKV = 32ll << 20;
constexpr int sm90_launch_group(const Sm90Launch& c, bool causal, bool persistent, int m_blocks, int batch_heads,
                                bool dynamic = false, long long kv_bytes = 0) {
  if (!causal) return 0;
  if (persistent && dynamic && kv_bytes > 0 && m_blocks >= kSm90GroupMinMBlocks)
    return static_cast<int>(std::clamp<long long>(kSm90DynamicGroupKV / kv_bytes, 1, batch_heads));
  if (persistent) return c.persistent_group > 0 ? std::min(c.persistent_group, batch_heads) : batch_heads;
  const bool pays = c.head_group > 0 && batch_heads >= 2 * c.head_group && m_blocks >= kSm90GroupMinMBlocks &&
                    m_blocks <= kSm90GroupMaxMBlocks;
  return pays ? c.head_group : 0;
}

// Whether a call launches persistent (one CTA a SM looping over tiles) rather than one CTA per tile.
constexpr bool sm90_persistent_launch(const Sm90Launch& c, int seqlen_k) { return seqlen_k <= c.persistent_max_sk; }
// Whether calls that ask for the LSE run the *_lse kinds.
constexpr bool sm90_lse_kinds(int d, bool causal) {
  return sm90_has_kernel(d, causal, Sm90Kind::small_lse) || sm90_has_kernel(d, causal, Sm90Kind::short_lse);
}
// The kernel a call runs (sm90_run_short); lse: the call asks for the LSE; mods: it has variants, which the small
// kernels leave to the short ones (four consumers of 112 registers spilled the variants' code).
constexpr Sm90Kind sm90_kind(int d, bool causal, int seqlen_k, bool lse = false, bool mods = false) {
  const Sm90Launch l = sm90_launch_config(d, causal);
  const Sm90Kind k = l.small_max_sk > 0 && seqlen_k <= l.small_max_sk && !mods ? Sm90Kind::small
                     : l.short_max_sk > 0 && seqlen_k <= l.short_max_sk      ? Sm90Kind::short_seq
                                                                             : Sm90Kind::main;
  if (!lse || k == Sm90Kind::main || !sm90_lse_kinds(d, causal)) return k;
  return k == Sm90Kind::small ? Sm90Kind::small_lse : Sm90Kind::short_lse;
}
// The kernel a varlen call runs, one per head dim and causality whatever its sequences' lengths (Sm90Shape's L):
// the kind of a dense call of kSm90VarlenSk keys, in lazy mode 3 (an LSE from it is exact).
inline constexpr int kSm90VarlenSk = 4096;
constexpr Sm90Kind sm90_varlen_kind(int d, bool causal) { return sm90_kind(d, causal, kSm90VarlenSk, true); }
// Whether a call runs the short or the small kernel.
constexpr bool sm90_short_kernel(int d, bool causal, int seqlen_k) {
  return sm90_kind(d, causal, seqlen_k) != Sm90Kind::main;
}
// The cluster size a call launches with (1: none; Sm90Launch::cluster).
// mods: a call with variants (Sm90Shape::kMods kernels never cluster).
constexpr int sm90_cluster_launch(int d, bool causal, int seqlen_k, bool mods = false) {
  const Sm90Launch c = sm90_launch_config(d, causal);
  return !causal && !mods && !sm90_short_kernel(d, causal, seqlen_k) && seqlen_k > c.cluster_min_sk ? c.cluster : 1;
}

// A kernel's build for a call's variants (the launch layer's choice, sm90_mods_build): plain; sinks (alone: the plain
// kernel, clusters, small kernels and all, with the sink joining each row's sum in the epilogue); masks (windows, and
// sinks with them: no score function, so a block inside every row's window runs the plain kernel's per-element code);
// softcap (its tanh, and a share of the softmax's ex2 on the FMA pipe: kSm90SoftcapPolyEvery); alibi (ALiBi, softcap
// with it too, and ALiBi's block order where non-causal). Each build carries only its own code in the loop: ALiBi's
// order in every variant call cost sinks 3-5% (2026-12-03_h200_variant_speed).
enum class Sm90Mods : int { off, sinks, masks, softcap, alibi };
constexpr Sm90Mods sm90_mods_build(bool window, bool softcap, bool alibi, bool sinks) {
  return alibi     ? Sm90Mods::alibi
         : softcap ? Sm90Mods::softcap
         : window  ? Sm90Mods::masks
         : sinks   ? Sm90Mods::sinks
                   : Sm90Mods::off;
}
// Whether a build runs the variants' loop (windows' key ranges, the score function, the masks: Sm90Shape::kMods).
constexpr bool sm90_mods_loop(Sm90Mods b) { return b != Sm90Mods::off && b != Sm90Mods::sinks; }
// The softcap build sends every kSm90SoftcapPolyEvery-th register pair of the softmax's exp2 through tile::poly_exp2
// (0: none). Softcap's scores take two MUFU ops (tanh's ex2, the softmax's), 16 MUFU cycles a warp's 32 scores
// (16 lanes a cycle an SM), against 14.5 issued instructions (tanh 11, the softmax's FFMA, ex2, row-sum FADD and half
// a pack); a pair moved to poly_exp2 takes 8 MUFU cycles an element off for 9 more issued. Balanced at a share of
// 1.5 / 17 = 9%: 12 (4 of d128's 44 pairs a row half, 9.1%). Counted in the PTX of the d128 main kernel (ptxas maps
// ex2.approx and fma 1:1 to MUFU.EX2 and FFMA). Lazy mode 3's kernels only: d64's mode 4 (no FADD a score) spilled
// 8 bytes with it in its causal short kernel.
inline constexpr int kSm90SoftcapPolyEvery = 12;
constexpr int sm90_poly_every(Sm90Mods b, int lazy) {
  return b == Sm90Mods::softcap && lazy == 3 ? kSm90SoftcapPolyEvery : 0;
}

// Whether a kernel visits ALiBi's tiles in their own order (sm90_window_blocks' lead) and keeps its lazy reference
// until each row has met its peak (Sm90Softmax): the ALiBi build's non-causal kernels. Causal tiles start at their
// rows' peaks anyway (lead 0), and there a row with a reference has met its peak.
constexpr bool sm90_alibi_order(bool causal, Sm90Mods mods) { return mods == Sm90Mods::alibi && !causal; }

// Named barriers (bar.sync ids; 0 is __syncthreads'): pingpong's two turns, then one a consumer for O's TMA store.
enum Sm90Bar : int { kSm90BarTurn0 = 1, kSm90BarTurn1 = 2, kSm90BarOStore0 = 3 /* ..5 */ };

// The compile-time constants of one kernel of the tables. kMods: the variants' loop (kModsBuild: sm90_mods_loop,
// sm90_mods.cuh) in the same kernel, without the parts that assume a causal or full key range per row (own blocks,
// shifted rows, narrow first blocks) or that two tiles share their K/V blocks (clusters). L: where a tile's rows live
// (fwd_params.hpp); varlen kernels find each sequence's rows and keys from cu_seqlens (Sm90Seq), and never cluster
// (two tiles of a cluster may lie in sequences of other lengths) nor shift rows (the shift is one for the launch).
template <int D, bool kCausal, Sm90Kind kKind = Sm90Kind::main, Sm90Mods kModsBuild_ = Sm90Mods::off,
          Layout L = Layout::Dense>
struct Sm90Shape {
  static constexpr Sm90Kernel kK = sm90_kernel(D, kCausal, kKind);
  static constexpr Sm90Launch kL = sm90_launch_config(D, kCausal);
  static_assert(kK.d == D && kL.d == D, "no row of kSm90Kernels / kSm90Launches for this kernel");
  static constexpr bool kShort = kKind != Sm90Kind::main;
  static constexpr Layout kLayout = L;
  static constexpr bool kVarlen = L == Layout::Varlen;
  static_assert(L != Layout::Paged, "paged K/V: the decode kernel (sm90_decode.cuh)");
  static_assert(!kVarlen || kModsBuild_ == Sm90Mods::off, "varlen kernels: plain builds only");
  static constexpr Sm90Mods kModsBuild = kModsBuild_;
  static constexpr bool kMods = sm90_mods_loop(kModsBuild);
  static constexpr bool kSinks = kModsBuild != Sm90Mods::off;  // every variant build joins sinks in the epilogue
  static constexpr bool kAlibiOrder = sm90_alibi_order(kCausal, kModsBuild);
  static constexpr int kHeadDim = D;
  static constexpr int kConsumers = kK.consumers;
  static constexpr int kBlockN = kK.block_n;
  static constexpr int kStages = kK.stages;
  static constexpr int kBlockM = kSm90Rows * kConsumers;
  static constexpr int kThreads = kSm90WgThreads * (kConsumers + 1);
  static constexpr bool kPingpong = kK.pingpong;
  static constexpr bool kQPrefetch = kK.q_prefetch;
  static constexpr int kQBufs = kQPrefetch ? 2 : 1;
  static constexpr int kLazy = kK.lazy;
  // Narrow first blocks where a narrower block exists (blocks of narrow_first keys or fewer have none).
  static constexpr int kNarrow = kK.narrow_first < kBlockN && !kMods ? kK.narrow_first : 0;
  static constexpr bool kOTma = kK.o == Sm90O::tma;
  static constexpr bool kOStage = kK.o == Sm90O::staged;
  // Clusters: the main non-causal kernel only, in the static order of tile pairs; built for clusters alone where
  // every launch of it clusters (d128: the short kernel runs to 4k keys).
  static constexpr int kCluster = kShort || kCausal || kMods || kVarlen ? 1 : kL.cluster;
  static constexpr bool kClusterAlways = kCluster > 1 && kL.short_max_sk >= kL.cluster_min_sk;
  static_assert(kCluster == 1 || (kCluster == 2 && kBlockN % 16 == 0), "a cluster's K/V halves: multiples of 8 rows");
  // The scheduler slots only in kernels that can launch persistent (the main kernel where it outlives the short one).
  static constexpr bool kDynamic =
      !kClusterAlways && kL.dynamic && (kShort || kL.short_max_sk < kL.persistent_max_sk);
  static constexpr bool kOwnBlocks = kK.own_blocks && !kMods;
  static constexpr bool kShiftRows = kK.shift_rows && !kMods && !kVarlen;
  static constexpr int kElemBytes = 2;  // bf16 / f16
  static constexpr int kBaseSmemBytes = kElemBytes * (kQBufs * kBlockM * D + 2 * kStages * kBlockN * D) +
                                        1024 /*barriers*/ + 1024 /*alignment slack*/ +
                                        (kLazy == 4 ? kBlockN * 128 : 0) /*the ones tile*/;
  // Staged O: one buffer a consumer where shared memory allows, else one that the consumers take in turn.
  static constexpr int kOBufBytes = kElemBytes * kSm90Rows * D;
  static constexpr int kOBufs =
      !kOStage ? 0 : kBaseSmemBytes + kConsumers * kOBufBytes <= kSm90SmemLimit ? kConsumers : 1;
  static constexpr int kSmemBytes = kBaseSmemBytes + kOBufs * kOBufBytes;
  static_assert(kSmemBytes <= kSm90SmemLimit, "sm90 tiles exceed shared memory");
  static constexpr int kProducerRegs = 24;  // the producer only issues TMA
  // setmaxnreg moves registers within the CTA's own pool: kThreads x the entry count, which ptxas sets to 64K /
  // kThreads rounded down to a multiple of 8 under __launch_bounds__(kThreads, 1). The consumers take what the
  // producer's 24 leave (a multiple of 8, at most 240); asking for more would hang.
  static constexpr int kEntryRegs = 65536 / kThreads / 8 * 8;
  static constexpr int kConsumerRegs =
      std::min(240, (kEntryRegs * kThreads - kProducerRegs * kSm90WgThreads) / (kSm90WgThreads * kConsumers) / 8 * 8);
  static_assert(kProducerRegs * kSm90WgThreads + kConsumerRegs * kSm90WgThreads * kConsumers <=
                    kEntryRegs * kThreads,
                "setmaxnreg budget exceeds the CTA's register pool");
  static_assert(kBlockM <= 256 && kBlockN <= 256 && kBlockN % 16 == 0, "TMA box / wgmma shape limits");
  static_assert(!kPingpong || kConsumers == 2, "pingpong: two consumers");
  static_assert(!kOTma || kConsumers <= 3, "O's TMA store syncs each consumer on its own named barrier, ids 3..5");
  static_assert(kLazy == 3 || kLazy == 4, "lazy rescaling: mode 3, or 4 (l from the P·V)");
  static_assert(kLazy != 4 || D == 64, "mode 4's P·V with row sums: 64 columns of V only");
  static_assert(!kOwnBlocks || !kPingpong, "own blocks: pingpong's turns pair the consumers' wgmmas one for one");
  static_assert(!kShiftRows || (kOwnBlocks && kCausal), "shifted rows: the consumers without rows skip their blocks");
  static_assert(kNarrow == 0 || kShort, "narrow first blocks: the short kernels");
};

}  // namespace flashtile::cuda
