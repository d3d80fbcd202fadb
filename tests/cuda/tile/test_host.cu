// Host-side parts of the tile framework and the sm90 traits, checked without a GPU (tile_tests runs these even where
// it skips the device tests): TMA addressability rules (gl.cuh), the 128B swizzle of shared tiles (st.cuh), and the
// sm90 configuration tables and derived shapes (attn/sm90_traits.hpp), the sm80 forward's table (attn/sm80_traits.hpp)
// and the varlen kinds, partly at compile time.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "attn/sm80_traits.hpp"
#include "attn/sm90_mods.cuh"
#include "attn/sm90_traits.hpp"
#include "util.cuh"

namespace tl = flashtile::tile;
namespace fc = flashtile::cuda;

// Every kernel sm90_kind can pick has a row of its own in the table, and the rows are unique.
constexpr bool every_kind_has_a_row() {
  for (const fc::Sm90Launch& l : fc::kSm90Launches)
    for (int sk : {1, 512, 1024, 2048, 4096, 8192, 16384, 1 << 20})
      for (bool lse : {false, true})
        for (bool mods : {false, true})
          if (!fc::sm90_has_kernel(l.d, l.causal, fc::sm90_kind(l.d, l.causal, sk, lse, mods))) return false;
  for (const fc::Sm90Kernel& a : fc::kSm90Kernels) {
    int n = 0;
    for (const fc::Sm90Kernel& b : fc::kSm90Kernels) n += a.d == b.d && a.causal == b.causal && a.kind == b.kind;
    if (n != 1) return false;
  }
  return true;
}
static_assert(every_kind_has_a_row());
// Launch order (sm90_launch_group): persistent causal launches take groups of 4 heads at d128 and d256 (static order: to 1k / 512
// keys), one group of all heads at d64; one CTA per tile, groups of 8 only with at least two groups and 8 to 64 m-blocks a head; non-causal
// launches never group.
constexpr fc::Sm90Launch kCausal128 = fc::sm90_launch_config(128, true);
static_assert(kCausal128.head_group == 8 && kCausal128.persistent_group == 4);
static_assert(fc::sm90_launch_group(kCausal128, true, true, 4, 512) == 4);
static_assert(fc::sm90_launch_group(kCausal128, true, true, 4, 3) == 3);  // fewer pairs than a group: one group
static_assert(fc::sm90_launch_group(fc::sm90_launch_config(64, true), true, true, 6, 512) == 512);
static_assert(fc::sm90_launch_config(256, true).persistent_max_sk == 4096 && fc::sm90_launch_config(256, true).persistent_group == 4);
// Causal persistent launches at d128/d256 keep the static order to 512 keys, the scheduler past it.
static_assert(fc::sm90_launch_config(256, true).static_max_sk == 512 && fc::sm90_launch_config(256, true).dynamic);
static_assert(fc::sm90_launch_group(kCausal128, true, false, 32, 64) == 8);
// Dynamic persistent launches: groups of about 32 MB of K/V from 8 m-blocks a head (d128 2k: 32 pairs of 1 MB, 4k:
// 16 of 2 MB; never more than there are), else the static rule (d64 at 1k, 6 m-blocks: one group of all pairs).
static_assert(fc::sm90_launch_group(kCausal128, true, true, 16, 128, true, 1 << 20) == 32);
static_assert(fc::sm90_launch_group(kCausal128, true, true, 32, 64, true, 2 << 20) == 16);
static_assert(fc::sm90_launch_group(kCausal128, true, true, 32, 8, true, 2 << 20) == 8);
static_assert(fc::sm90_launch_group(kCausal128, true, true, 64, 16, true, 64 << 20) == 1);
static_assert(fc::sm90_launch_group(fc::sm90_launch_config(64, true), true, true, 6, 512, true, 256 << 10) == 512);
static_assert(kCausal128.persistent_max_sk == 8192 && kCausal128.static_max_sk == 512);
// d128 causal: the short kernel is the persistent launch, to 8192 keys; the main kernel one CTA per tile past it.
static_assert(kCausal128.short_max_sk == 8192 && fc::sm90_kind(128, true, 8192) == fc::Sm90Kind::short_seq);
static_assert(fc::sm90_kind(128, true, 8193) == fc::Sm90Kind::main && !fc::sm90_persistent_launch(kCausal128, 8193));
static_assert(fc::sm90_launch_group(kCausal128, true, false, 64, 16) == 8);
static_assert(fc::sm90_launch_group(kCausal128, true, false, 128, 16) == 0);  // 16k at d128: mixed
static_assert(fc::sm90_launch_group(kCausal128, true, false, 4, 512) == 0);   // 512: 4 m-blocks a head
static_assert(fc::sm90_launch_group(kCausal128, true, false, 64, 8) == 0);    // one group: the m-major order
static_assert(fc::sm90_launch_group(fc::sm90_launch_config(128, false), false, false, 32, 64) == 0);
constexpr auto kMainK = fc::Sm90Kind::main, kShortK = fc::Sm90Kind::short_seq, kSmallK = fc::Sm90Kind::small;
// The short kernels: d64 causal shifts its rows (own blocks); d128 non-causal prefetches Q beside staged O with 128-key
// blocks; d256 runs 64-key blocks (causal to 4096 keys, persistent; non-causal to 512) with staged O in one buffer
// the consumers share.
using Short64C = fc::Sm90Shape<64, true, kShortK>;
using Short64 = fc::Sm90Shape<64, false, kShortK>;
using Short128 = fc::Sm90Shape<128, false, kShortK>;
static_assert(Short64C::kShiftRows && Short64C::kOwnBlocks);
static_assert(!Short64::kShiftRows && !Short64::kQPrefetch);
static_assert(Short128::kQPrefetch && Short128::kOStage && Short128::kBlockN == 128 && Short128::kQBufs == 2);
static_assert(fc::Sm90Shape<256, true, kShortK>::kBlockN == 64 && fc::sm90_launch_config(256, true).short_max_sk == 4096 &&
              fc::Sm90Shape<256, true, kShortK>::kOStage && fc::Sm90Shape<256, true, kShortK>::kOBufs == 1);
