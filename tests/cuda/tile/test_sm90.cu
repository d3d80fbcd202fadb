// Hopper tile ops (sm_90a): TMA L2 prefetch and load into a 128B-swizzled shared tile and TMA store back (ragged rows,
// padded strides), mbarrier expect-tx; a cluster of two (multicast halves, remote arrivals); wgmma A·Bᵀ (both from
// shared) and A·B (A from registers, B MN-major) against host GEMMs. Kernel bodies exist only in the sm_90a pass; on
// other devices (or builds without 90a) the tests say so.
#include <doctest/doctest.h>

#include "util.cuh"

namespace tl = flashtile::tile;
using fttest::dev_buf;

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900 && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define FT_SM90_BODY 1
#else
#define FT_SM90_BODY 0
#endif

namespace {

constexpr int kRows = 64, kD = 128;

struct TmaSmem {
  tl::st<tl::bf16, kRows, kD> t;
  tl::mbarrier bar;
};

// Prefetch into L2 (rows past the end included), then load rows [row, row+64) of (head, batch) through TMA, dump the shared tile in logical order (via st::ptr), then
// store it through TMA into `out_map` at the same coordinates.
__global__ void k_tma(const __grid_constant__ CUtensorMap in_map, const __grid_constant__ CUtensorMap out_map, int row,
                      int head, int batch, tl::bf16* dump, int* ran) {
#if FT_SM90_BODY
  extern __shared__ char raw[];
  auto& sm = *reinterpret_cast<TmaSmem*>((reinterpret_cast<std::uintptr_t>(raw) + 1023) & ~std::uintptr_t{1023});
  if (threadIdx.x == 0) {
    tl::init(sm.bar, 1);
    tl::fence_barrier_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    tl::prefetch_l2<decltype(sm.t)>(&in_map, row, head, batch);  // a hint: the load below must be unaffected
    tl::arrive_expect_tx(sm.bar, decltype(sm.t)::kBytes);
    tl::load_async(sm.t, &in_map, sm.bar, row, head, batch);
  }
  tl::wait(sm.bar, 0);
  for (int i = threadIdx.x; i < kRows * kD; i += blockDim.x) dump[i] = *sm.t.ptr(i / kD, i % kD);
  __syncthreads();
  if (threadIdx.x == 0) {
    tl::store_async(&out_map, sm.t, row, head, batch);
    tl::store_commit();
    tl::store_wait<0>();
    *ran = 1;
  }
#endif
}

// Registers -> swizzled shared tile (tl::store, 4 warps x 16 rows at rows 64..127 of a 128-row tile) -> TMA store of
// rows 64..127 only (store_async's r0) through a map of 64-row boxes: the path of the sm90 kernel's O epilogue.
struct TmaRowsSmem {
  tl::st<tl::bf16, 128, kD> t;
};
__global__ void k_tma_rows(const __grid_constant__ CUtensorMap out_map, const float* src, int row, int head,
                           int batch, int* ran) {
#if FT_SM90_BODY
  extern __shared__ char raw[];
  auto& sm = *reinterpret_cast<TmaRowsSmem*>((reinterpret_cast<std::uintptr_t>(raw) + 1023) & ~std::uintptr_t{1023});
  const int w = threadIdx.x / 32;
  tl::rt_fl<16, kD> o;
  fttest::rt_from_global(o, src + (64 + 16 * w) * kD, kD);
  tl::store(sm.t, o, 64 + 16 * w, 0);
  tl::fence_proxy_async();
  __syncthreads();
  if (threadIdx.x == 0) {
    tl::store_async(&out_map, sm.t, row, head, batch, 64);
    tl::store_commit();
    tl::store_wait<0>();
    *ran = 1;
  }
#endif
}

// A cluster of two: each CTA loads half of a 64-row tile (rows 32 x rank.., a map of 32-row boxes) multicast into
// both, so each CTA's barrier completes on both halves; then each arrives on the other's `remote` barrier (count 1)
// and waits for the peer's arrival on its own. Each dumps its tile (logical order) to dump + rank x 64 x kD.
struct ClusterSmem {
  tl::st<tl::bf16, kRows, kD> t;
  tl::mbarrier full, remote;
};
__global__ void __cluster_dims__(2, 1, 1) k_cluster(const __grid_constant__ CUtensorMap half_map, int row, int head,
                                                    int batch, tl::bf16* dump, int* ran) {
#if FT_SM90_BODY
  extern __shared__ char raw[];
  auto& sm = *reinterpret_cast<ClusterSmem*>((reinterpret_cast<std::uintptr_t>(raw) + 1023) & ~std::uintptr_t{1023});
  const std::uint32_t rank = tl::cluster_rank();
  if (threadIdx.x == 0) {
    tl::init(sm.full, 1);
    tl::init(sm.remote, 1);
    tl::fence_barrier_init();
  }
  tl::cluster_sync();
  if (threadIdx.x == 0) {
    tl::arrive_expect_tx(sm.full, decltype(sm.t)::kBytes);
    const int half = static_cast<int>(rank) * (kRows / 2);
    tl::load_async_multicast(sm.t, &half_map, sm.full, row + half, head, batch, half, 0x3);
  }
  tl::wait(sm.full, 0);
  for (int i = threadIdx.x; i < kRows * kD; i += blockDim.x) dump[rank * kRows * kD + i] = *sm.t.ptr(i / kD, i % kD);
  if (threadIdx.x == 0) tl::arrive_remote(sm.remote, rank ^ 1u);
  tl::wait(sm.remote, 0);
  if (threadIdx.x == 0) ran[rank] = 1;
  tl::cluster_sync();  // neither CTA leaves while the other can still reach its shared memory
#endif
}

struct WgSmem {
  tl::st<tl::bf16, 64, 128> a;  // M x K
  tl::st<tl::bf16, 64, 128> b;  // N x K (K-major)
  tl::st<tl::bf16, 64, 128> v;  // K x N (MN-major), K = 64, N = 128
};

// One warpgroup: s = a·bᵀ (64x64, K=128), o = p·v (64x128, K=64) with p read from global into registers; sn = the
// first 32 columns of s by one narrower wgmma (mma_ABt_w<32>), written out zero-padded to 64 columns through a bf16
// tile (copy_zero_pad); picked[i] = the width with_width<64, 16> takes for cols[i].
__global__ void k_wgmma(const tl::bf16* a, const tl::bf16* b, const tl::bf16* v, const tl::bf16* p, float* s_out,
                        float* o_out, float* sn_out, const int* cols, int* picked, int* ran) {
#if FT_SM90_BODY
  extern __shared__ char raw[];
  auto& sm = *reinterpret_cast<WgSmem*>((reinterpret_cast<std::uintptr_t>(raw) + 1023) & ~std::uintptr_t{1023});
  const int tid = threadIdx.x, w = tid / 32;
  tl::load_async<128>(sm.a, a, 128, 64, tid);
  tl::load_async<128>(sm.b, b, 128, 64, tid);
  tl::load_async<128>(sm.v, v, 128, 64, tid);
  tl::cp_async_commit();
  tl::cp_async_wait<0>();
  tl::fence_proxy_async();  // cp.async wrote through the generic proxy; wgmma reads through the async proxy
  __syncthreads();
  tl::rt_fl<16, 64> s;
  tl::rt_fl<16, 128> o;
  tl::rt_bf<16, 64> pr;
  fttest::rt_from_global(pr, p + w * 16 * 64, 64);
  tl::zero(o);
  tl::fence();
  tl::rt_fl<16, 32> sn;
  tl::mma_ABt(s, sm.a, 0, sm.b, false);
  tl::mma_AB(o, pr, sm.v, true);
  tl::mma_ABt_w<32>(sn, sm.a, 0, sm.b, false);
  tl::commit();
  tl::wait<0>();
  tl::fence_operand(s);
  tl::fence_operand(o);
  tl::fence_operand(sn);
  tl::store(s_out + w * 16 * 64, 64, s, 16);
  tl::store(o_out + w * 16 * 128, 128, o, 16);
  tl::rt_bf<16, 64> padded;
  tl::copy_zero_pad(padded, sn);
  tl::store(sn_out + w * 16 * 64, 64, padded, 16);
  if (tid < 4) tl::with_width<64, 16>(cols[tid], [&](auto wd) { picked[tid] = wd(); });
  if (tid == 0) *ran = 1;
#endif
}

// The ones tile sits two tiles past v (a gap of junk between), as the kernel's sits past its whole V ring.
struct RowsumSmem {
  tl::st<tl::half, 64, 64> v;  // K x N (MN-major), K = N = 64
  tl::st<tl::half, 64, 64> gap;
  tl::st<tl::half, 64, 64> ones;
};

// One warpgroup: o = p·v and e = the row sums of p by mma_AB_rowsum, issued twice (the second accumulating) over
// NaN-poisoned accumulators, then e rescaled by the rows' scale (mul_row) and read out by row_sums; the gap filled
// with 2s, which a wrong LBO would read.
__global__ void k_wgmma_rowsum(const tl::half* v, const tl::half* p, const float* scale, float* o_out, float* l_out,
                               int* ran) {
#if FT_SM90_BODY
  extern __shared__ char raw[];
  auto& sm = *reinterpret_cast<RowsumSmem*>((reinterpret_cast<std::uintptr_t>(raw) + 1023) & ~std::uintptr_t{1023});
  const int tid = threadIdx.x, w = tid / 32, lane = tid % 32;
  tl::load_async<128>(sm.v, v, 64, 64, tid);
  tl::cp_async_commit();
  tl::fill(sm.gap, 2.0f, tid, 128);
  tl::fill(sm.ones, 1.0f, tid, 128);
  tl::cp_async_wait<0>();
  tl::fence_proxy_async();
  __syncthreads();
  tl::rt_fl<16, 64> o;
  tl::rt_rowsum e;
  tl::rt_hf<16, 64> pr;
  fttest::rt_from_global(pr, p + w * 16 * 64, 64);
  tl::fill(o, __int_as_float(0x7fc00000));
  e.v[0] = e.v[1] = make_float2(__int_as_float(0x7fc00000), __int_as_float(0x7fc00000));
  tl::fence();
  tl::mma_AB_rowsum(o, e, pr, sm.v, sm.ones, false);
  tl::mma_AB_rowsum(o, e, pr, sm.v, sm.ones, true);
  tl::commit();
  tl::wait<0>();
  tl::fence_operand(o);
  tl::fence_operand(e);
  tl::store(o_out + w * 16 * 64, 64, o, 16);
  const int g = w * 16 + lane / 4;
  tl::mul_row(e, tl::rv_fl_rows<16>{{{scale[g], scale[g + 8]}}});
  const tl::rv_fl_rows<16> l = tl::row_sums(e);
  // Columns 2t (through row_sums) and 2t + 1 (e's own) of the 8: each must hold its row's sum.
  const int c = (lane % 4) * 2;
  l_out[g * 8 + c] = l.v[0][0], l_out[g * 8 + c + 1] = e.v[0].y;
  l_out[(g + 8) * 8 + c] = l.v[0][1], l_out[(g + 8) * 8 + c + 1] = e.v[1].y;
  if (tid == 0) *ran = 1;
#endif
}

}  // namespace

