// The conformance suite: every path of every device of the selected backend against the CPU reference, on fresh
// random inputs, with poisoned outputs.
#include <doctest/doctest.h>

#include "common.hpp"
#include "test_config.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <thread>

using namespace flashtile;
using namespace flashtile::testing;

namespace {

// The device's paths the suite runs: every one, or --ft-path's alone.
std::vector<Path> selected_paths(const Device& dev) {
  std::vector<Path> out;
  for (Path p : dev.info().paths)
    if (!config().path || *config().path == p) out.push_back(p);
  return out;
}

// Runs case c on one path against the CPU reference (the CHECKs below); returns the reason when the path refuses
// the call (Unsupported), "" when it ran; kernels collects the base names (before '<') of the kernels that ran.
// allow_reduced sets Options::allow_reduced_precision_accumulation: a kernel that then accumulated in f16 is held to
// reduced_out_tolerance; without it no kernel may.
std::string check_case(const Device& dev, Path path, const cases::Case& c, std::uint64_t seed,
                       std::set<std::string>& kernels, bool allow_reduced = false, const Inputs& in = {},
                       bool* reduced = nullptr) {
  Problem p = make_problem(dev, c, seed, in);
  Options opt;
  opt.causal = c.causal;
  opt.path = path;
  opt.scale = c.scale.value_or(1.0f / std::sqrt(static_cast<float>(c.head_dim)));
  opt.allow_reduced_precision_accumulation = allow_reduced;
  Result r;
  try {
    r = attention_forward(p.q.view, p.k.view, p.v.view, p.out.view, &p.lse.view, opt);
  } catch (const Error& e) {
    if (e.code() == ErrorCode::Unsupported) return e.what();
    FAIL_CHECK("attention_forward threw: ", e.what());
    return "";
  }
  CHECK(r.path == path);
  CHECK(r.backend == dev.info().backend);
  kernels.insert(r.kernel.substr(0, r.kernel.find('<')));
  const Reference ref = reference(p, *opt.scale);
  const Comparison cmp = compare(p, ref, true);
  if (!allow_reduced) CHECK_FALSE(r.reduced_precision);
  if (reduced) *reduced = r.reduced_precision;
  // The output's checks, for this run and the one without the LSE below.
  auto check_out = [&](const Result& run, const Comparison& got) {
    CHECK(got.nan_out == 0);
    CHECK(got.rel_error <= (run.reduced_precision ? reduced_out_tolerance(c.dtype) : out_tolerance(c.dtype)));
    CHECK(got.bad_masked == 0);
    CHECK(got.padding_touched == 0);
  };
  INFO("kernel ", r.kernel, ", rel_error ", cmp.rel_error);
  check_out(r, cmp);
  CHECK(cmp.lse_error <= lse_tolerance(c.dtype));
  // A path may run another kernel when no LSE is asked for (cuda_sm90 at d64: l summed on the tensor cores): that
  // one too, on fresh poison.
  const Result plain = plan_attention(p.q.view, p.k.view, p.v.view, p.out.view, nullptr, opt);
  if (plain.kernel != r.kernel) {
    Problem p2 = make_problem(dev, c, seed, in);
    const Result r2 = attention_forward(p2.q.view, p2.k.view, p2.v.view, p2.out.view, nullptr, opt);
    CHECK(r2.kernel == plain.kernel);
    const Comparison cmp2 = compare(p2, ref, false);
    INFO("kernel without LSE ", r2.kernel, ", rel_error ", cmp2.rel_error);
    check_out(r2, cmp2);
  }
  return "";
}

}  // namespace

