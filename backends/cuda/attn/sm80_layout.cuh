// Device side of the serving layouts for the sm80 kernels (forward and split-KV decode): per-sequence lengths and
// offsets, and K/V tiles gathered through a paged cache's block table. Every index taken from a table is clamped, so
// hostile tables give wrong numbers for their sequence, never an access outside q, k, v, o or the tables themselves.
#pragma once

#include "attn/fwd_params.hpp"
#include "tile/ops.cuh"
#include "tile/sm80/ops_any.cuh"

#include <cstdint>

namespace flashtile::cuda::sm80 {

__device__ __forceinline__ std::int64_t imin(std::int64_t a, std::int64_t b) { return a < b ? a : b; }
__device__ __forceinline__ std::int64_t imax(std::int64_t a, std::int64_t b) { return a > b ? a : b; }
__device__ __forceinline__ std::int64_t clamp64(std::int64_t x, std::int64_t lo, std::int64_t hi) {
  return x < lo ? lo : x > hi ? hi : x;
}

// Keys a paged sequence can hold: past them a key would index past its table row (0 without pages to point at).
__device__ __forceinline__ std::int64_t paged_capacity(const FwdParams& p) {
  return p.num_pages > 0 ? imin(p.seqlen_k, std::int64_t(p.pages_per_seq) * p.page_size) : 0;
}

// One sequence of a call: its query rows and keys, and where they start in packed (varlen) tensors.
struct SeqSpan {
  std::int64_t sq, sk;        // query rows, keys
  std::int64_t q_off, k_off;  // varlen: first row of the sequence in the packed q / k (0 otherwise)
};

template <Layout L>
__device__ __forceinline__ SeqSpan seq_span(const FwdParams& p, int b) {
  if constexpr (L == Layout::Varlen) {
    const std::int64_t qs = clamp64(p.cu_seqlens_q[b], 0, p.total_q), ks = clamp64(p.cu_seqlens_k[b], 0, p.total_k);
    const std::int64_t qe = clamp64(p.cu_seqlens_q[b + 1], qs, p.total_q);
    const std::int64_t ke = clamp64(p.cu_seqlens_k[b + 1], ks, p.total_k);
    return {qe - qs, ke - ks, qs, ks};
  } else if constexpr (L == Layout::Paged) {
    const std::int64_t sk = clamp64(std::int64_t(p.seqlens[b]) + p.seqlen_new, 0, paged_capacity(p));
    return {p.seqlen_q, sk, 0, 0};
  } else {
    return {p.seqlen_q, p.seqlen_k, 0, 0};
  }
}

// Where key `key` (< the sequence's clamped length) of a paged cache lives: its page from the table row bt, clamped
// into [0, num_pages), and its slot in that page.
struct PageSlot {
  std::int64_t page, slot;
};
__device__ __forceinline__ PageSlot page_slot(const FwdParams& p, const std::int32_t* bt, std::int64_t key) {
  const std::int64_t col = key / p.page_size;
  return {clamp64(bt[col], 0, p.num_pages - 1), key - col * p.page_size};
}

// K and V tiles of keys n0 .. n0 + valid - 1 of one kv head through the block table, both in one pass so each row
// resolves its own page once (a tile may span pages). Rows >= valid are zero-filled; nt threads share the tile.
template <typename T, int N, int C>
__device__ __forceinline__ void load_kv_paged(tile::st<T, N, C>& sk, tile::st<T, N, C>& sv, const T* gk, const T* gv,
                                              const FwdParams& p, const std::int32_t* bt, std::int64_t n0, int valid,
                                              int tid, int nt, bool al) {
  constexpr int kChunksPerRow = C / 8;
  for (int idx = tid; idx < N * kChunksPerRow; idx += nt) {
    const int r = idx / kChunksPerRow, c = (idx % kChunksPerRow) * 8;
    const bool ok = r < valid;
    std::int64_t ko = 0, vo = 0;
    if (ok) {
      const PageSlot ps = page_slot(p, bt, n0 + r);
      ko = ps.page * p.k_sb + ps.slot * p.k_ss + c;
      vo = ps.page * p.v_sb + ps.slot * p.v_ss + c;
    }
    tile::sm80::load_chunk(sk, r, c, gk + ko, ok, al);
    tile::sm80::load_chunk(sv, r, c, gv + vo, ok, al);
  }
}

// Rows of a tile by a row-pointer function (rows >= valid zero-filled, their source the in-bounds `base`), nt
// threads: the decode kernel's Q gather and its dense K/V tiles.
template <typename T, int R, int C, class RowPtr>
__device__ __forceinline__ void load_rows_by(tile::st<T, R, C>& s, RowPtr row, const T* base, int valid, int tid, int nt,
                                             bool al) {
  constexpr int kChunksPerRow = C / 8;
  for (int idx = tid; idx < R * kChunksPerRow; idx += nt) {
    const int r = idx / kChunksPerRow, c = (idx % kChunksPerRow) * 8;
    const bool ok = r < valid;
    tile::sm80::load_chunk(s, r, c, ok ? row(r) + c : base, ok, al);
  }
}

}  // namespace flashtile::cuda::sm80
