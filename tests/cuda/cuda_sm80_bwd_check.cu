// Standalone check of the sm80 backward family, below the library: BwdParams straight into sm80_bwd_launch. Random
// inputs; o and lse from a host forward in double; a host backward reference in double; NaN-poisoned dq, dk, dv (and
// the padding between heads of strided views, which must stay poisoned); odd sizes, Sq != Sk both ways, GQA, batch 2,
// causal, strided and unaligned views; deterministic mode run twice and compared bitwise.
//   cuda_sm80_bwd_check [--small] [--time]   (--small: a few small cases, for compute-sanitizer; --time: TFLOP/s)
// Exit: 0 all passed, 1 a case failed, 2 a CUDA error, 77 no CUDA device (skipped).
//
// Tolerance: max |got - ref| <= tol * max(max |ref|, 1e-2), per tensor. P and dS are rounded to the input dtype before
// their products (as FlashAttention-2 does) and the results are rounded once more on the way out, so an element
// carries a few units of the dtype's rounding (2^-8 bf16, 2^-11 f16) relative to the tensor's scale: tol is 2e-2 for
// bf16 (5 units), 4e-3 for f16 (8 units; f32 accumulation noise weighs more against f16's finer grid). The 1e-2 floor
// covers gradients that are exactly 0 (Sk = 1: dS = dP - Delta = 0), where only f32 rounding noise (~1e-6) is left.
#include "attn/bwd_params.hpp"
#include "sm80_check_util.cuh"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

using flashtile::cuda::BwdParams;
using flashtile::cuda::ElemType;
using namespace ftcheck;

