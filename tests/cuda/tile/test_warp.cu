// Warp-level tile ops: cp.async into swizzled shared tiles, ldmatrix (row and transposed), mma.sync A·Bᵀ and A·B,
// row reductions, warp_uniform, column masks, exp2, softcap's tanh, stores with a row limit (4-byte and quad-shuffled
// wide). Runs on any sm_80+ device.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "util.cuh"

namespace tl = flashtile::tile;
using fttest::dev_buf;

namespace {

// a: 16x64 (only `valid` rows loaded; the rest zero-filled), b: 64x64 (N x K), v: 64x64 (K x N). All row-major.
template <typename T>
__global__ void k_mma(const T* a, const T* b, const T* v, int valid, float* abt, float* ab, T* ab16) {
  __shared__ tl::st<T, 16, 64> sa;
  __shared__ tl::st<T, 64, 64> sb, sv;
  const int lane = tl::lane_id();
  tl::load_async<32>(sa, a, 64, valid, lane);
  tl::load_async<32>(sb, b, 64, 64, lane);
  tl::load_async<32>(sv, v, 64, 64, lane);
  tl::cp_async_commit();
  tl::cp_async_wait<0>();
  __syncwarp();
  tl::rt<T, 16, 64> ra;
  tl::rt<T, 64, 64> rb;
  tl::rt<T, 64, 64, tl::layout::col> rv;
  tl::load(ra, sa, 0, 0);
  tl::load(rb, sb, 0, 0);
  tl::load(rv, sv, 0, 0);
  tl::rt_fl<16, 64> c, d;
  tl::zero(c);
  tl::mma_ABt(c, ra, rb, c);
  tl::store(abt, 64, c, 16);
  tl::zero(d);
  tl::mma_AB(d, ra, rv, d);
  tl::store(ab, 64, d, 16);
  tl::store(ab16, 64, d, 13);  // rows 13..15 must stay untouched
}

template <typename T>
void run_mma() {
  std::mt19937 rng(1234);
  std::vector<T> ha, hb, hv;
  std::vector<float> fa, fb, fv;
  fttest::random16(ha, fa, 16 * 64, rng);
  fttest::random16(hb, fb, 64 * 64, rng);
  fttest::random16(hv, fv, 64 * 64, rng);
  const int valid = 11;
  dev_buf<T> da(ha.size()), db(hb.size()), dv(hv.size()), d16(16 * 64);
  dev_buf<float> dabt(16 * 64), dab(16 * 64);
  da.upload(ha), db.upload(hb), dv.upload(hv);
  FT_CUDA(cudaMemset(d16.p, 0xFF, 16 * 64 * sizeof(T)));
  k_mma<T><<<1, 32>>>(da.p, db.p, dv.p, valid, dabt.p, dab.p, d16.p);
  FT_CUDA(cudaGetLastError());
  FT_CUDA(cudaDeviceSynchronize());
  const auto abt = dabt.download(), ab = dab.download();
  const auto ab16 = d16.download();
  std::vector<double> got_abt, ref_abt, got_ab, ref_ab;
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 64; ++j) {
      double s1 = 0, s2 = 0;
      for (int k = 0; k < 64; ++k) {
        const double x = i < valid ? fa[i * 64 + k] : 0.0;
        s1 += x * fb[j * 64 + k];
        s2 += x * fv[k * 64 + j];
      }
      got_abt.push_back(abt[i * 64 + j]), ref_abt.push_back(s1);
      got_ab.push_back(ab[i * 64 + j]), ref_ab.push_back(s2);
      if (i < 13) {
        CHECK(std::fabs(fttest::from16(ab16[i * 64 + j]) - s2) <= 0.02 * (1 + std::fabs(s2)));
      } else {
        CHECK(std::isnan(fttest::from16(ab16[i * 64 + j])));
      }
    }
  CHECK(fttest::rel_err(got_abt, ref_abt) < 1e-5);
  CHECK(fttest::rel_err(got_ab, ref_ab) < 1e-5);
}

