// sm90_bwd_check: standalone correctness + timing driver for the sm90 backward kernel (attn/sm90_bwd*), below the
// library: BwdParams straight into sm90_bwd_launch.
//
// Correctness: random q, k, v, dO; a host double forward gives o (rounded to the dtype, as a model stores it) and the
// lse (f32); a host double backward the reference dq, dk, dv. dq, dk, dv are poisoned with NaN before each run (plus
// their padding and a guard region after them, which must stay poisoned), and so is the workspace (its contents are
// undefined on entry). Cases: d 64/128/256 x bf16/f16 x causal or not x (Sq, Sk) from {1, 17, 128, 257, 1000}, Sq != Sk
// both ways, GQA (Hq 4 over Hkv 1 or 2), batch 2, one case with padded strides; each also in deterministic mode, run
// twice and compared bit for bit. The variants (the kMods kernels): windows skipping whole key and query blocks, rows
// without keys, softcap (its tanh' in dS), ALiBi, together with GQA, against a reference with the same score function.
// A seq stride that breaks TMA's 16-byte rule must be refused with a reason.
// Tolerance: max |got − ref| / max |ref| per tensor, 2e-2 for bf16 and 3e-3 for f16. The kernel rounds P and dS to the
// input dtype before the dV, dK and dQ products (as FlashAttention does), a relative error of 2^-8 (bf16) / 2^-11
// (f16) per term; f32 accumulation adds little. The bounds are about five such units of the largest value: a kernel
// that drops or doubles one key block's or query block's terms is off by far more.
// Timing (--time): bf16, hidden 2048 (Hq = Hkv = 2048 / d), B x S = 16384, S 512..16384, d 64/128, causal and not; the
// whole launch (preprocess, kernel, dQ convert) by CUDA events around batches of 10 launches after a 100 ms warm-up,
// median of 7 batches; backward FLOPs = 2.5 x 4·B·Hq·Sq·Sk·D, halved when causal. --det also times deterministic mode.
// Usage: sm90_bwd_check [--small (a few small cases: compute-sanitizer)] [--time [--det] [--time-d D]] [--no-check]
// Exit 0 all passed, 1 a failure, 77 no sm_90 device.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <thread>

#include "attn/bwd_params.hpp"
#include "common.cuh"
#include "tile/constants.hpp"

using flashtile::cuda::BwdParams;
using flashtile::cuda::ElemType;
using fttest::dev_buf;

