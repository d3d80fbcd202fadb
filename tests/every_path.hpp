// Runs a suite's items on every path of the selected devices, for features some paths do not have yet.
#pragma once

#include <doctest/doctest.h>

#include "test_config.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace flashtile::testing {

// Whether `refusal` contains one of the '|'-separated parts of `absent`.
inline bool refused_as_absent(const std::string& refusal, const std::string& absent) {
  for (std::size_t from = 0; from <= absent.size();) {
    const std::size_t bar = std::min(absent.find('|', from), absent.size());
    const std::string part = absent.substr(from, bar - from);
    if (!part.empty() && refusal.find(part) != std::string::npos) return true;
    from = bar + 1;
  }
  return false;
}

// Every path a device of backend `b` may have, in no particular order; a device lists those it can run
// (DeviceInfo::paths).
inline std::vector<Path> backend_paths(Backend b) {
  switch (b) {
    case Backend::Cpu: return {Path::CpuReference};
    case Backend::Cuda: return {Path::CudaSm90, Path::CudaSm80};
    case Backend::Vulkan: return {Path::VulkanCoopmat2, Path::VulkanCoopmat, Path::VulkanPortable};
    default: return {};
  }
}

// The paths of dev's backend that dev does not list (the suites run only those it does), each reported as skipped
// with the reason refusal(dev, path) gives for a call forced onto it; a forced call that runs fails.
template <class Refusal>
void report_absent_paths(const Device& dev, Refusal refusal) {
  for (Path path : backend_paths(dev.info().backend)) {
    const auto& listed = dev.info().paths;
    if (std::find(listed.begin(), listed.end(), path) != listed.end()) continue;
    if (config().path && *config().path != path) continue;
    const std::string why = refusal(dev, path);
    CHECK_MESSAGE(!why.empty(), to_string(path), " is not listed by ", dev.info().name, " but ran a call");
    MESSAGE("skipped: ", to_string(path), " on ", dev.info().name, " is not available: ", why);
  }
}

// check(dev, path, i) runs item i on one path and returns "" (ran and was checked) or the refusal's reason. A refusal
// containing `absent` (or one of its '|'-separated parts) means the path lacks that item's feature: the item is
// reported as skipped (a path that refuses every item so is skipped whole); any other refusal fails. name(i) labels item i in messages.
template <class Name, class Check>
void run_on_every_path(std::size_t n, const char* what, const char* absent, std::uint64_t seed, Name name, Check check) {
  const auto devices = selected_devices();
  REQUIRE_MESSAGE(!devices.empty(), "no device of the selected backend");
  for (const Device& dev : devices)
    for (Path path : dev.info().paths) {
      if (config().path && *config().path != path) continue;
      int ran = 0, lacking = 0;
      std::string none;
      for (std::size_t i = 0; i < n; ++i) {
        INFO("device ", dev.info().name, ", path ", to_string(path), ", ", what, " ", name(i), ", seed ", seed + i);
        const std::string refusal = check(dev, path, i);
        if (refusal.empty()) {
          ++ran;
        } else if (refused_as_absent(refusal, absent)) {
          ++lacking;
          none = refusal;
        } else {
          FAIL_CHECK("refused: ", refusal);
        }
      }
      if (ran == 0 && !none.empty()) {
        MESSAGE("skipped: ", to_string(path), " on ", dev.info().name, ": ", none);
        continue;
      }
      std::printf("%s: %s / %s: %d of %zu cases ran%s\n", what, dev.info().name.c_str(),
                  std::string(to_string(path)).c_str(), ran, n,
                  lacking ? (", the rest refused as not implemented (" + none + ")").c_str() : "");
      CHECK(ran + lacking == int(n));
    }
}

}  // namespace flashtile::testing
