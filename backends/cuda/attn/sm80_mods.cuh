// Device side of the attention variants (sliding window, softcap, ALiBi, sinks) for the sm80 kernels: the score
// function and key bounds of src/cpu_backend.cpp's RowRules, in the exp2 domain the kernels work in. Only the variant
// instantiations (template flag Mods) call these; the plain kernels' loops never contain them.
//
// Offsets: for key j and query row i, d = j - (i + diag) (diag = Sk - Sq); the key is in the window when
// -left <= d <= right (sm80_traits.hpp's Window), and ALiBi subtracts slope * |d|. A tile passes its first offset
// off0 = key0 - row0 - diag and each element adds its own (key - row) within the tile.
#pragma once

#include "attn/fwd_params.hpp"
#include "attn/sm80_layout.cuh"
#include "attn/sm80_traits.hpp"
#include "tile/constants.hpp"
#include "tile/ops.cuh"

#include <cstdint>

namespace flashtile::cuda::sm80 {

// The variants of one (batch, query head).
struct ModState {
  Window win;
  float scale_log2;  // the plain score: dot * scale_log2
  // softcap: cap_out * tanh(dot * scale / softcap) as tile::tanh_exp2(dot * cap_in) (one MUFU op; tile/ops.cuh says
  // why not tanh.approx.f32): cap_in = 2 log2(e) scale / softcap, cap_out = softcap · log2 e
  float cap_in, cap_out;
  bool softcap, alibi;
  float slope2;  // ALiBi slope in log2 units
  float sink2;   // sink logit in log2 units (-inf: none)
};

// The ALiBi slope of (batch b, query head h) in log2 units: slopes are [Hq] or [B, Hq] (alibi_sb 0 or Hq).
__device__ __forceinline__ float alibi_slope2(const FwdParams& p, int b, int h) {
  return p.alibi_slopes != nullptr ? p.alibi_slopes[std::int64_t(b) * p.alibi_sb + h] * tile::kLog2e : 0.0f;
}

// Sinks are [Hq].
__device__ __forceinline__ ModState make_mods(const FwdParams& p, int b, int h) {
  ModState m;
  m.win = window_of(p);
  m.scale_log2 = p.scale_log2;
  m.softcap = p.softcap > 0.0f;
  m.cap_in = m.softcap ? 2.0f * tile::kLog2e * p.scale / p.softcap : 0.0f;
  m.cap_out = p.softcap * tile::kLog2e;
  m.alibi = p.alibi_slopes != nullptr;
  m.slope2 = alibi_slope2(p, b, h);
  m.sink2 = p.sinks != nullptr ? p.sinks[h] * tile::kLog2e : tile::kNegInf;
  return m;
}

// The keys [begin, end) rows first..last see (begin >= end: none), and the tiles of kN keys that hold them.
struct KeyRange {
  std::int64_t begin, end;
};
__device__ __forceinline__ KeyRange key_range(const Window& w, std::int64_t first, std::int64_t last,
                                              std::int64_t diag, std::int64_t Sk) {
  return {clamp64(first + diag - w.left, 0, Sk), clamp64(last + diag + w.right + 1, 0, Sk)};
}
struct TileRange {
  int begin, end;
};
template <int kN>
__device__ __forceinline__ TileRange tiles_of(const KeyRange& k) {
  if (k.end <= k.begin) return {0, 0};
  return {int(k.begin / kN), int((k.end + kN - 1) / kN)};
}
// The tiles of kN keys that query rows first .. end - 1 see.
template <int kN>
__device__ __forceinline__ TileRange row_tiles(const Window& w, std::int64_t first, std::int64_t end,
                                               std::int64_t diag, std::int64_t Sk) {
  return tiles_of<kN>(key_range(w, first, end - 1, diag, Sk));
}

// Whether a tile of keys key0 .. key0 + kN - 1 against rows row0 .. row0 + kM - 1 has an element outside the window.
template <int kM, int kN>
__device__ __forceinline__ bool crosses_window(const Window& w, std::int64_t key0, std::int64_t row0,
                                               std::int64_t diag) {
  return key0 + kN - 1 - (row0 + diag) > w.right || key0 - (row0 + kM - 1 + diag) < -w.left;
}

// The score (log2 units) of a raw dot product at offset d; `dcap` gets softcap's tanh' (1 - t²).
__device__ __forceinline__ float mod_score(const ModState& m, float dot, int d, float& dcap) {
  float x;
  if (m.softcap) {
    const float t = tile::tanh_exp2(dot * m.cap_in);
    x = m.cap_out * t;
    dcap = 1.0f - t * t;
  } else {
    x = dot * m.scale_log2;
    dcap = 1.0f;
  }
  if (m.alibi) x -= m.slope2 * float(d < 0 ? -d : d);
  return x;
}

__device__ __forceinline__ bool in_window(const Window& w, int d) { return d >= -w.left && d <= w.right; }

// f(hh, col, x) over a 16-row float tile: hh picks this lane's row (lane / 4 + 8 hh), col the tile column. The
// decode kernel's rows differ in head and query row, so its per-row values are indexed by hh.
template <int C, class F>
__device__ __forceinline__ void map_rows(tile::rt_fl<16, C>& t, F&& f) {
  const int c0 = tile::rt_coords(tile::lane_id(), 0).col;
  tile::each<tile::rt_fl<16, C>>([&](int, int j, int k) {
    const int hh = k & 1, c = 16 * j + c0 + ((k & 2) ? 8 : 0);
    t.v[0][j][k].x = f(hh, c, t.v[0][j][k].x);
    t.v[0][j][k].y = f(hh, c + 1, t.v[0][j][k].y);
  });
}

// Forward scores of a warp's R query rows x C keys in place: raw dot products to log2-unit scores, keys outside the
// window or at key0 + c >= Sk to -inf. off0 = key0 - row0 - diag; mask: whether any element may be masked.
template <int R, int C>
__device__ __forceinline__ void mod_scores(tile::rt_fl<R, C>& s, const ModState& m, int off0, int keys_left,
                                           bool mask) {
  if (m.softcap) {
    tile::map(s, [&](int, int, float x) { return tile::tanh_exp2(x * m.cap_in, m.cap_out); });
  } else {
    tile::mul(s, s, m.scale_log2);
  }
  if (m.alibi) {  // x - slope2 · |d|, d = off0 + c - r
    // d as the lane's part plus a constant an element, in float (exact below 2^24): an int d took an I2F an element,
    // which runs at MUFU's quarter rate (sm_80 to sm_90), besides the IADD and IABS. A 16-row piece wholly on one
    // side of its rows' diagonals (d <= 0 everywhere: off + C - 1 <= 0; d >= 0: off >= 15) knows d's sign, so the
    // bias is one FFMA on d (FFMA takes no |.| operand).
    const tile::coord l0 = tile::rt_coords(tile::lane_id(), 0);
#pragma unroll
    for (int i = 0; i < R / 16; ++i) {
      const int off = off0 - 16 * i;  // piece i's rows start 16 i below the warp's first
      const float base = float(off + l0.col - l0.row);
      auto dist = [&](int j, int k) {
        return base + float(16 * j + tile::rt_coords(0, k).col - tile::rt_coords(0, k).row);
      };
      const bool before = off + C - 1 <= 0, after = off >= 15;
      if (before || after) {
        const float signed_slope = before ? m.slope2 : -m.slope2;
#pragma unroll
        for (int j = 0; j < C / 16; ++j)
#pragma unroll
          for (int k = 0; k < 4; ++k) {
            const float d = dist(j, k);
            s.v[i][j][k].x = fmaf(signed_slope, d, s.v[i][j][k].x);
            s.v[i][j][k].y = fmaf(signed_slope, d + 1.0f, s.v[i][j][k].y);
          }
      } else {
#pragma unroll
        for (int j = 0; j < C / 16; ++j)
#pragma unroll
          for (int k = 0; k < 4; ++k) {
            const float d = dist(j, k);
            s.v[i][j][k].x = fmaf(-m.slope2, fabsf(d), s.v[i][j][k].x);
            s.v[i][j][k].y = fmaf(-m.slope2, fabsf(d + 1.0f), s.v[i][j][k].y);
          }
      }
    }
  }
  if (mask) {
    tile::map(s, [&](int r, int c, float x) {
      return c < keys_left && in_window(m.win, off0 + c - r) ? x : tile::kNegInf;
    });
  }
}

// The backward's P and dS of one tile, in place, from the raw dot products s and dp = dO·Vᵀ (or V·dOᵀ):
// P = exp2(score - lse2) where visible (else exactly 0), dS = P ∘ (dp - Δ) · tanh'. kKeyRows: the tile's rows are keys
// and its columns queries (lse2, delta per column), else rows are queries (per row). key_lim / q_lim: how many of the
// tile's keys and query rows exist (key0 + k < Sk, row0 + q < Sq). off0 = key0 - row0 - diag.
template <bool kKeyRows, int C, class V>
__device__ __forceinline__ void mod_p_ds(tile::rt_fl<16, C>& s, tile::rt_fl<16, C>& dp, const V& lse2, const V& delta,
                                         const ModState& m, int off0, int key_lim, int q_lim) {
  const int lane = tile::lane_id();
  tile::each<tile::rt_fl<16, C>>([&](int, int j, int k) {
    const tile::coord rc = tile::rt_coords(lane, k);
    auto one = [&](float dot, float dpv, int e) {
      const int r = rc.row, c = 16 * j + rc.col + e;
      float lv, dv;
      if constexpr (kKeyRows) {
        const int at = ((k & 2) ? 2 : 0) + e;
        lv = lse2.v[j][at], dv = delta.v[j][at];
      } else {
        lv = lse2.v[0][k & 1], dv = delta.v[0][k & 1];
      }
      const int kr = kKeyRows ? r : c, qr = kKeyRows ? c : r, d = off0 + kr - qr;
      float dcap;
      const float x = mod_score(m, dot, d, dcap);
      const bool visible = kr < key_lim && qr < q_lim && in_window(m.win, d);
      const float p = visible ? tile::fast_exp2(x - lv) : 0.0f;  // a select: x - lv may be inf - inf
      return make_float2(p, p * (dpv - dv) * dcap);
    };
    const float2 a = one(s.v[0][j][k].x, dp.v[0][j][k].x, 0), b = one(s.v[0][j][k].y, dp.v[0][j][k].y, 1);
    s.v[0][j][k] = make_float2(a.x, b.x);
    dp.v[0][j][k] = make_float2(a.y, b.y);
  });
}

// Folds a sink into a row's finished softmax state (m: max in log2 units, l: its full sum): the sink joins the max and
// the denominator only. Returns the factor that rescales the row's O (accumulated against m) to the new denominator;
// a row that saw no key (l = 0, m = -inf) gets O = 0 and LSE = the sink, as the CPU reference.
__device__ __forceinline__ float fold_sink(float& m, float& l, float sink2) {
  const float mx = m > sink2 ? m : sink2;
  const float f = tile::fast_exp2(m - mx);  // m = -inf: 0
  l = l * f + tile::fast_exp2(sink2 - mx);
  m = mx;
  return f;
}

}  // namespace flashtile::cuda::sm80
