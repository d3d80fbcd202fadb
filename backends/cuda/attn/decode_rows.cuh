// What the two split-KV decode kernels share (sm80_decode.cuh: cp.async tiles; sm90_decode.cuh: bulk-copied padded
// tiles): a warp's 16 packed rows (packed row pr of kv head hk is query head hk * group + pr / Sq, query row pr % Sq),
// the step over one tile of kN keys (scores, the causal mask or the variants, the online softmax, P·V) and the
// finished rows' store as split partials (O normalized, LSE in log2 units) or as the output itself.
#pragma once

#include "attn/fwd_params.hpp"
#include "attn/sm80_layout.cuh"
#include "attn/sm80_mods.cuh"
#include "tile/constants.hpp"
#include "tile/ops.cuh"

#include <cstdint>

namespace flashtile::cuda::sm80 {

// One warp's rows: pr0 is its first packed row (rows past `rows` are padding: computed, never stored). Mods: each
// lane's two rows' diagonal and ALiBi slope, since the packed rows differ in head and query row.
template <bool Mods>
struct DecodeRows {
  int pr0, rows, sq, group, b, hk;
  std::int64_t sk, diag;  // the sequence's keys; bottom-right causal: row i sees keys <= i + diag
  ModState md;            // window and softcap (Mods)
  int row_diag[2];
  float slope2[2];
};

template <bool Mods>
__device__ __forceinline__ DecodeRows<Mods> decode_rows(const FwdParams& p, int b, int hk, int group, int rows,
                                                        int pr0, std::int64_t sk) {
  DecodeRows<Mods> r{pr0, rows, p.seqlen_q, group, b, hk, sk, sk - p.seqlen_q, {}, {0, 0}, {0.f, 0.f}};
  if constexpr (Mods) {
    r.md = make_mods(p, b, hk * group);
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      // Padding rows take the group's first head: their results are never stored.
      const int pr = pr0 + (tile::lane_id() >> 2) + 8 * hh, hq = pr < rows ? pr / r.sq : 0;
      r.row_diag[hh] = pr % r.sq + int(r.diag);
      r.slope2[hh] = alibi_slope2(p, b, hk * group + hq);
    }
  }
  return r;
}

// The tiles a CTA's rows can see (Mods: every query row's window), cut into `splits` ranges: this split's [t0, t1).
template <int kN, bool Mods>
__device__ __forceinline__ TileRange split_tiles(const DecodeRows<Mods>& r, int split, int splits) {
  TileRange t{0, int((r.sk + kN - 1) / kN)};
  if constexpr (Mods) t = row_tiles<kN>(r.md.win, 0, r.sq, r.diag, r.sk);
  const int per = (t.end - t.begin + splits - 1) / splits;
  const int t0 = min(t.end, t.begin + split * per);
  return {t0, min(t.end, t0 + per)};
}

// A warp's running rows: O (unnormalized), the row max m and this lane's part of the row sum l (log2 units).
template <int D>
struct DecodeAcc {
  tile::rt_fl<16, 16> o[D / 16];
  tile::rv_fl_rows<16> m, l;
};

template <int D>
__device__ __forceinline__ void init(DecodeAcc<D>& a) {
#pragma unroll
  for (int i = 0; i < D / 16; ++i) tile::zero(a.o[i]);
  tile::fill(a.m, tile::kNegInf);
  tile::fill(a.l, 0.f);
}

// One tile of kN keys starting at key n0: sk / sv hold its K and V rows (st or sp), q(kk) gives Q's 16-column slice kk.
template <int D, int kN, bool Mods, typename T, class QF, class KT, class VT>
__device__ __forceinline__ void decode_step(DecodeAcc<D>& a, QF&& q, const KT& sk, const VT& sv, std::int64_t n0,
                                            const DecodeRows<Mods>& r, const FwdParams& p) {
  using namespace tile;
  rt_fl<16, kN> s;
  zero(s);
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) {
    rt<T, kN, 16> kt;
    load_b(kt, sk, 0, kk * 16);
    mma_ABt(s, q(kk), kt, s);
  }
  if constexpr (Mods) {  // every tile: the packed rows differ in head (slope) and window
    map_rows(s, [&](int hh, int c, float x) {
      const int d = int(n0) + c - r.row_diag[hh];
      float dcap;
      x = mod_score(r.md, x, 0, dcap);
      x -= r.slope2[hh] * float(d < 0 ? -d : d);
      return n0 + c < r.sk && in_window(r.md.win, d) ? x : kNegInf;
    });
  } else {
    mul(s, s, p.scale_log2);
  }
  // Query row 0 sees the fewest keys: a tile wholly at or below its diagonal needs no causal mask.
  if (!Mods && (n0 + kN > r.sk || (p.causal && n0 + kN - 1 > r.diag))) {
    map(s, [&](int row, int c, float x) {
      const std::int64_t key = n0 + c;
      const bool visible = key < r.sk && (!p.causal || key <= (r.pr0 + row) % r.sq + r.diag);
      return visible ? x : kNegInf;
    });
  }
  rv_fl_rows<16> m_new, m_use, alpha;
  row_max(m_new, s, a.m);