namespace {

using Host16 = std::vector<std::uint16_t>;

// Host forward and backward in double, threads over (batch, kv head): a kv head's dK and dV sum its group's heads.
struct Reference {
  std::vector<double> dq, dk, dv;  // view order of each operand (Operand::at)
  Host16 o;
  std::vector<float> lse;
};

Reference reference(const Case& c, const Operand& oq, const Operand& ok, const Host16& q, const Host16& k,
                    const Host16& v, const Host16& dout, double scale) {
  Reference r;
  r.dq.assign(oq.elems(), 0), r.dk.assign(ok.elems(), 0), r.dv.assign(ok.elems(), 0);
  r.o.assign(oq.elems(), to16(0.f, c.dt));
  r.lse.assign(std::size_t(c.b) * c.hq * c.sq, 0.f);
  const int group = c.hq / c.hkv;
  auto f = [&](const Host16& t, std::int64_t i) { return double(from16(t[i], c.dt)); };
  auto work = [&](int bk) {
    const int ib = bk / c.hkv, ik = bk % c.hkv;
    std::vector<double> s(c.sk), pr(c.sk), ds(c.sk);
    for (int ih = ik * group; ih < (ik + 1) * group; ++ih)
      for (int i = 0; i < c.sq; ++i) {
        const std::int64_t last = c.causal ? std::int64_t(i) + c.sk - c.sq : std::int64_t(c.sk) - 1;
        const int nk = int(std::min<std::int64_t>(c.sk, last + 1));  // visible keys 0 .. nk-1
        double mx = -INFINITY, l = 0;
        for (int j = 0; j < nk; ++j) {
          double dot = 0;
          for (int e = 0; e < c.d; ++e) dot += f(q, oq.at(ib, i, ih, e)) * f(k, ok.at(ib, j, ik, e));
          s[j] = dot * scale;
          mx = std::max(mx, s[j]);
        }
        for (int j = 0; j < nk; ++j) l += std::exp(s[j] - mx);
        const double lse = nk > 0 ? mx + std::log(l) : -INFINITY;
        r.lse[(std::int64_t(ib) * c.hq + ih) * c.sq + i] = float(lse);
        for (int j = 0; j < nk; ++j) pr[j] = std::exp(s[j] - lse);
        double delta = 0;  // rowsum(dO ∘ O) with O as the kernel reads it: rounded to the dtype
        for (int e = 0; e < c.d; ++e) {
          double o = 0;
          for (int j = 0; j < nk; ++j) o += pr[j] * f(v, ok.at(ib, j, ik, e));
          r.o[oq.at(ib, i, ih, e)] = to16(float(o), c.dt);
          delta += f(dout, oq.at(ib, i, ih, e)) * from16(r.o[oq.at(ib, i, ih, e)], c.dt);
        }
        for (int j = 0; j < nk; ++j) {
          const double p = pr[j];
          double dp = 0;
          for (int e = 0; e < c.d; ++e) dp += f(dout, oq.at(ib, i, ih, e)) * f(v, ok.at(ib, j, ik, e));
          ds[j] = p * (dp - delta);
          for (int e = 0; e < c.d; ++e) {
            r.dv[ok.at(ib, j, ik, e)] += p * f(dout, oq.at(ib, i, ih, e));
            r.dk[ok.at(ib, j, ik, e)] += scale * ds[j] * f(q, oq.at(ib, i, ih, e));
          }
        }
        for (int e = 0; e < c.d; ++e) {
          double acc = 0;
          for (int j = 0; j < nk; ++j) acc += ds[j] * f(k, ok.at(ib, j, ik, e));
          r.dq[oq.at(ib, i, ih, e)] = scale * acc;
        }
      }
  };
  parallel_for(c.b * c.hkv, work);
  return r;
}

// Strides of every operand: q, o, dO, dQ laid out as oq; k, v, dK, dV as ok.
void set_strides(BwdParams& p, const Operand& oq, const Operand& ok) {
  FwdParams& f = p.f;
  set_strides(oq, f.q_sb, f.q_ss, f.q_sh), set_strides(oq, f.o_sb, f.o_ss, f.o_sh);
  set_strides(oq, p.do_sb, p.do_ss, p.do_sh), set_strides(oq, p.dq_sb, p.dq_ss, p.dq_sh);
  set_strides(ok, f.k_sb, f.k_ss, f.k_sh), set_strides(ok, f.v_sb, f.v_ss, f.v_sh);
  set_strides(ok, p.dk_sb, p.dk_ss, p.dk_sh), set_strides(ok, p.dv_sb, p.dv_ss, p.dv_sh);
}

struct Outcome {
  double err[3] = {0, 0, 0};  // dq, dk, dv: max |got - ref| / max(max |ref|, floor)
  bool nan = false, overwrote = false, repro = true;
};

// Device buffers of one case; run() poisons the outputs, launches and downloads dq, dk, dv.
struct Device {
  dbuf q, k, v, o, dout, dq, dk, dv, lse, ws;
  BwdParams p;
  Host16 hdq, hdk, hdv;
  void run(bool deterministic) {
    for (dbuf* b : {&dq, &dk, &dv}) b->poison();
    p.deterministic = deterministic;
    flashtile::cuda::sm80_bwd_launch(p);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    hdq = dq.download16(), hdk = dk.download16(), hdv = dv.download16();
  }
};

void compare(Outcome& r, const Case& c, const Device& dev, const Reference& ref, const Operand& oq, const Operand& ok) {
  const Host16* got[3] = {&dev.hdq, &dev.hdk, &dev.hdv};
  const std::vector<double>* want[3] = {&ref.dq, &ref.dk, &ref.dv};
  const Operand* op[3] = {&oq, &ok, &ok};
  for (int t = 0; t < 3; ++t) {
    const std::vector<bool> in_view = op[t]->mask();
    double emax = 0, rmax = 0;
    for (std::size_t i = 0; i < in_view.size(); ++i) {
      const std::uint16_t g = (*got[t])[i];
      if (!in_view[i]) {
        r.overwrote = r.overwrote || g != kPoison16;
        continue;
      }
      const double x = from16(g, c.dt);
      r.nan = r.nan || std::isnan(x);
      emax = std::max(emax, std::abs(x - (*want[t])[i]));
      rmax = std::max(rmax, std::abs((*want[t])[i]));
    }
    r.err[t] = std::max(r.err[t], r.nan ? INFINITY : emax / std::max(rmax, 1e-2));
  }
}

Outcome run_case(const Case& c, std::mt19937& rng, bool deterministic_too) {
  const Operand oq{c.b, c.sq, c.hq, c.d, c.pad}, ok{c.b, c.sk, c.hkv, c.d, c.pad};
  const Host16 q = random_operand(oq, c.dt, rng), k = random_operand(ok, c.dt, rng), v = random_operand(ok, c.dt, rng),
               dout = random_operand(oq, c.dt, rng);
  BwdParams p;
  auto& f = p.f;
  f.batch = c.b, f.seqlen_q = c.sq, f.seqlen_k = c.sk, f.heads_q = c.hq, f.heads_kv = c.hkv, f.head_dim = c.d;
  f.dtype = c.dt, f.causal = c.causal;
  f.scale = 1.f / std::sqrt(float(c.d));
  f.scale_log2 = f.scale * flashtile::tile::kLog2e;
  const Reference ref = reference(c, oq, ok, q, k, v, dout, f.scale);

  const std::size_t nlse = ref.lse.size();
  Device dev{dbuf(q), dbuf(k), dbuf(v), dbuf(ref.o), dbuf(dout), dbuf(oq.elems() * 2), dbuf(ok.elems() * 2),
             dbuf(ok.elems() * 2), dbuf(nlse * 4), dbuf(0), p, {}, {}, {}};
  CK(cudaMemcpy(dev.lse.p, ref.lse.data(), nlse * 4, cudaMemcpyHostToDevice));
  BwdParams& P = dev.p;
  P.f.q = dev.q.at(oq.off()), P.f.k = dev.k.at(ok.off()), P.f.v = dev.v.at(ok.off()), P.f.o = dev.o.at(oq.off());
  P.f.lse = static_cast<float*>(dev.lse.p);
  P.dout = dev.dout.at(oq.off()), P.dq = dev.dq.at(oq.off()), P.dk = dev.dk.at(ok.off()), P.dv = dev.dv.at(ok.off());
  set_strides(P, oq, ok);
  set_device(P.f);
  const std::string why = flashtile::cuda::sm80_bwd_supports(P);
  if (!why.empty()) {
    std::printf("unsupported: %s\n", why.c_str());
    std::exit(3);
  }
  dev.ws = dbuf(flashtile::cuda::sm80_bwd_workspace(P));
  P.workspace = dev.ws.p;

  Outcome r;
  dev.run(false);
  compare(r, c, dev, ref, oq, ok);
  if (deterministic_too) {
    dev.run(true);
    compare(r, c, dev, ref, oq, ok);
    const Host16 first[3] = {dev.hdq, dev.hdk, dev.hdv};
    dev.run(true);
    r.repro = first[0] == dev.hdq && first[1] == dev.hdk && first[2] == dev.hdv;
  }
  return r;
}

// Backward FLOPs = 2.5 x the forward's 4·B·H·Sq·Sk·D (halved for causal); the whole launch (preprocess, main kernel,
// convert) is timed.
void time_case(int b, int h, int s, int d, bool causal, bool deterministic) {
  const Operand op{b, s, h, d, 0};
  std::mt19937 rng(7);
  const ElemType dt = ElemType::BF16;
  dbuf q(random_operand(op, dt, rng)), k(random_operand(op, dt, rng)), v(random_operand(op, dt, rng)),
      o(random_operand(op, dt, rng)), dout(random_operand(op, dt, rng));
  dbuf dq(op.elems() * 2), dk(op.elems() * 2), dv(op.elems() * 2), lse(std::size_t(b) * h * s * 4);
  CK(cudaMemset(lse.p, 0, lse.n));  // any finite lse: the timing does not depend on the values
  BwdParams p;
  p.f.q = q.p, p.f.k = k.p, p.f.v = v.p, p.f.o = o.p, p.f.lse = static_cast<float*>(lse.p);
  p.dout = dout.p, p.dq = dq.p, p.dk = dk.p, p.dv = dv.p;
  set_strides(p, op, op);
  p.f.batch = b, p.f.seqlen_q = p.f.seqlen_k = s, p.f.heads_q = p.f.heads_kv = h, p.f.head_dim = d;
  p.f.dtype = dt, p.f.scale = 1.f / std::sqrt(float(d)), p.f.scale_log2 = p.f.scale * flashtile::tile::kLog2e;
  p.f.causal = causal;
  p.deterministic = deterministic;
  set_device(p.f);
  dbuf ws(flashtile::cuda::sm80_bwd_workspace(p));
  p.workspace = ws.p;
  const double ms = median_ms([&] { flashtile::cuda::sm80_bwd_launch(p); });
  const double flops = 2.5 * 4.0 * b * h * double(s) * s * d / (causal ? 2.0 : 1.0);
  std::printf("time sm80_bwd d=%d bf16 B=%d H=%d S=%d causal=%d det=%d: median %.3f ms = %.1f TFLOP/s\n", d, b, h, s,
              int(causal), int(deterministic), ms, flops / (ms * 1e-3) / 1e12);
}

}  // namespace

