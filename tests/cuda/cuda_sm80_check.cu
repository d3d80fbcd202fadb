// Standalone check and timing of the sm80 forward family, below the library: FwdParams straight into
// sm80_fwd_launch. Random inputs, NaN-poisoned outputs, a host double reference, odd sizes, GQA/MQA, causal,
// strided and unaligned views; then a cudaEvent timing of the d=128 bf16 B=1 H=16 S=16384 case.
//   cuda_sm80_check [--quick] [--no-time] [--small]   (--small: a few small cases, for compute-sanitizer)
// Exit: 0 all passed, 1 a case failed, 2 a CUDA error, 77 no CUDA device (skipped).
#include "attn/fwd_params.hpp"
#include "sm80_check_util.cuh"
#include "tile/constants.hpp"

#include <flashtile/types.hpp>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

using flashtile::cuda::ElemType;
using flashtile::cuda::FwdParams;
using namespace ftcheck;

namespace {

struct Outcome {
  double err_o = 0, err_lse = 0;
  bool nan = false, unwritten = false;
};

Outcome run_case(const Case& c, std::mt19937& rng) {
  Operand oq{c.b, c.sq, c.hq, c.d, c.pad}, ok{c.b, c.sk, c.hkv, c.d, c.pad}, oo{c.b, c.sq, c.hq, c.d, c.pad};
  std::normal_distribution<float> nd(0.f, 1.f);
  auto fill = [&](const Operand& op) {
    std::vector<std::uint16_t> v(op.elems(), to16(0.f, c.dt));
    for (auto& x : v) x = to16(nd(rng), c.dt);
    return v;
  };
  std::vector<std::uint16_t> hq = fill(oq), hk = fill(ok), hv = fill(ok);
  void *dq, *dk, *dv, *dout;
  float* dlse;
  CK(cudaMalloc(&dq, hq.size() * 2));
  CK(cudaMalloc(&dk, hk.size() * 2));
  CK(cudaMalloc(&dv, hv.size() * 2));
  CK(cudaMalloc(&dout, oo.elems() * 2));
  const std::int64_t nlse = std::int64_t(c.b) * c.hq * c.sq;
  CK(cudaMalloc(&dlse, nlse * 4));
  CK(cudaMemcpy(dq, hq.data(), hq.size() * 2, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dk, hk.data(), hk.size() * 2, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dv, hv.data(), hv.size() * 2, cudaMemcpyHostToDevice));
  CK(cudaMemset(dout, 0xff, oo.elems() * 2));  // NaN in both f16 and bf16
  CK(cudaMemset(dlse, 0xff, nlse * 4));         // NaN

  FwdParams p;
  p.q = static_cast<std::uint16_t*>(dq) + oq.off();
  p.k = static_cast<std::uint16_t*>(dk) + ok.off();
  p.v = static_cast<std::uint16_t*>(dv) + ok.off();
  p.o = static_cast<std::uint16_t*>(dout) + oo.off();
  p.lse = dlse;
  p.q_sb = oq.sb(), p.q_ss = oq.ss(), p.q_sh = oq.sh();
  p.k_sb = p.v_sb = ok.sb(), p.k_ss = p.v_ss = ok.ss(), p.k_sh = p.v_sh = ok.sh();
  p.o_sb = oo.sb(), p.o_ss = oo.ss(), p.o_sh = oo.sh();
  p.batch = c.b, p.seqlen_q = c.sq, p.seqlen_k = c.sk, p.heads_q = c.hq, p.heads_kv = c.hkv, p.head_dim = c.d;
  p.dtype = c.dt;
  p.scale = 1.f / std::sqrt(float(c.d));
  p.scale_log2 = p.scale * flashtile::tile::kLog2e;
  p.causal = c.causal;
  set_device(p);
  std::string why = flashtile::cuda::sm80_fwd_supports(p);
  if (!why.empty()) {
    std::printf("unsupported: %s\n", why.c_str());
    std::exit(3);
  }
  dbuf ws(flashtile::cuda::sm80_fwd_workspace(p));  // short Sq takes the split-KV decode, which needs scratch
  p.workspace = ws.p;
  flashtile::cuda::sm80_fwd_launch(p);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  std::vector<std::uint16_t> hout(oo.elems());
  std::vector<float> hlse(nlse);
  CK(cudaMemcpy(hout.data(), dout, hout.size() * 2, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(hlse.data(), dlse, nlse * 4, cudaMemcpyDeviceToHost));
  cudaFree(dq), cudaFree(dk), cudaFree(dv), cudaFree(dout), cudaFree(dlse);

  // Host reference in double, threads over (batch, head).
  const int group = c.hq / c.hkv;
  const double scale = p.scale;
  std::vector<double> num(c.hq * c.b, 0), den(c.hq * c.b, 0), lnum(c.hq * c.b, 0), lden(c.hq * c.b, 0);
  std::vector<int> bad(c.hq * c.b, 0);
  auto work = [&](int bh) {
    const int ib = bh / c.hq, ih = bh % c.hq, ik = ih / group;
    std::vector<double> s(c.sk), acc(c.d);
    for (int i = 0; i < c.sq; ++i) {
      const std::int64_t last = c.causal ? std::int64_t(i) + c.sk - c.sq : std::int64_t(c.sk) - 1;
      double mx = -INFINITY;
      for (int j = 0; j < c.sk && j <= last; ++j) {
        double dot = 0;
        for (int e = 0; e < c.d; ++e)
          dot += double(from16(hq[oq.at(ib, i, ih, e)], c.dt)) * from16(hk[ok.at(ib, j, ik, e)], c.dt);
        s[j] = dot * scale;
        mx = std::max(mx, s[j]);
      }
      std::fill(acc.begin(), acc.end(), 0.0);
      double l = 0;
      for (int j = 0; j < c.sk && j <= last; ++j) {
        const double w = std::exp(s[j] - mx);
        l += w;
        for (int e = 0; e < c.d; ++e) acc[e] += w * from16(hv[ok.at(ib, j, ik, e)], c.dt);
      }
      const double ref_lse = l > 0 ? mx + std::log(l) : -INFINITY;
      const float got_lse = hlse[(std::int64_t(ib) * c.hq + ih) * c.sq + i];
      if (std::isnan(got_lse)) bad[bh] |= 1;
      if (std::isinf(ref_lse)) {
        if (!(std::isinf(got_lse) && got_lse < 0)) lnum[bh] += 1e30;
      } else {
        lnum[bh] += (got_lse - ref_lse) * (got_lse - ref_lse);
        lden[bh] += ref_lse * ref_lse;
      }
      for (int e = 0; e < c.d; ++e) {
        const double ref = l > 0 ? acc[e] / l : 0.0;
        const float got = from16(hout[oo.at(ib, i, ih, e)], c.dt);
        if (std::isnan(got)) bad[bh] |= 2;
        num[bh] += (got - ref) * (got - ref);
        den[bh] += ref * ref;
      }
    }
  };
  std::vector<std::thread> pool;
  const int nthreads = std::max(1u, std::thread::hardware_concurrency());
  for (int w = 0; w < nthreads; ++w)
    pool.emplace_back([&, w] {
      for (int bh = w; bh < c.b * c.hq; bh += nthreads) work(bh);
    });
  for (auto& th : pool) th.join();
  Outcome r;
  double n = 0, d = 0, ln = 0, ld = 0;
  for (int i = 0; i < c.b * c.hq; ++i) {
    n += num[i], d += den[i], ln += lnum[i], ld += lden[i];
    r.nan = r.nan || bad[i];
  }
  r.err_o = d > 0 ? std::sqrt(n / d) : std::sqrt(n);
  r.err_lse = ld > 0 ? std::sqrt(ln / ld) : std::sqrt(ln);
  return r;
}

double time_case(int b, int h, int s, int d, ElemType dt, bool causal) {
  const std::int64_t n = std::int64_t(b) * s * h * d;
  std::vector<std::uint16_t> host(n);
  std::mt19937 rng(7);
  std::normal_distribution<float> nd(0.f, 1.f);
  for (auto& x : host) x = to16(nd(rng), dt);
  void *q, *k, *v, *o;
  float* lse;
  CK(cudaMalloc(&q, n * 2));
  CK(cudaMalloc(&k, n * 2));
  CK(cudaMalloc(&v, n * 2));
  CK(cudaMalloc(&o, n * 2));
  CK(cudaMalloc(&lse, std::int64_t(b) * h * s * 4));
  CK(cudaMemcpy(q, host.data(), n * 2, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(k, host.data(), n * 2, cudaMemcpyHostToDevice));
  for (auto& x : host) x = to16(nd(rng), dt);
  CK(cudaMemcpy(v, host.data(), n * 2, cudaMemcpyHostToDevice));
  FwdParams p;
  p.q = q, p.k = k, p.v = v, p.o = o, p.lse = lse;
  p.q_sh = p.k_sh = p.v_sh = p.o_sh = d;
  p.q_ss = p.k_ss = p.v_ss = p.o_ss = std::int64_t(h) * d;
  p.q_sb = p.k_sb = p.v_sb = p.o_sb = std::int64_t(s) * h * d;
  p.batch = b, p.seqlen_q = p.seqlen_k = s, p.heads_q = p.heads_kv = h, p.head_dim = d;
  p.dtype = dt, p.scale = 1.f / std::sqrt(float(d)), p.scale_log2 = p.scale * flashtile::tile::kLog2e;
  p.causal = causal;
  p.device_cc = 80;
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (int i = 0; i < 3; ++i) flashtile::cuda::sm80_fwd_launch(p);
  CK(cudaDeviceSynchronize());
  std::vector<float> ms;
  for (int i = 0; i < 10; ++i) {
    CK(cudaEventRecord(e0));
    flashtile::cuda::sm80_fwd_launch(p);
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    float t = 0;
    CK(cudaEventElapsedTime(&t, e0, e1));
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  cudaFree(q), cudaFree(k), cudaFree(v), cudaFree(o), cudaFree(lse);
  const double flops = 4.0 * b * h * double(s) * s * d / (causal ? 2.0 : 1.0);
  const double med = ms[ms.size() / 2];
  std::printf("time sm80 d=%d %s B=%d H=%d S=%d causal=%d: median %.3f ms (min %.3f, max %.3f) = %.1f TFLOP/s\n", d,
              dt == ElemType::BF16 ? "bf16" : "f16", b, h, s, int(causal), med, ms.front(), ms.back(),
              flops / (med * 1e-3) / 1e12);
  return med;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false, timing = true, small = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick")) quick = true;
    if (!std::strcmp(argv[i], "--no-time")) timing = false;
    if (!std::strcmp(argv[i], "--small")) small = true, timing = false;
  }
  int ndev = 0;
  if (cudaError_t e = cudaGetDeviceCount(&ndev); e != cudaSuccess || ndev == 0) {
    std::printf("SKIP: no CUDA device (%s)\n", cudaGetErrorName(e));
    return 77;
  }
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s sm_%d%d, %d SMs\n", prop.name, prop.major, prop.minor, prop.multiProcessorCount);

  std::vector<Case> cases;
  const int sizes[][2] = {{1, 1}, {17, 17}, {257, 257}, {1000, 1000}, {17, 257},
                          {257, 17}, {1, 1000}, {1000, 1}, {257, 1000}, {1000, 257}};
  for (ElemType dt : {ElemType::BF16, ElemType::F16})
    for (int d : {64, 128, 256})
      for (bool causal : {false, true})
        for (auto& sz : sizes) {
          if (quick && sz[0] == 1000 && sz[1] == 1000) continue;
          // Rotate head layouts across cases: MHA 2:2, GQA 4:1 ... (8:2), MQA 3:1; B 1 or 2.
          const int k = int(cases.size());
          const int hq = (k % 3 == 0) ? 2 : (k % 3 == 1) ? 8 : 3;
          const int hkv = (k % 3 == 0) ? 2 : (k % 3 == 1) ? 2 : 1;
          const int pad = (k % 5 == 0) ? 8 : (k % 7 == 0) ? 3 : 0;  // strided, and sometimes unaligned views
          cases.push_back({1 + (k % 2), sz[0], sz[1], hq, hkv, d, dt, causal, pad});
        }
  if (small) {
    cases = {{1, 17, 257, 4, 1, 64, ElemType::BF16, true, 0},   {2, 257, 17, 8, 2, 128, ElemType::F16, true, 3},
             {1, 70, 70, 2, 2, 256, ElemType::BF16, false, 8},  {1, 1, 33, 3, 1, 128, ElemType::BF16, false, 0},
             {1, 130, 100, 2, 1, 64, ElemType::F16, false, 5}};
  }
  std::mt19937 rng(1234);
  int fails = 0;
  for (const Case& c : cases) {
    const Outcome r = run_case(c, rng);
    const double tol = c.dt == ElemType::BF16 ? 1e-2 : 2e-3;
    const bool ok = !r.nan && r.err_o <= tol && r.err_lse <= 1e-3;
    fails += !ok;
    std::printf("%s d=%-3d %-4s %s B=%d Sq=%-4d Sk=%-4d H=%d/%d pad=%d  err_o=%.2e err_lse=%.2e%s  %s\n",
                ok ? "PASS" : "FAIL", c.d, c.dt == ElemType::BF16 ? "bf16" : "f16", c.causal ? "causal" : "full  ",
                c.b, c.sq, c.sk, c.hq, c.hkv, c.pad, r.err_o, r.err_lse, r.nan ? " NaN" : "", "");
  }
  std::printf("correctness: %d/%zu cases passed\n", int(cases.size()) - fails, cases.size());
  if (timing) {
    time_case(1, 16, 16384, 128, ElemType::BF16, false);
    time_case(1, 16, 16384, 128, ElemType::BF16, true);
    time_case(1, 16, 16384, 64, ElemType::BF16, false);
    time_case(1, 16, 16384, 256, ElemType::BF16, false);
  }
  return fails == 0 ? 0 : 1;
}
