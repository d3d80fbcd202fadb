// The attention variants (issue 43: sliding window, softcap, ALiBi, sinks) for the sm90 kernels built with kMods
// (Sm90Shape): their parameters, the key blocks a tile's window touches, the score function and the sink's share of
// a row's softmax. Plain kernels compile none of it. Semantics: src/cpu_backend.cpp's RowRules.
//
// The kernels keep row maxima on raw scores (q·k, the scale folded into the exp2 afterwards; scale > 0), so the
// score function works in that domain too: softcap's cap * tanh(scale·x / cap) and ALiBi's slope · distance are
// divided by the scale, and the exp2 multiplies them back.
#pragma once

#include <algorithm>

#include "attn/fwd_params.hpp"
#include "attn/sm90_traits.hpp"
#include "tile/tile.cuh"

namespace flashtile::cuda {

// What the kMods kernels read of the launch (sm90_mod_params). Windows are clamped so that their bounds never
// overflow (a left window of Sk keys or a right one of Sq is unbounded), and causality is folded into the right
// window (0).
struct Sm90ModParams {
  int window_left, window_right;  // keys i + Sk - Sq - left .. i + Sk - Sq + right; -1 unbounded
  float cap_exp2;                 // softcap: raw x becomes cap_raw · tanh(x · cap_exp2 / (2 log2 e)); 0 off
  float cap_raw;                  // softcap / scale
  float inv_scale;                // ALiBi's slopes act on scaled scores
  const float* alibi;             // slope of (b, h) at alibi[b * alibi_sb + h], or null
  int alibi_sb;
  const float* sinks;  // f32 [Hq] (scaled domain), or null
};

inline Sm90ModParams sm90_mod_params(const FwdParams& f) {
  Sm90ModParams m{};
  m.window_left = f.window_left < 0 ? -1 : std::min(f.window_left, f.seqlen_k);
  m.window_right = f.causal ? 0 : f.window_right < 0 ? -1 : std::min(f.window_right, f.seqlen_q);
  if (f.softcap > 0) {
    m.cap_exp2 = 2.0f * tile::kLog2e * f.scale / f.softcap;
    m.cap_raw = f.softcap / f.scale;
  }
  m.inv_scale = 1.0f / f.scale;
  m.alibi = f.alibi_slopes;
  m.alibi_sb = f.alibi_sb;
  m.sinks = f.sinks;
  return m;
}

// The forward build a call runs (Sm90Mods; the launch layer's choice, and the kernel's name).
inline Sm90Mods sm90_fwd_build(const FwdParams& f) {
  return sm90_mods_build(f.window_left >= 0 || f.window_right >= 0, f.softcap > 0, f.alibi_slopes != nullptr,
                         f.sinks != nullptr);
}

// A range [lo, hi) of keys or query rows; empty: hi <= lo.
struct Sm90Span {
  int lo, hi;
};
// Keys that any of the query rows [r0, r1) sees (rows clipped to [0, Sq)).
__host__ __device__ __forceinline__ Sm90Span sm90_window_keys(const Sm90ModParams& m, int r0, int r1, int sq, int sk) {
  r0 = r0 > 0 ? r0 : 0;
  r1 = r1 < sq ? r1 : sq;
  if (r1 <= r0) return {0, 0};
  const int d0 = r0 + sk - sq, d1 = r1 - 1 + sk - sq;  // the first and last rows' diagonals
  auto clip = [sk](int x) { return x < 0 ? 0 : x > sk ? sk : x; };
  const int lo = m.window_left >= 0 ? clip(d0 - m.window_left) : 0;
  const int hi = m.window_right >= 0 ? clip(d1 + m.window_right + 1) : sk;
  return {lo, hi};
}

// The K/V blocks of N keys a tile visits, starting at keys key0, key0 + N, .., key0 + (n - 1) N (n = 0: no key), from
// the highest down, or (lead > 0) from the lead-th below the highest down to the first, then from the highest down to
// the rest.
struct Sm90Blocks {
  int key0, n;
  int lead = 0;
};
// The first key of the block at visit position it (0 .. n - 1).
template <int N>
__host__ __device__ __forceinline__ int sm90_block_key(const Sm90Blocks& b, int it) {
  const int o = b.n - 1 - b.lead - it;
  return b.key0 + (o < 0 ? o + b.n : o) * N;
}
// ALiBi's tiles start at the block holding their last row's diagonal (clipped to the keys they see), the peak of
// that row's bias: going down from it, each row meets its own peak within the first blocks (those its tile's
// diagonals span), past which its bias only falls and the lazy reference holds (Sm90Softmax::peaked). Visited from
// the highest block, a non-causal row's maximum instead rose by slope · N a block up to its diagonal, past the
// reference every time: P overflowed and each such block was computed again (sm90_redo_s), 12x the plain kernel's
// time at 4k. The ALiBi build's non-causal kernels only (sm90_alibi_order); causal tiles come out with lead 0.
// Without ALiBi the blocks start at the tile's first key, not at a multiple of N: a window's span of keys then takes
// ceil(span / N) blocks, where blocks on multiples of N took one more in most tiles (4096 keys at 32k: 25 for 24, 4%;
// TMA loads from any key, zero past Sk, and the masks cover the keys past the window).
template <int N>
__host__ __device__ __forceinline__ Sm90Blocks sm90_window_blocks(const Sm90ModParams& m, int r0, int r1, int sq,
                                                                  int sk) {
  const Sm90Span k = sm90_window_keys(m, r0, r1, sq, sk);
  if (k.hi <= k.lo) return {0, 0};
  if (m.alibi == nullptr) return {k.lo, (k.hi - k.lo + N - 1) / N};
  const int diag = (r1 < sq ? r1 : sq) - 1 + sk - sq;  // the last row's (rows past Sq have no peak)
  const int peak = diag < k.lo ? k.lo : diag >= k.hi ? k.hi - 1 : diag;
  return {k.lo / N * N, (k.hi + N - 1) / N - k.lo / N, (k.hi - 1) / N - peak / N};
}

// Query rows that see a key of [key0, last] (the backward's query blocks of a key block): row i sees keys
// i + off - left .. i + off + right (off = Sk - Sq), so rows key0 - off - right .. last - off + left, within [0, Sq).
__host__ __device__ __forceinline__ Sm90Span sm90_window_rows(const Sm90ModParams& m, int key0, int last, int sq,
                                                              int sk) {
  const int off = sk - sq;
  const int r0 = m.window_right >= 0 ? (key0 - off - m.window_right > 0 ? key0 - off - m.window_right : 0) : 0;
  const int r1 = m.window_left >= 0 ? (last - off + m.window_left + 1 < sq ? last - off + m.window_left + 1 : sq) : sq;
  return {r0, r1};
}

// ALiBi's slope of (batch, head) on raw scores, 0 without ALiBi.
__device__ __forceinline__ float sm90_alibi_slope(const Sm90ModParams& m, int batch, int head) {
  return m.alibi != nullptr ? m.alibi[batch * m.alibi_sb + head] * m.inv_scale : 0.0f;
}

// One tile's variants for the softmax's masks (Sm90Softmax::mask): the score function and the masks of the kernel's
// Sm90ModParams (softcap's tanh: tile::tanh_exp2), read where it lies (held in registers through the loop, its fields
// spilled d128), and ALiBi's slope of the tile's (batch, head) on raw scores. kBuild (Sm90Mods): the parts of the
// score function that this build compiles (masks: none; softcap: the tanh; alibi: both).
template <Sm90Mods kBuild>
struct Sm90RowMods {
  static constexpr bool kSoftcap = kBuild == Sm90Mods::softcap || kBuild == Sm90Mods::alibi;
  static constexpr bool kAlibi = kBuild == Sm90Mods::alibi;
  const Sm90ModParams& m;
  float slope;