namespace {

struct Case {
  int B, Sq, Sk, Hq, Hkv, D;
  bool bf16, causal;
  int pad = 0;  // extra elements in every tensor's seq stride (a multiple of 8 keeps TMA's alignment)
  // The variants (the kMods kernels; -1 / 0 / false off): a window, softcap (its tanh' in dS), ALiBi slopes per head.
  int wl = -1, wr = -1;
  float softcap = 0.0f;
  bool alibi = false;
  bool mods() const { return wl >= 0 || wr >= 0 || softcap > 0 || alibi; }
};

double case_slope(int h) { return 0.0625 * (h + 1); }

int g_cc = 0, g_sms = 0;
constexpr std::size_t kGuard = 4096;  // poisoned elements past each output
constexpr float kWarmMs = 100.0f;     // clocks settle, the power cap binds (sm90_check's warm-up)

// Row-major [B, S, H, D] with the case's padded seq stride.
struct Layout {
  std::int64_t sb, ss, sh;
  std::size_t n;
};
Layout layout(const Case& c, int S, int H) {
  const std::int64_t ss = std::int64_t(H) * c.D + c.pad;
  return {ss * S, ss, c.D, std::size_t(c.B) * S * ss};
}

BwdParams make_params(const Case& c, const void* q, const void* k, const void* v, const void* o, float* lse,
                      const void* dout, void* dq, void* dk, void* dv, void* ws, bool det) {
  const Layout lq = layout(c, c.Sq, c.Hq), lk = layout(c, c.Sk, c.Hkv);
  BwdParams p;
  auto& f = p.f;
  f.q = q, f.k = k, f.v = v, f.o = const_cast<void*>(o), f.lse = lse;
  f.q_sb = lq.sb, f.q_ss = lq.ss, f.q_sh = lq.sh, f.o_sb = lq.sb, f.o_ss = lq.ss, f.o_sh = lq.sh;
  f.k_sb = lk.sb, f.k_ss = lk.ss, f.k_sh = lk.sh, f.v_sb = lk.sb, f.v_ss = lk.ss, f.v_sh = lk.sh;
  f.batch = c.B, f.seqlen_q = c.Sq, f.seqlen_k = c.Sk, f.heads_q = c.Hq, f.heads_kv = c.Hkv, f.head_dim = c.D;
  f.dtype = c.bf16 ? ElemType::BF16 : ElemType::F16;
  f.scale = 1.0f / std::sqrt(float(c.D));
  f.scale_log2 = f.scale * flashtile::tile::kLog2e;
  f.causal = c.causal;
  f.num_sms = g_sms, f.device_cc = g_cc;
  f.window_left = c.wl, f.window_right = c.wr, f.softcap = c.softcap;
  p.dout = dout, p.dq = dq, p.dk = dk, p.dv = dv;
  p.do_sb = lq.sb, p.do_ss = lq.ss, p.do_sh = lq.sh, p.dq_sb = lq.sb, p.dq_ss = lq.ss, p.dq_sh = lq.sh;
  p.dk_sb = lk.sb, p.dk_ss = lk.ss, p.dk_sh = lk.sh, p.dv_sb = lk.sb, p.dv_ss = lk.ss, p.dv_sh = lk.sh;
  p.deterministic = det;
  p.workspace = ws;
  return p;
}

// Host reference in double. Forward: o (returned in the dtype's rounding by the caller) and lse; backward from the
// rounded o the kernel reads.
struct Ref {
  std::vector<double> o, lse, dq, dk, dv;  // dense [B, S, H, D] / [B, Hq, Sq]
};

template <typename F>
void parallel(std::int64_t n, F f) {
  const int nt = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> th;
  for (int t = 0; t < nt; ++t)
    th.emplace_back([&, t] {
      for (std::int64_t i = t; i < n; i += nt) f(i);
    });
  for (auto& t : th) t.join();
}

// Keys [lo, hi) that query row i sees (src/cpu_backend.cpp's RowRules: causal bottom-right, the window).
std::pair<int, int> keys(const Case& c, int i) {
  const int diag = i + c.Sk - c.Sq;
  int lo = 0, hi = c.Sk;
  if (c.causal) hi = std::clamp(diag + 1, 0, c.Sk);
  if (c.wr >= 0) hi = std::min(hi, std::clamp(diag + c.wr + 1, 0, c.Sk));
  if (c.wl >= 0) lo = std::clamp(diag - c.wl, 0, c.Sk);
  return {lo, std::max(lo, hi)};
}
// The score of key j for row i of head h from the scaled dot product; dcap: d(score) / d(scaled dot) (softcap's tanh').
double score(const Case& c, double x, int i, int j, int h, double* dcap) {
  *dcap = 1.0;
  if (c.softcap > 0) {
    const double t = std::tanh(x / c.softcap);
    x = c.softcap * t, *dcap = 1.0 - t * t;
  }
  if (c.alibi) x -= case_slope(h) * std::abs(i + c.Sk - c.Sq - j);
  return x;
}

void ref_forward(const Case& c, const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v,
                 Ref& r) {
  const Layout lq = layout(c, c.Sq, c.Hq), lk = layout(c, c.Sk, c.Hkv);
  const double scale = 1.0f / std::sqrt(float(c.D));  // the f32 scale the kernel gets
  r.o.assign(std::size_t(c.B) * c.Sq * c.Hq * c.D, 0.0);
  r.lse.assign(std::size_t(c.B) * c.Hq * c.Sq, -INFINITY);
  parallel(std::int64_t(c.B) * c.Hq * c.Sq, [&](std::int64_t f) {
    const int b = int(f / (std::int64_t(c.Hq) * c.Sq)), h = int(f / c.Sq % c.Hq), i = int(f % c.Sq), hk = h / (c.Hq / c.Hkv);
    const auto [lo, hi] = keys(c, i);
    const float* qr = &q[b * lq.sb + i * lq.ss + h * lq.sh];
    std::vector<double> s(c.Sk);
    double m = -INFINITY, l = 0, dcap;
    for (int j = lo; j < hi; ++j) {
      double x = 0;
      for (int d = 0; d < c.D; ++d) x += double(qr[d]) * k[b * lk.sb + j * lk.ss + hk * lk.sh + d];
      m = std::max(m, s[j] = score(c, x * scale, i, j, h, &dcap));
    }
    if (hi == lo) return;  // o 0, lse -inf
    for (int j = lo; j < hi; ++j) l += (s[j] = std::exp(s[j] - m));
    double* o = &r.o[((std::size_t(b) * c.Sq + i) * c.Hq + h) * c.D];
    for (int j = lo; j < hi; ++j)
      for (int d = 0; d < c.D; ++d) o[d] += s[j] / l * v[b * lk.sb + j * lk.ss + hk * lk.sh + d];
    r.lse[f] = m + std::log(l);
  });
}

// o16: the rounded o (dense). P and dS are kept per (b, h) for the key-side pass.
void ref_backward(const Case& c, const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v,
                  const std::vector<float>& dout, const std::vector<double>& o16, Ref& r) {
  const Layout lq = layout(c, c.Sq, c.Hq), lk = layout(c, c.Sk, c.Hkv);
  const double scale = 1.0f / std::sqrt(float(c.D));
  const std::size_t rows = std::size_t(c.B) * c.Hq * c.Sq;
  std::vector<double> pm(rows * c.Sk, 0.0), dsm(rows * c.Sk, 0.0);
  r.dq.assign(std::size_t(c.B) * c.Sq * c.Hq * c.D, 0.0);
  r.dk.assign(std::size_t(c.B) * c.Sk * c.Hkv * c.D, 0.0);
  r.dv.assign(r.dk.size(), 0.0);
  parallel(std::int64_t(rows), [&](std::int64_t f) {
    const int b = int(f / (std::int64_t(c.Hq) * c.Sq)), h = int(f / c.Sq % c.Hq), i = int(f % c.Sq), hk = h / (c.Hq / c.Hkv);
    const auto [lo, hi] = keys(c, i);
    const float* qr = &q[b * lq.sb + i * lq.ss + h * lq.sh];
    const float* dor = &dout[b * lq.sb + i * lq.ss + h * lq.sh];
    const double* orow = &o16[((std::size_t(b) * c.Sq + i) * c.Hq + h) * c.D];
    double delta = 0;
    for (int d = 0; d < c.D; ++d) delta += double(dor[d]) * orow[d];
    double* dq = &r.dq[((std::size_t(b) * c.Sq + i) * c.Hq + h) * c.D];
    for (int j = lo; j < hi; ++j) {
      const float* kr = &k[b * lk.sb + j * lk.ss + hk * lk.sh];
      const float* vr = &v[b * lk.sb + j * lk.ss + hk * lk.sh];
      double s = 0, dp = 0, dcap;
      for (int d = 0; d < c.D; ++d) s += double(qr[d]) * kr[d], dp += double(dor[d]) * vr[d];
      const double p = std::exp(score(c, s * scale, i, j, h, &dcap) - r.lse[f]), ds = p * (dp - delta) * dcap;
      pm[f * c.Sk + j] = p, dsm[f * c.Sk + j] = ds;
      for (int d = 0; d < c.D; ++d) dq[d] += scale * ds * kr[d];
    }
  });
  parallel(std::int64_t(c.B) * c.Hkv * c.Sk, [&](std::int64_t f) {
    const int b = int(f / (std::int64_t(c.Hkv) * c.Sk)), hk = int(f / c.Sk % c.Hkv), j = int(f % c.Sk);
    const int g = c.Hq / c.Hkv;
    double* dk = &r.dk[((std::size_t(b) * c.Sk + j) * c.Hkv + hk) * c.D];
    double* dv = &r.dv[((std::size_t(b) * c.Sk + j) * c.Hkv + hk) * c.D];
    for (int h = hk * g; h < (hk + 1) * g; ++h)
      for (int i = 0; i < c.Sq; ++i) {
        const std::size_t at = ((std::size_t(b) * c.Hq + h) * c.Sq + i) * c.Sk + j;
        if (pm[at] == 0.0 && dsm[at] == 0.0) continue;
        const float* qr = &q[b * lq.sb + i * lq.ss + h * lq.sh];
        const float* dor = &dout[b * lq.sb + i * lq.ss + h * lq.sh];
        for (int d = 0; d < c.D; ++d) dv[d] += pm[at] * dor[d], dk[d] += scale * dsm[at] * qr[d];
      }
  });
}

// max |got − ref| / max |ref| over the dense tensor gathered from a padded device buffer (NaN: +inf); padding and
// guard elements must still be NaN (counted in bad_poison).
template <typename T>
double compare(const std::vector<T>& dev, const std::vector<double>& ref, const Layout& l, int H, int D,
               int& bad_poison) {
  double err = 0, mx = 0;
  const std::size_t row = std::size_t(H) * D;
  for (std::size_t i = 0; i < dev.size(); ++i) {
    const float x = fttest::from16(dev[i]);
    const bool inside = i < l.n && std::size_t(i % l.ss) < row;
    if (!inside) {
      bad_poison += !std::isnan(x);
      continue;
    }
    const double r = ref[i / l.ss * row + i % l.ss];
    mx = std::max(mx, std::fabs(r));
    err = std::isnan(x) ? INFINITY : std::max(err, std::fabs(x - r));
  }
  return mx > 0 ? err / mx : err;
}

template <typename T>
bool run_case(const Case& c, std::mt19937& rng) {
  const Layout lq = layout(c, c.Sq, c.Hq), lk = layout(c, c.Sk, c.Hkv);
  std::vector<T> hq, hk, hv, hdo;
  std::vector<float> fq, fk, fv, fdo;
  fttest::random16(hq, fq, lq.n, rng, 2.0f);
  fttest::random16(hk, fk, lk.n, rng);
  fttest::random16(hv, fv, lk.n, rng);
  fttest::random16(hdo, fdo, lq.n, rng);
  Ref ref;
  ref_forward(c, fq, fk, fv, ref);
  std::vector<T> ho(lq.n, fttest::to16<T>(0.0f));
  std::vector<double> o16(ref.o.size());
  const std::size_t qrow = std::size_t(c.Hq) * c.D;
  for (std::size_t i = 0; i < ref.o.size(); ++i) {
    const std::size_t at = i / qrow * lq.ss + i % qrow;
    ho[at] = fttest::to16<T>(float(ref.o[i]));
    o16[i] = fttest::from16(ho[at]);
  }
  std::vector<float> hlse(ref.lse.begin(), ref.lse.end());
  ref_backward(c, fq, fk, fv, fdo, o16, ref);

  dev_buf<T> dq_in(lq.n), dk_in(lk.n), dv_in(lk.n), o(lq.n), dout(lq.n), dq(lq.n + kGuard), dk(lk.n + kGuard),
      dv(lk.n + kGuard);
  dev_buf<float> lse(hlse.size());
  dq_in.upload(hq), dk_in.upload(hk), dv_in.upload(hv), o.upload(ho), dout.upload(hdo), lse.upload(hlse);
  BwdParams p = make_params(c, dq_in.p, dk_in.p, dv_in.p, o.p, lse.p, dout.p, dq.p, dk.p, dv.p, nullptr, true);
  std::vector<float> hslopes(c.Hq);
  for (int h = 0; h < c.Hq; ++h) hslopes[h] = float(case_slope(h));
  dev_buf<float> slopes(hslopes.size());
  slopes.upload(hslopes);
  if (c.alibi) p.f.alibi_slopes = slopes.p;
  const std::size_t ws_bytes = flashtile::cuda::sm90_bwd_workspace(p);
  dev_buf<unsigned char> ws(ws_bytes);
  p.workspace = ws.p;
  char name[200];
  std::snprintf(name, sizeof name, "B=%d Sq=%d Sk=%d Hq=%d Hkv=%d d=%d %s %s pad=%d", c.B, c.Sq, c.Sk, c.Hq, c.Hkv,
                c.D, c.bf16 ? "bf16" : "f16", c.causal ? "causal" : "full", c.pad);
  if (c.mods()) {
    const std::size_t at = std::strlen(name);
    std::snprintf(name + at, sizeof name - at, " win=%d,%d cap=%g alibi=%d", c.wl, c.wr, c.softcap, int(c.alibi));
  }
  const std::string why = flashtile::cuda::sm90_bwd_supports(p);
  if (!why.empty()) {
    std::printf("FAIL %-52s unsupported: %s\n", name, why.c_str());
    return false;
  }
  struct Out {
    std::vector<T> dq, dk, dv;
  };
  auto run = [&](bool det) {
    p.deterministic = det;
    FT_CUDA(cudaMemset(ws.p, 0xFF, ws_bytes));
    for (auto* b : {&dq, &dk, &dv}) FT_CUDA(cudaMemset(b->p, 0xFF, b->n * sizeof(T)));  // NaN in bf16 and f16
    flashtile::cuda::sm90_bwd_launch(p);
    FT_CUDA(cudaDeviceSynchronize());
    return Out{dq.download(), dk.download(), dv.download()};
  };
  Out a, d1, d2;
  try {
    a = run(false);
    d1 = run(true);
    d2 = run(true);
  } catch (const std::exception& e) {
    std::printf("FAIL %-52s %s\n", name, e.what());
    return false;
  }
  int poison = 0;
  double err[3] = {compare(a.dq, ref.dq, lq, c.Hq, c.D, poison), compare(a.dk, ref.dk, lk, c.Hkv, c.D, poison),
                   compare(a.dv, ref.dv, lk, c.Hkv, c.D, poison)};
  int poison_det = 0;
  const double err_det = std::max({compare(d1.dq, ref.dq, lq, c.Hq, c.D, poison_det),
                                   compare(d1.dk, ref.dk, lk, c.Hkv, c.D, poison_det),
                                   compare(d1.dv, ref.dv, lk, c.Hkv, c.D, poison_det)});
  auto same = [](const std::vector<T>& x, const std::vector<T>& y) {
    return std::memcmp(x.data(), y.data(), x.size() * sizeof(T)) == 0;
  };
  const bool bitwise = same(d1.dq, d2.dq) && same(d1.dk, d2.dk) && same(d1.dv, d2.dv);
  const double tol = c.bf16 ? 2e-2 : 3e-3;
  const bool ok = err[0] <= tol && err[1] <= tol && err[2] <= tol && err_det <= tol && poison == 0 &&
                  poison_det == 0 && bitwise;
  std::printf("%s %-52s dq %.1e dk %.1e dv %.1e det %.1e poison %d/%d det-bitwise %s  %s\n", ok ? "ok  " : "FAIL", name,
              err[0], err[1], err[2], err_det, poison, poison_det, bitwise ? "yes" : "NO",
              flashtile::cuda::sm90_bwd_name(p).c_str());
  return ok;
}

bool run(const Case& c, std::mt19937& rng) { return c.bf16 ? run_case<__nv_bfloat16>(c, rng) : run_case<__half>(c, rng); }

void bench(int D, int S, bool causal, bool det) {
  using T = __nv_bfloat16;
  const int H = 2048 / D, B = 16384 / S;
  const Case c{B, S, S, H, H, D, true, causal};
  const std::size_t n = std::size_t(B) * S * H * D;
  std::mt19937 rng(5);
  std::vector<T> h;
  std::vector<float> f;
  dev_buf<T> q(n), k(n), v(n), o(n), dout(n), dq(n), dk(n), dv(n);
  for (auto* b : {&q, &k, &v, &o, &dout}) {
    fttest::random16(h, f, n, rng);
    b->upload(h);
  }
  // lse: a plausible value (log of Sk); the timing does not depend on it.
  dev_buf<float> lse(std::size_t(B) * H * S);
  std::vector<float> hl(lse.n, std::log(float(S)));
  lse.upload(hl);
  BwdParams p = make_params(c, q.p, k.p, v.p, o.p, lse.p, dout.p, dq.p, dk.p, dv.p, nullptr, det);
  dev_buf<unsigned char> ws(flashtile::cuda::sm90_bwd_workspace(p));
  p.workspace = ws.p;
  const std::vector<float> ms = fttest::time_batches([&] { flashtile::cuda::sm90_bwd_launch(p); }, kWarmMs);
  const double med = ms[ms.size() / 2];
  const double flops = 2.5 * 4.0 * B * H * double(S) * S * D / (causal ? 2.0 : 1.0);
  std::printf("bench %s d=%d bf16 B=%d H=%d S=%d %-10s median %.3f ms  %.1f TFLOP/s  (min %.3f ms)\n",
              flashtile::cuda::sm90_bwd_name(p).c_str(), D, B, H, S, causal ? "causal" : "non-causal", med,
              flops / (med * 1e-3) / 1e12, ms.front());
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // lines survive a timeout kill
  bool small = false, time = false, det = false, check = true;
  int time_d = 0;  // --time-d D: time this head dim only
  for (int i = 1; i < argc; ++i) {
    small |= !std::strcmp(argv[i], "--small");
    time |= !std::strcmp(argv[i], "--time");
    det |= !std::strcmp(argv[i], "--det");
    if (!std::strcmp(argv[i], "--no-check")) check = false;
    if (!std::strcmp(argv[i], "--time-d") && i + 1 < argc) time_d = std::atoi(argv[++i]);
  }
  if (const int skip = fttest::require_sm90("sm90 backward", g_cc, g_sms)) return skip;
  std::mt19937 rng(20261204);
  int fails = 0, total = 0;
  if (check) {
    std::vector<Case> cases;
    const int sizes[][2] = {{1, 1}, {1, 17}, {17, 1}, {128, 128}, {17, 257}, {257, 17}, {257, 1000}, {1000, 257}};
    const int tiny[][2] = {{17, 257}, {257, 17}};
    for (int D : {64, 128, 256})
      for (bool bf : {true, false})
        for (bool causal : {false, true}) {
          if (small) {
            if (bf)
              for (auto& s : tiny) cases.push_back({2, s[0], s[1], 4, 2, D, bf, causal});
            continue;
          }
          int n = 0;
          for (auto& s : sizes) cases.push_back({2, s[0], s[1], 4, ++n % 2 ? 1 : 2, D, bf, causal});
          if (D == 128) cases.push_back({1, 1000, 1000, 4, 1, D, bf, causal});
        }
    if (!small)
      for (int D : {64, 128, 256}) cases.push_back({2, 300, 200, 4, 2, D, true, true, 8});  // padded strides
    // The variants: windows that skip whole key and query blocks (and cut them mid-way), rows without keys (a right
    // bound before key 0: lse -inf, zero gradients), softcap's tanh' in dS from saturated (2) to Gemma-2's 50, ALiBi,
    // all together with GQA; Sq != Sk both ways. Deterministic runs check the dQ order over the key blocks a
    // window visits (a wrong start deadlocks or reorders).
    auto var = [&](Case c, int wl, int wr, float cap, bool alibi) {
      c.wl = wl, c.wr = wr, c.softcap = cap, c.alibi = alibi;
      if (!small || c.Sk <= 300) cases.push_back(c);
    };
    for (int D : {64, 128, 256})
      for (bool causal : {false, true}) {
        var({2, 1000, 1000, 4, 2, D, true, causal}, 100, 50, 0.0f, false);
        var({1, 700, 1300, 4, 1, D, D != 128, causal}, 300, -1, 0.0f, false);
        var({1, 1300, 700, 4, 1, D, true, causal}, -1, 7, 0.0f, false);
        var({1, 1000, 257, 4, 2, D, true, causal}, 3, 2, 0.0f, false);  // rows to 740 without keys
        var({2, 300, 300, 4, 2, D, true, causal}, -1, -1, 50.0f, false);
        var({1, 257, 300, 2, 1, D, false, causal}, -1, -1, 2.0f, false);
        var({2, 300, 500, 4, 2, D, D != 64, causal}, -1, -1, 0.0f, true);
        var({2, 400, 900, 8, 2, D, D == 64, causal}, 200, 30, 30.0f, true);
        var({1, 128, 2000, 2, 1, D, true, causal}, 100, 0, 0.0f, false);  // key blocks no query block sees
      }
    for (const Case& c : cases) {
      ++total;
      fails += !run(c, rng);
    }
    {  // a seq stride that breaks TMA's 16-byte rule: refused with a reason, not run
      const Case c{1, 64, 64, 1, 1, 128, true, false, 4};
      void* a = reinterpret_cast<void*>(256);
      const BwdParams p = make_params(c, a, a, a, a, reinterpret_cast<float*>(256), a, a, a, a, a, false);
      const std::string why = flashtile::cuda::sm90_bwd_supports(p);
      ++total;
      fails += why.empty();
      std::printf("%s misaligned seq stride refused: \"%s\"\n", why.empty() ? "FAIL" : "ok  ", why.c_str());
    }
    std::printf("correctness: %d/%d passed\n", total - fails, total);
  }
  if (time)
    for (int D : {64, 128})
      for (bool causal : {false, true})
        for (int S = 512; S <= 16384; S *= 2) {
          if (time_d != 0 && D != time_d) continue;
          bench(D, S, causal, false);
          if (det) bench(D, S, causal, true);
        }
  return fails ? 1 : 0;
}