int main(int argc, char** argv) {
  bool small = false, timing = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--small")) small = true;
    if (!std::strcmp(argv[i], "--time")) timing = true;
  }
  if (!device_or_skip()) return 77;
  try {
    std::vector<Case> cases;
    const int sizes[][2] = {{1, 1},   {17, 17}, {64, 64},  {257, 257}, {17, 300},
                            {300, 17}, {1, 257}, {257, 1}, {300, 257}, {64, 300}};
    const int heads[][2] = {{4, 1}, {4, 2}, {2, 2}, {3, 1}};  // GQA 4:1, 4:2, MHA, MQA 3:1
    for (ElemType dt : {ElemType::BF16, ElemType::F16})
      for (int d : {64, 128, 256})
        for (bool causal : {false, true})
          for (auto& sz : sizes) {
            const int n = int(cases.size());
            const int pad = (n % 5 == 0) ? 8 : (n % 7 == 0) ? 3 : 0;  // strided, and sometimes unaligned views
            cases.push_back({1 + (n % 2), sz[0], sz[1], heads[n % 4][0], heads[n % 4][1], d, dt, causal, pad});
          }
    if (small)
      cases = {{1, 17, 70, 4, 1, 64, ElemType::BF16, true, 0},   {2, 70, 17, 4, 2, 128, ElemType::F16, true, 3},
               {1, 40, 40, 2, 2, 256, ElemType::BF16, false, 8}, {1, 1, 33, 3, 1, 128, ElemType::BF16, false, 0},
               {1, 33, 65, 2, 1, 256, ElemType::F16, true, 5}};
    std::mt19937 rng(1234);
    int fails = 0;
    for (std::size_t n = 0; n < cases.size(); ++n) {
      const Case& c = cases[n];
      const bool det = small || n % 2 == 0;  // deterministic mode on half the grid (every case with --small)
      const Outcome r = run_case(c, rng, det);
      const double tol = c.dt == ElemType::BF16 ? 2e-2 : 4e-3;
      const bool ok = !r.nan && !r.overwrote && r.repro && r.err[0] <= tol && r.err[1] <= tol && r.err[2] <= tol;
      fails += !ok;
      std::printf("%s d=%-3d %-4s %s B=%d Sq=%-3d Sk=%-3d H=%d/%d pad=%d det=%d  dq %.2e dk %.2e dv %.2e%s%s%s\n",
                  ok ? "PASS" : "FAIL", c.d, c.dt == ElemType::BF16 ? "bf16" : "f16", c.causal ? "causal" : "full  ",
                  c.b, c.sq, c.sk, c.hq, c.hkv, c.pad, int(det), r.err[0], r.err[1], r.err[2], r.nan ? " NaN" : "",
                  r.overwrote ? " wrote-outside-view" : "", r.repro ? "" : " not-bit-reproducible");
    }
    std::printf("correctness: %d/%zu cases passed\n", int(cases.size()) - fails, cases.size());
    if (timing)
      for (int d : {64, 128})
        for (bool causal : {false, true}) time_case(4, 16, 4096, d, causal, false);
    if (timing) time_case(4, 16, 4096, 128, false, true);
    return fails == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
}