  // Raw scores of the block at key0 (16 rows x NW keys) to the variants' scores, -inf where a row does not see a key.
  // diag0: the diagonal (i + Sk - Sq) of the warp's first row.
  template <int NW>
  __device__ __forceinline__ void apply(tile::rt_fl<16, NW>& s, int key0, int diag0, int sk) const {
    namespace tl = flashtile::tile;
    if (kSoftcap && m.cap_exp2 != 0.0f) {
      const float in = m.cap_exp2, out = m.cap_raw;
      tl::map(s, [&](int, int, float x) { return tl::tanh_exp2(x * in, out); });
    }
    if (kAlibi && slope != 0.0f) {  // x - slope · |i + Sk - Sq - j|
      // The distance as the lane's part of this block plus a constant an element: per-element (row - col) values
      // are loop-invariant, and ptxas kept them all in registers (spilled d128).
      const int lane = tl::lane_id();
      const float base = static_cast<float>(diag0 - key0 + (lane >> 2) - tl::rt_coords(lane, 0).col);
      auto dist = [&](int j, int k) {
        return base + static_cast<float>(tl::rt_coords(0, k).row - 16 * j - tl::rt_coords(0, k).col);
      };
      // A block wholly on one side of the warp's diagonals (keys up to its first row's, or from its last row's on:
      // warp-uniform) knows d's sign, so -slope · |d| is one FFMA on d: FFMA takes no |.| operand, and |d| cost one
      // more op an element. Most blocks are such (the diagonal's are the rest).
      const bool below = key0 + NW - 1 <= diag0, above = key0 >= diag0 + 15;
      if (below || above) {
        const float signed_slope = below ? -slope : slope;
        tl::each<tl::rt_fl<16, NW>>([&](int, int j, int k) {
          const float d = dist(j, k);
          s.v[0][j][k].x = fmaf(signed_slope, d, s.v[0][j][k].x);
          s.v[0][j][k].y = fmaf(signed_slope, d - 1.0f, s.v[0][j][k].y);
        });
      } else {
        tl::each<tl::rt_fl<16, NW>>([&](int, int j, int k) {
          const float d = dist(j, k);
          s.v[0][j][k].x = fmaf(-slope, fabsf(d), s.v[0][j][k].x);
          s.v[0][j][k].y = fmaf(-slope, fabsf(d - 1.0f), s.v[0][j][k].y);
        });
      }
    }
    // Row r sees columns lo(r) <= col < hi(r) of the block. Masks only where the block crosses a bound of one of the
    // rows (warp-uniform: row 0 ends first, row 15 starts last).
    const int wl = m.window_left, wr = m.window_right;
    const int hi0 = wr >= 0 ? min(sk, diag0 + wr + 1) : sk;
    if (key0 + NW > hi0 || (wl >= 0 && key0 < diag0 + 15 - wl)) {
      const int c0 = tl::rt_coords(tl::lane_id(), 0).col, row = tl::lane_id() >> 2;
      int lo[2], span[2];  // relative to the lane's column c0; one unsigned compare an element
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int diag = diag0 + row + 8 * h - key0;
        const int hi = wr >= 0 ? min(sk - key0, diag + wr + 1) : sk - key0;
        lo[h] = (wl >= 0 ? diag - wl : 0) - c0;
        span[h] = max(hi - c0 - lo[h], 0);
      }
      tl::each<tl::rt_fl<16, NW>>([&](int, int j, int k) {
        const unsigned at = static_cast<unsigned>(16 * j + tl::rt_coords(0, k).col - lo[k & 1]),
                       n = static_cast<unsigned>(span[k & 1]);
        s.v[0][j][k].x = at < n ? s.v[0][j][k].x : tl::kNegInf;
        s.v[0][j][k].y = at + 1 < n ? s.v[0][j][k].y : tl::kNegInf;
      });
    }
  }