TEST_CASE("conformance: every path of every device matches the CPU reference") {
  const auto devices = selected_devices();
  REQUIRE_MESSAGE(!devices.empty(), "no device of the selected backend");
  const auto all = cases::conformance_cases();
  for (const Device& dev : devices) {
    REQUIRE_MESSAGE(!selected_paths(dev).empty(), dev.info().name, " has no path ",
                    config().path ? to_string(*config().path) : "");
    for (Path path : selected_paths(dev)) {
      int ran = 0, refused = 0;
      std::set<std::string> kernels;
      for (std::size_t ci = 0; ci < all.size(); ++ci) {
        const cases::Case& c = all[ci];
        const std::uint64_t seed = config().seed + ci;
        INFO("device ", dev.info().name, ", path ", to_string(path), ", case ", c.name(), ", seed ", seed);
        const std::string refusal = check_case(dev, path, c, seed, kernels);
        if (refusal.empty()) {
          ++ran;
        } else if (!c.required) {  // paths may refuse optional cases (f32, odd head dims) with a reason
          ++refused;
        } else {
          FAIL_CHECK("a required case was refused: ", refusal);
        }
      }
      std::string names;
      for (const std::string& k : kernels) names += (names.empty() ? "" : ", ") + k;
      std::printf("conformance: %s / %s: %d cases ran, %d optional cases refused; kernels: %s\n",
                  dev.info().name.c_str(), std::string(to_string(path)).c_str(), ran, refused, names.c_str());
      CHECK(ran > 0);
    }
  }
}

// Decode shapes (few query rows, GQA 1/4/8, odd Sk, NaN in K/V past Sk) on every path; on Vulkan the ones with few
// packed rows (group x seqlen_q) must run the decode shader (attn_decode.comp), the others the path's own shaders.
TEST_CASE("conformance: decode shapes, and on Vulkan the decode shader where the packed rows are few") {
  struct DecodeCase {
    cases::Case c;
    bool decode;  // Vulkan runs it on the decode shader
  };
  const DecodeCase list[] = {
      {{1, 1, 1, 4, 4, 64, false, DType::F16}, true},       // group 1, one key
      {{2, 1, 17, 8, 2, 128, true, DType::BF16}, true},     // group 4
      {{1, 1, 3001, 16, 2, 128, false, DType::F16}, true},  // group 8, split-KV
      {{3, 3, 257, 8, 2, 64, true, DType::F16}, true},      // 12 packed rows: two row tiles
      {{2, 3, 3001, 4, 4, 128, true, DType::BF16}, true},   // group 1, 3 rows
      {{1, 3, 1, 8, 2, 64, true, DType::F16}, true},        // Sq > Sk: rows that see no key
      {{1, 2, 3001, 16, 2, 128, true, DType::F16}, true},   // group 8 x 2 rows = 16
      {{1, 1, 257, 8, 1, 256, true, DType::BF16}, true},    // d256, group 8: two row tiles
      {{1, 16, 257, 4, 4, 64, true, DType::F16}, false},    // group 1 x 16: two tiles would read K/V twice
      {{2, 16, 17, 8, 2, 128, true, DType::F16}, false},    // speculative 16 x group 4 = 64 rows
      {{1, 3, 3001, 16, 2, 128, true, DType::F16}, false},  // group 8 x 3 = 24 rows
      {{2, 3, 17, 4, 1, 256, false, DType::F16}, false},    // d256 takes at most 8 packed rows
  };
  Inputs nan_tail;
  nan_tail.kv_tail = 5;
  std::uint64_t seed = config().seed + 7000;
  for (const Device& dev : selected_devices())
    for (Path path : selected_paths(dev)) {
      int ran = 0;
      for (const DecodeCase& dc : list) {
        INFO("device ", dev.info().name, ", path ", to_string(path), ", case ", dc.c.name(), ", seed ", seed);
        std::set<std::string> kernels;
        const std::string refusal = check_case(dev, path, dc.c, seed++, kernels, false, nan_tail);
        if (!refusal.empty()) {
          FAIL_CHECK("a required case was refused: ", refusal);
          continue;
        }
        ++ran;
        if (dev.info().backend == Backend::Vulkan && !vk_kernel_choice_forced())
          CHECK(kernels.count("vk_decode") == (dc.decode ? 1u : 0u));
      }
      CHECK(ran == static_cast<int>(std::size(list)));
    }
}

namespace {
// One input distribution on every path: head dims 64/128/256 (bf16 at 128), causal or not, Sq x Sk, two query heads
// on one kv head.
void check_inputs(const Inputs& in, const char* what, std::int64_t sq, std::int64_t sk, std::uint64_t seed) {
  for (const Device& dev : selected_devices()) {
    for (Path path : selected_paths(dev)) {
      int ran = 0;
      std::set<std::string> kernels;
      for (std::int64_t d : {64, 128, 256})
        for (bool causal : {false, true}) {
          const cases::Case c{1, sq, sk, 2, 1, d, causal, d == 128 ? DType::BF16 : DType::F16};
          INFO("device ", dev.info().name, ", path ", to_string(path), ", case ", c.name(), " ", what, ", seed ", seed);
          const std::string refusal = check_case(dev, path, c, seed++, kernels, false, in);
          if (!refusal.empty()) FAIL_CHECK("a required case was refused: ", refusal);
          else ++ran;
        }
      CHECK(ran == 6);
    }
  }
}
}  // namespace

