// tile_tests: unit tests of the CUDA tile framework (backends/cuda/tile) against host references.
// Exits 77 with "SKIP: <reason>" when no CUDA device is present (ctest SKIP_RETURN_CODE 77).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cuda_runtime.h>

#include <cstdio>

int main(int argc, char** argv) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    std::printf("SKIP: no CUDA device (%s)\n", e != cudaSuccess ? cudaGetErrorString(e) : "device count 0");
    return 77;
  }
  doctest::Context ctx(argc, argv);
  return ctx.run();
}
