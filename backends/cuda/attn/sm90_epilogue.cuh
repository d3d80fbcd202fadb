// sm90 forward: the epilogue role (Sm90Epilogue: O / l and the LSE of a consumer's rows, by predicated stores or
// through shared memory and TMA) and the storer role (sm90_store_staged_o), with the Q-band and O-row helpers they
// share with the kernel (sm90_fwd.cuh).
#pragma once

#include "attn/sm90_mods.cuh"
#include "attn/sm90_sched.cuh"
#include "attn/sm90_traits.hpp"
#include "tile/tile.cuh"

namespace flashtile::cuda {

// The band of kSm90Rows rows of a tile's Q buffer that consumer c of C reads (and stages O in). With shifted rows
// (Sm90Shape::kShiftRows) Q loads from row max(row0, 0): TMA coordinates stay >= 0 (a negative one stopped the kernel
// with an illegal instruction). So in a tile that starts k bands before row 0, consumer c's rows
// sit in band c - k, and the k consumers without rows take the bands past the tile's rows (read, never stored).
template <int C>
__device__ __forceinline__ int sm90_q_band(int row0, int c) {
  const int k = row0 < 0 ? -row0 / kSm90Rows : 0;
  return (c - k + C) % C * kSm90Rows;
}
template <bool kShift>
__device__ __forceinline__ int sm90_q_row(int row0) {  // where a tile's Q load starts
  return kShift ? max(row0, 0) : row0;
}
// Where a consumer whose rows start at row0 stores O by TMA: there, or, for shifted rows before row 0, at row sq, past
// the end (clipped, nothing written; a negative coordinate stops the kernel, and row < 0 stops staged O's storer).
template <bool kShift>
__device__ __forceinline__ int sm90_o_row(int row0, int sq) {
  return kShift && row0 < 0 ? sq : row0;
}

// What the epilogue reads of the launch. The kernel reads these fields where its Sm90Params keeps them (as with
// Sm90SchedParams: a copy changed the code).
template <typename T>
struct Sm90EpiParams {
  T* o;
  float* lse;  // [B, Hq, Sq] or null
  std::int64_t o_sb, o_ss, o_sh;
  int seqlen_q, heads_q;
  int o_tma;          // Sm90Shape::kOTma / kOStage builds: 1 when O is TMA-addressable (o_map), else direct stores
  CUtensorMap o_map;  // boxes of kSm90Rows rows x 64 columns
  const std::int32_t *cu_q, *cu_k;  // varlen kernels (Sm90Seq); lse is then [Hq, total_q]
  int total_q, total_k;
};

// The epilogue role, for the 16 rows of warp w of consumer c: O / l (0 where l = 0, rows that saw no key) and LSE
// (natural log); O with predicated 4-byte stores (rows >= Sq never written), or through shared memory and the copy
// engine where built so (kOTma: the tile's own Q buffer and one TMA store a consumer; kOStage: O buffers that the
// storer, sm90_store_staged_o, writes out).
template <typename Sh, typename T, typename P = Sm90EpiParams<T>>
struct Sm90Epilogue {
  static constexpr int D = Sh::kHeadDim;
  const P& p;  // Sm90EpiParams' fields
  int c, w, lane;  // this thread's consumer, its warp in it and its lane (the kernel's: a lane_id() of its own here
                   // changed the causal kernels' code)

  // O / l of the warp's rows into shared tile rows r0.., for the copy engine: the tile's last P·V is complete, so O's
  // registers are free to scale in place; then the generic-proxy writes are fenced for the async proxy that reads
  // them.
  template <typename TS, int SR>
  __device__ __forceinline__ static void to_smem(tile::st<TS, SR, D>& dst, int r0, tile::rt_fl<16, D>& o,
                                                 const tile::rv_fl_rows<16>& inv_l) {
    tile::mul_row(o, o, inv_l);
    tile::store(dst, o, r0, 0);
    tile::fence_proxy_async();
  }