// Spiky keys (every 97th key row x12): a row's running max jumps by far more than 2^8 between key blocks, in whatever
// order a kernel visits them, so every rescale of O and l (and any lazy-rescale threshold) runs against the reference.
TEST_CASE("conformance: running maxima that jump between key blocks") {
  check_inputs(Inputs{1.0f, 0.0f, 97}, "spiky k", 70, 1200, config().seed + 7000);
}

// One key (key 3, in the first key block) x150: for rows that like it, the max jumps by far more than 2^128 in the
// exp2 domain over a reference set by the other keys, wherever a kernel visits that block late (sm90 visits it last:
// its kLazy 3 overflows P there and must recompute the block's scores).
TEST_CASE("conformance: a running max that jumps past 2^128") {
  check_inputs(Inputs{1.0f, 0.0f, 1 << 30, 150.0f}, "k[3] x150", 70, 1200, config().seed + 9000);
}

// One key's logit exactly k_step_log2 above every other's in the exp2 domain, in every row (key 3, in the block sm90
// visits last). 40: sm90's kLazy 3 rescales P by 2^-40. 100: it recomputes S (P sums past 2^64). 127: P still
// finite, but a rescale by 2^-127 is below f32's normal range, which ex2.approx.ftz flushed to 0 (O = 0 in every
// row; a random jump case caught it on a few rows: bench/results/2026-12-01_h200_sm90_lazy_rescale_mode3, run 1).
TEST_CASE("conformance: a running max that steps up by 2^40, 2^100, 2^127") {
  for (float x : {40.0f, 100.0f, 127.0f}) {
    Inputs in;
    in.k_step_log2 = x;
    check_inputs(in, "k[3] step", 70, 1200, config().seed + 9500 + static_cast<std::uint64_t>(x));
  }
}

// Every logit equal and far below zero (q = +4, k = -4: -128 at d64, -256 at d256, natural log): the first rescale
// of a row must not overflow (sm90 made NaN of it before the fix that
// bench/results/2026-11-30_h200_sm90_lazy_rescale_d256 describes). Sq > Sk: rows whose keys start past the first key
// block a kernel visits.
TEST_CASE("conformance: logits far below zero") {
  check_inputs(Inputs{1.0f, 0.0f, 0, 12.0f, 4.0f}, "q = 4, k = -4", 300, 200, config().seed + 8000);
}

