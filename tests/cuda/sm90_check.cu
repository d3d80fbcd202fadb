// sm90_check: standalone correctness + timing driver for the sm90 forward kernel (backends/cuda/attn/sm90_*).
//
// Correctness: random data, odd sizes, Sq != Sk, GQA 4:1, causal, d 64/128/256, bf16/f16, padded strides; output and
// LSE poisoned with NaN before each run (plus a guard region after them that must stay poisoned); compared with a
// double-accumulating host reference: ‖out−ref‖/‖ref‖ <= 1e-2 (bf16) / 2e-3 (f16), the LSE within 1e-3 of it (relative
// past 1, as in conformance); LSE rows with no visible key must be -inf and their output 0. Where a call without the LSE
// runs another kernel (sm90_kind: d64's lazy mode 4), the case runs that one too and checks its output. Four dynamic
// launches also run repeated on one stream, on two streams at once and from a captured graph, each O bit-equal to the
// first (run_streams: the scheduler's counter). The variants (window, softcap, ALiBi, sinks: the kMods kernels) against
// ref_row_mods, with K and V poisoned below the windows where a loaded block would show (block skipping). Timing: d=128 bf16 B=1 H=16 S=16384, non-causal and causal, CUDA events around batches of 10 back-to-back launches after a 100 ms warm-up, median of 7 batches.
// --grid times the peer grid instead: bf16, B = 16384/S, H = 2048/d, S 512..16384, d 64/128/256, causal or not, once
// persistent (--ctas #SMs) and once with one CTA per tile (--ctas -1). --ctas N forces the grid (N > 0: at most N CTAs,
// so each loops over many tiles; N < 0: one CTA per tile; sm90_fwd_launch's ctas) for the correctness list.
//
// The timed launches write no LSE (a model's forward), unless --lse.
// --variants times issue 43's variants against the plain calls (d128 bf16; the window at 32k keys).
// Usage: sm90_check [--variants] [--quick (bf16, small sizes only)] [--tiny (a few small bf16 cases: racecheck)] [--no-bench] [--bench-only] [--grid [--grid-d D] [--grid-smax S]] [--cell D,S,CAUSAL[,H,B]] [--warm-ms T (100)] [--ctas N] [--lse].
// Exit 0 all passed, 1 a failure, 77 no sm_90 device.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <thread>

#include "attn/fwd_params.hpp"
#include "tile/constants.hpp"
#include "attn/sm90_traits.hpp"
#include "common.cuh"

using flashtile::cuda::ElemType;
using flashtile::cuda::FwdParams;
using fttest::dev_buf;