  // kOTma, all threads of the consumer: O of its rows of tile et through staging and one TMA store. staging: the
  // tile's Q buffer, free once its last Q·Kᵀ completed (only this consumer's wgmmas read these rows: its band).
  // Thread 0 returns after the copy engine has read them, so its q_empty arrival lets the producer reuse them.
  __device__ __forceinline__ void store_tma(const Sm90Tile& et, tile::st<T, Sh::kBlockM, D>& staging,
                                            tile::rt_fl<16, D>& o, const tile::rv_fl_rows<16>& inv_l) const {
    namespace tl = flashtile::tile;
    const int band = Sh::kShiftRows ? sm90_q_band<Sh::kConsumers>(et.row0, c) : c * kSm90Rows;
    const int grow = sm90_o_row<Sh::kShiftRows>(et.row0 + c * kSm90Rows, p.seqlen_q);
    to_smem(staging, band + w * 16, o, inv_l);
    // One barrier per consumer (Sm90Bar): a shared id would let the threads of two consumers pass together before
    // this consumer's rows are written. Two consumers: constant ids (a runtime id makes ptxas reserve all 16; a
    // three-way choice at d256 once spilled 28-40 bytes). Three (d64's Q-prefetch kernel): a runtime id, where the
    // constant three-way choice spilled 16 bytes.
    if constexpr (Sh::kBlockM > 2 * kSm90Rows) tl::named_sync(kSm90BarOStore0 + c, kSm90WgThreads);
    else if (c == 0) tl::named_sync(kSm90BarOStore0, kSm90WgThreads);
    else tl::named_sync(kSm90BarOStore0 + 1, kSm90WgThreads);
    if (tl::warpgroup::thread() == 0) {
      tl::store_async(&p.o_map, staging, grow, et.head, et.batch, band);
      tl::store_commit();
      tl::store_wait<0>();
    }
  }

  // kOStage, all threads of the consumer: O / l of its rows of tile et into its buffer (or the shared one, taken in
  // consumer order) for the CTA's use-th tile with keys, then a hand-over to the storer. et null: the stop record
  // after the consumer's last tile (o unused).
  template <typename Smem>
  __device__ __forceinline__ void stage(const Sm90Tile* et, Smem& sm, int use, tile::rt_fl<16, D>& o,
                                        const tile::rv_fl_rows<16>& inv_l) const {
    namespace tl = flashtile::tile;
    const int row = et != nullptr ? sm90_o_row<Sh::kShiftRows>(et->row0 + c * kSm90Rows, p.seqlen_q) : -1,
              head = et ? et->head : 0, batch = et ? et->batch : 0;
    const int b = Sh::kOBufs == 1 ? 0 : c;
    // Each wait is for the phase right after the one this consumer's previous wait saw complete, so parity cannot
    // alias: with one buffer per consumer, phase use - 1 (the first use is free); with a shared one, the store of the
    // previous consumer in turn (consumer 0's first use is free).
    const bool free_first = Sh::kOBufs != 1 || c == 0;
    tl::wait(sm.o_empty[c], (use & 1) ^ (free_first ? 1 : 0));
    if (row >= 0) to_smem(sm.o.buf[b], w * 16, o, inv_l);
    if (tl::warpgroup::thread() == 0) {
      sm.o_dst[b][0] = row;
      sm.o_dst[b][1] = head;
      sm.o_dst[b][2] = batch;
    }
    tl::arrive(sm.o_full[b]);
  }