static_assert(fc::sm90_launch_config(256, false).short_max_sk == 512 && fc::Sm90Shape<256, false, kShortK>::kBlockN == 64 &&
              fc::Sm90Shape<256, false, kShortK>::kOStage && fc::Sm90Shape<256, false, kShortK>::kOBufs == 1);
// The small kernels: d64 to 1024 keys (causal to 2048), four consumers on 64-key blocks with staged O, own blocks and
// shifted rows; the short kernels past them at every length (d64 has no main kernel), persistent.
static_assert(fc::sm90_kind(64, true, 2048) == kSmallK && fc::sm90_kind(64, false, 1) == kSmallK);
static_assert(fc::sm90_kind(64, false, 1024) == kSmallK && fc::sm90_kind(64, true, 1025) == kSmallK);
static_assert(fc::sm90_kind(64, true, 2049) == kShortK && fc::sm90_kind(64, true, 1 << 20) == kShortK);
static_assert(fc::sm90_kind(64, false, 1 << 20) == kShortK && fc::sm90_persistent_launch(fc::sm90_launch_config(64, true), 1 << 20));
static_assert(fc::sm90_kind(64, false, 1025) == kShortK && fc::sm90_kind(128, true, 512) != kSmallK);
using Small64C = fc::Sm90Shape<64, true, kSmallK>;
static_assert(Small64C::kBlockM == 256 && Small64C::kBlockN == 64 && Small64C::kOStage && Small64C::kQBufs == 1 &&
              Small64C::kOwnBlocks && Small64C::kShiftRows && !Small64C::kOTma && Small64C::kNarrow == 0);