// Row reductions and row-broadcast ops on a 32x64 float tile.
__global__ void k_rows(const float* x, float* mx, float* sm, float* e) {
  tl::rt_fl<32, 64> t, u;
  fttest::rt_from_global(t, x, 64);
  tl::rv_fl_rows<32> m, s, init;
  tl::row_max(m, t);
  tl::exp2_sub_row(u, t, m);
  tl::fill(init, 1.0f);
  tl::row_sum(s, u, init);  // 1 + sum
  tl::store(e, 64, u, 32);
  const int lane = tl::lane_id();
  if ((lane & 3) == 0)
    for (int i = 0; i < 2; ++i)
      for (int h = 0; h < 2; ++h) {
        const int r = 16 * i + (lane >> 2) + 8 * h;
        mx[r] = m.v[i][h];
        sm[r] = s.v[i][h];
      }
}

// The lanes' partial row maxima and sums of a 16x176 tile (the d128 kernel's key block: 44 elements a lane and row,
// not a power of two, so the reduction tree has uneven levels), completed by quad_max / quad_sum.
__global__ void k_rows_partial(const float* x, float* mx, float* sm) {
  tl::rt_fl<16, 176> t;
  fttest::rt_from_global(t, x, 176);
  tl::rv_fl_rows<16> m, s, zero;
  tl::fill(zero, 0.0f);
  tl::row_max_partial(m, t);
  tl::row_sum_partial(s, t, zero);
  const int lane = tl::lane_id();
  for (int h = 0; h < 2; ++h) {
    const float a = tl::quad_max(m.v[0][h]), b = tl::quad_sum(s.v[0][h]);
    if ((lane & 3) == 0) mx[(lane >> 2) + 8 * h] = a, sm[(lane >> 2) + 8 * h] = b;
  }
}

// poly_exp2 on a range of inputs (including -inf, the clamp edges and scores past the reference), and exp2_fma_row
// with every 3rd pair through it, against exp2 on the host.
__global__ void k_poly(const float* x, float* y, int n, const float* t, float* e, float scale) {
  for (int i = threadIdx.x; i < n; i += blockDim.x) y[i] = tl::poly_exp2(x[i]);
  tl::rt_fl<32, 64> a, b;
  fttest::rt_from_global(a, t, 64);
  tl::rv_fl_rows<32> m;
  tl::fill(m, 4.0f * scale);  // inputs are <= 4: exponents stay <= 0
  tl::exp2_fma_row<3>(b, a, scale, m);
  tl::store(e, 64, b, 32);
}

// tanh_exp2 (softcap's tanh: ex2 and rcp_fma) on the device, y = 2 log2(e) x, scaled by a.
__global__ void k_tanh(const float* y, float* t, int n, float a) {
  for (int i = threadIdx.x; i < n; i += blockDim.x) t[i] = tl::tanh_exp2(y[i], a);
}

// store_scaled and store_scaled_wide<8> / <16> of one 32x128 tile with per-row scales, rows >= valid untouched, into
// rows of stride ld (> 128: the padding must stay untouched too).
template <typename T>
__global__ void k_store_wide(const float* x, const float* scale, int valid, int ld, T* plain, T* v8, T* v16) {
  tl::rt_fl<32, 128> t;
  fttest::rt_from_global(t, x, 128);
  tl::rv_fl_rows<32> v;
  const int lane = tl::lane_id();
  for (int i = 0; i < 2; ++i)
    for (int h = 0; h < 2; ++h) v.v[i][h] = scale[16 * i + (lane >> 2) + 8 * h];
  tl::store_scaled(plain, ld, t, v, valid);
  tl::store_scaled_wide<8>(v8, ld, t, v, valid);
  tl::store_scaled_wide<16>(v16, ld, t, v, valid);
}

