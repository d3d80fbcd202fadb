// Tile shapes and schedule of the sm90 forward kernel, per head dim and causality: the one place these numbers live.
//
// One CTA = 1 producer warpgroup (TMA) + kConsumers consumer warpgroups (wgmma), each consumer owning 64 query rows,
// so kBlockM = 64 * kConsumers. K and V tiles of kBlockN keys stream through kStages-deep shared-memory rings.
// Shared memory: Q (kBlockM x D) + kStages x (K + V) (kBlockN x D each), 16-bit, must stay under 227 KB.
// Launch: persistent (grid = #SMs, each CTA looping over (m-block, head, batch) tiles, sm90_fwd.cuh) while
// seqlen_k <= persistent_max_sk, else one CTA per tile. Causal long sequences measured faster with one CTA per tile
// (likely: the hardware's block order keeps the m-blocks of one head together, sharing K/V in L2, where the persistent
// longest-first order spreads them over heads; and it balances the uneven tiles dynamically) (Run 3 in
// bench/results/2026-11-29_h200_sm90_tuning/README.md). Session 19 found the static order's imbalance behind it: causal
// persistent launches now take tiles from a counter (Sm90Config::dynamic) in head groups that share L2.
// schedule: 1 = S(n) and P(n-1)·V(n-1) in flight together, softmax(n) overlapping the P·V wgmma; 2 = 1 plus pingpong
// (two consumers take turns issuing wgmmas). One block at a time (S, softmax, P·V in sequence) lost to schedule 1 in
// every cell of the first session's runs and was removed.
// FT_SM90_SCHEDULE / FT_SM90_PERSISTENT (0: never, 1: always) / FT_SM90_POLY / FT_SM90_OTMA / FT_SM90_DYNAMIC /
// FT_SM90_OSTORE / FT_SM90_OSTAGE / FT_SM90_OWN / FT_SM90_LAZY / FT_SM90_SHIFT / FT_SM90_CLUSTER override these for
// experiments (bench/results/*/README.md have the measurements).
#pragma once

#include <algorithm>

