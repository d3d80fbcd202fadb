// Host helpers of the sm80 kernel checks (cuda_sm80_check, cuda_sm80_bwd_check): 16-bit values by runtime dtype,
// strided [B, S, H, D] operands, device buffers, the device query, timing.
#pragma once

#include "attn/fwd_params.hpp"
#include "tile/constants.hpp"

#include <flashtile/types.hpp>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

namespace ftcheck {

using flashtile::cuda::ElemType;
using flashtile::cuda::FwdParams;

#define CK(x)                                                                                         \
  do {                                                                                                \
    cudaError_t e_ = (x);                                                                             \
    if (e_ != cudaSuccess) {                                                                          \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));        \
      std::exit(2);                                                                                   \
    }                                                                                                 \
  } while (0)

inline constexpr std::uint16_t kPoison16 = 0xffff;  // NaN in both f16 and bf16 (cudaMemset 0xff)

inline std::uint16_t to16(float f, ElemType t) {
  std::uint16_t r;
  if (t == ElemType::BF16) {
    __nv_bfloat16 b = __float2bfloat16_rn(f);
    std::memcpy(&r, &b, 2);
  } else {
    __half h = __float2half_rn(f);
    std::memcpy(&r, &h, 2);
  }
  return r;
}
inline float from16(std::uint16_t u, ElemType t) {
  if (t == ElemType::BF16) {
    __nv_bfloat16 b;
    std::memcpy(&b, &u, 2);
    return __bfloat162float(b);
  }
  __half h;
  std::memcpy(&h, &u, 2);
  return __half2float(h);
}

// One check case: [B, S, H, D] operands, Sq query rows against Sk keys, GQA heads_q / heads_kv.
struct Case {
  int b, sq, sk, hq, hkv, d;
  ElemType dt;
  bool causal;
  int pad;  // extra elements per head slot (strided view); odd values make the view unaligned
};

// One operand [B, S, H, D] laid out with head slot D + pad, plus an element offset of `pad` (so pad odd -> unaligned).
struct Operand {
  int b, s, h, d, pad;
  std::int64_t sh() const { return d + pad; }
  std::int64_t ss() const { return h * sh(); }
  std::int64_t sb() const { return s * ss(); }
  std::int64_t off() const { return pad; }
  std::int64_t elems() const { return off() + b * sb(); }
  std::int64_t at(int ib, int is, int ih, int id) const { return off() + ib * sb() + is * ss() + ih * sh() + id; }
  std::vector<bool> mask() const {  // which elements of the allocation the view covers
    std::vector<bool> m(elems(), false);
    for (int ib = 0; ib < b; ++ib)
      for (int is = 0; is < s; ++is)
        for (int ih = 0; ih < h; ++ih)
          for (int id = 0; id < d; ++id) m[at(ib, is, ih, id)] = true;
    return m;
  }
};

inline void set_strides(const Operand& op, std::int64_t& sb, std::int64_t& ss, std::int64_t& sh) {
  sb = op.sb(), ss = op.ss(), sh = op.sh();
}

// Standard-normal values in the dtype over the whole allocation (padding included).
inline std::vector<std::uint16_t> random_operand(const Operand& op, ElemType t, std::mt19937& rng) {
  std::normal_distribution<float> nd(0.f, 1.f);
  std::vector<std::uint16_t> v(op.elems());
  for (auto& x : v) x = to16(nd(rng), t);
  return v;
}

// A device allocation of n bytes (at least 1).
struct dbuf {
  void* p = nullptr;
  std::size_t n = 0;
  explicit dbuf(std::size_t bytes) : n(bytes) { CK(cudaMalloc(&p, bytes ? bytes : 1)); }
  explicit dbuf(const std::vector<std::uint16_t>& h) : dbuf(h.size() * 2) {
    CK(cudaMemcpy(p, h.data(), n, cudaMemcpyHostToDevice));
  }
  dbuf(dbuf&& o) noexcept : p(o.p), n(o.n) { o.p = nullptr; }
  dbuf& operator=(dbuf&& o) noexcept {
    std::swap(p, o.p), std::swap(n, o.n);
    return *this;
  }
  ~dbuf() { cudaFree(p); }
  void poison() { CK(cudaMemset(p, 0xff, n)); }
  std::uint16_t* at(std::int64_t elem) const { return static_cast<std::uint16_t*>(p) + elem; }
  std::vector<std::uint16_t> download16() const {
    std::vector<std::uint16_t> h(n / 2);
    CK(cudaMemcpy(h.data(), p, h.size() * 2, cudaMemcpyDeviceToHost));
    return h;
  }
};

// False (after printing "SKIP: ...") where no CUDA device exists; else prints the device.
inline bool device_or_skip() {
  int ndev = 0;
  if (cudaError_t e = cudaGetDeviceCount(&ndev); e != cudaSuccess || ndev == 0) {
    std::printf("SKIP: no CUDA device (%s)\n", cudaGetErrorName(e));
    return false;
  }
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s sm_%d%d, %d SMs\n", prop.name, prop.major, prop.minor, prop.multiProcessorCount);
  return true;
}

inline void set_device(FwdParams& p) {
  int dev = 0;
  cudaDeviceProp prop{};
  CK(cudaGetDevice(&dev));
  CK(cudaGetDeviceProperties(&prop, dev));
  p.num_sms = prop.multiProcessorCount;
  p.device_cc = prop.major * 10 + prop.minor;
}

// f(i) for i in [0, n) over the host's threads.
template <class F>
void parallel_for(int n, F&& f) {
  std::vector<std::thread> pool;
  const int nthreads = int(std::max(1u, std::thread::hardware_concurrency()));
  for (int w = 0; w < nthreads; ++w)
    pool.emplace_back([&, w] {
      for (int i = w; i < n; i += nthreads) f(i);
    });
  for (auto& th : pool) th.join();
}

// Median of 10 cudaEvent-timed runs of launch() after 3 warm-up runs, in ms.
template <class F>
double median_ms(F&& launch) {
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (int i = 0; i < 3; ++i) launch();
  CK(cudaDeviceSynchronize());
  std::vector<float> ms;
  for (int i = 0; i < 10; ++i) {
    CK(cudaEventRecord(e0));
    launch();
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    float t = 0;
    CK(cudaEventElapsedTime(&t, e0, e1));
    ms.push_back(t);
  }
  cudaEventDestroy(e0), cudaEventDestroy(e1);
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace ftcheck