template <typename T>
void run_store_wide() {
  std::mt19937 rng(99);
  std::uniform_real_distribution<float> u(-3.0f, 3.0f);
  std::vector<float> hx(32 * 128), hs(32);
  for (auto& x : hx) x = u(rng);
  for (auto& x : hs) x = u(rng);
  const int valid = 27, ld = 136;  // 16-byte aligned rows, 8 padding columns
  dev_buf<float> dx(hx.size()), ds(hs.size());
  dev_buf<T> dp(32 * ld), d8(32 * ld), d16(32 * ld);
  dx.upload(hx), ds.upload(hs);
  T* outs[] = {dp.p, d8.p, d16.p};
  for (T* p : outs) FT_CUDA(cudaMemset(p, 0xFF, 32 * ld * sizeof(T)));
  k_store_wide<T><<<1, 32>>>(dx.p, ds.p, valid, ld, dp.p, d8.p, d16.p);
  FT_CUDA(cudaGetLastError());
  FT_CUDA(cudaDeviceSynchronize());
  const auto plain = dp.download(), v8 = d8.download(), v16 = d16.download();
  int mismatches = 0, wrong = 0, touched = 0;
  for (int r = 0; r < 32; ++r)
    for (int c = 0; c < 2 * ld; ++c) {  // the 8-byte result, then the 16-byte one
      const float got = fttest::from16(c < ld ? v8[r * ld + c] : v16[r * ld + c - ld]);
      if (r < valid && c % ld < 128) {
        const double want = double(hs[r]) * hx[r * 128 + c % ld];
        wrong += !(std::fabs(got - want) <= 0.01 * (1 + std::fabs(want)));
        mismatches += got != fttest::from16(plain[r * ld + c % ld]);  // the same rounding as the 4-byte path
      } else {
        touched += !std::isnan(got);
      }
    }
  CHECK(wrong == 0);
  CHECK(mismatches == 0);
  CHECK(touched == 0);
}

// mask_cols on a 32x64 float tile with a column limit per row (below 0, inside, past the end).
__global__ void k_mask(const float* x, const int* lim, float* y) {
  tl::rt_fl<32, 64> t;
  fttest::rt_from_global(t, x, 64);
  const int lane = tl::lane_id();
  int l[2][2];
  for (int i = 0; i < 2; ++i)
    for (int h = 0; h < 2; ++h) l[i][h] = lim[16 * i + (lane >> 2) + 8 * h];
  tl::mask_cols(t, l);
  tl::store(y, 64, t, 32);
}

void run_mask() {
  std::vector<float> hx(32 * 64);
  std::vector<int> hl(32);
  for (int i = 0; i < 32 * 64; ++i) hx[i] = 0.5f + float(i % 97);
  for (int r = 0; r < 32; ++r) hl[r] = r == 0 ? -5 : r == 1 ? 0 : r == 2 ? 64 : r == 3 ? 1000 : (r * 37) % 70;
  dev_buf<float> dx(hx.size()), dy(hx.size());
  dev_buf<int> dl(hl.size());
  dx.upload(hx), dl.upload(hl);
  k_mask<<<1, 32>>>(dx.p, dl.p, dy.p);
  FT_CUDA(cudaGetLastError());
  FT_CUDA(cudaDeviceSynchronize());
  const auto y = dy.download();
  int wrong = 0;
  for (int r = 0; r < 32; ++r)
    for (int c = 0; c < 64; ++c) {
      const float want = c < hl[r] ? hx[r * 64 + c] : -std::numeric_limits<float>::infinity();
      wrong += y[r * 64 + c] != want;
    }
  CHECK(wrong == 0);
}

// warp_uniform: every lane gets lane 0's value; with warpgroup::index that is the thread's own warpgroup.
__global__ void k_uniform(int* y, int* wg) {
  const int t = threadIdx.x;
  y[t] = tl::warp_uniform(t * 7 + 3);
  wg[t] = tl::warp_uniform(tl::warpgroup::index());
}

