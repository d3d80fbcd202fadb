// Session 23 probe: MUFU ex2 throughput on sm_90a, f32 (ex2.approx.ftz.f32) against the packed forms
// (ex2.approx.f16x2, ex2.approx.ftz.bf16x2): do the packed ones give two exponentials per MUFU slot? Each thread runs
// kChains independent chains so latency hides; results are summed into a sink so nothing is dropped.
// Build: nvcc -O3 -arch=sm_90a -o mufu_ex2_rate bench/tune/mufu_ex2_rate.cu
#include <cstdio>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

constexpr int kChains = 8, kIters = 4096;

__global__ void f32_rate(float* sink, float seed) {
  float x[kChains];
  for (int c = 0; c < kChains; ++c) x[c] = seed * (threadIdx.x + c) * 1e-6f - 0.5f;
  for (int i = 0; i < kIters; ++i)
#pragma unroll
    for (int c = 0; c < kChains; ++c) {
      float y;
      asm volatile("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x[c]));
      x[c] = y - 1.5f;  // stays in (-1.5, -0.5): no over/underflow
    }
  float s = 0;
  for (int c = 0; c < kChains; ++c) s += x[c];
  sink[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// The packed forms: H2 = __half2 (ex2.approx.f16x2) or __nv_bfloat162 (ex2.approx.ftz.bf16x2).
template <typename H2>
__global__ void packed_rate(float* sink, float seed) {
  auto pack = [](float a, float b) {
    H2 h;
    if constexpr (std::is_same_v<H2, __half2>) h = __floats2half2_rn(a, b);
    else h = __floats2bfloat162_rn(a, b);
    return h;
  };
  unsigned x[kChains];
  const H2 off = pack(1.5f, 1.5f);
  for (int c = 0; c < kChains; ++c) {
    H2 h = pack(seed * (threadIdx.x + c) * 1e-6f - 0.5f, -0.7f);
    x[c] = *reinterpret_cast<unsigned*>(&h);
  }
  for (int i = 0; i < kIters; ++i)
#pragma unroll
    for (int c = 0; c < kChains; ++c) {
      unsigned y;
      if constexpr (std::is_same_v<H2, __half2>) asm volatile("ex2.approx.f16x2 %0, %1;" : "=r"(y) : "r"(x[c]));
      else asm volatile("ex2.approx.ftz.bf16x2 %0, %1;" : "=r"(y) : "r"(x[c]));
      H2 h = __hsub2(*reinterpret_cast<H2*>(&y), off);
      x[c] = *reinterpret_cast<unsigned*>(&h);
    }
  float s = 0;
  for (int c = 0; c < kChains; ++c) s += __low2float(*reinterpret_cast<H2*>(&x[c]));
  sink[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

template <typename K>
void time_it(const char* name, K kernel, int per_op, float* sink, int sms) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  const int blocks = sms * 8, threads = 256;
  kernel<<<blocks, threads>>>(sink, 1.0f);  // warm-up
  cudaEventRecord(a);
  for (int r = 0; r < 5; ++r) kernel<<<blocks, threads>>>(sink, 1.0f);
  cudaEventRecord(b);
  cudaEventSynchronize(b);
  float ms = 0;
  cudaEventElapsedTime(&ms, a, b);
  int clk_khz = 0;
  cudaDeviceGetAttribute(&clk_khz, cudaDevAttrClockRate, 0);
  const double ops = 5.0 * blocks * threads * double(kIters) * kChains;  // MUFU instructions (per thread)
  const double exps = ops * per_op;
  const double secs = ms * 1e-3;
  std::printf("%-8s %8.3f ms  %7.2f Gexp/s  %6.2f exp/clk/SM  %6.2f instr/clk/SM (at %d MHz max clock)\n", name, ms,
              exps / secs * 1e-9, exps / secs / (clk_khz * 1e3) / sms, ops / secs / (clk_khz * 1e3) / sms,
              clk_khz / 1000);
}

int main() {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  float* sink;
  cudaMalloc(&sink, sizeof(float) * sms * 8 * 256);
  for (int rep = 0; rep < 2; ++rep) {
    time_it("f32", f32_rate, 1, sink, sms);
    time_it("f16x2", packed_rate<__half2>, 2, sink, sms);
    time_it("bf16x2", packed_rate<__nv_bfloat162>, 2, sink, sms);
  }
  std::printf("exit %s\n", cudaGetErrorString(cudaDeviceSynchronize()));
  return 0;
}