  // Tile t (tt: sched.tile(t), which causal kernels keep): O / l and LSE from o_acc, l (kLazy < 4: the lanes'
  // parts) and m_use. O through Q buffer qb and TMA, or staged as the CTA's use-th tile with keys, where built so
  // (qb < 0: tiles without keys, whose Q was never loaded).
  template <typename Sched, typename Smem>
  __device__ __forceinline__ void store(const Sched& sched, int t, const Sm90Tile& tt, Smem& sm, int qb, int use,
                                        tile::rt_fl<16, D>& o_acc, tile::rv_fl_rows<16> l,
                                        const tile::rv_fl_rows<16>& m_use) const {
    namespace tl = flashtile::tile;
    tl::rv_fl_rows<16> inv_l;
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      if constexpr (Sh::kLazy < 4) l.v[0][i] = tl::quad_sum(l.v[0][i]);  // the lanes' parts (kLazy 4: whole sums)
      inv_l.v[0][i] = l.v[0][i] == 0.0f ? 0.0f : 1.0f / l.v[0][i];  // == 0, not > 0: NaN in l stays NaN
    }
    // Non-causal kernels recompute the tile: holding it across the main loop cost d64 2%.
    const Sm90Tile et = Sched::kCausal ? tt : sched.tile(t);
    [[maybe_unused]] tl::rv_fl_rows<16> m_lse = m_use;  // kSinks: the LSE's m + log2 l, which a sink joins
    if constexpr (Sh::kSinks) {
      if (p.mods.sinks != nullptr) {
        const float sink2 = p.mods.sinks[et.head] * tl::kLog2e;
#pragma unroll
        for (int i = 0; i < 2; ++i) sm90_sink_row(sink2, m_lse.v[0][i], l.v[0][i], inv_l.v[0][i]);
      }
    }
    const int row0 = et.row0 + c * kSm90Rows + w * 16;  // first query row of this warp (< 0: a whole consumer's, skipped)
    auto seq = [&] { return sm90_seq<Sh::kLayout>(p, et.batch); };  // at each use, as the kernel's loop does
    const int valid = seq().sq - row0;
    // Varlen: never by TMA, whose box would write past a sequence's last row into the next one's.
    const bool via_tma = (Sh::kOTma || Sh::kOStage) && !Sh::kVarlen && qb >= 0 && p.o_tma;
    if constexpr (Sh::kOTma) if (via_tma) store_tma(et, sm.q[qb], o_acc, inv_l);
    if constexpr (Sh::kOStage) if (via_tma) stage(&et, sm, use, o_acc, inv_l);
    if (valid <= 0 || (Sh::kShiftRows && row0 < 0)) return;
    T* o = p.o + seq().b * p.o_sb + et.head * p.o_sh + static_cast<std::int64_t>(seq().q0 + row0) * p.o_ss;
    if (!via_tma) tl::store_scaled(o, p.o_ss, o_acc, inv_l, valid);
    if (p.lse != nullptr && (lane & 3) == 0) {
      float* lse = p.lse + (Sh::kVarlen ? static_cast<std::int64_t>(et.head) * p.total_q + seq().q0
                                        : (static_cast<std::int64_t>(et.batch) * p.heads_q + et.head) * p.seqlen_q);
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        const int r = row0 + (lane >> 2) + 8 * i;
        if (r < seq().sq) lse[r] = l.v[0][i] == 0.0f ? tl::kNegInf : ((Sh::kSinks ? m_lse : m_use).v[0][i] + __log2f(l.v[0][i])) * tl::kLn2;
      }
    }
  }

  // kOStage, after the consumer's last tile: its stop record for the storer.
  template <typename Smem>
  __device__ __forceinline__ void stop(Smem& sm, int use, tile::rt_fl<16, D>& o) const {
    if (p.o_tma) stage(nullptr, sm, use, o, tile::rv_fl_rows<16>{});
  }
};

// The storer role (one thread of the producer warpgroup): each staged buffer in use order, one TMA store each (rows
// past Sq clipped), released once the copy engine has read it; returns after every consumer's stop record.
template <typename Smem>
__device__ __forceinline__ void sm90_store_staged_o(Smem& sm, const CUtensorMap* o_map) {
  namespace tl = flashtile::tile;
  using Sh = typename Smem::Sh;
  for (int n = 0, stopped = 0; stopped < Sh::kConsumers; ++n) {
    const int b = Sh::kOBufs == 1 ? 0 : n % Sh::kConsumers, k = Sh::kOBufs == 1 ? n : n / Sh::kConsumers;
    tl::wait(sm.o_full[b], k & 1);
    if (sm.o_dst[b][0] < 0) {
      ++stopped;
    } else {
      tl::store_async(o_map, sm.o.buf[b], sm.o_dst[b][0], sm.o_dst[b][1], sm.o_dst[b][2]);
      tl::store_commit();
      tl::store_wait<0>();
    }
    tl::arrive(sm.o_empty[Sh::kOBufs == 1 ? (n + 1) % Sh::kConsumers : b]);
  }
}

}  // namespace flashtile::cuda