void run_uniform() {
  const int n = 256;
  dev_buf<int> dy(n), dw(n);
  FT_CUDA(cudaMemset(dy.p, 0xFF, n * sizeof(int)));
  FT_CUDA(cudaMemset(dw.p, 0xFF, n * sizeof(int)));
  k_uniform<<<1, n>>>(dy.p, dw.p);
  FT_CUDA(cudaGetLastError());
  FT_CUDA(cudaDeviceSynchronize());
  const auto y = dy.download(), w = dw.download();
  int wrong = 0;
  for (int t = 0; t < n; ++t) wrong += y[t] != (t / 32 * 32) * 7 + 3 || w[t] != t / 128;
  CHECK(wrong == 0);
}

}  // namespace

TEST_CASE("warp warp_uniform: lane 0's value in every lane") { run_uniform(); }
TEST_CASE("warp mask_cols: -inf from each row's column limit on") { run_mask(); }
TEST_CASE("warp store_scaled_wide: 8- and 16-byte stores through quad shuffles, bf16") { run_store_wide<tl::bf16>(); }
TEST_CASE("warp store_scaled_wide: 8- and 16-byte stores through quad shuffles, f16") { run_store_wide<tl::half>(); }

// The host sweep (test_host.cu) models ex2.approx; here the device's own ex2 and FMAs: absolute error < 3e-7 of a
// (past +-32, inf included, the saturated ends), NaN kept.
TEST_CASE("warp tanh_exp2: softcap's tanh against std::tanh") {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> hy;
  for (int i = -400000; i <= 400000; ++i) hy.push_back(i * 1e-4f);  // -40 .. 40
  for (float v : {1e-30f, -1e-30f, 31.9f, 32.0f, 33.0f, 100.0f, -100.0f, -200.0f, 1e30f, -1e30f, inf, -inf, nan})
    hy.push_back(v);
  for (float a : {1.0f, 50.0f}) {
    dev_buf<float> dy(hy.size()), dt(hy.size());
    dy.upload(hy);
    k_tanh<<<1, 256>>>(dy.p, dt.p, static_cast<int>(hy.size()), a);
    FT_CUDA(cudaGetLastError());
    FT_CUDA(cudaDeviceSynchronize());
    const auto t = dt.download();
    double worst = 0;
    int bad = 0;
    for (std::size_t i = 0; i < hy.size(); ++i) {
      if (std::isnan(hy[i])) {
        bad += !std::isnan(t[i]);
        continue;
      }
      const double ref = a * std::tanh(double(hy[i]) * 0.5 * 0.69314718055994531);
      worst = std::max(worst, std::abs(double(t[i]) - ref) / a);
    }
    INFO("a = ", a, ", max |t - a tanh| / a = ", worst);
    CHECK(worst < 3e-7);
    CHECK(bad == 0);
  }
}

TEST_CASE("warp poly_exp2 and exp2_fma_row with polynomial pairs") {
  std::vector<float> hx;
  for (int i = 0; i <= 4000; ++i) hx.push_back(-130.0f * i / 4000.0f);  // 0 .. -130 (past the clamp)
  for (float v : {-0.0f, -1e-7f, -0.5f, -125.9f, -126.0f, -126.1f, -127.0f, -200.0f}) hx.push_back(v);
  hx.push_back(-std::numeric_limits<float>::infinity());
  // Positive exponents (kLazy 3 exponentiates unchecked): exact to 128, then saturated near 2^128, never wrapped.
  const float inf = std::numeric_limits<float>::infinity();
  for (float v : {0.3f, 8.0f, 63.7f, 100.2f, 126.0f, 127.4f, 127.6f, 127.99f, 128.0f, 128.6f, 129.0f, 200.0f, 255.5f,
                  300.0f, 1e30f, inf})
    hx.push_back(v);
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-4.0f, 4.0f);
  std::vector<float> ht(32 * 64);
  for (auto& v : ht) v = u(rng);
  ht[5] = -std::numeric_limits<float>::infinity();  // a masked score
  const float scale = 1.4427f;
  dev_buf<float> dx(hx.size()), dy(hx.size()), dt(ht.size()), de(ht.size());
  dx.upload(hx);
  dt.upload(ht);
  k_poly<<<1, 32>>>(dx.p, dy.p, static_cast<int>(hx.size()), dt.p, de.p, scale);
  FT_CUDA(cudaGetLastError());
  FT_CUDA(cudaDeviceSynchronize());
  const auto y = dy.download(), e = de.download();
  for (std::size_t i = 0; i < hx.size(); ++i) {
    INFO("x = ", hx[i], " got ", y[i]);
    const double ref = std::exp2(double(hx[i]));
    CHECK(!std::isnan(y[i]));
    CHECK(y[i] >= 0.0f);
    if (hx[i] >= 128.0f) CHECK((y[i] >= 0x1p127f && y[i] <= std::numeric_limits<float>::max()));  // saturated
    else if (hx[i] >= -125.0f) CHECK(std::fabs(y[i] - ref) <= 1e-4 * ref);  // normal range: relative error
    else CHECK(y[i] <= 1e-37f);                                          // the tail: tiny or exactly 0
    if (hx[i] < -126.0f) CHECK(y[i] == 0.0f);
  }
  for (int i = 0; i < 32 * 64; ++i) {
    const double ref = std::exp2(double(ht[i]) * scale - 4.0 * scale);
    INFO("element ", i);
    CHECK(std::fabs(e[i] - ref) <= 1e-4 * ref + 1e-30);
  }
}

