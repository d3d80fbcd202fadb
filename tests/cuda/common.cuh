// Helpers shared by the CUDA tile tests and the sm90 check driver: error checks, random data, host 16-bit
// conversions, relative error.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace fttest {

inline void check(cudaError_t e, const char* what, int line) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string(what) + " (line " + std::to_string(line) + "): " + cudaGetErrorString(e));
}
#define FT_CUDA(x) ::fttest::check((x), #x, __LINE__)

// Host conversions through the CUDA headers' host-callable intrinsics (round to nearest even).
template <typename T>
inline T to16(float x) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) return __float2bfloat16(x);
  else return __float2half(x);
}
template <typename T>
inline float from16(T x) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) return __bfloat162float(x);
  else return __half2float(x);
}

// Random 16-bit values in [-1, 1), plus their exact float values (after rounding) for host references.
template <typename T>
inline void random16(std::vector<T>& v, std::vector<float>& f, std::size_t n, std::mt19937& rng, float scale = 1.0f) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  v.resize(n);
  f.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    v[i] = to16<T>(u(rng) * scale);
    f[i] = from16(v[i]);
  }
}

// ‖a − b‖ / ‖b‖ (NaN anywhere gives +inf).
inline double rel_err(const std::vector<double>& a, const std::vector<double>& b) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i])) return INFINITY;
    num += (a[i] - b[i]) * (a[i] - b[i]);
    den += b[i] * b[i];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

template <typename T>
struct dev_buf {
  T* p = nullptr;
  std::size_t n = 0;
  explicit dev_buf(std::size_t count) : n(count) { FT_CUDA(cudaMalloc(&p, sizeof(T) * (count ? count : 1))); }
  ~dev_buf() { cudaFree(p); }
  dev_buf(const dev_buf&) = delete;
  dev_buf& operator=(const dev_buf&) = delete;
  void upload(const std::vector<T>& h) { FT_CUDA(cudaMemcpy(p, h.data(), sizeof(T) * h.size(), cudaMemcpyHostToDevice)); }
  std::vector<T> download() const {
    std::vector<T> h(n);
    FT_CUDA(cudaMemcpy(h.data(), p, sizeof(T) * n, cudaMemcpyDeviceToHost));
    return h;
  }
};

// One query row of the host reference forward, in double: o (D values, accumulated into) = softmax(scale · q·kᵀ)·v
// over keys 0..last (k and v rows k_ss / v_ss elements apart); returns the row's LSE (natural log). s: scratch.
inline double ref_row(double* o, const float* q, const float* k, std::int64_t k_ss, const float* v, std::int64_t v_ss,
                      int D, int last, double scale, std::vector<double>& s) {
  s.resize(std::max(last + 1, 0));
  double m = -INFINITY;
  for (int j = 0; j <= last; ++j) {
    double acc = 0;
    for (int d = 0; d < D; ++d) acc += double(q[d]) * k[j * k_ss + d];
    s[j] = acc * scale;
    m = std::max(m, s[j]);
  }
  double l = 0;
  for (int j = 0; j <= last; ++j) l += (s[j] = std::exp(s[j] - m));
  for (int j = 0; j <= last; ++j)
    for (int d = 0; d < D; ++d) o[d] += s[j] / l * v[j * v_ss + d];
  return last < 0 ? -INFINITY : m + std::log(l);
}

// 0 with device 0's compute capability (e.g. 90) and SM count, or 77 (ctest's skip) after printing "SKIP: <reason>"
// where there is no CUDA device or it is not sm_90 (what: the kernel, for the message).
inline int require_sm90(const char* what, int& cc, int& sms) {
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    std::printf("SKIP: no CUDA device\n");
    return 77;
  }
  int major = 0, minor = 0;
  FT_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
  FT_CUDA(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0));
  FT_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cc = major * 10 + minor;
  if (cc != 90) {
    std::printf("SKIP: device is sm_%d, the %s needs sm_90\n", cc, what);
    return 77;
  }
  return 0;
}

// launch() back to back on the default stream, as a model runs it (host work hides behind the GPU): a warm-up of at
// least warm_ms (clocks settle, the power cap binds), then 7 batches of 10 launches, each batch timed by events.
// Returns the per-launch times of the batches in ms, sorted (median: [3]).
template <typename F>
std::vector<float> time_batches(F&& launch, float warm_ms) {
  constexpr int kMaxWarm = 100000, kBatches = 7, kPerBatch = 10;
  cudaEvent_t e0, e1;
  FT_CUDA(cudaEventCreate(&e0));
  FT_CUDA(cudaEventCreate(&e1));
  float warm = 0;
  FT_CUDA(cudaEventRecord(e0));
  for (int i = 0; i < kMaxWarm && warm < warm_ms; ++i) {
    launch();
    FT_CUDA(cudaEventRecord(e1));
    FT_CUDA(cudaEventSynchronize(e1));
    FT_CUDA(cudaEventElapsedTime(&warm, e0, e1));
  }
  std::vector<float> ms;
  for (int i = 0; i < kBatches; ++i) {
    FT_CUDA(cudaEventRecord(e0));
    for (int j = 0; j < kPerBatch; ++j) launch();
    FT_CUDA(cudaEventRecord(e1));
    FT_CUDA(cudaEventSynchronize(e1));
    float t = 0;
    FT_CUDA(cudaEventElapsedTime(&t, e0, e1));
    ms.push_back(t / kPerBatch);
  }
  std::sort(ms.begin(), ms.end());
  FT_CUDA(cudaEventDestroy(e0));
  FT_CUDA(cudaEventDestroy(e1));
  return ms;
}

}  // namespace fttest