using Small64 = fc::Sm90Shape<64, false, kSmallK>;
static_assert(Small64::kBlockM == 256 && Small64::kOStage && Small64::kQBufs == 1 && Small64::kOBufs == 4);
// Lazy rescaling: mode 4 (l from the P·V, tile::mma_AB_rowsum) at d64 alone, whose shared memory holds the ones tile
// (a K/V block's rows x 128 bytes; sm90_run.cuh asserts that Sm90Smem fits); mode 3 elsewhere, without it.
static_assert(Small64::kLazy == 4 && fc::Sm90Shape<64, true, kShortK>::kLazy == 4);
static_assert(fc::Sm90Shape<128, false>::kLazy == 3 && fc::Sm90Shape<256, true, kShortK>::kLazy == 3);
// Calls with an LSE run d64's kernels in mode 3 (the *_lse kinds: f32 sums), the same shapes; elsewhere no change.
constexpr auto kSmallL = fc::Sm90Kind::small_lse, kShortL = fc::Sm90Kind::short_lse;
static_assert(fc::sm90_kind(64, false, 512, true) == kSmallL && fc::sm90_kind(64, true, 8192, true) == kShortL);
static_assert(fc::sm90_kind(128, false, 512, true) == kShortK && fc::sm90_kind(256, true, 16384, true) == kMainK);
static_assert(fc::Sm90Shape<64, false, kSmallL>::kLazy == 3 && fc::Sm90Shape<64, true, kShortL>::kLazy == 3);
static_assert(fc::Sm90Shape<64, false, kSmallL>::kBlockM == 256 && fc::Sm90Shape<64, false, kSmallL>::kOBufs == 4 &&
              fc::Sm90Shape<64, true, kShortL>::kNarrow == 64 && fc::Sm90Shape<64, true, kShortL>::kShiftRows);
static_assert(Small64::kSmemBytes == fc::Sm90Shape<64, false, kSmallK>::kBaseSmemBytes + 4 * 128 * 64 &&
              Small64::kBaseSmemBytes == 2 * (256 * 64 + 2 * 8 * 64 * 64) + 2048 + 64 * 128);
// wgmma descriptors move on within a K-major tile by these byte offsets (tile::desc_add): 8 columns are one 16-byte
// chunk, 64 columns one swizzled block of R rows x 128 bytes.
static_assert(tl::kmajor_offset<tl::st_bf<64, 128>>(16) == 32 && tl::kmajor_offset<tl::st_bf<64, 128>>(48) == 96);
static_assert(tl::kmajor_offset<tl::st_bf<64, 128>>(64) == 64 * 128);
static_assert(tl::kmajor_offset<tl::st_bf<80, 256>>(208) == 3 * 80 * 128 + 32);
// Narrow first blocks: d64's causal short kernel only, in steps of 64 keys (the main kernels lost with them).
static_assert(fc::Sm90Shape<64, true, kShortK>::kNarrow == 64 && fc::Sm90Shape<128, true, kMainK>::kNarrow == 0);
static_assert(fc::Sm90Shape<128, true, kShortK>::kNarrow == 0 && fc::Sm90Shape<256, true, kShortK>::kNarrow == 0);
static_assert(fc::Sm90Shape<64, false, kShortK>::kNarrow == 0);

// The sm80 forward's table has one row per instantiated head dim and causality, each inside sm_86's shared memory.
constexpr bool sm80_rows_complete() {
  for (int d : fc::sm80::kHeadDims)
    for (bool causal : {false, true}) {
      const fc::sm80::Sm80FwdShape s = fc::sm80::sm80_fwd_shape(d, causal);
      if (s.d != d || s.block_n % 16 != 0 || (s.rows != 16 && s.rows != 32) ||
          std::size_t(4 * s.rows + 4 * s.block_n) * d * 2 > fc::sm80::kSm80SmemLimitSm86)
        return false;
    }
  return true;
}
static_assert(sm80_rows_complete());
static_assert(fc::sm80::Traits<64>::kBlockM == 128 && fc::sm80::Traits<128, true>::kBlockM == 128 &&
              fc::sm80::Traits<256>::kBlockM == 64 && !fc::sm80::Traits<128>::kQInRegs &&
              !fc::sm80::Traits<256>::kQInRegs);
