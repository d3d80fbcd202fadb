// Session 32 probe: does a memset between two launches change which SM each CTA of the next launch lands on? Each
// launch is 132 CTAs of ~200 KB shared memory (one a SM, as the persistent sm90 kernels), spinning 150-250 us (CTAs end
// at different times, as real tiles do), and records %smid by blockIdx. Sequences: 6 launches back to back, then 6
// each after a 4-byte cudaMemsetAsync. Prints, per launch, the first 24 SMs by blockIdx and whether the mapping equals
// the previous launch's. Build: nvcc -O2 -arch=sm_90a -o smid_probe bench/tune/smid_probe.cu
#include <cstdio>
#include <vector>

__global__ void probe(int* out, int* counter, long long spin) {
  extern __shared__ char smem[];
  unsigned smid;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
  if (threadIdx.x == 0) out[blockIdx.x] = static_cast<int>(smid);
  smem[threadIdx.x] = 0;
  const long long t0 = clock64(), n = spin + (blockIdx.x * 7919 % 100) * spin / 150;
  while (clock64() - t0 < n) {
  }
  if (threadIdx.x == 0 && counter) atomicAdd(counter, 1);
}

int main() {
  const int ctas = 132, smem = 200 * 1024, launches = 6;
  cudaFuncSetAttribute(probe, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  int *out, *counter;
  cudaMalloc(&out, sizeof(int) * ctas * launches * 2);
  cudaMalloc(&counter, sizeof(int));
  const long long spin = 300000;  // ~150 us at 1.98 GHz
  for (int seq = 0; seq < 2; ++seq) {
    for (int l = 0; l < launches; ++l) {
      if (seq == 1) cudaMemsetAsync(counter, 0, sizeof(int));
      probe<<<ctas, 128, smem>>>(out + (seq * launches + l) * ctas, counter, spin);
    }
    cudaDeviceSynchronize();
  }
  std::vector<int> h(ctas * launches * 2);
  cudaMemcpy(h.data(), out, sizeof(int) * h.size(), cudaMemcpyDeviceToHost);
  for (int seq = 0; seq < 2; ++seq)
    for (int l = 0; l < launches; ++l) {
      const int* m = &h[(seq * launches + l) * ctas];
      bool same = l > 0;
      for (int b = 0; b < ctas && l > 0; ++b) same &= m[b] == m[b - ctas];
      std::printf("%s launch %d same-as-previous %d:", seq ? "memset " : "b2b    ", l, int(same));
      for (int b = 0; b < 24; ++b) std::printf(" %d", m[b]);
      std::printf("\n");
    }
  std::printf("%s\n", cudaGetErrorString(cudaGetLastError()));
  return 0;
}
