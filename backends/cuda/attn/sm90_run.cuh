// sm90 forward: the launch layer's host half, one instantiation at a time. sm90_run builds the TMA maps and the
// launch (persistent or one CTA per tile, clusters, the dynamic scheduler's counter); sm90_sched_tiles and
// sm90_sched_order the scheduler's params (the tiles, their order); sm90_dispatch
// picks causality and the kernel kind (sm90_kind). Included by sm90_fwd_d{64,128,256}.cu, one head dim each.
#pragma once

#include <flashtile/types.hpp>

#include <algorithm>
#include <atomic>
#include <string>

#include "attn/fwd_params.hpp"
#include "attn/sm90_fwd.cuh"

namespace flashtile::cuda {

inline constexpr int kSm90MaxDevices = 64;  // devices whose cluster occupancy sm90_run caches (others ask each launch)

inline void sm90_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw Error(ErrorCode::BackendFailure, std::string("cuda_sm90: ") + what + ": " + cudaGetErrorString(e));
}

// The scheduler's host half (Sm90Scheduler), before the launch's size is known: the launch's tiles. Clustered: a
// head's m-blocks rounded up to whole clusters, so the CTAs of a cluster (adjacent tiles in the static order) share
// one head's K/V; a tile past Sq runs on zero-filled Q and stores nothing.
template <typename Sh>
Sm90SchedParams sm90_sched_tiles(const FwdParams& f, int cluster) {
  Sm90SchedParams s{};
  s.m_blocks = (f.seqlen_q + Sh::kBlockM - 1) / Sh::kBlockM;
  s.m_blocks = (s.m_blocks + cluster - 1) / cluster * cluster;
  s.batch_heads = f.batch * f.heads_q;
  s.heads_q = f.heads_q;
  s.tiles = s.m_blocks * s.batch_heads;
  s.row_shift = Sh::kShiftRows ? (s.m_blocks * Sh::kBlockM - f.seqlen_q) / kSm90Rows * kSm90Rows : 0;
  return s;
}
// Once the launch's CTAs are known (ctas > 0: persistent): dynamic scheduling (a counter the CTAs take tiles from;
// the caller allocates it) on persistent launches, one CTA per tile keeps the static order; the tile order and its
// divisors. Returns whether the launch is dynamic.
template <typename Sh, bool kCausal, typename T>
bool sm90_sched_order(Sm90SchedParams& s, const FwdParams& f, int cluster, int ctas) {
  const bool dynamic = Sh::kDynamic && cluster == 1 && ctas > 0 && f.seqlen_k > Sh::kL.static_max_sk;
  const long long kv_bytes = 2ll * f.seqlen_k * Sh::kHeadDim * sizeof(T);
  const int group = sm90_launch_group(Sh::kL, kCausal, ctas > 0, s.m_blocks, s.batch_heads, dynamic, kv_bytes);
  s.head_group = kCausal ? std::min(group, s.batch_heads) : 0;
  auto div = [](int d) { return tile::fastdiv(static_cast<std::uint32_t>(std::max(d, 1))); };
  s.div_bh = div(s.batch_heads), s.div_m = div(s.m_blocks), s.div_heads = div(s.heads_q);
  s.div_group = div(s.head_group), s.div_per = div(s.head_group * s.m_blocks);
  return dynamic;
}