// Varlen runs one lazy-mode-3 kind per head dim and causality (an LSE from it is exact), never a clustered or
// row-shifted build.
constexpr bool varlen_kinds_plain() {
  for (const fc::Sm90Launch& l : fc::kSm90Launches) {
    const fc::Sm90Kind k = fc::sm90_varlen_kind(l.d, l.causal);
    if (!fc::sm90_has_kernel(l.d, l.causal, k) || fc::sm90_kernel(l.d, l.causal, k).lazy != 3) return false;
  }
  return true;
}
static_assert(varlen_kinds_plain());
static_assert(fc::Sm90Shape<128, false, fc::Sm90Kind::main, fc::Sm90Mods::off, fc::Layout::Varlen>::kCluster == 1 &&
              !fc::Sm90Shape<64, true, fc::Sm90Kind::short_lse, fc::Sm90Mods::off, fc::Layout::Varlen>::kShiftRows);
// Register budgets: setmaxnreg only moves registers within a CTA's pool (kThreads x the entry count), and the CTAs
// of an SM share its 64K registers.
template <int D, bool kCausal, fc::Sm90Kind kKind = kMainK>
constexpr bool regs_fit() {
  using Sh = fc::Sm90Shape<D, kCausal, kKind>;
  return Sh::kProducerRegs * 128 + Sh::kConsumerRegs * 128 * Sh::kConsumers <= Sh::kEntryRegs * Sh::kThreads &&
         Sh::kEntryRegs * Sh::kThreads <= 65536 && Sh::kConsumerRegs % 8 == 0 &&
         Sh::kConsumerRegs <= 256;
}
static_assert(regs_fit<64, false, kShortK>() && regs_fit<64, true, kShortK>() && regs_fit<128, false>() && regs_fit<128, true>() &&
              regs_fit<256, false>() && regs_fit<256, true>() && regs_fit<64, false, kSmallK>() &&
              regs_fit<64, true, kSmallK>());
static_assert(Small64::kConsumerRegs == 112, "four consumers get 112 registers (pool 96 x 640)");
static_assert(fc::Sm90Shape<128, false>::kConsumerRegs == 240 && Short64::kConsumerRegs == 160,
              "two consumers get 240 registers (pool 168 x 384), three 160 (pool 128 x 512)");

TEST_CASE("host: TMA addressability rules name the broken rule") {
  alignas(16) static char buf[64];  // only the address is inspected
  CHECK(tl::tma_unsupported(buf, 1 << 20, 1024, 128, 2).empty());
  CHECK(tl::tma_unsupported(buf + 2, 1 << 20, 1024, 128, 2).find("base address") != std::string::npos);
  CHECK(tl::tma_unsupported(buf, 1 << 20, 1028, 128, 2).find("seq stride") != std::string::npos);
  CHECK(tl::tma_unsupported(buf, 1 << 20, 1024, 132, 2).find("head stride") != std::string::npos);
  CHECK(tl::tma_unsupported(buf, (1 << 20) + 4, 1024, 128, 2).find("batch stride") != std::string::npos);
  CHECK(tl::tma_unsupported(buf, std::int64_t{1} << 40, 1024, 128, 2).find("out of TMA range") != std::string::npos);
}

TEST_CASE("host: shared tiles use the 128-byte swizzle and each element has its own slot") {
  using S = tl::st<tl::bf16, 16, 128>;
  std::set<std::uint32_t> seen;
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < 128; ++c) {
      const std::uint32_t off = S::byte_offset(r, c);
      // Column block c / 64, row r, 16-byte chunk (c % 64) / 8 XOR r % 8, element c % 8 inside it.
      const std::uint32_t want =
          (c / 64) * 16 * 128 + r * 128 + ((((c % 64) / 8) ^ (r % 8)) * 16) + (c % 8) * 2;
      CHECK(off == want);
      seen.insert(off);
    }
  CHECK(seen.size() == 16u * 128u);
  CHECK(*seen.rbegin() < static_cast<std::uint32_t>(S::kBytes));
}