  // Whether the block at key0 holds or lies below the peak of ALiBi's bias (the diagonal, at least key 0) of the
  // warp's first row, whose diagonal diag0 is the warp's lowest: in sm90_window_blocks' order every row of the warp
  // has met its peak once such a block was seen. Without ALiBi, always.
  __device__ __forceinline__ bool peak_seen(int key0, int diag0) const {
    return slope == 0.0f || key0 <= (diag0 > 0 ? diag0 : 0);
  }
};
// Plain kernels' stand-in (no members).
struct Sm90NoMods {};
// A tile's Sm90RowMods of build kBuild, or (no variants' loop) the stand-in. Only the ALiBi build reads a slope.
template <Sm90Mods kBuild>
__device__ __forceinline__ auto sm90_row_mods(const Sm90ModParams& m, int batch, int head) {
  if constexpr (!sm90_mods_loop(kBuild)) return Sm90NoMods{};
  else return Sm90RowMods<kBuild>{m, kBuild == Sm90Mods::alibi ? sm90_alibi_slope(m, batch, head) : 0.0f};
}

// The sink of head `head` joins the row's denominator (m: the row's reference, l its sum of exp2(s - m), both exp2
// domain; l = 0: no key seen): inv_l for O (0 without keys) and (m, l) to take the LSE from, as m + log2 l.
__device__ __forceinline__ void sm90_sink_row(float sink2, float& m, float& l, float& inv_l) {
  const float mn = l == 0.0f ? sink2 : fmaxf(m, sink2);
  const float f = l == 0.0f ? 0.0f : tile::fast_exp2(m - mn);
  const float lt = fmaf(l, f, tile::fast_exp2(sink2 - mn));
  inv_l = l == 0.0f ? 0.0f : f / lt;
  m = mn, l = lt;
}

}  // namespace flashtile::cuda
