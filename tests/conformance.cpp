// The conformance suite: every path of every device of the selected backend against the CPU reference, on fresh
// random inputs, with poisoned outputs.
#include <doctest/doctest.h>

#include "common.hpp"
#include "test_config.hpp"

#include <cstdio>

using namespace flashtile;
using namespace flashtile::testing;

namespace {

std::vector<Device> selected_devices() {
  std::vector<Device> out;
  const Backend b = config().backend;
  for (const DeviceInfo& info : Device::list())
    if (info.backend == b) out.push_back(Device::open(b, info.index));
  return out;
}

}  // namespace

TEST_CASE("conformance: every path of every device matches the CPU reference") {
  const auto devices = selected_devices();
  REQUIRE_MESSAGE(!devices.empty(), "no device of the selected backend");
  const auto all = cases::conformance_cases();
  for (const Device& dev : devices) {
    for (Path path : dev.info().paths) {
      int ran = 0, refused = 0;
      for (std::size_t ci = 0; ci < all.size(); ++ci) {
        const cases::Case& c = all[ci];
        const std::uint64_t seed = config().seed + ci;
        INFO("device ", dev.info().name, ", path ", to_string(path), ", case ", c.name(), ", seed ", seed);
        Problem p = make_problem(dev, c, seed);
        Options opt;
        opt.causal = c.causal;
        opt.path = path;
        opt.scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
        Result r;
        try {
          r = attention_forward(p.q.view, p.k.view, p.v.view, p.out.view, &p.lse.view, opt);
        } catch (const Error& e) {
          // Paths may refuse optional cases (f32, odd head dims) with a reason; required ones must run.
          if (e.code() == ErrorCode::Unsupported && !c.required) {
            ++refused;
            continue;
          }
          FAIL_CHECK("attention_forward threw: ", e.what());
          continue;
        }
        CHECK(r.path == path);
        CHECK(r.backend == dev.info().backend);
        const Reference ref = reference(p, *opt.scale);
        const Comparison cmp = compare(p, ref, true);
        CHECK(cmp.nan_out == 0);
        CHECK(cmp.rel_error <= out_tolerance(c.dtype));
        CHECK(cmp.lse_error <= lse_tolerance(c.dtype));
        CHECK(cmp.bad_masked == 0);
        CHECK(cmp.padding_touched == 0);
        ++ran;
      }
      std::printf("conformance: %s / %s: %d cases ran, %d optional cases refused\n", dev.info().name.c_str(),
                  std::string(to_string(path)).c_str(), ran, refused);
      CHECK(ran > 0);
    }
  }
}

TEST_CASE("conformance: the default path and the reported path agree") {
  for (const Device& dev : selected_devices()) {
    cases::Case c{1, 33, 47, 4, 2, 64, true, DType::F16, false, true};
    Problem p = make_problem(dev, c, config().seed);
    Options opt;
    opt.causal = true;
    const Result planned = plan_attention(p.q.view, p.k.view, p.v.view, p.out.view, nullptr, opt);
    const Result r = attention_forward(p.q.view, p.k.view, p.v.view, p.out.view, nullptr, opt);
    CHECK(r.path == planned.path);
    CHECK(r.path == dev.info().paths.front());
    CHECK(!r.kernel.empty());
    const Comparison cmp = compare(p, reference(p, 1.0f / 8.0f), false);
    CHECK(cmp.rel_error <= out_tolerance(c.dtype));
  }
}