// fastdiv (tile/fastdiv.cuh): the quotient and remainder of / and % for every divisor to 300 and some large ones,
// over dividends from 0 to 2^31 - 1 (the tile indices it divides stay below that).
static_assert(tl::fastdiv(7).div(2147483647) == 2147483647 / 7 && tl::fastdiv(1).div(123) == 123);
TEST_CASE("host: fastdiv equals / and % for launch-sized divisors") {
  std::vector<std::uint32_t> divisors;
  for (std::uint32_t d = 1; d <= 300; ++d) divisors.push_back(d);
  for (std::uint32_t d : {511u, 512u, 513u, 4096u, 12345u, 65536u, 1000003u, (1u << 30) + 1, 2147483647u})
    divisors.push_back(d);
  std::vector<int> xs;
  for (int x = 0; x < 5000; ++x) xs.push_back(x);
  for (std::int64_t x = 5000; x < 2147483647; x = x * 3 / 2 + 7) xs.push_back(static_cast<int>(x));
  for (int x : {2147483647, 2147483646, 1073741824, 1073741823}) xs.push_back(x);
  int bad = 0;
  for (std::uint32_t d : divisors) {
    const tl::fastdiv f(d);
    for (int x : xs) bad += f.div(x) != x / static_cast<int>(d) || f.mod(x) != x % static_cast<int>(d);
  }
  CHECK(bad == 0);
}

// The variants' ranges (attn/sm90_mods.cuh) against a brute force over rows and keys: the key blocks a forward tile
// visits are exactly those from its rows' lowest seen key to their highest; the query blocks a backward key block visits
// are exactly those with a row that sees one of its keys; and the key blocks below one that visit a query block number
// its index minus the block of the query block's lowest seen key (the deterministic dQ order's count).
TEST_CASE("host: the variants' window ranges match a brute force") {
  auto sees = [](int i, int j, int sq, int sk, int wl, int wr, bool causal) {
    const int diag = i + sk - sq;
    int lo = 0, hi = sk;
    if (causal) hi = std::clamp(diag + 1, 0, sk);
    if (wr >= 0) hi = std::min(hi, std::clamp(diag + wr + 1, 0, sk));
    if (wl >= 0) lo = std::clamp(diag - wl, 0, sk);
    return j >= lo && j < std::max(lo, hi);
  };
  constexpr int M = 64, N = 80;
  int fails = 0;
  for (int sq : {1, 17, 100, 257})
    for (int sk : {1, 17, 130, 300})
      for (int wl : {-1, 0, 3, 50, 1000})
        for (int wr : {-1, 0, 2, 60, 1000})
          for (bool causal : {false, true}) {
            fc::FwdParams f{};
            f.seqlen_q = sq, f.seqlen_k = sk, f.window_left = wl, f.window_right = wr, f.causal = causal;
            f.scale = 0.125f;
            const fc::Sm90ModParams m = fc::sm90_mod_params(f);
            for (int r0 = 0; r0 < sq; r0 += M) {
              const fc::Sm90Blocks b = fc::sm90_window_blocks<N>(m, r0, r0 + M, sq, sk);
              int kmin = sk, kmax = -1;
              for (int i = r0; i < std::min(sq, r0 + M); ++i)
                for (int j = 0; j < sk; ++j)
                  if (sees(i, j, sq, sk, wl, wr, causal)) kmin = std::min(kmin, j), kmax = std::max(kmax, j);
              // from the first key seen, ceil(span / N) blocks (sm90_window_blocks without ALiBi)
              fails += kmax < 0 ? b.n != 0 : b.key0 != kmin || b.n != (kmax - kmin + N) / N;
            }
            std::vector<int> visits((sq + M - 1) / M, 0);
            for (int key0 = 0; key0 < sk; key0 += N) {
              const int last = std::min(key0 + N, sk) - 1;
              const fc::Sm90Span r = fc::sm90_window_rows(m, key0, last, sq, sk);
              for (int mb = 0; mb * M < sq; ++mb) {
                bool any = false;
                for (int i = mb * M; i < std::min(sq, mb * M + M); ++i)
                  for (int j = key0; j <= last; ++j) any |= sees(i, j, sq, sk, wl, wr, causal);
                const bool visited = r.hi > r.lo && mb >= r.lo / M && mb <= (r.hi - 1) / M;
                fails += any != visited;
                if (visited) fails += key0 / N - fc::sm90_window_keys(m, mb * M, mb * M + M, sq, sk).lo / N != visits[mb]++;
              }
            }
          }
  CHECK(fails == 0);
}