namespace flashtile::cuda {

inline constexpr int kSm90Always = 1 << 30;  // a seqlen limit no call reaches

struct Sm90Config {
  int consumers, block_n, stages, schedule;
  int q_bufs = 1;                   // 2: Q double-buffered, so the next tile's first Q·Kᵀ chains onto this one's last P·V
  int poly_every = 0;               // > 0: every poly_every-th softmax exponential pair on the FMA pipe
                                    // (tile::poly_exp2); 3-9% slower on the H200 at 4 and 8 (session 3), and
                                    // still 1.6-3.2% at 8 and 16 without row maxima (session 23 call 7), so off
  int persistent_max_sk = kSm90Always;  // persistent launch while seqlen_k <= this (0: always one CTA per tile)
  bool o_tma = false;  // O leaves through the tile's Q buffer and a TMA store (else direct 4-byte stores)
  // Persistent launches take tiles from an atomic counter (causal: tiles without keys, Sq > Sk, never go out; the
  // consumers' up-front pass writes them in the static order), except while seqlen_k <= static_max_sk.
  bool dynamic = false;
  int o_store_bytes = 4;  // width of direct O stores: 4, or 8 / 16 after quad shuffles (tile::store_scaled_wide)
  // The short-sequence kernel (a template flag of its own, sm90_short_kernel) while seqlen_k <= short_max_sk (0:
  // never), with what it changes: stage_o, O staged in buffers of its own and stored by TMA from the producer
  // warpgroup (instead of o_tma); own_blocks, each consumer skips the K/V blocks its own rows do not need.
  // q_prefetch: Q double-buffered without chaining and O stored by TMA through the tile's Q buffer, so a persistent
  // CTA's next Q loads while this tile finishes (and its store does not hold the next Q back).
  int short_max_sk = 0;
  bool stage_o = false, own_blocks = false, q_prefetch = false;
  int short_block_n = 0;  // the short kernel's K/V block (0: block_n), where its second Q buffer needs the room
  // Causal own-blocks short kernels: tiles start up to kBlockM - 1 rows (whole consumers) before row 0, so the ragged
  // tile is the first one, whose rows see the fewest keys, instead of the last, which sees them all.
  bool shift_rows = false;
  // Causal launches of one CTA per tile: tiles in groups of head_group (batch, head) pairs, m-block outermost within
  // a group (sm90_tile), where sm90_launch_group says; else (0) m-block innermost.
  int head_group = 0;
  // Persistent causal launches: groups of persistent_group pairs the same way (0: one group of all pairs, m-major).
  int persistent_group = 0;
  // O rescaled only when a row max moved past the stale one by more than kSm90LazyLog2 (Sm90Softmax's kLazy): 1, or
  // 2 with the check on the lanes' parts of the maxima before any shuffle, or 3 with the check on the row sums of P
  // and no maxima (0: exact maxima every block), or 4 as 3 with l from the P·V's tensor cores (tile::mma_AB_rowsum,
  // d64 only) and the check on P's exponent bits.
  int lazy_rescale = 0;
  // The short kernel's first block of a tile (visit order: the causal diagonal) as narrow as each consumer's rows
  // need it (sm90_first_cols), in steps of narrow_first keys (0: full blocks).
  int narrow_first = 0;
  int static_max_sk = 0;  // dynamic's exception: the static order (t + k x grid) while seqlen_k <= this
  // The main (non-short) non-causal kernel in clusters of this many CTAs (1 or 2), which run adjacent m-blocks of one
  // head in step: each loads half of every K/V block and the copy engine multicasts it into both, halving L2 -> SM
  // traffic per FLOP (FlashAttention-3 clusters d >= 128 non-causal the same way). Static tile order (pairs).
  // Launches cluster while seqlen_k > cluster_min_sk (sm90_cluster_launch); kernels whose every launch does so are
  // built for clusters alone (Sm90Shape::kClusterAlways), the others decide at launch (Sm90Params::cluster).
  int cluster = 1;
  int cluster_min_sk = 4096;
  // The small-sequence kernel (Sm90Kind::small, sm90_kernel_config): the short kernel's features with own blocks,
  // shifted rows, no Q prefetch, and a shape of its own (small_consumers consumers of 64 rows, blocks of small_block_n
  // keys in small_stages stages), while seqlen_k <= small_max_sk (0: never); the short kernel takes over above it.
  int small_max_sk = 0, small_consumers = 0, small_block_n = 0, small_stages = 0;
};

// The kernels of one head dim and causality, by seqlen_k: small (to Sm90Config::small_max_sk), short (to
// short_max_sk), main (the rest). Each is an instantiation of its own. small_lse / short_lse: the small / short kernel
// in lazy mode 3, for calls that ask for the LSE where the config runs mode 4 (d64), whose l sums P after its rounding
// to 16 bits (bf16: LSE off by up to 2^-9, past conformance's 1e-3; O is normalized by the same sum, so it is not).
enum class Sm90Kind : int { main = 0, short_seq = 1, small = 2, short_lse = 3, small_lse = 4 };
constexpr bool sm90_lse_kind(Sm90Kind k) { return k == Sm90Kind::short_lse || k == Sm90Kind::small_lse; }
constexpr Sm90Kind sm90_base_kind(Sm90Kind k) {
  return k == Sm90Kind::short_lse ? Sm90Kind::short_seq : k == Sm90Kind::small_lse ? Sm90Kind::small : k;
}

// kLazy's threshold in the exp2 domain: P <= 2^8, far inside f16/bf16 and f32 range.
inline constexpr int kSm90LazyBits = 8;
inline constexpr float kSm90LazyLog2 = float(kSm90LazyBits);
inline constexpr float kSm90LazyPow = float(1 << kSm90LazyBits);  // 2^kSm90LazyLog2
// kLazy 3: a lane's block sum of P past 2^64 (or inf, NaN) has the block's S recomputed rather than P rescaled. The
// rescale's corr = 1 / max P must stay a normal float: ex2.approx.ftz flushes anything below 2^-126 to 0, which
// zeroed l for rows whose block max landed 126..128 past the reference (session 23 call 1).
inline constexpr float kSm90LazyRedoPow = 0x1p64f;

// Where head groups paid (session 13, sm90_config's comment): at least two groups, 8 to 64 m-blocks a head.
inline constexpr int kSm90GroupMinMBlocks = 8, kSm90GroupMaxMBlocks = 64;

// The (batch, head) pairs a group of this launch's tile order (Sm90Params::head_group, sm90_tile): for persistent
// causal launches the config's persistent_group, else all of them (longest tiles first across heads); the config's
// head_group for causal launches of one CTA per tile where it paid, else 0 (m-block innermost).
// Dynamic persistent launches (kv_bytes: one pair's K and V) with at least kSm90GroupMinMBlocks m-blocks a head take
// groups whose K/V come to about kSm90DynamicGroupKV bytes.
inline constexpr long long kSm90DynamicGroupKV = 32ll << 20;
constexpr int sm90_launch_group(const Sm90Config& c, bool causal, bool persistent, int m_blocks, int batch_heads,
                                bool dynamic = false, long long kv_bytes = 0) {
  if (!causal) return 0;
  if (persistent && dynamic && kv_bytes > 0 && m_blocks >= kSm90GroupMinMBlocks)
    return static_cast<int>(std::clamp<long long>(kSm90DynamicGroupKV / kv_bytes, 1, batch_heads));
  if (persistent) return c.persistent_group > 0 ? std::min(c.persistent_group, batch_heads) : batch_heads;
  const bool pays = c.head_group > 0 && batch_heads >= 2 * c.head_group && m_blocks >= kSm90GroupMinMBlocks &&
                    m_blocks <= kSm90GroupMaxMBlocks;
  return pays ? c.head_group : 0;
}

constexpr bool sm90_pingpong(const Sm90Config& c) { return c.schedule >= 2 && c.consumers == 2; }
constexpr bool sm90_chained(const Sm90Config& c) { return !sm90_pingpong(c) && c.q_bufs == 2; }

// Test hook (tests/cuda/sm90_check --ctas): > 0 caps the grid at this many CTAs, < 0 launches one CTA per tile,
// 0 keeps the configured choice.
inline int sm90_ctas_override = 0;
// Test hook (tests/cuda/sm90_check --head-group): N > 0 makes causal launches take tiles in groups of N (batch, head)
// pairs, m-block outermost within a group (the longest tiles of a group first; N >= batch x heads: of all heads, the
// m-major order, which lost 7% one CTA per tile in session 12 call 1), -1 m-block innermost, 0 the configured order
// (m-major when persistent, else Sm90Config::head_group).
inline int sm90_head_group_override = 0;

// Tuning builds (bench/tools/build_variants.sh): -DFT_SM90_CFG128='"consumers:block_n:stages:schedule:q_bufs:poly"'
// replaces d128's entry (likewise FT_SM90_CFG64, FT_SM90_CFG256; FT_SM90_CFG128C the causal d128 one alone), keeping
// its persistent limit; a string because nvcc splits -D values at commas. Missing trailing fields keep their values.
// "a:b:c" into v[0..n), fields past the string's end unchanged.
constexpr void sm90_parse_ints(const char* s, int* v, int n) {
  for (int i = 0; i < n && *s != 0; ++i) {
    int x = 0;
    for (; *s >= '0' && *s <= '9'; ++s) x = 10 * x + (*s - '0');
    v[i] = x;
    if (*s == ':') ++s;
  }
}
constexpr Sm90Config sm90_parse_config(const char* s, Sm90Config c) {
  int v[6] = {c.consumers, c.block_n, c.stages, c.schedule, c.q_bufs, c.poly_every};
  sm90_parse_ints(s, v, 6);
  c.consumers = v[0], c.block_n = v[1], c.stages = v[2], c.schedule = v[3], c.q_bufs = v[4], c.poly_every = v[5];
  return c;
}

constexpr Sm90Config sm90_config(int d, bool causal) {
  // Shapes and schedules chosen from run 2, d256 non-causal's schedule and the persistent limits from run 3: each
  // entry is the fastest variant measured for that case. d128's pingpong: session 6 call 2 (with the dynamic
  // scheduler; bench/results/2026-11-30_h200_sm90_dynamic_scheduler), against schedule 1 in the same call: non-causal +3..7% at
  // every length (16k 632 vs 614), causal +0..4%. d256 with pingpong: +1..5% to 1k, -1..2% non-causal from 2k, and
  // its causal kernel spills 8 bytes.
  Sm90Config c = d == 64    ? Sm90Config{3, 128, 4, 1}
                 : d == 128 ? (causal ? Sm90Config{2, 128, 2, 2} : Sm90Config{2, 176, 2, 2})
                            : Sm90Config{2, 80, 2, 1};
  // O leaves through a TMA store where that won against direct stores in the same call
  // (bench/results/2026-11-29_h200_sm90_tma_store_vk_clocks). Call 1, one CTA per tile, S 512/1k/2k/4k: d128 causal +15/+10/+6/+5%,
  // d256 causal +14/+12/+5/+4%, d256 non-causal +12/+7/+6/+3%; these kernels are byte-identical to call 1's. Calls
  // 3-5 ran a three-way barrier choice that spilled 28-40 bytes at d256: with it call 4 (whole grid) still had d256
  // non-causal +2..12% and d128 causal +9..0% to 8k (-4% at 16k), but d256 causal -4..9% from 4k. The spill-free
  // kernels past 4k (bench/results/2026-11-30_h200_sm90_recheck_experiments, call 1, whole grid twice interleaved): d128 causal 8k/16k
  // +3.4/+0.5%, d256 causal +3.0/+3.1%, d256 non-causal +1.9/+0.3%. d64, d128 non-causal: no gain.
  c.o_tma = d == 256 || (d == 128 && causal);
  // Causal launches are persistent only where that beat one CTA per tile: d64 to 1k
  // (bench/results/2026-11-29_h200_persistent_sm90), d256 not until session 16 (end of this comment); d128 at 512 lost it to pingpong (one CTA per tile
  // 267-270 vs 256-265 TFLOP/s in four runs, bench/results/2026-11-30_h200_sm90_dynamic_scheduler calls 2 and 3) until Q prefetch
  // (below): 512 persistent with it +4.3% against one CTA per tile; 1k still lost (-3%), until head groups: the
  // m-major order over all heads reads each head's K/V once per m-block, from HBM once all of them exceed L2 (512: 128
  // MB of K/V). Groups of 4 pairs (session 16 call 5, three runs interleaved against the dispatched launches): 512
  // +9.5%, 1k +4.5% (groups of 8: +8.4/+2.9%; 16: +6.4/-17%). At 2k/4k (call 4, groups of 8) -21/-14%, and d64
  // causal 1k-4k -12..26%, d256 -15..27%; groups of 2 and 1 lost to 4 (call 7). d256 causal 512 (its short kernel,
  // no Q prefetch) persistent in groups of 4: +3.9% (call 8; m-major -11%).
  // Session 19 (bench/results/2026-11-30_h200_sm90_fastdiv_dynamic_causal), persistent with the dynamic scheduler (below) to 4k:
  // - d128 causal, groups of 4: call 3 +6.7/+4.3% at 2k/4k against one CTA per tile (8k: 565 vs 563 TFLOP/s in call 2's
  //   persistent runs, so it stops at 4k);
  // - d64 causal, one group of all pairs (call 2's persistent runs): 2k/4k 406/425 vs 372/421 one CTA per tile, 8k
  //   396 vs 448.
  // Session 25 (bench/results/2026-12-01_h200_sm90_short_kernel_lengths): d64 causal at every length (its short kernel, below); d256
  // causal to 4k, its short kernel under the scheduler (below).
  // Session 26 (bench/results/2026-12-01_h200_sm90_short_cells, call 1; d128's grid three times interleaved): d128 causal's
  // short kernel persistent to 8k, 8k +5.9% (627 vs 593 TFLOP/s) against the main kernel one CTA per tile; 16k stays
  // there (session 25 call 4: -3.5% with the short kernel).
  if (causal) c.persistent_max_sk = d == 64 ? kSm90Always : d == 128 ? 8192 : 4096;
  if (causal && d >= 128) c.persistent_group = 4;
  // Non-causal: persistent with dynamic scheduling at every length. Session 5 call 6 (a first form of the scheduler,
  // bench/tune/session5_dynamic_sched.patch) against the static order: +4-12% at 1k-4k for every head dim, d256 8k -2%.
  // Causal too at d64/d128 (session 19 call 2, three runs interleaved against the static order): the counter hands
  // the next tile to the CTA that is free. d64 causal 512/1k +3.1/+5.6%. d128 causal 512/1k kept the static order
  // (dynamic -9.7/-4.3%: there the static order gives each CTA one tile of each length, groups of 4 pairs x 4 m-blocks
  // against a grid of 132); from 2k the static order gave a CTA the same lengths every round (d128 4k: 400 against 517
  // TFLOP/s one CTA per tile in call 2).
  // Session 25 call 3 (three runs interleaved): the scheduler from 513 keys at d128 causal, 1k +7.0% (456-463 vs
  // 428-433 TFLOP/s); d256 causal's short kernel persistent under it to 4k (p256d) 1k/2k/4k +13.8/+12.7/+8.8% against
  // the static order at 1k (short kernel) and one CTA per tile at 2k/4k (main kernel). At 512 both keep the static
  // order (d256 under the scheduler there: -5.7%, call 2).
  c.dynamic = true;
  if (causal && d >= 128) c.static_max_sk = 512;
  // Their head groups (sm90_launch_group): about 32 MB of K/V a group from 8 m-blocks a head, so a group's K/V stays in
  // L2 while the CTAs work through it (calls 2 and 5, persistent runs with run-time group sizes, TFLOP/s):
  //   d64 2k: 16 / 32 / 64 / all 256 pairs 396 / 404 / 411 / 398-406; 4k: 32 / 64 / all 128 pairs 444-450 / 406-429 /
  //     401-450 (bimodal); d128 2k: 4 / 8 / 16 / 32 / 64 476 / 490 / 506-507 / 523 / 494; 4k: 16 / 32 / 64 545-556 /
  //   509 / 492. The best are 32 MB at each (d64 2k 64 pairs x 512 KB, 4k 32 x 1 MB; d128 2k 32 x 1 MB, 4k 16 x 2 MB).
  //   d64 at 512/1k (3/6 m-blocks a head) runs best in one group of all pairs (32 pairs: -6/-2%).
  // Wide O stores: session 6 call 5 timed the kernels without O stores, and the 4-byte stores were most of the per-tile
  // cost of persistent launches (d128 non-causal 512 +29%, 1k +17%). 16-byte stores (call 6) won that back at short
  // lengths (d128 non-causal 512 +11%, 1k +5%) but cost 2-5% from 4k at d64/d128 non-causal (the main loop's code
  // changed with them), so 4 stays; d64 causal spills 12 bytes with 16.
  // Staged O (the consumers only write shared memory; a storer thread issues the TMA stores): session 7 call 1
  // (bench/results/2026-11-30_h200_sm90_staged_o), the whole grid twice interleaved against the kernel without it: d64
  // non-causal +4/+4/+4/+2% at 512/1k/2k/4k and -0.6/-0.2% at 8k/16k; d128 non-causal +12/+2/+6/+2% to 4k but -4/-2%
  // at 8k/16k, so it stops there (a kernel of its own); d128 causal -3..8% (with it instead of its Q-buffer TMA
  // store). d64 causal spills 24 bytes with it; d256 has shared memory left for an O buffer only with N = 64 (below).
  // On since session 8 call 1 (bench/results/2026-11-30_h200_sm90_staged_o_short_kernel): racecheck and memcheck clean after the fix of
  // the shared buffer's hand-over, and against the kernel without it (whole grid twice interleaved) d64 non-causal
  // +5/+6/+3/+2% at 512-4k, d128 non-causal +14/+7/+0/+3%; d128 non-causal staged at 8k/16k lost 2.6/3.0% again.
  // Own blocks (session 8 calls 2 and 3, d64 against the kernel without them): causal +4.4..6.9% at 512/1k, where
  // 512 = 2 x 192 + 128 leaves a consumer without rows and the 192-row tiles cross 128-key blocks; non-causal
  // +0.2..3.2% there. From 4k the kernel with them lost 2-6% causal even with the skip off at run time (the code
  // itself), hence a short kernel. d128 runs pingpong, whose turns pair the consumers' wgmmas one for one; d256's
  // kernels spill 28-52 bytes with the skip's release loop.
  c.stage_o = !causal && d <= 128;
  c.own_blocks = d == 64;
  // Q prefetch (session 15 call 4, bench/results/2026-11-30_h200_sm90_q_prefetch; the whole grid twice interleaved): ncu
  // had 6.3% of the d64 causal 512 kernel's stall samples on the consumers' Q wait at a tile's start. d64 causal
  // short, persistent: Q double-buffered alone +3.5% at 512, O's TMA store alone -3.6%, both +12.5/+4.2% at 512/1k.
  // d128 causal 512 runs persistent with it (+4.3%). d256 has no room for a second Q.
  // Non-causal d128 too (session 16 call 3, the whole grid twice interleaved): the short kernel with N = 128 (a
  // second Q buffer fits beside staged O only with N < 176) +4.6/+1.2/+1.7/+1.1% at 512-4k; N = 128 alone
  // +4.3/+1.1/-1.5/+0.9% (512 = 4 x 128; N = 176 reads 528 keys). d64 non-causal lost with it (call 2, -1..5%).
  c.q_prefetch = d <= 128 && (causal || d == 128);
  if (!causal && d == 128) c.short_block_n = 128;
  // Shifted rows (session 16 call 3, against the same kernel without): d64 causal +1.5/+5.2/+0.9/+1.7% at 512-4k.
  // 1k = 5 x 192 + 64 had the 64-row tile last (all 8 key blocks for one consumer's rows); shifted, it is first.
  c.shift_rows = d == 64;
#ifdef FT_SM90_SHIFT
  c.shift_rows = FT_SM90_SHIFT != 0;
#endif
#ifdef FT_SM90_SHORT_N64C  // experiment: d64 causal short kernel with this K/V block (64: 0.88-0.98x, session 17 call 1)
  if (causal && d == 64) c.short_block_n = FT_SM90_SHORT_N64C;
#endif
  // Head groups (session 13 call 1, bench/results/2026-11-30_h200_head_group_launch_order; the whole grid twice interleaved against
  // the m-block-innermost order): groups of 8 pairs d256 causal +4.1/+3.8/+3.8% at 2k/4k/8k, d128 +1.0/+0.1/+1.7%,
  // d64 +1.6/+1.5/+0.1/+1.3% at 2k-16k; one group of all heads (d256 16k: 8 pairs) -2%, as the m-major order lost 7%
  // in session 12; at 512 (4 m-blocks a head) -1.3..1.7%. Groups of 4 and 2 gained less. Call 2 (the same A/B):
  // d64 +0.0/+0.8/+2.5%, d128 +1.7/+2.7/+3.6%, d256 +3.8/+2.9/+3.7% at 2k/4k/8k, but d128 16k (two groups, 128
  // m-blocks) -3.8% (0% in call 1), hence at most 64 m-blocks a head.
  if (causal) c.head_group = 8;
  // Lazy rescaling (session 14 call 1, bench/results/2026-11-30_h200_sm90_lazy_rescale_d256; the whole grid twice interleaved
  // against the kernels without it): d256 +1.5..6.1% in every cell (non-causal 2k/4k/16k +6.1/+5.7/+4.8%, causal
  // 4k/16k +3.9/+5.4%), where O's 128 FMULs a thread sit between a block's P·V and the next issue; d128 (pingpong
  // hides the rescale under the other consumer's GEMMs) -1..3% from 2k, d64 -1..5%: mode 1 at d256 alone, until
  // mode 2, checked on the lanes' parts of the maxima before any shuffle, in every head dim (session 22 call 3,
  // bench/results/2026-12-01_h200_sm90_lazy_rescale_mode2; the whole grid three times interleaved against d256's mode 1, 0 else):
  // 1.023x causal, 1.027x non-causal geomean; d64 +2..6% from 1k, d128 +1.8..5.5% (non-causal 2k/4k level), d256
  // +0..3%. Call 2's ablations had priced the row maxima at +11% at d128 (the row sums +1%): their cost is the chain
  // of FMNMX and shuffles between a block's scores and its exponentials, which mode 2 takes off most blocks.
  c.lazy_rescale = 2;
  // Mode 3 (session 23): no maxima once every row has a reference, checked on the row sums of P; a block that
  // overflows P has its S recomputed by mma.sync after its P·V (Sm90Softmax::retry). Against mode 2, the grid twice
  // interleaved (call 3): 1.025x causal, 1.032x non-causal; d64 +1..8%, d128 +1..6% (non-causal 16k 684 TFLOP/s),
  // d256 level (-3..+2%). The repair inside step ran 0.4-0.7% faster over three calls but spilled at d64.
  c.lazy_rescale = 3;
  // Mode 4 at d64 (session 30, bench/results/2026-12-02_h200_sm90_lazy_rescale_mode4): l from the P·V's tensor cores (one m64n72k16
  // per k-step against V and an all-ones tile, tile::mma_AB_rowsum) instead of an FADD a score, and the fast check on
  // P's exponent bits (an OR a pair) against a reference 7 above the row max. d64's grid three times interleaved
  // against mode 3: causal 1.024x / 1.015x, non-causal 1.007x / 1.003x (calls 1 / 2); causal 512 +5.7/+3.4%, 2k
  // +4.2/+1.9%; landed (call 4, the whole grid twice and d64 twice more, against main): d64 causal +2..4% to 8k,
  // non-causal +0.2..1.3%. 12.5% more P·V tensor work pays only where the softmax is a third of the work (d128: the sums
  // were worth 1% in session 22's ablation; its V is two 64-column blocks, which leaves no room for the ones block).
  // Calls with an LSE run mode 3 (Sm90Kind's *_lse kinds): l from bf16 P put the LSE 1.07e-3 off in call 3.
  if (d == 64) c.lazy_rescale = 4;
  // d64 causal to 4k (session 15 call 9, d64's grid twice interleaved): with Q prefetch the short kernel beat the
  // main one at 2k/4k too, launched one CTA per tile (+6.7/+4.0%; persistent there it lost).
  // d128 causal: the short kernel is the persistent launch (Q prefetch), so it shares that limit.
  // d64 causal at every length (session 25 call 1, bench/results/2026-12-01_h200_sm90_short_kernel_lengths; d64's grid three times
  // interleaved): the short kernel persistent to 16k against the main kernel one CTA per tile: 8k 516-523 vs 488-489
  // TFLOP/s (+6.6%), 16k 533-538 vs 520-525 (+2.6%); the main kernel persistent 481-507 and 510-532. d64 has no main
  // kernel since.
  c.short_max_sk = d == 64 ? kSm90Always : d == 128 ? (causal ? c.persistent_max_sk : 4096) : 0;
  // d256 causal 512 with N = 64 (session 16 call 3): +3.4% (1k -0.8%; non-causal 512/1k -1.4/-3.4%). Its tiles need
  // 2/4/6/8 blocks of 64 keys, 1280 keys a head against 18 x 80 = 1440.
  // d256 non-causal 512 with N = 64 and staged O in one buffer that the consumers take in turn (session 18 call 1,
  // bench/results/2026-11-30_h200_sm90_d256_short_kernel; three runs interleaved): +6.8% (501 vs 470 TFLOP/s), 1k -1.5%, 2k-16k
  // -4..8%. Its Q buffer no longer holds O, so the next tile's Q loads during this one's last P·V and epilogue (session
  // 17's ncu: Q waited for the previous O store).
  // Causal 512 with staged O as well (call 2, three runs interleaved): +2.4% (326 vs 318 TFLOP/s).
  // d256 causal to 4k: the persistent launch, as at d128 (session 25 call 3: 1k-4k above; 8k/16k untimed then).
  if (d == 256) c.stage_o = true, c.short_block_n = 64, c.short_max_sk = causal ? c.persistent_max_sk : 512;
#ifdef FT_SM90_CSTAGE  // experiment: the causal short kernel of this head dim with staged O (d64/d128: level, call 2)
  if (causal && d == FT_SM90_CSTAGE) c.stage_o = true;
#endif
#ifdef FT_SM90_LAZY
  c.lazy_rescale = FT_SM90_LAZY;
#endif
  if (c.lazy_rescale == 4 && d != 64) c.lazy_rescale = 3;  // mode 4's P·V with row sums: 64 columns of V only
  // Narrow first blocks (session 17, bench/results/2026-11-30_h200_sm90_d64_narrow_blocks): in d64's causal short kernel, a
  // consumer whose 64 rows end in the first half of their diagonal block needs only its first 64 keys. Against the
  // kernels without, three runs interleaved (calls 3-5): d64 causal 512 +4.8..5.6%, 1k +1.8..3.4%, 4k -1.5..3.5%
  // (2k level). d128's causal short kernel with them: 512 +1.4/+1.9/-1.8%, level. In every kernel (call 2) the main
  // kernels lost 3-6% from 4k to the code alone, and d256 causal 512 lost 3.7%.
  if (causal && d == 64) c.narrow_first = 64;
#ifdef FT_SM90_NARROW  // experiment: narrow first blocks in steps of this many keys (0: off), d64/d128 causal
  if (causal && d <= 128) c.narrow_first = FT_SM90_NARROW;
#endif
#ifdef FT_SM90_OSTAGE  // 0: never staged, 1: staged where the config stages
  c.stage_o = c.stage_o && FT_SM90_OSTAGE;
#endif
#ifdef FT_SM90_QPREFETCH  // 0: no Q prefetch in the short kernel; 2: in every short kernel to d128
  c.q_prefetch = FT_SM90_QPREFETCH == 2 ? d <= 128 : c.q_prefetch && FT_SM90_QPREFETCH;
#endif
#ifdef FT_SM90_OWN  // 0: no own blocks
  c.own_blocks = c.own_blocks && FT_SM90_OWN;
#endif
#ifdef FT_SM90_SCHEDULE
  c.schedule = FT_SM90_SCHEDULE;
#endif
#ifdef FT_SM90_CFG64
  if (d == 64) c = sm90_parse_config(FT_SM90_CFG64, c);
#endif
#ifdef FT_SM90_CFG128
  if (d == 128) c = sm90_parse_config(FT_SM90_CFG128, c);
#endif
#ifdef FT_SM90_CFG256
  if (d == 256) c = sm90_parse_config(FT_SM90_CFG256, c);
#endif
#ifdef FT_SM90_CFG128C  // d128's causal entry alone
  if (d == 128 && causal) c = sm90_parse_config(FT_SM90_CFG128C, c);
#endif
#ifdef FT_SM90_POLY
  c.poly_every = FT_SM90_POLY;
#endif
#ifdef FT_SM90_OTMA
  c.o_tma = FT_SM90_OTMA != 0;
#endif
#ifdef FT_SM90_OSTORE
  c.o_store_bytes = FT_SM90_OSTORE;
#endif
  // Direct stores with a double-buffered Q (chained tiles) and past three consumers (one named barrier each).
  c.o_tma = c.o_tma && c.q_bufs == 1 && c.consumers <= 3;
  c.dynamic = c.dynamic && c.q_bufs == 1;  // chained tiles need the next tile early
  c.stage_o = c.stage_o && c.q_bufs == 1;             // and store their O late, out of loop order
#ifdef FT_SM90_DYNAMIC
  c.dynamic = FT_SM90_DYNAMIC != 0;
#endif
  // Clusters of two (Sm90Config::cluster) for the non-causal main kernels past 4k keys. Session 20 calls 3-4
  // (bench/results/2026-11-30_h200_sm90_clusters_multicast; the whole grid three times interleaved against the kernels without):
  // d128 non-causal 8k/16k +2.5/+3.2% (633 TFLOP/s at 16k). d256's main kernel clustered from 1k keys: 8k/16k
  // +5.0/+3.1%, 4k +1.5%, but 1k/2k -7/-6%, hence the 4k limit (cluster_min_sk). Call 5, d256 clustered past 4k
  // (its main kernel decides at launch) and d128 as before, two copies against the kernels without clusters: d128
  // 8k/16k +1.4..1.6/+2.1..2.5% (641-643 TFLOP/s at 16k), d256 8k -0.2..+1.5%, 16k +2.3..2.5%, d256 1k-4k level.
  // With the peer's releases as mbarrier.arrive.release.cluster (a fence each) call 3 had lost 11% at d128 and
  // 20-24% at d256.
  c.cluster = !causal && d >= 128 ? 2 : 1;
#ifdef FT_SM90_CLUSTER  // experiment: 0 none; else the non-causal main kernels of head dims >= this one
  c.cluster = !causal && FT_SM90_CLUSTER > 0 && d >= FT_SM90_CLUSTER ? 2 : 1;
#endif
#ifdef FT_SM90_PERSISTENT
  c.persistent_max_sk = FT_SM90_PERSISTENT ? kSm90Always : 0;
#endif
#ifdef FT_SM90_LIMITS  // experiment: "d:causal:short_max_sk:persistent_max_sk:dynamic:static_max_sk" for one config
  {
    int v[6] = {0, 0, c.short_max_sk, c.persistent_max_sk, int(c.dynamic), c.static_max_sk};
    sm90_parse_ints(FT_SM90_LIMITS, v, 6);
    if (d == v[0] && v[1] == int(causal))
      c.short_max_sk = v[2], c.persistent_max_sk = v[3], c.dynamic = v[4] != 0, c.static_max_sk = v[5];
  }
#endif
  // The small kernel at d64 (session 24, bench/results/2026-12-01_h200_sm90_d64_small_kernel): four consumers (256-row tiles) on
  // 64-key blocks with staged O (the Q buffer carries O for three consumers at most). Against the short kernel, the
  // whole grid three times interleaved (call 4, 6 stages): causal 512/1k +7.9/+7.2%, non-causal 512/1k +5.0/+3.1%.
  // From 2k four consumers lost 2-5% (call 2). 64-key blocks leave the fourth consumer room (S, P and O take 80 of
  // its 112 registers); with three consumers they lost 9-13% (call 1). 8 stages against 6: non-causal 512 +3.4% in
  // call 5, level (+0.2..1.1%) in call 6; 8 keeps the ring a power of two, as in every other config (% and / of
  // the ring position are then an AND and a shift).
  // Causal to 2048 (session 27, bench/results/2026-12-01_h200_sm90_d64_s_double_buffer): causal 2k +1.6% in calls 3 and 4 (three and
  // four runs); non-causal 2k/4k lost 1.9/2.8% (call 3), as in session 24 call 2.
  if (d == 64) c.small_max_sk = causal ? 2048 : 1024, c.small_consumers = 4, c.small_block_n = 64, c.small_stages = 8;
#ifdef FT_SM90_SMALL  // experiment: "d:causal:consumers:block_n:stages:max_sk" (causal 2: both; max_sk 0: none)
  {
    int v[6] = {0, 0, c.small_consumers, c.small_block_n, c.small_stages, c.small_max_sk};
    sm90_parse_ints(FT_SM90_SMALL, v, 6);
    if (d == v[0] && (v[1] == 2 || v[1] == int(causal)))
      c.small_consumers = v[2], c.small_block_n = v[3], c.small_stages = v[4], c.small_max_sk = v[5];
  }
#endif
  return c;
}

// Whether a call with config c launches persistent (one CTA a SM looping over tiles) rather than one CTA per tile.
constexpr bool sm90_persistent_launch(const Sm90Config& c, int seqlen_k) { return seqlen_k <= c.persistent_max_sk; }

// The config as kernel `kind` runs it: the small kernel with its own shape, and O staged where more than three
// consumers leave the Q buffer's TMA store no named barrier.
constexpr Sm90Config sm90_kernel_config(int d, bool causal, Sm90Kind kind) {
  Sm90Config c = sm90_config(d, causal);
  if (sm90_lse_kind(kind)) c.lazy_rescale = 3;
  if (sm90_base_kind(kind) == Sm90Kind::small) {
    c.consumers = c.small_consumers, c.block_n = c.small_block_n, c.stages = c.small_stages;
    c.short_block_n = 0, c.short_max_sk = c.small_max_sk;
    c.stage_o = c.stage_o || c.consumers > 3;
    c.own_blocks = c.shift_rows = true;  // several consumers, no pingpong: each skips the blocks its rows do not need
#ifndef FT_SM90_SMALL_QPF  // experiment: Q prefetch in the small kernels (d64 causal spills 8 bytes with it)
    c.q_prefetch = false;
#endif
    c.o_tma = c.o_tma && c.consumers <= 3;
  }
  return c;
}

// The short-sequence kernel's changes that apply to this config (staged O: sm90_config already drops it with a
// double-buffered Q; own blocks neither with pingpong nor chained tiles, whose next first block is issued with this
// tile's last; its K/V block; shifted rows), and its limit: 0 where it would change nothing. Sm90Kind::small: the
// small kernel's (the same features on its own config, sm90_kernel_config); its limit 0 where there is none.
struct Sm90Short {
  bool stage_o, own_blocks, q_prefetch;
  int max_sk, block_n;
  bool shift_rows;
  int narrow_first;
};
constexpr Sm90Short sm90_short(int d, bool causal, Sm90Kind kind = Sm90Kind::short_seq) {
  const bool small = sm90_base_kind(kind) == Sm90Kind::small;
  const Sm90Config c = sm90_kernel_config(d, causal, kind);
  if (small && c.small_max_sk == 0) return {};
  const bool own = c.own_blocks && !sm90_pingpong(c) && !sm90_chained(c);
  // Q prefetch: O leaves through its staged buffers, else through the Q buffer (TMA, one named barrier a consumer: at
  // most three).
  const bool qp = c.q_prefetch && !sm90_chained(c) && (c.stage_o || c.consumers <= 3);
  const int bn = c.short_block_n > 0 ? c.short_block_n : c.block_n;
  const bool differs = small || c.stage_o || own || qp || bn != c.block_n;
  return {c.stage_o, own, qp, differs ? c.short_max_sk : 0, bn, own && causal && c.shift_rows,
          sm90_chained(c) ? 0 : c.narrow_first};  // chained: the first Q·Kᵀ goes out with the last P·V
}
// Whether calls that ask for the LSE run the *_lse kinds (Sm90Kind): the config's lazy mode 4.
constexpr bool sm90_lse_kinds(int d, bool causal) { return sm90_config(d, causal).lazy_rescale == 4; }
// The kernel a call runs (sm90_run_short); lse: the call asks for the LSE.
constexpr Sm90Kind sm90_kind(int d, bool causal, int seqlen_k, bool lse = false) {
  const int small = sm90_short(d, causal, Sm90Kind::small).max_sk, short_seq = sm90_short(d, causal).max_sk;
  const Sm90Kind k = small > 0 && seqlen_k <= small           ? Sm90Kind::small
                     : short_seq > 0 && seqlen_k <= short_seq ? Sm90Kind::short_seq
                                                              : Sm90Kind::main;
  if (!lse || k == Sm90Kind::main || !sm90_lse_kinds(d, causal)) return k;
  return k == Sm90Kind::small ? Sm90Kind::small_lse : Sm90Kind::short_lse;
}
// Whether a call runs the short or the small kernel.
constexpr bool sm90_short_kernel(int d, bool causal, int seqlen_k) {
  return sm90_kind(d, causal, seqlen_k) != Sm90Kind::main;
}
// The cluster size a call launches with (1: none; Sm90Config::cluster).
constexpr int sm90_cluster_launch(int d, bool causal, int seqlen_k) {
  const Sm90Config c = sm90_config(d, causal);
  return !causal && !sm90_short_kernel(d, causal, seqlen_k) && seqlen_k > c.cluster_min_sk ? c.cluster : 1;
}

// kKind: which of the config's kernels (sm90_kind); kShort: the short or the small one, whose features kSs lists.
template <int D, bool kCausal, Sm90Kind kKind = Sm90Kind::main>
struct Sm90Shape {
  static constexpr Sm90Config kCfg = sm90_kernel_config(D, kCausal, kKind);
  static constexpr bool kShort = kKind != Sm90Kind::main;
  static constexpr Sm90Short kSs = sm90_short(D, kCausal, kShort ? kKind : Sm90Kind::short_seq);
  static constexpr int kHeadDim = D;
  static constexpr int kConsumers = kCfg.consumers;
  static constexpr int kBlockN = kShort ? kSs.block_n : kCfg.block_n;
  static constexpr int kStages = kCfg.stages;
  static constexpr int kBlockM = 64 * kConsumers;
  static constexpr int kThreads = 128 * (kConsumers + 1);
  static constexpr bool kPingpong = sm90_pingpong(kCfg);
  static constexpr bool kQPrefetch = kShort && kSs.q_prefetch;
  static constexpr int kQBufs = kQPrefetch ? 2 : kCfg.q_bufs;
  static constexpr int kPolyEvery = kCfg.poly_every;
  static constexpr int kLazy = kCfg.lazy_rescale;
  // Sm90Config::narrow_first, where a narrower first block exists (blocks of narrow_first keys or fewer have none).
  static constexpr int kNarrow = kShort && kSs.narrow_first < kBlockN ? kSs.narrow_first : 0;
  static constexpr bool kOTma = (kCfg.o_tma || kQPrefetch) && !(kShort && kSs.stage_o);
  // Clusters (Sm90Config::cluster): the main non-causal kernel only, in the static order of tile pairs; built for
  // clusters alone where every launch of it clusters (d128: the short kernel runs to 4k keys).
  static constexpr int kCluster = kShort || kCausal ? 1 : kCfg.cluster;
  static constexpr bool kClusterAlways = kCluster > 1 && kSs.max_sk >= kCfg.cluster_min_sk;
  static_assert(kCluster == 1 || (kCluster == 2 && kBlockN % 16 == 0), "a cluster's K/V halves: multiples of 8 rows");
  // The scheduler slots only in kernels that can launch persistent (the main kernel where it outlives the short one).
  static constexpr bool kDynamic =
      !kClusterAlways && kCfg.dynamic && (kShort || kSs.max_sk < kCfg.persistent_max_sk);
  // Staged O: one 64-row buffer per consumer where shared memory allows, else one that the consumers take in turn.
  static constexpr bool kOStage = kShort && kSs.stage_o;
  // Direct O stores kOStoreBytes wide; kOTma and kOStage builds keep 4 for their fallback (O not TMA-addressable).
  static constexpr int kOStoreBytes = kOTma || kOStage ? 4 : kCfg.o_store_bytes;
  // Chained tiles (Q double-buffered, no pingpong): a CTA's next tile issues its first Q·Kᵀ together with this
  // tile's last P·V, so the epilogue runs under it.
  static constexpr bool kChain = sm90_chained(kCfg);
  // Each consumer skips the blocks its own 64 rows do not need: the causal diagonal's masked-out part where kBlockM >
  // kBlockN (d64: 192 x 128), and all but one block where its rows are past Sq (the last tile of a length that
  // kBlockM does not divide: d64 at 512 and 1k).
  static constexpr bool kOwnBlocks = kShort && kSs.own_blocks;
  static constexpr bool kShiftRows = kShort && kSs.shift_rows;  // Sm90Config::shift_rows
  static constexpr int kBaseSmemBytes = 2 * (kQBufs * kBlockM * D + 2 * kStages * kBlockN * D) + 1024 /*barriers*/ +
                                       1024 /*alignment slack*/ + (kLazy == 4 ? kBlockN * 128 : 0) /*the ones tile*/;
  static constexpr int kOBufs = !kOStage ? 0 : kBaseSmemBytes + kConsumers * 128 * D <= 227 * 1024 ? kConsumers : 1;
  static constexpr int kSmemBytes = kBaseSmemBytes + kOBufs * 128 * D;
  static_assert(kSmemBytes <= 227 * 1024, "sm90 tiles exceed shared memory");
  // CTAs per SM: one consumer with tiles that fit twice runs two CTAs, whose tiles interleave on the tensor cores the
  // way pingpong's consumers do, without a handshake (an experiment, e.g. FT_SM90_CFG128="1:64:2:1:1"); else one.
  // Not at d256: two CTAs cap the kernel at 128 registers a thread when compiled, and O alone takes 128.
  static constexpr int kCtasPerSm = kConsumers == 1 && D <= 128 && 2 * (kSmemBytes + 1024) <= 228 * 1024 ? 2 : 1;
  static constexpr int kProducerRegs = 24;  // the producer only issues TMA
  // setmaxnreg moves registers within the CTA's own pool: kThreads x the entry count, which ptxas sets to 64K /
  // (kThreads x kCtasPerSm) rounded down to a multiple of 8 under __launch_bounds__(kThreads, kCtasPerSm). The
  // consumers take what the producer's 24 leave (a multiple of 8, at most 240); asking for more would hang.
  static constexpr int kEntryRegs = 65536 / (kThreads * kCtasPerSm) / 8 * 8;
  static constexpr int kConsumerRegs =
      std::min(240, (kEntryRegs * kThreads - kProducerRegs * 128) / (128 * kConsumers) / 8 * 8);
  static_assert(kProducerRegs * 128 + kConsumerRegs * 128 * kConsumers <= kEntryRegs * kThreads,
                "setmaxnreg budget exceeds the CTA's register pool");
  static_assert(kBlockM <= 256 && kBlockN <= 256 && kBlockN % 16 == 0, "TMA box / wgmma shape limits");
  static_assert(kQBufs == 1 || kQBufs == 2, "Q is single- or double-buffered");
  static_assert(kCfg.schedule == 1 || kCfg.schedule == 2, "schedules: 1 (overlapped), 2 (overlapped + pingpong)");
  static_assert(kCfg.o_store_bytes == 4 || kCfg.o_store_bytes == 8 || kCfg.o_store_bytes == 16, "O stores: 4, 8, 16 B");
  static_assert(!kOTma || kConsumers <= 3, "O's TMA store syncs each consumer on its own named barrier, ids 3..5");
  static_assert(!(kOTma && kChain), "O staged in the Q buffer: the chain's dropped Q·Kᵀ would still read it");
  // Dynamic causal launches: tiles without keys (Sq > Sk) are written by the consumers' up-front pass in the static
  // order and never handed out (sm90_produce skips them).
  static_assert(!kDynamic || !kChain, "dynamic scheduling: no chain");
  static_assert(!kShort || kSs.max_sk > 0, "a short kernel only where it changes something");
  static_assert(!kShiftRows || kOwnBlocks, "shifted rows: the consumers without rows skip their blocks");
};

}  // namespace flashtile::cuda