#pragma unroll
  for (int hh = 0; hh < 2; ++hh) m_use.v[0][hh] = m_new.v[0][hh] == kNegInf ? 0.f : m_new.v[0][hh];
  sub(alpha, a.m, m_use);
  exp2(alpha, alpha);
  a.m = m_new;
  exp2_sub_row(s, s, m_use);
  mul(a.l, a.l, alpha);
  row_sum_partial(a.l, s, a.l);
#pragma unroll
  for (int i = 0; i < D / 16; ++i) mul_row(a.o[i], a.o[i], alpha);
  rt<T, 16, kN> pt;
  copy(pt, s);
#pragma unroll
  for (int i = 0; i < D / 16; ++i) {
    rt<T, kN, 16, layout::col> vt;
    load(vt, sv, 0, i * 16);
    mma_AB(a.o[i], pt, vt, a.o[i]);
  }
}

// The (batch, head, query row) index of a warp's row (0..15) among the call's batch * heads_q * Sq output rows.
template <bool Mods>
__device__ __forceinline__ std::int64_t out_row(const FwdParams& p, const DecodeRows<Mods>& r, int row) {
  const int pr = r.pr0 + row;
  return (std::int64_t(r.b) * p.heads_q + std::int64_t(r.hk) * r.group + pr / r.sq) * r.sq + pr % r.sq;
}

// Finishes a warp's rows (l reduced over the quad: call once) and stores them: as split `split`'s partials (o_part
// [splits, out_rows, D] f32, normalized; lse_part [splits, out_rows] in log2 units; an empty split gives 0 and -inf,
// which the combine weighs 0) or, with o_part null, as the output (16-bit, normalized; lse in natural units; calls
// with sinks always go through the combine, which adds each row's sink once).
template <int D, bool Mods, typename T>
__device__ __forceinline__ void decode_store(DecodeAcc<D>& a, const DecodeRows<Mods>& r, const FwdParams& p,
                                             float* o_part, float* lse_part, int split) {
  using namespace tile;
  const bool direct = o_part == nullptr;
  rv_fl_rows<16> inv;
#pragma unroll
  for (int hh = 0; hh < 2; ++hh) {
    float& l = a.l.v[0][hh];
    l = quad_sum(l);
    inv.v[0][hh] = l == 0.f ? 0.f : 1.f / l;
  }
  const int lane = lane_id();
  const std::int64_t out_rows = std::int64_t(p.batch) * p.heads_q * r.sq;
#pragma unroll
  for (int i = 0; i < D / 16; ++i) {
    mul_row(a.o[i], a.o[i], inv);
    each<rt_fl<16, 16>>([&](int, int, int k) {
      const coord c = rt_coords(lane, k);
      if (r.pr0 + c.row >= r.rows) return;
      const std::int64_t row = out_row(p, r, c.row);
      if (direct) {
        const std::int64_t hq = row / r.sq % p.heads_q, q = row % r.sq;
        *reinterpret_cast<packed_t<T>*>(static_cast<T*>(p.o) + std::int64_t(r.b) * p.o_sb + q * p.o_ss +
                                        hq * p.o_sh + i * 16 + c.col) = from_float2<T>(a.o[i].v[0][0][k]);
      } else {
        *reinterpret_cast<float2*>(o_part + (split * out_rows + row) * D + i * 16 + c.col) = a.o[i].v[0][0][k];
      }
    });
  }
  if ((lane & 3) == 0) {
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      const int row = (lane >> 2) + hh * 8;
      if (r.pr0 + row >= r.rows) continue;
      const float l = a.l.v[0][hh], lse2 = l == 0.f ? kNegInf : a.m.v[0][hh] + __log2f(l);
      if (!direct)
        lse_part[split * out_rows + out_row(p, r, row)] = lse2;
      else if (p.lse != nullptr)
        p.lse[out_row(p, r, row)] = lse2 * kLn2;
    }
  }
}

}  // namespace flashtile::cuda::sm80