// Build the TMA maps and launch one instantiation (ctas_forced: sm90_fwd_launch's ctas; kMods: plain or one of the
// variants' builds; L: dense, or varlen, whose maps span the packed rows as one batch).
template <int D, typename T, bool kCausal, Sm90Kind kKind, Sm90Mods kMods, Layout L = Layout::Dense>
void sm90_run(const FwdParams& f, int ctas_forced) {
  using Sh = Sm90Shape<D, kCausal, kKind, kMods, L>;
  static_assert(sizeof(Sm90Smem<D, T, kCausal, kKind, kMods, L>) + 1024 <= Sh::kSmemBytes, "smem budget");
  static_assert(Sh::kLazy != 4 || kKind != Sm90Kind::main, "mode 4's LSE calls need an *_lse kind (short, small)");
  Sm90Params<T> p{};
  tile::gl4<T> q, k, v;
  auto map = [](tile::gl4<T>& g, const void* ptr, int b, int s, int h, std::int64_t sb, std::int64_t ss,
                std::int64_t sh, int rows, const char* name) {
    const std::string why = tile::make_gl4(g, static_cast<T*>(const_cast<void*>(ptr)), b, s, h, D, sb, ss, sh, rows);
    if (!why.empty()) throw Error(ErrorCode::BackendFailure, std::string("cuda_sm90: ") + name + ": " + why);
  };
  // Varlen: one batch of total rows (its batch stride unused: the seq stride stands in, checked like the others). No
  // keys at all: a one-row K/V map that no tile loads from (every sequence's keys clamp to none).
  if (Sh::kVarlen && (f.total_q == 0 || f.seqlen_q == 0)) return;
  const int mb = Sh::kVarlen ? 1 : f.batch, rq = Sh::kVarlen ? f.total_q : f.seqlen_q;
  const int rk = Sh::kVarlen ? std::max(f.total_k, 1) : f.seqlen_k;
  map(q, f.q, mb, rq, f.heads_q, Sh::kVarlen ? f.q_ss : f.q_sb, f.q_ss, f.q_sh, Sh::kBlockM, "q");
  // Clustered: each CTA loads its share of a K/V block's rows (multicast into all of the cluster).
  const int cluster = Sh::kCluster > 1 ? sm90_cluster_launch(D, kCausal, f.seqlen_k) : 1;
  map(k, f.k, mb, rk, f.heads_kv, Sh::kVarlen ? f.k_ss : f.k_sb, f.k_ss, f.k_sh, Sh::kBlockN / cluster, "k");
  map(v, f.v, mb, rk, f.heads_kv, Sh::kVarlen ? f.v_ss : f.v_sb, f.v_ss, f.v_sh, Sh::kBlockN / cluster, "v");
  p.cluster = cluster;
  p.q_map = q.map;
  p.k_map = k.map;
  p.v_map = v.map;
  if constexpr ((Sh::kOTma || Sh::kOStage) && !Sh::kVarlen) {  // O through TMA where it can address O (else direct stores)
    tile::gl4<T> o;
    p.o_tma =
        tile::make_gl4(o, static_cast<T*>(f.o), f.batch, f.seqlen_q, f.heads_q, D, f.o_sb, f.o_ss, f.o_sh, kSm90Rows)
            .empty();
    if (p.o_tma) p.o_map = o.map;
  }
  p.o = static_cast<T*>(f.o);
  p.lse = f.lse;
  p.o_sb = f.o_sb, p.o_ss = f.o_ss, p.o_sh = f.o_sh;
  p.q = static_cast<const T*>(f.q), p.k = static_cast<const T*>(f.k);
  p.q_sb = f.q_sb, p.q_ss = f.q_ss, p.q_sh = f.q_sh, p.k_sb = f.k_sb, p.k_ss = f.k_ss, p.k_sh = f.k_sh;
  p.seqlen_q = f.seqlen_q, p.seqlen_k = f.seqlen_k, p.heads_q = f.heads_q, p.group = f.heads_q / f.heads_kv;
  p.scale_log2 = f.scale_log2;
  if constexpr (Sh::kSinks) p.mods = sm90_mod_params(f);
  if constexpr (Sh::kVarlen) p.cu_q = f.cu_seqlens_q, p.cu_k = f.cu_seqlens_k, p.total_q = f.total_q, p.total_k = f.total_k;
  Sm90SchedParams sched = sm90_sched_tiles<Sh>(f, cluster);

  auto kernel = &sm90_fwd_kernel<D, T, kCausal, kKind, kMods, L>;
  sm90_check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Sh::kSmemBytes),
             "cudaFuncSetAttribute");
  // One CTA per SM (shared memory and registers allow no more), each looping over tiles; or one CTA per tile (ctas 0).
  // ctas_forced (tests) forces either.
  // Varlen: persistent always, its grid sized by the longest sequence holding tiles without rows that cost a CTA little.
  int ctas = Sh::kVarlen || sm90_persistent_launch(Sh::kL, f.seqlen_k) ? f.num_sms : 0;
  if (ctas_forced != 0) ctas = std::max(ctas_forced, 0);
  cudaLaunchConfig_t cfg{};
  cudaLaunchAttribute cluster_attr{};
  if (cluster > 1) {  // as many whole clusters as fit at once (GPCs need not split evenly)
    cluster_attr.id = cudaLaunchAttributeClusterDimension;
    cluster_attr.val.clusterDim.x = cluster, cluster_attr.val.clusterDim.y = cluster_attr.val.clusterDim.z = 1;
    cfg.attrs = &cluster_attr, cfg.numAttrs = 1;
    cfg.blockDim = dim3(Sh::kThreads), cfg.dynamicSmemBytes = Sh::kSmemBytes;
    cfg.gridDim = dim3(sched.tiles);
    if (ctas > 0) {  // the answer depends on the device and this instantiation alone: asked once per device
      static std::atomic<int> known[kSm90MaxDevices] = {};
      int dev = 0, clusters = 0;
      sm90_check(cudaGetDevice(&dev), "current device");
      if (dev < kSm90MaxDevices) clusters = known[dev].load(std::memory_order_relaxed);
      if (clusters == 0) {
        sm90_check(cudaOccupancyMaxActiveClusters(&clusters, kernel, &cfg), "cluster occupancy");
        if (dev < kSm90MaxDevices) known[dev].store(clusters, std::memory_order_relaxed);
      }
      ctas = std::max(std::min(ctas / cluster, clusters), 1) * cluster;
    }
  }
  // clustered: tiles and ctas are whole clusters
  const int grid = ctas > 0 ? std::min(ctas, sched.tiles) : sched.tiles;
  const bool dynamic = sm90_sched_order<Sh, kCausal, T>(sched, f, cluster, ctas);
  if (grid == 0) return;
  const auto stream = static_cast<cudaStream_t>(f.stream);
  // A zeroed counter for this launch alone, stream-ordered (graph replays and concurrent calls on other streams never
  // share one). A counter kept per stream instead cost the short cells 2-3.4% (2026-12-03_h200_clean_house_ab), as
  // the memset-free counter did (2026-12-02_h200_sm90_scheduler_counter).
  if (dynamic) {
    auto** counter = reinterpret_cast<void**>(&sched.tile_counter);
    sm90_check(f.mem_pool ? cudaMallocFromPoolAsync(counter, sizeof(int), static_cast<cudaMemPool_t>(f.mem_pool), stream)
                          : cudaMallocAsync(counter, sizeof(int), stream),
               "tile counter");
    sm90_check(cudaMemsetAsync(sched.tile_counter, 0, sizeof(int), stream), "tile counter");
  }
  p.set_sched(sched);
  if (cluster > 1) {
    cfg.gridDim = dim3(grid), cfg.stream = stream;
    sm90_check(cudaLaunchKernelEx(&cfg, kernel, p), "kernel launch");
  } else {
    kernel<<<grid, Sh::kThreads, Sh::kSmemBytes, stream>>>(p);
  }
  sm90_check(cudaGetLastError(), "kernel launch");
  if (dynamic) sm90_check(cudaFreeAsync(sched.tile_counter, stream), "tile counter");
}