TEST_CASE("sm90 TMA load/store round trip through a swizzled shared tile") {
  if (fttest::device_cc() != 90) {
    MESSAGE("skipped: needs an sm_90 device");
    return;
  }
  // [B=2, S=100, H=3, D=128] with a padded seq stride (H*D + 64) and batch stride; load (b=1, h=2, rows 64..127).
  const int B = 2, S = 100, H = 3;
  const std::int64_t ss = H * kD + 64, sh = kD, sb = S * ss + 128;
  const std::size_t n = static_cast<std::size_t>(B) * sb;
  std::mt19937 rng(3);
  std::vector<tl::bf16> hin;
  std::vector<float> fin;
  fttest::random16(hin, fin, n, rng);
  dev_buf<tl::bf16> din(n), dout(n), ddump(kRows * kD);
  dev_buf<int> dran(1);
  din.upload(hin);
  FT_CUDA(cudaMemset(dout.p, 0xFF, n * 2));
  FT_CUDA(cudaMemset(dran.p, 0, 4));
  tl::gl4<tl::bf16> gin, gout;
  REQUIRE(tl::make_gl4(gin, din.p, B, S, H, kD, sb, ss, sh, kRows) == "");
  REQUIRE(tl::make_gl4(gout, dout.p, B, S, H, kD, sb, ss, sh, kRows) == "");
  const int smem = sizeof(TmaSmem) + 1024;
  FT_CUDA(cudaFuncSetAttribute(k_tma, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  k_tma<<<1, 128, smem>>>(gin.map, gout.map, 64, 2, 1, ddump.p, dran.p);
  FT_CUDA(cudaGetLastError());
  FT_CUDA(cudaDeviceSynchronize());
  if (dran.download()[0] != 1) {
    MESSAGE("skipped: tile_tests built without sm_90a code");
    return;
  }
  const auto dump = ddump.download(), out = dout.download();
  int bad_dump = 0, bad_out = 0;
  for (int r = 0; r < kRows; ++r)
    for (int c = 0; c < kD; ++c) {
      const int gr = 64 + r;
      const float want = gr < S ? fin[1 * sb + gr * ss + 2 * sh + c] : 0.0f;
      bad_dump += fttest::from16(dump[r * kD + c]) != want;
    }
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t b = i / sb, rem = i % sb, s = rem / ss, h = (rem % ss) / sh, c = rem % ss % sh;
    const bool inside = rem < S * ss && (rem % ss) < H * sh;
    const bool written = inside && b == 1 && h == 2 && s >= 64 && s < S;
    const float got = fttest::from16(out[i]);
    if (written ? got != fin[i] : !std::isnan(got)) ++bad_out;
    (void)c;
  }
  CHECK(bad_dump == 0);
  CHECK(bad_out == 0);
}

TEST_CASE("sm90 cluster of two: multicast TMA halves land in both CTAs, remote mbarrier arrivals") {
  if (fttest::device_cc() != 90) {
    MESSAGE("skipped: needs an sm_90 device");
    return;
  }
  // [B=1, S=90, H=2, D=128]; the tile at rows 40..103 of head 1: rows past 89 arrive as zeros in both CTAs.
  const int B = 1, S = 90, H = 2;
  const std::int64_t ss = H * kD, sh = kD, sb = S * ss;
  const std::size_t n = static_cast<std::size_t>(B) * sb;
  std::mt19937 rng(5);
  std::vector<tl::bf16> hin;
  std::vector<float> fin;
  fttest::random16(hin, fin, n, rng);
  dev_buf<tl::bf16> din(n), ddump(2 * kRows * kD);
  dev_buf<int> dran(2);
  din.upload(hin);
  FT_CUDA(cudaMemset(ddump.p, 0xFF, 2 * kRows * kD * 2));
  FT_CUDA(cudaMemset(dran.p, 0, 8));
  tl::gl4<tl::bf16> ghalf;
  REQUIRE(tl::make_gl4(ghalf, din.p, B, S, H, kD, sb, ss, sh, kRows / 2) == "");
  const int smem = sizeof(ClusterSmem) + 1024;
  FT_CUDA(cudaFuncSetAttribute(k_cluster, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  k_cluster<<<2, 128, smem>>>(ghalf.map, 40, 1, 0, ddump.p, dran.p);
  FT_CUDA(cudaGetLastError());
  FT_CUDA(cudaDeviceSynchronize());
  const auto ran = dran.download();
  if (ran[0] != 1 && ran[1] != 1) {
    MESSAGE("skipped: tile_tests built without sm_90a code");
    return;
  }
  CHECK(ran[0] == 1);
  CHECK(ran[1] == 1);
  const auto dump = ddump.download();
  int bad = 0;
  for (int cta = 0; cta < 2; ++cta)
    for (int r = 0; r < kRows; ++r)
      for (int c = 0; c < kD; ++c) {
        const int gr = 40 + r;
        const float want = gr < S ? fin[gr * ss + 1 * sh + c] : 0.0f;
        bad += fttest::from16(dump[(cta * kRows + r) * kD + c]) != want;
      }
  CHECK(bad == 0);
}

TEST_CASE("sm90 registers -> shared tile -> TMA store of its second 64 rows, clipped at the sequence end") {
  if (fttest::device_cc() != 90) {
    MESSAGE("skipped: needs an sm_90 device");
    return;
  }
  // out [B=2, S=90, H=2, D=128], contiguous; rows 64..127 of the shared tile go to (b=1, h=1) rows 40..103, of which
  // 40..89 exist.
  const int B = 2, S = 90, H = 2, row = 40;
  const std::int64_t ss = H * kD, sh = kD, sb = S * ss;
  const std::size_t n = static_cast<std::size_t>(B) * sb;
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  std::vector<float> hsrc(128 * kD);
  for (auto& x : hsrc) x = u(rng);
  dev_buf<float> dsrc(hsrc.size());
  dev_buf<tl::bf16> dout(n);
  dev_buf<int> dran(1);
  dsrc.upload(hsrc);
  FT_CUDA(cudaMemset(dout.p, 0xFF, n * 2));
  FT_CUDA(cudaMemset(dran.p, 0, 4));
  tl::gl4<tl::bf16> gout;
  REQUIRE(tl::make_gl4(gout, dout.p, B, S, H, kD, sb, ss, sh, 64) == "");
  const int smem = sizeof(TmaRowsSmem) + 1024;
  FT_CUDA(cudaFuncSetAttribute(k_tma_rows, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  k_tma_rows<<<1, 128, smem>>>(gout.map, dsrc.p, row, 1, 1, dran.p);
  FT_CUDA(cudaGetLastError());
  FT_CUDA(cudaDeviceSynchronize());
  if (dran.download()[0] != 1) {
    MESSAGE("skipped: tile_tests built without sm_90a code");
    return;
  }
  const auto out = dout.download();
  int bad = 0, written = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t b = i / sb, s = (i % sb) / ss, h = (i % ss) / sh, c = i % sh;
    const bool in_box = b == 1 && h == 1 && s >= row && s < row + 64;  // clipped at S by the copy engine
    const float got = fttest::from16(out[i]);
    if (in_box) {
      const float want = fttest::from16(tl::bf16(hsrc[(64 + s - row) * kD + c]));
      bad += got != want;
      ++written;
    } else {
      bad += !std::isnan(got);
    }
  }
  CHECK(written == (S - row) * kD);
  CHECK(bad == 0);
}

TEST_CASE("sm90 wgmma: A·Bᵀ from shared, A·B with A in registers and B MN-major") {
  if (fttest::device_cc() != 90) {
    MESSAGE("skipped: needs an sm_90 device");
    return;
  }
  std::mt19937 rng(11);
  std::vector<tl::bf16> ha, hb, hv, hp;
  std::vector<float> fa, fb, fv, fp;
  fttest::random16(ha, fa, 64 * 128, rng);
  fttest::random16(hb, fb, 64 * 128, rng);
  fttest::random16(hv, fv, 64 * 128, rng);
  fttest::random16(hp, fp, 64 * 64, rng);
  dev_buf<tl::bf16> da(ha.size()), db(hb.size()), dv(hv.size()), dp(hp.size());
  dev_buf<float> ds(64 * 64), dout(64 * 128), dsn(64 * 64);
  dev_buf<int> dran(1), dcols(4), dpicked(4);
  da.upload(ha), db.upload(hb), dv.upload(hv), dp.upload(hp);
  dcols.upload(std::vector<int>{1, 20, 64, 65});
  FT_CUDA(cudaMemset(dran.p, 0, 4));
  FT_CUDA(cudaMemset(dsn.p, 0xFF, 64 * 64 * 4));  // NaN: every element must be written
  const int smem = sizeof(WgSmem) + 1024;
  FT_CUDA(cudaFuncSetAttribute(k_wgmma, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  k_wgmma<<<1, 128, smem>>>(da.p, db.p, dv.p, dp.p, ds.p, dout.p, dsn.p, dcols.p, dpicked.p, dran.p);
  FT_CUDA(cudaGetLastError());
  FT_CUDA(cudaDeviceSynchronize());
  if (dran.download()[0] != 1) {
    MESSAGE("skipped: tile_tests built without sm_90a code");
    return;
  }
  const auto s = ds.download(), o = dout.download();
  std::vector<double> gs, rs, go, ro;
  for (int i = 0; i < 64; ++i)
    for (int j = 0; j < 64; ++j) {
      double acc = 0;
      for (int k = 0; k < 128; ++k) acc += double(fa[i * 128 + k]) * fb[j * 128 + k];
      gs.push_back(s[i * 64 + j]), rs.push_back(acc);
    }
  for (int i = 0; i < 64; ++i)
    for (int j = 0; j < 128; ++j) {
      double acc = 0;
      for (int k = 0; k < 64; ++k) acc += double(fp[i * 64 + k]) * fv[k * 128 + j];
      go.push_back(o[i * 128 + j]), ro.push_back(acc);
    }
  CHECK(fttest::rel_err(gs, rs) < 1e-5);
  CHECK(fttest::rel_err(go, ro) < 1e-5);
  // The narrow product: columns 0..31 as s's (rounded to bf16 by the padded tile), 32..63 exactly zero.
  const auto sn = dsn.download();
  std::vector<double> gn, rn;
  int bad_pad = 0;
  for (int i = 0; i < 64; ++i)
    for (int j = 0; j < 64; ++j) {
      if (j < 32) gn.push_back(sn[i * 64 + j]), rn.push_back(rs[i * 64 + j]);
      else bad_pad += sn[i * 64 + j] != 0.0f;
    }
  CHECK(fttest::rel_err(gn, rn) < 1e-2);  // bf16's rounding
  CHECK(bad_pad == 0);
  CHECK(dpicked.download() == std::vector<int>{16, 32, 64, 64});
}

TEST_CASE("sm90 wgmma A·B with row sums of A from an all-ones tile (mma_AB_rowsum, m64n72k16)") {
  if (fttest::device_cc() != 90) {
    MESSAGE("skipped: needs an sm_90 device");
    return;
  }
  std::mt19937 rng(13);
  std::vector<tl::half> hv, hp;
  std::vector<float> fv, fp, scale(64);
  fttest::random16(hv, fv, 64 * 64, rng);
  fttest::random16(hp, fp, 64 * 64, rng);
  std::uniform_real_distribution<float> u(0.25f, 4.0f);
  for (float& x : scale) x = u(rng);
  dev_buf<tl::half> dv(hv.size()), dp(hp.size());
  dev_buf<float> dscale(64), dout(64 * 64), dl(64 * 8);
  dev_buf<int> dran(1);
  dv.upload(hv), dp.upload(hp), dscale.upload(scale);
  FT_CUDA(cudaMemset(dran.p, 0, 4));
  FT_CUDA(cudaMemset(dl.p, 0xFF, 64 * 8 * 4));
  const int smem = sizeof(RowsumSmem) + 1024;
  FT_CUDA(cudaFuncSetAttribute(k_wgmma_rowsum, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  k_wgmma_rowsum<<<1, 128, smem>>>(dv.p, dp.p, dscale.p, dout.p, dl.p, dran.p);
  FT_CUDA(cudaGetLastError());
  FT_CUDA(cudaDeviceSynchronize());
  if (dran.download()[0] != 1) {
    MESSAGE("skipped: tile_tests built without sm_90a code");
    return;
  }
  const auto o = dout.download(), l = dl.download();
  std::vector<double> go, ro, gl, rl;
  for (int i = 0; i < 64; ++i) {
    double sum = 0;
    for (int k = 0; k < 64; ++k) sum += fp[i * 64 + k];
    for (int c = 0; c < 8; ++c) gl.push_back(l[i * 8 + c]), rl.push_back(2 * sum * scale[i]);
    for (int j = 0; j < 64; ++j) {
      double acc = 0;
      for (int k = 0; k < 64; ++k) acc += double(fp[i * 64 + k]) * fv[k * 64 + j];
      go.push_back(o[i * 64 + j]), ro.push_back(2 * acc);
    }
  }
  CHECK(fttest::rel_err(go, ro) < 1e-5);
  CHECK(fttest::rel_err(gl, rl) < 1e-5);
}
