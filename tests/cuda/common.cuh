// Helpers shared by the CUDA tile tests and the sm90 check driver: error checks, random data, host 16-bit
// conversions, relative error.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

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

}  // namespace fttest