namespace {

struct Case {
  int B, Sq, Sk, Hq, Hkv, D;
  bool bf16, causal;
  int pad;  // extra elements in the seq stride of q, k, v, o (multiple of 8 keeps TMA alignment)
  int o_extra = 0;  // more elements in o's seq stride only (2: o is not TMA-addressable, the direct-store fallback)
  int spikes = 0;   // > 0: every spikes-th key row scaled by 12, so a row's running max jumps (the rescale of O)
  bool anti = false;  // q = +4 and k = -4 everywhere: every logit equal and far below zero (-128 and less at d64)
  int jump = 0;  // > 0: key row 5 scaled by jump, in the first key block (visited last): rows' maxima jump by 2^128
  float step = 0.0f;  // > 0: q = 1, k = 0 but key row 5, whose logit is `step` in the exp2 domain in every row
  // The variants (FwdParams; -1 / 0 / false: off), run by the kMods kernels. alibi: 1 slopes per head, 2 per (batch,
  // head). poison_below: K and V rows below it NaN, for windows that no query row reaches there: a block of them
  // loaded and computed (P = 0 times NaN) poisons O, so the block skipping is checked, not only the masks.
  int wl = -1, wr = -1;
  float softcap = 0.0f;
  int alibi = 0;
  bool sinks = false;
  int poison_below = 0;
  bool mods() const { return wl >= 0 || wr >= 0 || softcap > 0 || alibi > 0 || sinks; }
};

// Slopes and sinks of a case's heads: spread in sign and size (a sink far above the row maxima, one far below).
float case_slope(int b, int h) { return 0.0625f * float(1 + h) + 0.03125f * float(b % 3); }
float case_sink(int h) {
  const float kSinks[] = {0.5f, -2.0f, 9.0f, 3.0f, -40.0f, 1.5f};
  return kSinks[h % 6];
}

int g_cc = 0, g_sms = 0;
float g_warm_ms = 100.0f;  // --warm-ms: the bench's warm-up before timing
bool g_bench_lse = false;  // --lse: the timed launches write the LSE too
int g_ctas = 0;            // --ctas (sm90_fwd_launch's ctas)

FwdParams make_params(const Case& c, const void* q, const void* k, const void* v, void* o, float* lse) {
  FwdParams p;
  p.q = q, p.k = k, p.v = v, p.o = o, p.lse = lse;
  p.q_ss = std::int64_t(c.Hq) * c.D + c.pad, p.q_sh = c.D, p.q_sb = p.q_ss * c.Sq;
  p.k_ss = std::int64_t(c.Hkv) * c.D + c.pad, p.k_sh = c.D, p.k_sb = p.k_ss * c.Sk;
  p.v_ss = p.k_ss, p.v_sh = p.k_sh, p.v_sb = p.k_sb;
  p.o_ss = p.q_ss + c.o_extra, p.o_sh = p.q_sh, p.o_sb = p.o_ss * c.Sq;
  p.batch = c.B, p.seqlen_q = c.Sq, p.seqlen_k = c.Sk, p.heads_q = c.Hq, p.heads_kv = c.Hkv, p.head_dim = c.D;
  p.dtype = c.bf16 ? ElemType::BF16 : ElemType::F16;
  p.scale = 1.0f / std::sqrt(float(c.D));
  p.scale_log2 = p.scale * flashtile::tile::kLog2e;
  p.causal = c.causal;
  p.stream = nullptr;
  p.num_sms = g_sms, p.device_cc = g_cc;
  p.window_left = c.wl, p.window_right = c.wr, p.softcap = c.softcap;
  return p;
}

// One query row i of (b, h) with the variants, in double, as src/cpu_backend.cpp's reference_head: o accumulated,
// returns the LSE (-inf for a row with neither a key nor a sink). k, v: the head's rows; s: scratch.
double ref_row_mods(double* o, const float* q, const float* k, std::int64_t k_ss, const float* v, std::int64_t v_ss,
                    const Case& c, int b, int h, int i, double scale, std::vector<double>& s) {
  const int diag = i + c.Sk - c.Sq;
  int lo = 0, hi = c.Sk;
  if (c.causal) hi = std::clamp(diag + 1, 0, c.Sk);
  if (c.wr >= 0) hi = std::min(hi, std::clamp(diag + c.wr + 1, 0, c.Sk));
  if (c.wl >= 0) lo = std::clamp(diag - c.wl, 0, c.Sk);
  hi = std::max(lo, hi);
  const double sink = c.sinks ? double(case_sink(h)) : -INFINITY;
  double m = sink;
  s.assign(c.Sk, 0.0);
  for (int j = lo; j < hi; ++j) {
    double x = 0;
    for (int d = 0; d < c.D; ++d) x += double(q[d]) * k[j * k_ss + d];
    x *= scale;
    if (c.softcap > 0) x = c.softcap * std::tanh(x / c.softcap);
    if (c.alibi > 0) x -= double(case_slope(c.alibi == 2 ? b : 0, h)) * std::abs(diag - j);
    m = std::max(m, s[j] = x);
  }
  if (hi == lo && !c.sinks) return -INFINITY;
  double l = c.sinks ? std::exp(sink - m) : 0.0;
  for (int j = lo; j < hi; ++j) l += (s[j] = std::exp(s[j] - m));
  for (int j = lo; j < hi; ++j)
    for (int d = 0; d < c.D; ++d) o[d] += s[j] / l * v[j * v_ss + d];
  return m + std::log(l);
}

template <typename T>
bool run_case(const Case& c, std::mt19937& rng) {
  const std::size_t nq = std::size_t(c.B) * c.Sq * (std::size_t(c.Hq) * c.D + c.pad);
  const std::size_t nk = std::size_t(c.B) * c.Sk * (std::size_t(c.Hkv) * c.D + c.pad);
  const std::size_t guard = 4096, nlse = std::size_t(c.B) * c.Hq * c.Sq;
  std::vector<T> hq, hk, hv;
  std::vector<float> fq, fk, fv;
  fttest::random16(hq, fq, nq, rng, 2.0f);
  fttest::random16(hk, fk, nk, rng);
  if (c.anti) {
    for (std::size_t i = 0; i < nq; ++i) hq[i] = fttest::to16<T>(4.0f), fq[i] = fttest::from16(hq[i]);
    for (std::size_t i = 0; i < nk; ++i) hk[i] = fttest::to16<T>(-4.0f), fk[i] = fttest::from16(hk[i]);
  }
  const std::size_t k_ss = std::size_t(c.Hkv) * c.D + c.pad;  // key row i / k_ss of the [B, Sk, Hkv, D] buffer
  if (c.spikes > 0) {
    for (std::size_t i = 0; i < nk; ++i)
      if ((i / k_ss) % c.Sk % c.spikes == 3) hk[i] = fttest::to16<T>(fk[i] * 12.0f), fk[i] = fttest::from16(hk[i]);
  }
  if (c.jump > 0) {
    for (std::size_t i = 0; i < nk; ++i)
      if ((i / k_ss) % c.Sk == 5) hk[i] = fttest::to16<T>(fk[i] * float(c.jump)), fk[i] = fttest::from16(hk[i]);
  }
  if (c.step > 0.0f) {
    const float k5 = c.step / (std::sqrt(float(c.D)) * flashtile::tile::kLog2e);
    for (std::size_t i = 0; i < nq; ++i) hq[i] = fttest::to16<T>(1.0f), fq[i] = fttest::from16(hq[i]);
    for (std::size_t i = 0; i < nk; ++i)
      hk[i] = fttest::to16<T>((i / k_ss) % c.Sk == 5 ? k5 : 0.0f), fk[i] = fttest::from16(hk[i]);
  }
  fttest::random16(hv, fv, nk, rng);
  if (c.poison_below > 0)
    for (std::size_t i = 0; i < nk; ++i)
      if (int((i / k_ss) % c.Sk) < c.poison_below) {
        hk[i] = hv[i] = fttest::to16<T>(NAN);
        fk[i] = fv[i] = NAN;
      }
  const std::size_t no = std::size_t(c.B) * c.Sq * (std::size_t(c.Hq) * c.D + c.pad + c.o_extra);
  dev_buf<T> dq(nq), dk(nk), dv(nk), dout(no + guard);
  dev_buf<float> dlse(nlse + guard);
  dq.upload(hq), dk.upload(hk), dv.upload(hv);
  FT_CUDA(cudaMemset(dout.p, 0xFF, (no + guard) * sizeof(T)));  // NaN in bf16 and f16
  FT_CUDA(cudaMemset(dlse.p, 0xFF, (nlse + guard) * sizeof(float)));
  std::vector<float> slopes(std::size_t(c.B) * c.Hq), sinks(c.Hq);
  for (int b = 0; b < c.B; ++b)
    for (int h = 0; h < c.Hq; ++h) slopes[std::size_t(b) * c.Hq + h] = case_slope(c.alibi == 2 ? b : 0, h);
  for (int h = 0; h < c.Hq; ++h) sinks[h] = case_sink(h);
  dev_buf<float> dslopes(slopes.size()), dsinks(sinks.size());
  dslopes.upload(slopes), dsinks.upload(sinks);
  FwdParams p = make_params(c, dq.p, dk.p, dv.p, dout.p, dlse.p);
  if (c.alibi > 0) p.alibi_slopes = dslopes.p, p.alibi_sb = c.alibi == 2 ? c.Hq : 0;
  if (c.sinks) p.sinks = dsinks.p;
  dev_buf<unsigned char> ws(flashtile::cuda::sm90_fwd_workspace(p));  // the decode kernel's split partials
  p.workspace = ws.p;
  char name[200];
  std::snprintf(name, sizeof name, "B=%d Sq=%d Sk=%d Hq=%d Hkv=%d d=%d %s %s pad=%d o+%d%s", c.B, c.Sq, c.Sk, c.Hq,
                c.Hkv, c.D, c.bf16 ? "bf16" : "f16", c.causal ? "causal" : "full", c.pad, c.o_extra,
                c.spikes ? " spikes" : c.anti ? " anti" : c.jump ? " jump" : c.step > 0.0f ? " step" : "");
  if (c.mods()) {
    const std::size_t at = std::strlen(name);
    std::snprintf(name + at, sizeof name - at, " win=%d,%d cap=%g alibi=%d sinks=%d poison<%d", c.wl, c.wr, c.softcap,
                  c.alibi, int(c.sinks), c.poison_below);
  }
  const std::string why = flashtile::cuda::sm90_fwd_supports(p);
  if (!why.empty()) {
    std::printf("FAIL %-60s unsupported: %s\n", name, why.c_str());
    return false;
  }
  // With the LSE, and (where sm90_kind picks another kernel for it: d64's lazy mode 4) without, O poisoned again.
  FwdParams p_nolse = p;
  p_nolse.lse = nullptr;
  const bool both = flashtile::cuda::sm90_fwd_name(p_nolse) != flashtile::cuda::sm90_fwd_name(p);
  std::vector<T> out, out_nolse;
  try {
    if (both) {
      flashtile::cuda::sm90_fwd_launch(p_nolse, g_ctas);
      FT_CUDA(cudaDeviceSynchronize());
      out_nolse = dout.download();
      FT_CUDA(cudaMemset(dout.p, 0xFF, (no + guard) * sizeof(T)));
    }
    flashtile::cuda::sm90_fwd_launch(p, g_ctas);
    FT_CUDA(cudaDeviceSynchronize());
  } catch (const std::exception& e) {
    std::printf("FAIL %-60s %s\n", name, e.what());
    return false;
  }
  out = dout.download();
  const auto lse = dlse.download();

  // Host reference, double accumulation, threads over rows of all (b, h).
  std::vector<double> ref_o(std::size_t(c.B) * c.Sq * c.Hq * c.D), got_o(ref_o.size());
  std::vector<double> ref_l(nlse);
  const double scale = p.scale;
  auto work = [&](int t0, int step) {
    std::vector<double> s(c.Sk);
    for (std::int64_t f = t0; f < std::int64_t(c.B) * c.Hq * c.Sq; f += step) {
      const int bh = int(f / c.Sq), i = int(f % c.Sq);
      const int b = bh / c.Hq, h = bh % c.Hq, hk = h / (c.Hq / c.Hkv);
      const int last = c.causal ? std::min(c.Sk - 1, i + c.Sk - c.Sq) : c.Sk - 1;
      double* o = &ref_o[((std::size_t(b) * c.Sq + i) * c.Hq + h) * c.D];
      if (c.mods()) {
        ref_l[f] = ref_row_mods(o, &fq[b * p.q_sb + i * p.q_ss + h * p.q_sh], &fk[b * p.k_sb + hk * p.k_sh], p.k_ss,
                                &fv[b * p.v_sb + hk * p.v_sh], p.v_ss, c, b, h, i, scale, s);
        continue;
      }
      if (last < 0) {
        ref_l[f] = -INFINITY;
        continue;  // o stays 0
      }
      ref_l[f] = fttest::ref_row(o, &fq[b * p.q_sb + i * p.q_ss + h * p.q_sh], &fk[b * p.k_sb + hk * p.k_sh], p.k_ss,
                                 &fv[b * p.v_sb + hk * p.v_sh], p.v_ss, c.D, last, scale, s);
    }
  };
  const int nt = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> th;
  for (int t = 0; t < nt; ++t) th.emplace_back(work, t, nt);
  for (auto& t : th) t.join();

  // Gather device output, check padding and guard stayed poisoned.
  int bad_poison = 0;
  auto gather = [&](const std::vector<T>& dev) {
    for (std::size_t i = 0; i < no + guard; ++i) {
      const bool inside = i < no && (i % p.o_ss) < std::size_t(c.Hq) * c.D;
      const float x = fttest::from16(dev[i]);
      if (inside) {
        const std::size_t row = i / p.o_ss, col = i % p.o_ss;  // row = b*Sq + s
        got_o[row * c.Hq * c.D + col] = x;
      } else if (!std::isnan(x)) {
        ++bad_poison;
      }
    }
    return fttest::rel_err(got_o, ref_o);
  };
  const double err_o_nolse = both ? gather(out_nolse) : 0.0;
  const double err_o = gather(out);
  for (std::size_t i = nlse; i < nlse + guard; ++i) bad_poison += !std::isnan(lse[i]);
  // LSE: the norm-wise error, and the largest |lse - ref| / max(1, |ref|) (conformance's measure and 1e-3 bound).
  std::vector<double> gl, rl;
  int bad_inf = 0;
  double err_lmax = 0.0;
  for (std::size_t i = 0; i < nlse; ++i) {
    if (std::isinf(ref_l[i])) {
      bad_inf += !(std::isinf(lse[i]) && lse[i] < 0);
    } else {
      gl.push_back(lse[i]);
      rl.push_back(ref_l[i]);
      const double e = std::fabs(lse[i] - ref_l[i]) / std::max(1.0, std::fabs(ref_l[i]));
      err_lmax = std::isfinite(e) ? std::max(err_lmax, e) : INFINITY;
    }
  }
  const double err_l = gl.empty() ? 0.0 : fttest::rel_err(gl, rl);
  const double tol = c.bf16 ? 1e-2 : 2e-3;
  const bool ok = err_o <= tol && err_o_nolse <= tol && err_l <= tol && err_lmax <= 1e-3 && bad_inf == 0 &&
                  bad_poison == 0;
  std::printf("%s %-60s err_o=%.2e err_lse=%.2e (max %.1e) bad_-inf=%d poison_overwritten=%d %s", ok ? "ok  " : "FAIL",
              name, err_o, err_l, err_lmax, bad_inf, bad_poison, flashtile::cuda::sm90_fwd_name(p).c_str());
  if (both) std::printf(" and without LSE err_o=%.2e %s", err_o_nolse, flashtile::cuda::sm90_fwd_name(p_nolse).c_str());
  std::printf("\n");
  return ok;
}

bool run(const Case& c, std::mt19937& rng) { return c.bf16 ? run_case<__nv_bfloat16>(c, rng) : run_case<__half>(c, rng); }

// The dynamic scheduler's counter across launches (sm90_run: one a stream, zeroed before each launch on it; a graph
// holds one of its own). The same call repeated on one stream, on two streams at once, and replayed from a
// CUDA graph between direct launches on both: each O must equal the first launch's bit for bit (a tile's result does
// not depend on which CTA takes it). A counter shared by launches in flight, or not zero at a launch's start, would
// hand tiles twice or not at all, leaving rows of O poisoned (NaN); the first launch writes every row (checked).
bool run_streams(const Case& c, std::mt19937& rng) {
  using T = __nv_bfloat16;
  const std::size_t nq = std::size_t(c.B) * c.Sq * c.Hq * c.D, nk = std::size_t(c.B) * c.Sk * c.Hkv * c.D;
  std::vector<T> hq, hk, hv;
  std::vector<float> f;
  fttest::random16(hq, f, nq, rng, 2.0f);
  fttest::random16(hk, f, nk, rng);
  fttest::random16(hv, f, nk, rng);
  dev_buf<T> dq(nq), dk(nk), dv(nk), o0(nq), o1(nq), o2(nq), o3(nq);
  dq.upload(hq), dk.upload(hk), dv.upload(hv);
  cudaStream_t s1, s2;
  FT_CUDA(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  FT_CUDA(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  auto launch = [&](dev_buf<T>& o, cudaStream_t st) {
    FwdParams p = make_params(c, dq.p, dk.p, dv.p, o.p, nullptr);
    p.stream = st;
    if (flashtile::cuda::sm90_fwd_workspace(p) > 0) throw std::runtime_error("streams cases are prefill calls");
    FT_CUDA(cudaMemsetAsync(o.p, 0xFF, nq * sizeof(T), st));  // NaN
    flashtile::cuda::sm90_fwd_launch(p, g_ctas);
  };
  int nan = 0, differ = 0, runs = 0;
  std::vector<T> ref;
  auto check = [&](dev_buf<T>& o) {
    const std::vector<T> got = o.download();
    ++runs;
    differ += std::memcmp(got.data(), ref.data(), nq * sizeof(T)) != 0;
  };
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  try {
    launch(o0, nullptr);
    FT_CUDA(cudaDeviceSynchronize());
    ref = o0.download();
    for (const T& x : ref) nan += std::isnan(fttest::from16(x));
    for (int i = 0; i < 3; ++i) {  // one stream, back to back
      launch(o1, s1);
      FT_CUDA(cudaStreamSynchronize(s1));
      check(o1);
    }
    for (int i = 0; i < 3; ++i) {  // two streams at once, each launch on its own output
      launch(o1, s1);
      launch(o2, s2);
      FT_CUDA(cudaDeviceSynchronize());
      check(o1), check(o2);
    }
    FT_CUDA(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
    launch(o3, s1);
    FT_CUDA(cudaStreamEndCapture(s1, &graph));
    FT_CUDA(cudaGraphInstantiate(&exec, graph, 0));
    for (int i = 0; i < 3; ++i) {  // the graph on s2 beside direct launches on s1, then on s1 between them
      launch(o1, s1);
      FT_CUDA(cudaGraphLaunch(exec, s2));
      launch(o2, s1);
      FT_CUDA(cudaDeviceSynchronize());
      check(o1), check(o2), check(o3);
      FT_CUDA(cudaGraphLaunch(exec, s1));
      launch(o1, s1);
      FT_CUDA(cudaDeviceSynchronize());
      check(o1), check(o3);
    }
  } catch (const std::exception& e) {
    std::printf("FAIL streams %s\n", e.what());
    return false;
  }
  FT_CUDA(cudaGraphExecDestroy(exec));
  FT_CUDA(cudaGraphDestroy(graph));
  FT_CUDA(cudaStreamDestroy(s1));
  FT_CUDA(cudaStreamDestroy(s2));
  const bool ok = nan == 0 && differ == 0;
  std::printf("%s streams and a graph: B=%d Sq=%d Sk=%d Hq=%d Hkv=%d d=%d %s: first launch NaN=%d, %d of %d later "
              "launches differ %s\n", ok ? "ok  " : "FAIL", c.B, c.Sq, c.Sk, c.Hq, c.Hkv, c.D,
              c.causal ? "causal" : "full", nan, differ, runs,
              flashtile::cuda::sm90_fwd_name(make_params(c, nullptr, nullptr, nullptr, nullptr, nullptr)).c_str());
  return ok;
}

// dispatched: this launch mode is the one the library picks for the cell (marked in the line, for parse_grid.py).
// var: the variants to time (its wl, wr, softcap, alibi, sinks; --variants).
void bench(int D, int S, int H, bool causal, int B = 1, const char* mode = "", bool dispatched = false,
           const Case& var = Case{}) {
  const Case c{B, S, S, H, H, D, true, false, 0};
  const std::size_t n = std::size_t(B) * S * H * D;
  // Inputs are generated once per size (every --grid cell has the same B·S·H·D) and reused.
  static std::size_t cached_n = 0;
  static std::unique_ptr<dev_buf<__nv_bfloat16>> dq, dk, dv, dout;
  if (cached_n != n) {
    std::mt19937 rng(5);
    std::vector<__nv_bfloat16> hq, hk, hv;
    std::vector<float> f;
    fttest::random16(hq, f, n, rng, 2.0f);
    fttest::random16(hk, f, n, rng);
    fttest::random16(hv, f, n, rng);
    dq.reset(), dk.reset(), dv.reset(), dout.reset();
    dq = std::make_unique<dev_buf<__nv_bfloat16>>(n), dk = std::make_unique<dev_buf<__nv_bfloat16>>(n);
    dv = std::make_unique<dev_buf<__nv_bfloat16>>(n), dout = std::make_unique<dev_buf<__nv_bfloat16>>(n);
    dq->upload(hq), dk->upload(hk), dv->upload(hv);
    cached_n = n;
  }
  dev_buf<float> dlse(std::size_t(B) * H * S);
  Case cc = c;
  cc.causal = causal;
  cc.wl = var.wl, cc.wr = var.wr, cc.softcap = var.softcap, cc.alibi = var.alibi, cc.sinks = var.sinks;
  FwdParams p = make_params(cc, dq->p, dk->p, dv->p, dout->p, g_bench_lse ? dlse.p : nullptr);
  std::vector<float> slopes(std::size_t(B) * H), sinks(H);
  for (int h = 0; h < H; ++h) sinks[h] = case_sink(h);
  for (std::size_t i = 0; i < slopes.size(); ++i) slopes[i] = case_slope(0, int(i) % H);
  dev_buf<float> dslopes(slopes.size()), dsinks(sinks.size());
  dslopes.upload(slopes), dsinks.upload(sinks);
  if (var.alibi > 0) p.alibi_slopes = dslopes.p;
  if (var.sinks) p.sinks = dsinks.p;
  // Launches back to back (as in a model's forward), so host-side work (TMA map encoding) hides behind the GPU:
  // warm up for >= g_warm_ms (100: clocks settle; the power cap binds within 20-80 ms, 2026-11-30_h200_sm90_power_cap), then the median of
  // 7 batches of 10 launches, each batch timed by events.
  const std::vector<float> ms = fttest::time_batches([&] { flashtile::cuda::sm90_fwd_launch(p, g_ctas); }, g_warm_ms);
  const double med = ms[ms.size() / 2];
  const double flops = 4.0 * B * H * double(S) * S * D / (causal ? 2.0 : 1.0);
  std::printf("bench sm90_fwd%s d=%d bf16 B=%d H=%d S=%d %-10s median %.3f ms  %.1f TFLOP/s  (min %.3f ms)%s %s\n",
              mode, D, B, H, S, causal ? "causal" : "non-causal", med, flops / (med * 1e-3) / 1e12, ms.front(),
              dispatched ? "  dispatched" : "", flashtile::cuda::sm90_fwd_name(p).c_str());
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // lines survive a timeout kill
  bool quick = false, tiny = false, no_bench = false, bench_only = false, grid = false, variants = false;
  int grid_d = 0;  // --grid-d D: only this head dim
  int grid_smax = 16384;    // --grid-smax S: only seqlens up to S
  // --cell D,S,CAUSAL[,H,B]: time one grid cell (H = 2048 / D, B = 16384 / S unless given) with the configured launch
  // (for ncu; other H, B: the tile count against the SM count, e.g. the last wave's cost)
  int cell[5] = {0, 0, 0, 0, 0};
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--grid-d") && i + 1 < argc) grid_d = std::atoi(argv[++i]);
    grid |= !std::strcmp(argv[i], "--grid");
    variants |= !std::strcmp(argv[i], "--variants");
    if (!std::strcmp(argv[i], "--grid-smax") && i + 1 < argc) grid_smax = std::atoi(argv[++i]);
    if (!std::strcmp(argv[i], "--warm-ms") && i + 1 < argc) g_warm_ms = static_cast<float>(std::atof(argv[++i]));
    if (!std::strcmp(argv[i], "--cell") && i + 1 < argc)
      std::sscanf(argv[++i], "%d,%d,%d,%d,%d", &cell[0], &cell[1], &cell[2], &cell[3], &cell[4]);
    if (!std::strcmp(argv[i], "--ctas") && i + 1 < argc) g_ctas = std::atoi(argv[++i]);
    quick |= !std::strcmp(argv[i], "--quick");
    tiny |= !std::strcmp(argv[i], "--tiny");
    no_bench |= !std::strcmp(argv[i], "--no-bench");
    bench_only |= !std::strcmp(argv[i], "--bench-only");
    g_bench_lse |= !std::strcmp(argv[i], "--lse");
  }
  if (const int skip = fttest::require_sm90("sm90 kernel", g_cc, g_sms)) return skip;
  std::mt19937 rng(20261129);
  int fails = 0, total = 0;
  if (!bench_only) {
    std::vector<Case> cases;
    const int small[][2] = {{1, 17}, {17, 1}, {17, 257}, {257, 17}, {257, 1000}, {1000, 257}};
    quick |= tiny;  // racecheck checks every shared-memory access: a few small cases, each head dim and O path
    const int big[][2] = {{1000, 4096}, {4096, 1000}};
    for (int D : {64, 128, 256})
      for (bool bf : {true, false})
        for (bool causal : {false, true}) {
          if (quick && !bf) continue;
          for (auto& s : small)
            if (!tiny || s[0] == 257) cases.push_back({2, s[0], s[1], 4, 1, D, bf, causal, 0});
          if (!quick && (D == 128 || bf))
            for (auto& s : big) cases.push_back({1, s[0], s[1], 4, 1, D, bf, causal, 0});
        }
    cases.push_back({2, 300, 300, 8, 2, 128, true, true, 64});   // padded strides, GQA 4:1 over 2 kv heads
    if (!tiny) cases.push_back({1, 4096, 4096, 2, 2, 128, true, true, 0});  // MHA, square, causal
    // Both sides of the short and small kernels' length limits (sm90_kind: d128 non-causal short to 4096 keys, staged
    // O, Q prefetch, 128-key blocks; d64 causal small to 2048 (256-row tiles, staged O), short from 2049 at every
    // length, persistent (the dynamic scheduler), own blocks, Q prefetch and shifted rows (4097 starts 64 rows before
    // row 0, 4096 128), GQA 2:1.
    if (!tiny) cases.push_back({1, 300, 4096, 4, 2, 128, true, false, 0});
    if (!tiny) cases.push_back({1, 300, 4097, 4, 2, 128, true, false, 0});
    if (!tiny) cases.push_back({1, 1024, 1024, 4, 2, 64, true, true, 0});
    if (!tiny) cases.push_back({1, 1025, 1025, 4, 2, 64, true, true, 0});
    if (!tiny) cases.push_back({1, 2048, 2048, 4, 2, 64, false, true, 0});
    if (!tiny) cases.push_back({1, 2049, 2049, 4, 2, 64, true, true, 0});
    if (!tiny) cases.push_back({1, 4096, 4096, 4, 2, 64, true, true, 0});
    if (!tiny) cases.push_back({1, 4097, 4097, 4, 2, 64, false, true, 0});
    // d64 causal past 4096 keys (the short kernel persistent, head groups of the scheduler) with Sq > Sk: tiles
    // without keys, written up front and never handed out, and shifted rows.
    if (!tiny) cases.push_back({1, 5000, 4200, 4, 2, 64, true, true, 0});
    // d64's small kernel (four consumers, 64-key blocks, staged O) to 1024 keys, the short one from 1025: non-causal.
    if (!tiny) cases.push_back({1, 1024, 1024, 4, 2, 64, false, false, 0});
    if (!tiny) cases.push_back({1, 1025, 1025, 4, 2, 64, true, false, 0});
    // d128 causal at 512 keys (Q prefetch, persistent), odd and even; then more short causal tiles than SMs, so each
    // persistent CTA runs several and its second Q buffer loads while a tile still stores O through the first (d256:
    // one Q buffer, persistent to 512 keys; in --tiny too: racecheck).
    if (!tiny) cases.push_back({3, 512, 512, 16, 4, 128, true, true, 0});
    if (!tiny) cases.push_back({3, 513, 513, 16, 4, 128, false, true, 0});
    // d128 causal to 1024 keys (persistent, Q prefetch, head groups of 4 pairs: 24 pairs here, 8 m-blocks), both sides.
    if (!tiny) cases.push_back({3, 1024, 1024, 8, 2, 128, true, true, 0});
    if (!tiny) cases.push_back({3, 1025, 1025, 8, 2, 128, false, true, 0});
    // d128 causal past 1024 keys: persistent with the dynamic scheduler (to 8192), tiles without keys where Sq > Sk
    // (the consumers write them up front; the scheduler never hands them out). In --tiny too: racecheck.
    cases.push_back({1, 1100, 1030, 2, 1, 128, true, true, 0});
    if (!tiny) cases.push_back({1, 3000, 1500, 4, 2, 128, false, true, 0});
    if (!tiny) cases.push_back({2, 4096, 4096, 4, 2, 128, true, true, 0});
    // d128 causal's short kernel persistent to 8192 keys (the main kernel one CTA per tile from 8193), both sides, and
    // Sq > Sk past 4096 under the scheduler.
    if (!tiny) cases.push_back({1, 8192, 8192, 2, 1, 128, true, true, 0});
    if (!tiny) cases.push_back({1, 8193, 8193, 2, 1, 128, false, true, 0});
    if (!tiny) cases.push_back({1, 7000, 5000, 2, 2, 128, true, true, 0});
    // d128 non-causal past 4096 keys: the main kernel in clusters of two (K/V halves multicast into both CTAs; a
    // head's m-blocks rounded up to pairs, the extra tile past Sq stores nothing): 1, 2, 5 and 8 m-blocks, GQA 4:1,
    // more tiles than SMs (CTAs loop over pairs). d64 the same: its short kernel persistent past 4096 keys (1, 1, 6
    // and 3 m-blocks), which no case reached before 2026-12-01_h200_sm90_d64_s_double_buffer. In --tiny too: racecheck.
    for (int D : {64, 128}) {
      cases.push_back({1, 130, 4100, 2, 1, D, true, false, 0});
      if (!tiny) cases.push_back({1, 1, 4500, 2, 1, D, true, false, 0});
      if (!tiny) cases.push_back({2, 1000, 5000, 4, 2, D, false, false, 0});
      if (!tiny) cases.push_back({3, 513, 4200, 16, 4, D, true, false, 0});
    }
    // d256 non-causal: one main kernel, clustered past 4096 keys only (Sm90Params::cluster); 4096 keys ran above.
    cases.push_back({1, 130, 4100, 2, 1, 256, true, false, 0});
    if (!tiny) cases.push_back({1, 300, 4200, 2, 1, 256, true, false, 0});
    if (!tiny) cases.push_back({2, 200, 5000, 4, 2, 256, false, false, 0});
    // d256 causal: the short kernel (64-key blocks, staged O) persistent to 4096 keys, in the static order to 512 and
    // from the scheduler past it; the main kernel from 4097. Both sides of each limit; Sq > Sk under the scheduler
    // (tiles without keys).
    if (!tiny) cases.push_back({2, 512, 512, 4, 2, 256, true, true, 0});
    if (!tiny) cases.push_back({2, 513, 513, 4, 2, 256, false, true, 0});
    if (!tiny) cases.push_back({1, 1500, 1100, 4, 2, 256, true, true, 0});
    if (!tiny) cases.push_back({1, 4096, 4096, 2, 1, 256, true, true, 0});
    if (!tiny) cases.push_back({1, 4097, 4097, 2, 1, 256, false, true, 0});
    for (int D : {64, 128, 256}) cases.push_back({5, 100, 256, 28, 4, D, true, true, 0});
    // O not TMA-addressable (seq stride 2 elements off 16 bytes): the kernels that stage O or store it by TMA fall back
    // to direct stores.
    for (int D : {64, 128, 256})
      for (bool causal : {false, true}) cases.push_back({2, 129, 300, 4, 2, D, true, causal, 0, 2});
    if (!quick) cases.push_back({3, 129, 4000, 4, 4, 64, false, false, 8});
    if (!quick)  // more tiles than SMs: persistent CTAs loop over tiles of different lengths
      for (int D : {64, 128, 256})
        for (bool causal : {false, true}) cases.push_back({4, 777, 1300, 16, 4, D, true, causal, 0});
    // The same through d64's small kernel (to 1024 keys, causal to 2048): 192 tiles of 256 rows on 132 SMs, so
    // persistent CTAs run several (the cases above have 1300 keys: d64's short kernel).
    if (!quick)
      for (bool causal : {false, true}) cases.push_back({4, 700, 700, 16, 4, 64, !causal, causal, 0});
    if (!quick)  // causal head groups by default (36 pairs: four groups of 8 and one of 4; 9 m-blocks a head)
      for (int D : {128, 256}) cases.push_back({3, 1100, 1300, 12, 4, D, true, true, 0});
    // Spiky keys: running maxima that jump by far more than 2^8 between blocks (the d256 kernels' lazy rescale; a
    // mutation that never rescales O fails the d256 cases, 2026-11-30_h200_sm90_lazy_rescale_d256).
    for (int D : {64, 128, 256})
      for (bool causal : {false, true}) cases.push_back({2, 300, 1500, 4, 2, D, D != 64, causal, 0, 0, 97});
    // Every logit far below zero (q = 4, k = -4): a row's first max below -128 in the exp2 domain overflowed the
    // first rescale factor to inf (NaN in l) until 2026-11-30_h200_sm90_lazy_rescale_d256. Sq > Sk too: rows whose keys start in a later block.
    for (int D : {64, 128, 256})
      for (bool causal : {false, true}) {
        cases.push_back({1, 300, 300, 2, 1, D, true, causal, 0, 0, 0, true});
        cases.push_back({1, 500, 257, 2, 2, D, D == 128, causal, 0, 0, 0, true});
      }
    // A row max that jumps by far more than 2^128 in the exp2 domain in the last key block visited (key 5 x150):
    // sm90's kLazy 3 exponentiates against the stale reference first, overflows P to inf, and must recompute S.
    for (int D : {64, 128, 256})
      for (bool causal : {false, true})
        cases.push_back({2, 300, 1500, 4, 2, D, D != 256, causal, 0, 0, 0, false, 150});
    // The same past 4096 keys (non-causal: d64's short kernel, the clustered main kernels of d128 and d256), and with
    // padded seq strides (the repair reads Q and K from global memory through the strides).
    if (!tiny)
      for (int D : {64, 128, 256}) cases.push_back({1, 130, 5000, 2, 1, D, D != 256, false, 0, 0, 0, false, 150});
    if (!tiny)
      for (int D : {64, 128, 256}) cases.push_back({2, 300, 1500, 8, 2, D, true, D != 128, 24, 0, 0, false, 150});
    // One exact step of every row's max in that block: 2^40 (kLazy 3 rescales P), 2^100 (recomputes S), 2^127 (P
    // finite, but a rescale by 2^-127 flushed to 0 under ex2.ftz before kSm90LazyRedoPow).
    if (!tiny)
      for (int D : {64, 128, 256})
        for (float x : {40.0f, 100.0f, 127.0f})
          cases.push_back({1, 300, 1500, 2, 1, D, D != 256, D == 128, 0, 0, 0, false, 0, x});
    // d64's mode 4 checks P < 2 against a reference 7 above the row max: steps of 2^7.5 (the fast path, P up to 2^0.5)
    // and 2^8.5 (P past 2, the move), through its short kernel (non-causal 1500 keys) and small one (causal 1000).
    if (!tiny)
      for (int sk : {1500, 1000})
        for (float x : {7.5f, 8.5f}) cases.push_back({1, 300, sk, 2, 1, 64, sk == 1500, sk == 1000, 0, 0, 0, false, 0, x});
    // Spikes, a jump past 2^128 and the three steps through d64's small kernel too (to 1024 keys: four consumers on
    // 64-key blocks; the cases above have 1500 keys, its short kernel).
    if (!tiny)
      for (bool causal : {false, true}) {
        cases.push_back({2, 300, 1000, 4, 2, 64, true, causal, 0, 0, 97});
        cases.push_back({2, 300, 1000, 4, 2, 64, !causal, causal, 0, 0, 0, false, 150});
        for (float x : {40.0f, 100.0f, 127.0f})
          cases.push_back({1, 300, 1000, 2, 1, 64, true, causal, 0, 0, 0, false, 0, x});
      }
    // The variants (the kMods kernels: sm90_mods.cuh) against ref_row_mods: windows cutting blocks mid-way on both
    // sides, rows and whole tiles whose window holds no key (O 0, LSE -inf, or the sink's), softcap from saturated
    // (2) through Gemma-2's 50 to linear (1e4) in bf16 and f16, ALiBi per head and per (batch, head), sinks far above
    // and below the row maxima, all of them together with GQA and Sq != Sk both ways.
    auto var = [&](Case c, int wl, int wr, float cap, int alibi, bool sinks, int poison = 0) {
      c.wl = wl, c.wr = wr, c.softcap = cap, c.alibi = alibi, c.sinks = sinks, c.poison_below = poison;
      if (!tiny || c.Sk <= 1000) cases.push_back(c);
    };
    for (int D : {64, 128, 256})
      for (bool causal : {false, true}) {
        var({2, 1000, 1000, 4, 2, D, true, causal}, 100, 50, 0.0f, 0, false);
        var({1, 700, 1300, 4, 1, D, D != 128, causal}, 300, -1, 0.0f, 0, false);
        var({1, 1300, 700, 4, 1, D, true, causal}, -1, 7, 0.0f, 0, false);
        var({1, 1000, 257, 4, 2, D, true, causal}, 3, 2, 0.0f, 0, false);  // rows to 740 without keys
        var({1, 1000, 257, 4, 2, D, false, causal}, 3, 2, 0.0f, 0, true);
        var({2, 300, 600, 4, 2, D, true, causal}, -1, -1, 50.0f, 0, false);
        var({1, 300, 600, 4, 2, D, false, causal}, -1, -1, 50.0f, 0, false);
        var({1, 257, 300, 2, 1, D, false, causal}, -1, -1, 2.0f, 0, false);
        var({1, 257, 300, 2, 1, D, true, causal}, -1, -1, 1e4f, 0, false);
        var({2, 300, 500, 4, 2, D, true, causal}, -1, -1, 0.0f, 1, false);
        var({3, 500, 300, 4, 1, D, false, causal}, -1, -1, 0.0f, 2, false);
        var({2, 257, 257, 6, 2, D, true, causal}, -1, -1, 0.0f, 0, true);
        // Sinks alone run the plain kernels (Sm90Mods::sinks): own blocks, shifted rows and narrow blocks at d64
        // causal, rows without keys (Sq > Sk causal).
        var({1, 700, 300, 4, 2, D, !causal, causal}, -1, -1, 0.0f, 0, true);
        var({2, 400, 900, 8, 2, D, D == 64, causal}, 200, 30, 30.0f, 2, true);
        // The lazy rescale (spikes) and S recomputed after P overflowed (a jump at key 5, which rows to 205 see),
        // where the repair must apply the variants again.
        var({2, 300, 1000, 4, 2, D, true, causal, 0, 0, 97}, 400, -1, 0.0f, 1, false);
        var({2, 300, 1500, 4, 2, D, D != 256, causal, 0, 0, 0, false, 150}, 1400, 20, 0.0f, 1, true);
        var({2, 300, 1500, 4, 2, D, D != 64, causal, 0, 0, 0, false, 150}, 1400, -1, 30.0f, 0, false);
      }
    // The split-KV decode kernel (sm90_decode.cuh: seqlen_q <= 16): 1 to 256 packed rows (one row group to four,
    // four key groups to one, several row blocks), one split (the direct store) and many (the combine), a last tile
    // past the keys, Sk < Sq (rows without keys), padded strides; then its variants, sinks (always the combine) and a
    // window with NaN keys below it (block skipping).
    for (int D : {64, 128, 256})
      for (bool causal : {false, true}) {
        const bool bf = D != 128 || causal;
        cases.push_back({1, 1, 1, 1, 1, D, bf, causal, 0});
        cases.push_back({3, 1, 17, 8, 2, D, !bf, causal, 0});
        cases.push_back({2, 3, 257, 8, 1, D, bf, causal, 0});
        cases.push_back({1, 16, 3001, 16, 4, D, !bf, causal, 0});
        cases.push_back({1, 16, 1000, 32, 2, D, bf, causal, 0});
        if (!tiny) cases.push_back({1, 1, 20000, 4, 1, D, bf, causal, 0});
        cases.push_back({64, 1, 300, 8, 8, D, !bf, causal, 0});
        cases.push_back({2, 5, 3, 4, 4, D, bf, causal, 8});
        var({1, 1, 5000, 8, 2, D, bf, causal}, 100, 0, 0.0f, 0, false, 4800);
        var({2, 4, 3000, 8, 2, D, !bf, causal}, -1, -1, 50.0f, 1, true);
        var({1, 16, 2000, 4, 1, D, bf, causal}, 64, 0, 0.0f, 2, true);
        var({3, 1, 100, 4, 4, D, !bf, causal}, -1, -1, 0.0f, 0, true);
      }
    // Block skipping: K and V NaN below the keys any row's window reaches (by more than a block), so a block loaded
    // there poisons O. Through the main kernels past 4096 keys (non-causal d128 / d256: no clusters with variants,
    // the dynamic scheduler) and d128's causal main past 8192.
    for (int D : {64, 128, 256}) {
      var({1, 128, 8192, 2, 1, D, true, false}, 100, 0, 0.0f, 0, false, 7680);
      var({1, 256, 6000, 4, 2, D, D != 64, true}, 1000, -1, 20.0f, 1, true, 4400);
    }
    var({1, 200, 9000, 2, 1, 128, true, true}, 2000, -1, 0.0f, 1, true, 6500);
    var({1, 600, 5000, 4, 2, 128, false, false}, 2000, 100, 50.0f, 2, true, 2100);
    // The softcap build (Sm90Mods::softcap: a share of its exp2s through poly_exp2) in the main kernels: d128 / d256
    // non-causal past 4096 keys with a sink, d128 causal past 8192 in f16 with a window.
    for (int D : {128, 256}) var({1, 256, 6000, 4, 2, D, D != 128, false}, -1, -1, 50.0f, 0, true);
    // Sinks alone in the plain main kernels, in clusters (non-causal past 4096 keys).
    for (int D : {128, 256}) var({1, 300, 6000, 4, 2, D, D == 128, false}, -1, -1, 0.0f, 0, true);
    var({1, 200, 9000, 2, 1, 128, false, true}, 2000, -1, 30.0f, 0, false, 6500);
    for (const Case& c : cases) {
      ++total;
      fails += !run(c, rng);
    }
    // The scheduler's counter across streams and a graph, in dynamic launches with more tiles than SMs: d64's small
    // kernel, d128's non-causal short kernel, d64 causal's short one and d128 causal's (the scheduler past 512 keys).
    if (!tiny)
      for (const Case& c : {Case{4, 700, 700, 16, 4, 64, true, false, 0}, Case{4, 1000, 1000, 16, 4, 128, true, false, 0},
                            Case{2, 3000, 3000, 16, 4, 64, true, true, 0}, Case{2, 2000, 2000, 16, 4, 128, true, true, 0}}) {
        ++total;
        fails += !run_streams(c, rng);
      }
    // A seq stride that breaks TMA's 16-byte rule must be refused with a reason, not run.
    {
      Case c{1, 64, 64, 1, 1, 128, true, false, 4};
      const FwdParams p = make_params(c, reinterpret_cast<void*>(256), reinterpret_cast<void*>(256),
                                      reinterpret_cast<void*>(256), reinterpret_cast<void*>(256), nullptr);
      const std::string why = flashtile::cuda::sm90_fwd_supports(p);
      ++total;
      fails += why.empty();
      std::printf("%s misaligned seq stride refused: \"%s\"\n", why.empty() ? "FAIL" : "ok  ", why.c_str());
    }
    std::printf("correctness: %d/%d passed\n", total - fails, total);
  }
  if (cell[0] != 0) {
    bench(cell[0], cell[1], cell[3] > 0 ? cell[3] : 2048 / cell[0], cell[2] != 0, cell[4] > 0 ? cell[4] : 16384 / cell[1],
          "_cell");
  } else if (grid) {
    for (int D : {64, 128, 256})
      for (bool causal : {false, true})
        for (int S = 512; S <= grid_smax; S *= 2)
          for (int ctas : {g_sms, -1}) {
            if (grid_d != 0 && D != grid_d) continue;
            g_ctas = ctas;
            FwdParams q{};  // the launch layer's answer
            q.head_dim = D, q.causal = causal, q.seqlen_k = S;
            const bool persistent = flashtile::cuda::sm90_fwd_persistent(q);
            bench(D, S, 2048 / D, causal, 16384 / S, ctas > 0 ? "_persist" : "_pertile", (ctas > 0) == persistent);
          }
  } else if (variants) {
    // Issue 43's bars (d128 bf16): softcap, ALiBi and sinks each within 5% of the plain call at 4k-16k; a 4096-key
    // window at 32k keys at least 7x faster than the full non-causal call.
    Case cap{}, alibi{}, sink{}, all{};
    cap.wl = cap.wr = alibi.wl = alibi.wr = sink.wl = sink.wr = all.wr = -1;
    cap.softcap = 50.0f, alibi.alibi = 1, sink.sinks = true;
    all.wl = 4096, all.softcap = 50.0f, all.alibi = 1, all.sinks = true;
    for (int S : {4096, 8192, 16384})
      for (bool causal : {false, true}) {
        bench(128, S, 16, causal);
        for (const Case* v : {&cap, &alibi, &sink}) bench(128, S, 16, causal, 1, "_var", false, *v);
      }
    // The window's build at full coverage (a left window of every key: the masks build's loop against the plain
    // kernel's), then the bar's 4096 keys.
    Case win{}, full{};
    win.wl = 4096, win.wr = 0;
    full.wl = 32768, full.wr = -1;
    bench(128, 32768, 16, false);
    bench(128, 32768, 16, false, 1, "_window_full", false, full);
    bench(128, 32768, 16, false, 1, "_window4096", false, win);
    bench(128, 32768, 16, false, 1, "_window4096_all", false, all);
  } else if (!no_bench) {
    for (int D : {128, 64, 256})
      for (bool causal : {false, true}) bench(D, 16384, 16, causal);
  }
  return fails ? 1 : 0;
}