// Options::allow_reduced_precision_accumulation. A path that then accumulates O in f16 (Result::reduced_precision)
// runs every conformance case at reduced_out_tolerance, long rows (Sk 16384, where f16 O rounds most), and the
// overflow headroom: uniform attention (q = 0) over v near 24, where O = sum(v) would reach 393k at Sk 16384 without
// the shader's 2^-shift on P. A path that ignores the permission must pick the same kernel as without it.
TEST_CASE("conformance: reduced-precision accumulation, where a path takes the permission") {
  int reduced_paths = 0;
  const auto all = cases::conformance_cases();
  for (const Device& dev : selected_devices()) {
    for (Path path : selected_paths(dev)) {
      INFO("device ", dev.info().name, ", path ", to_string(path));
      const cases::Case probe{1, 64, 256, 2, 2, 128, false, DType::F16};
      Problem pp = make_problem(dev, probe, config().seed);
      Options opt;
      opt.path = path;
      Result plain, allowed;
      try {
        plain = plan_attention(pp.q.view, pp.k.view, pp.v.view, pp.out.view, nullptr, opt);
        opt.allow_reduced_precision_accumulation = true;
        allowed = plan_attention(pp.q.view, pp.k.view, pp.v.view, pp.out.view, nullptr, opt);
      } catch (const Error& e) {
        CHECK_MESSAGE(e.code() == ErrorCode::Unsupported, e.what());
        continue;  // the path cannot run the probe case at all (CHECKed by the suite above)
      }
      CHECK_FALSE(plain.reduced_precision);
      if (!allowed.reduced_precision) {
        CHECK(allowed.kernel == plain.kernel);
        continue;
      }
      ++reduced_paths;
      CHECK(allowed.kernel != plain.kernel);
      int ran = 0, reduced = 0;
      std::set<std::string> kernels;
      std::vector<std::pair<cases::Case, Inputs>> list;
      for (const cases::Case& c : all) list.push_back({c, Inputs{}});
      for (std::int64_t d : {64, 128, 256})
        for (bool causal : {false, true}) list.push_back({cases::Case{1, 64, 16384, 4, 2, d, causal, DType::F16}, {}});
      list.push_back({cases::Case{1, 64, 16384, 2, 2, 128, false, DType::F16}, Inputs{0.0f, 24.0f}});
      list.push_back({cases::Case{1, 64, 16384, 2, 1, 256, true, DType::F16}, Inputs{0.0f, 24.0f}});
      list.push_back({cases::Case{1, 64, 2000, 2, 2, 64, false, DType::F16}, Inputs{0.0f, 24.0f}});
      for (std::size_t ci = 0; ci < list.size(); ++ci) {
        const auto& [c, in] = list[ci];
        INFO("case ", c.name(), in.v_offset != 0 ? " (q = 0, v + 24)" : "", ", seed ", config().seed + ci);
        bool used = false;
        const std::string refusal = check_case(dev, path, c, config().seed + ci, kernels, true, in, &used);
        if (!refusal.empty()) {
          if (c.required) FAIL_CHECK("a required case was refused: ", refusal);
          continue;
        }
        ++ran;
        reduced += used ? 1 : 0;
      }
      std::string names;
      for (const std::string& k : kernels) names += (names.empty() ? "" : ", ") + k;
      std::printf("conformance (reduced precision allowed): %s / %s: %d cases ran, %d of them in reduced precision; "
                  "kernels: %s\n",
                  dev.info().name.c_str(), std::string(to_string(path)).c_str(), ran, reduced, names.c_str());
      CHECK(reduced > 0);
    }
  }
  if (reduced_paths == 0)
    MESSAGE("skipped: no path of the selected devices accumulates in reduced precision (vulkan_coopmat2 does, on "
            "devices with VK_NV_cooperative_matrix2); checked that each path picks the same kernel with the permission");
}

// Views at element offsets that break wide accesses run correctly, or are passed over with the alignment rule where
// a path's variants need it: packed 16-bit pairs (even offsets; forced in ctest's conformance_vulkan_pk) and
// coopmat2's f16 tensor loads (multiples of 8 elements). Other paths may refuse with their own reason (TMA's 16 bytes).
TEST_CASE("conformance: unaligned views run or are refused with the alignment rule") {
  const char* forced = std::getenv("FLASHTILE_VK_VARIANT");
  const bool packed_only = forced && std::strstr(forced, "_pk") != nullptr;
  for (const Device& dev : selected_devices())
    for (Path path : selected_paths(dev))
      for (std::int64_t offset : {1, 4}) {
        cases::Case c{2, 33, 70, 4, 2, 64, true, DType::F16};
        c.elem_offset = offset;
        INFO("device ", dev.info().name, ", path ", to_string(path), ", case ", c.name());
        std::set<std::string> kernels;
        const std::string refusal =
            check_case(dev, path, c, config().seed + 1000 + static_cast<std::uint64_t>(offset), kernels);
        const bool must_refuse = (packed_only && offset % 2 != 0) || (path == Path::VulkanCoopmat2 && offset % 8 != 0);
        if (must_refuse) {
          CHECK_MESSAGE(refusal.find("multiples of") != std::string::npos, "ran or refused for another reason: ", refusal);
        } else if (!refusal.empty()) {
          CHECK_MESSAGE(path != Path::CpuReference, "the CPU reference refused: ", refusal);
        }
      }
}