// ALiBi's visit order (sm90_window_blocks' lead, sm90_block_key): every block of the tile once, and for each warp of
// 16 rows, by the first block that Sm90RowMods::peak_seen accepts, the block of each of its rows' ALiBi peak (the key
// it sees nearest its diagonal) has been visited: past it the softmax's lazy reference holds. That block comes right
// after those between the tile's first block and the warp's peak, so only these take the exact path.
TEST_CASE("host: ALiBi's visit order reaches every row's peak by the block peak_seen names") {
  constexpr int M = 128;
  const float slope = 1.0f;
  int fails = 0, cases = 0;
  auto check = [&]<int N>() {
    for (int sq : {1, 17, 100, 257, 700})
      for (int sk : {1, 17, 130, 300, 701})
        for (int wl : {-1, 0, 50})
          for (int wr : {-1, 0, 60})
            for (bool causal : {false, true}) {
              fc::FwdParams f{};
              f.seqlen_q = sq, f.seqlen_k = sk, f.window_left = wl, f.window_right = wr, f.causal = causal;
              f.scale = 0.125f, f.alibi_slopes = &slope;
              const fc::Sm90ModParams m = fc::sm90_mod_params(f);
              const fc::Sm90ModParams plain = [&] { fc::Sm90ModParams q = m; q.alibi = nullptr; return q; }();
              for (int r0 = 0; r0 < sq; r0 += M) {
                const fc::Sm90Blocks b = fc::sm90_window_blocks<N>(m, r0, r0 + M, sq, sk);
                const fc::Sm90Blocks b0 = fc::sm90_window_blocks<N>(plain, r0, r0 + M, sq, sk);
                const fc::Sm90Span keys = fc::sm90_window_keys(m, r0, r0 + M, sq, sk);
                // ALiBi's blocks on multiples of N, the others from the tile's first key
                if (keys.hi <= keys.lo) fails += b.n != 0 || b0.n != 0;
                else
                  fails += b.key0 != keys.lo / N * N || b.n != (keys.hi + N - 1) / N - keys.lo / N ||
                           b0.key0 != keys.lo || b0.n != (keys.hi - keys.lo + N - 1) / N;
                fails += b0.lead != 0 || b.lead < 0 || (b.n > 0 && b.lead >= b.n);
                fails += causal && b.lead != 0;  // causal kernels keep the plain order (Sm90Shape::kAlibiOrder)
                if (b.n == 0) continue;
                std::vector<int> at(b.n, -1);  // visit position of each block
                for (int it = 0; it < b.n; ++it) {
                  const int blk = (fc::sm90_block_key<N>(b, it) - b.key0) / N;
                  if (blk < 0 || blk >= b.n || at[blk] >= 0) ++fails;
                  else at[blk] = it;
                }
                for (int w0 = r0; w0 < std::min(sq, r0 + M); w0 += 16) {
                  const int diag0 = w0 + sk - sq;
                  int seen = b.n;
                  for (int it = b.n - 1; it >= 0; --it)
                    if (fc::sm90_block_key<N>(b, it) <= std::max(diag0, 0)) seen = it;
                  // and no later than the blocks between the tile's first block and the warp's peak need: the
                  // blocks above the peaks (from the highest down, each past the reference) are visited last
                  const int start = std::clamp(std::min(sq, r0 + M) - 1 + sk - sq, keys.lo, keys.hi - 1) / N;
                  fails += seen > start - std::clamp(std::max(diag0, 0), keys.lo, keys.hi - 1) / N;
                  for (int i = w0; i < std::min(sq, w0 + 16); ++i) {
                    // the row's visible keys, as sm90_window_keys of one row
                    const fc::Sm90Span r = fc::sm90_window_keys(m, i, i + 1, sq, sk);
                    if (r.hi <= r.lo) continue;
                    const int peak = std::clamp(i + sk - sq, r.lo, r.hi - 1);
                    ++cases;
                    fails += peak < keys.lo || peak >= keys.hi || at[(peak - b.key0) / N] > seen;
                  }
                }
              }
            }
  };
  check.template operator()<128>();
  check.template operator()<176>();
  check.template operator()<80>();
  CHECK(cases > 0);
  CHECK(fails == 0);
}