TEST_CASE("warp mma.sync, ldmatrix, cp.async zero-fill, bf16") { run_mma<tl::bf16>(); }
TEST_CASE("warp mma.sync, ldmatrix, cp.async zero-fill, f16") { run_mma<tl::half>(); }

TEST_CASE("warp partial row max / sum over 176 columns") {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-4.0f, 4.0f);
  std::vector<float> hx(16 * 176);
  for (auto& x : hx) x = u(rng);
  for (int r = 0; r < 16; ++r) hx[r * 176 + (r * 37 + 175) % 176] = 5.0f + r;  // each row's max somewhere else,
  hx[3 * 176 + 175] = 30.0f;                                                      // the last column's tree leaf too
  dev_buf<float> dx(hx.size()), dm(16), ds(16);
  dx.upload(hx);
  k_rows_partial<<<1, 32>>>(dx.p, dm.p, ds.p);
  FT_CUDA(cudaGetLastError());
  FT_CUDA(cudaDeviceSynchronize());
  const auto m = dm.download(), s = ds.download();
  for (int r = 0; r < 16; ++r) {
    double mx = -1e30, sum = 0.0;
    for (int c = 0; c < 176; ++c) mx = std::max(mx, double(hx[r * 176 + c])), sum += hx[r * 176 + c];
    CHECK(m[r] == mx);
    CHECK(std::fabs(s[r] - sum) <= 1e-4 * (1 + std::fabs(sum)));
  }
}

TEST_CASE("warp row max / exp2 / row sum") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-4.0f, 4.0f);
  std::vector<float> hx(32 * 64);
  for (auto& x : hx) x = u(rng);
  dev_buf<float> dx(hx.size()), dm(32), ds(32), de(hx.size());
  dx.upload(hx);
  k_rows<<<1, 32>>>(dx.p, dm.p, ds.p, de.p);
  FT_CUDA(cudaGetLastError());
  FT_CUDA(cudaDeviceSynchronize());
  const auto m = dm.download(), s = ds.download(), e = de.download();
  for (int r = 0; r < 32; ++r) {
    double mx = -1e30, sum = 1.0;
    for (int c = 0; c < 64; ++c) mx = std::max(mx, double(hx[r * 64 + c]));
    for (int c = 0; c < 64; ++c) {
      const double ex = std::exp2(hx[r * 64 + c] - mx);
      sum += ex;
      CHECK(std::fabs(e[r * 64 + c] - ex) <= 1e-5 * (1 + ex));
    }
    CHECK(m[r] == doctest::Approx(mx));
    CHECK(s[r] == doctest::Approx(sum).epsilon(1e-5));
  }
}