// The launch layer's second half (sm90_launch.cu maps head dim and dtype to this; instantiated in
// sm90_fwd_d{64,128,256}.cu): causality, and the small or short kernel where sm90_kind says so (their *_lse kinds for
// calls with an LSE, where the table has them), each plain or in one of the variants' builds (kMods: sm90_dispatch's
// Sm90Mods). Only the kernels sm90_kind can pick are instantiated.
template <int D, typename T, bool kCausal, Sm90Mods kMods>
void sm90_run_short(const FwdParams& f, int ctas) {
  constexpr Sm90Launch kL = sm90_launch_config(D, kCausal);
  constexpr int kSmall = kL.small_max_sk, kMax = kL.short_max_sk;
  constexpr bool kLse = sm90_lse_kinds(D, kCausal);
  constexpr bool kVariant = sm90_mods_loop(kMods);
  const Sm90Kind kind = sm90_kind(D, kCausal, f.seqlen_k, f.lse != nullptr, kVariant);
  if constexpr (kSmall > 0 && !kVariant) {
    if (kind == Sm90Kind::small) return sm90_run<D, T, kCausal, Sm90Kind::small, kMods>(f, ctas);
    if constexpr (kLse) if (kind == Sm90Kind::small_lse) return sm90_run<D, T, kCausal, Sm90Kind::small_lse, kMods>(f, ctas);
  }
  if constexpr (kMax > kSmall) {
    if (kind == Sm90Kind::short_seq) return sm90_run<D, T, kCausal, Sm90Kind::short_seq, kMods>(f, ctas);
    if constexpr (kLse) if (kind == Sm90Kind::short_lse) return sm90_run<D, T, kCausal, Sm90Kind::short_lse, kMods>(f, ctas);
  }
  if constexpr (kMax < kSm90Always) sm90_run<D, T, kCausal, Sm90Kind::main, kMods>(f, ctas);
}
// The launch layer's choice of build (sm90_mods_build): each variant call runs the build with only its own code.
template <int D, typename T, bool kCausal>
void sm90_run_mods(const FwdParams& f, int ctas) {
  switch (sm90_fwd_build(f)) {
    case Sm90Mods::off: return sm90_run_short<D, T, kCausal, Sm90Mods::off>(f, ctas);
    case Sm90Mods::sinks: return sm90_run_short<D, T, kCausal, Sm90Mods::sinks>(f, ctas);
    case Sm90Mods::masks: return sm90_run_short<D, T, kCausal, Sm90Mods::masks>(f, ctas);
    case Sm90Mods::softcap: return sm90_run_short<D, T, kCausal, Sm90Mods::softcap>(f, ctas);
    case Sm90Mods::alibi: return sm90_run_short<D, T, kCausal, Sm90Mods::alibi>(f, ctas);
  }
}
template <int D, typename T>
void sm90_dispatch(const FwdParams& f, int ctas) {
  if (f.causal) sm90_run_mods<D, T, true>(f, ctas);
  else sm90_run_mods<D, T, false>(f, ctas);
}
// Varlen calls (plain builds; instantiated in sm90_varlen_d{64,128,256}.cu): one kernel kind per head dim and
// causality (sm90_varlen_kind).
template <int D, typename T>
void sm90_dispatch_varlen(const FwdParams& f, int ctas) {
  if (f.causal) sm90_run<D, T, true, sm90_varlen_kind(D, true), Sm90Mods::off, Layout::Varlen>(f, ctas);
  else sm90_run<D, T, false, sm90_varlen_kind(D, false), Sm90Mods::off, Layout::Varlen>(f, ctas);
}

}  // namespace flashtile::cuda
