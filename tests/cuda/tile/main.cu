// tile_tests: unit tests of the CUDA tile framework (backends/cuda/tile) against host references.
// Exits 77 with "SKIP: <reason>" when no CUDA device is present (ctest SKIP_RETURN_CODE 77), after running the
// host-side test cases ("host: ..."), which fail the run if they fail.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cuda_runtime.h>

#include <cstdio>

int main(int argc, char** argv) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    // The host-side tests still run; the device tests are skipped, and so is the run unless a host test fails.
    std::printf("SKIP: no CUDA device (%s); running the host-side tests only\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "device count 0");
    doctest::Context host(argc, argv);
    host.addFilter("test-case", "host:*");
    const int rc = host.run();
    return rc != 0 ? rc : 77;
  }
  doctest::Context ctx(argc, argv);
  return ctx.run();
}