TEST_CASE("conformance: prepare_attention builds without running, and the call then runs correctly") {
  for (const Device& dev : selected_devices()) {
    for (const bool causal : {false, true}) {
      cases::Case c{2, 40, 72, 4, 2, 128, causal, DType::F16, false, true};
      Problem p = make_problem(dev, c, config().seed + (causal ? 1 : 0));
      Options opt;
      opt.causal = causal;
      const auto poisoned = p.out.image(), poisoned_lse = p.lse.image();
      const Result planned = plan_attention(p.q.view, p.k.view, p.v.view, p.out.view, &p.lse.view, opt);
      const Result prepared = prepare_attention(p.q.view, p.k.view, p.v.view, p.out.view, &p.lse.view, opt);
      CHECK(prepared.path == planned.path);
      CHECK(prepared.kernel == planned.kernel);
      CHECK_FALSE(prepared.asynchronous);
      CHECK_MESSAGE(p.out.image() == poisoned, "prepare_attention wrote to out");
      CHECK_MESSAGE(p.lse.image() == poisoned_lse, "prepare_attention wrote to lse");
      const Result r = attention_forward(p.q.view, p.k.view, p.v.view, p.out.view, &p.lse.view, opt);
      CHECK(r.kernel == prepared.kernel);
      const Comparison cmp = compare(p, reference(p, 1.0f / std::sqrt(128.0f)), true);
      INFO(dev.info().name, " ", r.kernel);
      CHECK(cmp.rel_error <= out_tolerance(c.dtype));
      CHECK(cmp.nan_out == 0);
      CHECK(cmp.bad_masked == 0);
      CHECK(cmp.lse_error <= lse_tolerance(c.dtype));
    }
  }
}