// Softcap's tanh (tile::tanh_of_exp2, which tile::tanh_exp2 feeds ex2's result) against std::tanh in double over a
// dense sweep, with ex2.approx's error (2^-22 relative) either way: absolute error < 3e-7 (the ex2 + rcp.approx form it
// replaced: the same 2.6e-7), so that softcap 50 moves a score by < 2e-5 in log2 units, far under f16's and bf16's
// rounding of P (2^-12, 2^-9); both ends saturate, NaN stays NaN. Measured (steps of 1e-5 in y): 2.63e-7, and 2.75e-7
// of a at a = 50, with rcp_fma's third-order and Newton steps (2.43e-7 / 2.55e-7 with three Newton steps); relative
// 2.3e-5 where |tanh| >= 0.01 either way (ex2's error where 1 - 2 / (e + 1) cancels). rcp_fma itself: 7.6e-8 relative
// over [1, 2^32].
TEST_CASE("host: tanh from ex2 with an FMA-pipe reciprocal") {
  constexpr float kCap = 50.0f;  // a · tanh, as softcap's cap · tanh
  double worst = 0, worst_cap = 0;
  for (double y = -80.0; y <= 80.0; y += 1e-4) {
    const float yf = static_cast<float>(y);
    const double ref = std::tanh(double(yf) * 0.5 * 0.69314718055994531);
    const double e = std::exp2(double(std::min(yf, tl::kTanhMaxY)));
    for (double rel : {-0x1p-22, 0.0, 0x1p-22}) {
      const float ef = static_cast<float>(e * (1.0 + rel));
      worst = std::max(worst, std::abs(double(tl::tanh_of_exp2(ef)) - ref));
      worst_cap = std::max(worst_cap, std::abs(double(tl::tanh_of_exp2(ef, kCap)) - kCap * ref) / kCap);
    }
  }
  CHECK(worst < 3e-7);
  CHECK(worst_cap < 3e-7);
  CHECK(tl::tanh_of_exp2(std::exp2(tl::kTanhMaxY)) == 1.0f);
  CHECK(tl::tanh_of_exp2(0.0f) == doctest::Approx(-1.0f).epsilon(1e-6));
  CHECK(tl::tanh_of_exp2(1.0f) == 0.0f);
  CHECK(std::isnan(tl::tanh_of_exp2(std::numeric_limits<float>::quiet_NaN())));
  for (float d : {1.0f, 1.5f, 3.0f, 1e4f, 4294967296.0f}) CHECK(tl::rcp_fma(d) == doctest::Approx(1.0 / d).epsilon(1e-7));
  double worst_rcp = 0;  // every 97th float of [1, 2^32], rcp.approx's 2^-23
  for (std::uint32_t b = std::bit_cast<std::uint32_t>(1.0f); b <= std::bit_cast<std::uint32_t>(4294967296.0f); b += 97) {
    const float d = std::bit_cast<float>(b);
    worst_rcp = std::max(worst_rcp, std::abs(double(tl::rcp_fma(d)) * d - 1.0));
  }
  CHECK(worst_rcp < 0x1p-23);
}
