// Test runner: doctest plus two flashtile options: --ft-backend=cpu|cuda|vulkan, selecting the devices the
// conformance suite runs on, and --ft-path=NAME (e.g. vulkan_coopmat), one path of theirs alone. A backend with no
// device here exits 77 (ctest shows the test as skipped) after printing the reason, so a GPU test that cannot run is
// reported as skipped, never as passed.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "test_config.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace flashtile::testing {
Config& config() {
  static Config c;
  return c;
}
std::vector<Device> selected_devices() {
  std::vector<Device> out;
  for (const DeviceInfo& info : Device::list())
    if (info.backend == config().backend) out.push_back(Device::open(info.backend, info.index));
  return out;
}
}  // namespace flashtile::testing

int main(int argc, char** argv) {
  using namespace flashtile;
  auto& cfg = testing::config();
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    if (std::strncmp(argv[i], "--ft-backend=", 13) == 0) {
      cfg.backend = parse_backend(argv[i] + 13);
      cfg.backend_selected = true;
    } else if (std::strncmp(argv[i], "--ft-path=", 10) == 0) {
      cfg.path = parse_path(argv[i] + 10);
    } else {
      rest.push_back(argv[i]);
    }
  }
  if (const char* s = std::getenv("FLASHTILE_TEST_SEED")) cfg.seed = std::strtoull(s, nullptr, 0);
  else cfg.seed = (static_cast<std::uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
  std::printf("flashtile tests: seed %llu (set FLASHTILE_TEST_SEED to repeat)\n",
              static_cast<unsigned long long>(cfg.seed));
  if (cfg.backend_selected && cfg.backend != Backend::Auto) {
    const std::string why = Device::unavailable_reason(cfg.backend);
    if (!why.empty()) {
      std::printf("SKIP: no %s device: %s\n", std::string(to_string(cfg.backend)).c_str(), why.c_str());
      return 77;
    }
  }
  doctest::Context ctx;
  ctx.applyCommandLine(static_cast<int>(rest.size()), rest.data());
  return ctx.run();
}
