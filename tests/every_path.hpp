// Runs a suite's items on every path of the selected devices, for features some paths do not have yet.
#pragma once

#include <doctest/doctest.h>

#include "test_config.hpp"

#include <algorithm>
#include <cstdio>
#include <initializer_list>
#include <string>
#include <string_view>

namespace flashtile::testing {

// check(dev, path, i) runs item i on one path and returns "" (ran and was checked) or the refusal's reason. A refusal
// containing one of `absent` means the path lacks that item's feature: the item is reported as skipped (a path that
// refuses every item so is skipped whole); any other refusal fails. name(i) labels item i in messages.
template <class Name, class Check>
void run_on_every_path(std::size_t n, const char* what, std::initializer_list<std::string_view> absent,
                       std::uint64_t seed, Name name, Check check) {
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
        } else if (std::any_of(absent.begin(), absent.end(),
                               [&](std::string_view a) { return refusal.find(a) != std::string::npos; })) {
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