TEST_CASE("conformance: prepare_attention on one thread while another computes on the same device") {
  for (const Device& dev : selected_devices()) {
    cases::Case ca{1, 65, 65, 2, 2, 64, true, DType::F16, false, true};    // prepared on the second thread
    cases::Case cb{2, 31, 80, 4, 1, 128, false, DType::F16, false, true};  // computed meanwhile
    Problem pa = make_problem(dev, ca, config().seed + 7), pb = make_problem(dev, cb, config().seed + 8);
    Options oa, ob;
    oa.causal = true;
    std::string error;
    std::thread loader([&] {
      try {
        prepare_attention(pa.q.view, pa.k.view, pa.v.view, pa.out.view, &pa.lse.view, oa);
      } catch (const std::exception& e) {
        error = e.what();
      }
    });
    for (int i = 0; i < 3; ++i) attention_forward(pb.q.view, pb.k.view, pb.v.view, pb.out.view, &pb.lse.view, ob);
    loader.join();
    CHECK_MESSAGE(error.empty(), error);
    attention_forward(pa.q.view, pa.k.view, pa.v.view, pa.out.view, &pa.lse.view, oa);
    for (Problem* p : {&pa, &pb}) {
      const Comparison cmp = compare(*p, reference(*p, 1.0f / std::sqrt(float(p->c.head_dim))), true);
      INFO(dev.info().name, " d", p->c.head_dim);
      CHECK(cmp.rel_error <= out_tolerance(p->c.dtype));
      CHECK(cmp.lse_error <= lse_tolerance(p->c.dtype));
      CHECK(cmp.nan_out == 0);
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

// ---- Hostile inputs and random cases ---------------------------------------------------------------------------

namespace {

// cuda_sm90 runs scale > 0 only (row maxima of unscaled scores) and says so; such calls take the next path.
bool scale_refusal(Path path, const cases::Case& c, const std::string& why) {
  return path == Path::CudaSm90 && c.scale && !(*c.scale > 0.0f) && why.find("needs scale > 0") != std::string::npos;
}

// Runs `list` on every selected path; a required case may not be refused (but for scale_refusal).
void check_list(const std::vector<std::pair<cases::Case, Inputs>>& list, const char* what, std::uint64_t seed) {
  for (const Device& dev : selected_devices())
    for (Path path : selected_paths(dev)) {
      int ran = 0;
      std::set<std::string> kernels;
      for (std::size_t ci = 0; ci < list.size(); ++ci) {
        const auto& [c, in] = list[ci];
        INFO("device ", dev.info().name, ", path ", to_string(path), ", case ", c.name(), " ", what, ", seed ",
             seed + ci);
        const std::string refusal = check_case(dev, path, c, seed + ci, kernels, false, in);
        if (refusal.empty()) ++ran;
        else if (c.required && !scale_refusal(path, c, refusal)) FAIL_CHECK("a required case was refused: ", refusal);
      }
      std::string names;
      for (const std::string& k : kernels) names += (names.empty() ? "" : ", ") + k;
      std::printf("conformance (%s): %s / %s: %d of %zu cases ran; kernels: %s\n", what, dev.info().name.c_str(),
                  std::string(to_string(path)).c_str(), ran, list.size(), names.c_str());
    }
}

std::uint64_t env_count(const char* name, std::uint64_t fallback) {
  const char* e = std::getenv(name);
  return e && *e ? std::strtoull(e, nullptr, 10) : fallback;
}

// A random case: shapes odd and even, Sq != Sk, GQA/MQA, either mask, f16/bf16 (f32 and odd head dims now and then,
// which paths may refuse), a scale of either sign (zero now and then) and an input magnitude; shrunk until the CPU
// oracle's work stays small.
std::pair<cases::Case, Inputs> random_case(std::mt19937_64& rng) {
  auto pick = [&](std::uint64_t n) { return static_cast<std::int64_t>(rng() % n); };
  auto length = [&]() -> std::int64_t {
    switch (pick(4)) {
      case 0: return 1 + pick(40);
      case 1: return 1 + pick(300);
      case 2: return 1 + pick(1100);
      default: return 1000 + pick(1200);
    }
  };
  cases::Case c;
  const std::int64_t dims[] = {64, 128, 256};
  c.head_dim = pick(5) == 0 ? 8 * (1 + pick(32)) : dims[pick(3)];
  const int dt = static_cast<int>(pick(10));
  c.dtype = dt < 5 ? DType::F16 : dt < 9 ? DType::BF16 : DType::F32;
  c.required = c.dtype != DType::F32 && (c.head_dim == 64 || c.head_dim == 128 || c.head_dim == 256);
  c.batch = 1 + pick(3);
  c.seqlen_q = length();
  c.seqlen_k = length();
  c.heads_kv = 1 + pick(3);
  c.heads_q = c.heads_kv * (std::int64_t{1} << pick(3));
  c.causal = pick(2) == 1;
  const float base = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
  const float mag = base * (0.25f + 1.75f * static_cast<float>(rng() % 1000) / 1000.0f);
  c.scale = pick(16) == 0 ? 0.0f : pick(2) ? -mag : mag;
  while (c.flops() > 1.5e8) {
    if (c.batch > 1) c.batch -= 1;
    else if (c.heads_q > c.heads_kv) c.heads_q /= 2;
    else if (c.heads_kv > 1) c.heads_q = c.heads_kv = c.heads_kv - 1;
    else if (c.seqlen_q >= c.seqlen_k) c.seqlen_q = (c.seqlen_q + 1) / 2;
    else c.seqlen_k = (c.seqlen_k + 1) / 2;
  }
  Inputs in;
  const float magnitudes[] = {0.25f, 1.0f, 3.0f};
  in.q_scale = magnitudes[pick(3)];
  return {c, in};
}

}  // namespace

// FLASHTILE_RANDOM_CASES cases (default 12) drawn from the run's seed: FLASHTILE_TEST_SEED repeats them.
TEST_CASE("conformance: randomized cases") {
  const std::uint64_t n = env_count("FLASHTILE_RANDOM_CASES", 12);
  std::mt19937_64 rng(config().seed ^ 0x6a09e667f3bcc909ull);
  std::vector<std::pair<cases::Case, Inputs>> list;
  for (std::uint64_t i = 0; i < n; ++i) list.push_back(random_case(rng));
  check_list(list, "randomized", config().seed + 20000);
}

// Softmax is defined for every finite scale: negative ones turn the row max into the row min of unscaled scores, zero
// gives uniform weights over the visible keys (and must not make masked scores NaN).
TEST_CASE("conformance: negative and zero scales") {
  std::vector<std::pair<cases::Case, Inputs>> list;
  for (std::int64_t d : {64, 128, 256})
    for (bool causal : {false, true})
      for (float s : {-0.3f, 0.0f}) {
        cases::Case c{2, 129, 17, 4, 2, d, causal, d == 128 ? DType::BF16 : DType::F16};
        if (d == 64) c.seqlen_q = 637, c.seqlen_k = 621;
        c.scale = s;
        list.push_back({c, Inputs{}});
      }
  check_list(list, "scale <= 0", config().seed + 21000);
  // Unforced, each call runs on the fastest path that takes it, correctly.
  for (const Device& dev : selected_devices())
    for (std::size_t ci = 0; ci < list.size(); ++ci) {
      const cases::Case& c = list[ci].first;
      INFO("device ", dev.info().name, ", case ", c.name(), " (no path forced)");
      Problem p = make_problem(dev, c, config().seed + 21500 + ci);
      Options opt;
      opt.causal = c.causal;
      opt.scale = c.scale;
      const Result r = attention_forward(p.q.view, p.k.view, p.v.view, p.out.view, &p.lse.view, opt);
      INFO("path ", to_string(r.path), ", kernel ", r.kernel, ", note ", r.note);
      const Comparison cmp = compare(p, reference(p, *c.scale), true);
      CHECK(cmp.rel_error <= out_tolerance(c.dtype));
      CHECK(cmp.lse_error <= lse_tolerance(c.dtype));
      CHECK(cmp.bad_masked == 0);
    }
}

// Keys far past what one invocation may loop over on some drivers (llvmpipe ends a shader's loops after 65535
// iterations): every key must count, on every path.
TEST_CASE("conformance: long key sequences (Sk >= 100k)") {
  const std::vector<std::pair<cases::Case, Inputs>> list = {
      {cases::Case{1, 1, 150001, 2, 1, 64, false, DType::F16}, {}},
      {cases::Case{1, 9, 100003, 2, 2, 128, true, DType::BF16}, {}},
      {cases::Case{1, 33, 100000, 1, 1, 256, false, DType::F16}, {}},
  };
  check_list(list, "long Sk", config().seed + 22000);
}

// Keys past Sk (the view's end) never affect an output, even when k and v hold NaN there.
TEST_CASE("conformance: NaN past the end of k and v never leaks") {
  Inputs in;
  in.kv_tail = 37;
  check_inputs(in, "NaN past Sk", 70, 300, config().seed + 23000);
}

// NaN in q makes its row's output and LSE NaN (never 0 and -inf, the values of a row that sees no key), and no other
// row's.
TEST_CASE("conformance: NaN in q stays NaN, in its row alone") {
  const std::int64_t nan_row = 37;
  for (const Device& dev : selected_devices())
    for (Path path : selected_paths(dev))
      for (std::int64_t d : {64, 128, 256})
        for (bool causal : {false, true}) {
          const cases::Case c{1, 70, 300, 2, 1, d, causal, d == 128 ? DType::BF16 : DType::F16};
          INFO("device ", dev.info().name, ", path ", to_string(path), ", case ", c.name());
          Inputs in;
          in.nan_q_row = nan_row;
          Problem p = make_problem(dev, c, config().seed + 24000, in);
          Options opt;
          opt.causal = causal;
          opt.path = path;
          attention_forward(p.q.view, p.k.view, p.v.view, p.out.view, &p.lse.view, opt);
          const Reference ref = reference(p, 1.0f / std::sqrt(static_cast<float>(d)));
          const std::vector<float> out = p.out.read(), lse = p.lse.read();
          double num = 0, den = 0;
          std::int64_t nan_ok = 0, finite_bad = 0;
          for (std::int64_t i = 0; i < c.seqlen_q; ++i)
            for (std::int64_t h = 0; h < c.heads_q; ++h) {
              const bool poisoned = i == nan_row && h == 0;
              const float l = lse[static_cast<std::size_t>(h * c.seqlen_q + i)];
              if (poisoned) {
                nan_ok += std::isnan(l);
                for (std::int64_t e = 0; e < d; ++e) nan_ok += std::isnan(out[static_cast<std::size_t>((i * c.heads_q + h) * d + e)]);
                continue;
              }
              finite_bad += !std::isfinite(l);
              for (std::int64_t e = 0; e < d; ++e) {
                const std::size_t k = static_cast<std::size_t>((i * c.heads_q + h) * d + e);
                finite_bad += !std::isfinite(out[k]);
                num += (out[k] - ref.out[k]) * static_cast<double>(out[k] - ref.out[k]);
                den += static_cast<double>(ref.out[k]) * ref.out[k];
              }
            }
          CHECK(nan_ok == d + 1);  // the row's LSE and every output element
          CHECK(finite_bad == 0);
          CHECK(std::sqrt(num / den) <= out_tolerance(c.dtype));
        }
}
