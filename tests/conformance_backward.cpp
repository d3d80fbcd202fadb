// The backward's conformance suite: every backward path of every device of the selected backend against the CPU
// reference backward, on fresh random inputs and dout, with poisoned gradients. The CPU reference itself is checked
// against finite differences of the CPU forward.
#include <doctest/doctest.h>

#include "common.hpp"
#include "every_path.hpp"
#include "reference.hpp"
#include "test_config.hpp"

#include <cstdio>
#include <set>
#include <string>
#include <tuple>

using namespace flashtile;
using namespace flashtile::testing;

namespace {

// A gradient buffer: contiguous, or (padded) each head row followed by 8 poisoned elements, to catch writes outside
// the view and check strided stores.
DevTensor grad_tensor(const Device& dev, DType dt, const Shape& s, bool padded) {
  if (!padded) return contiguous(dev, dt, s);
  const Shape bs = Shape::of(s[0], s[1], s[2], s[3] + 8);
  Tensor b = Tensor::empty(dev, dt, bs);
  return DevTensor{b, b.as_strided(s, Strides::contiguous(bs), 0), 0};
}

// A backward call's tensors: the forward's inputs (Problem), its out and lse from the CPU reference (out rounded to
// the dtype, as a forward would store it), a random dout, and poisoned dq, dk, dv.
struct BwdProblem {
  Problem p;
  DevTensor dout, dq, dk, dv;
  std::vector<float> outv, lsev, dov;
  float scale = 1.0f;
};

BwdProblem make_bwd_problem(const Device& dev, const cases::Case& c, std::uint64_t seed, const Inputs& in = {}) {
  BwdProblem b;
  b.p = make_problem(dev, c, seed, in);
  b.scale = c.scale.value_or(1.0f / std::sqrt(static_cast<float>(c.head_dim)));
  Reference ref = reference(b.p, b.scale);
  b.outv = std::move(ref.out);
  for (float& x : b.outv) x = round_to(c.dtype, x);
  b.lsev = std::move(ref.lse);
  upload_values(b.p.out, b.outv, kPoisonByte);
  upload_values(b.p.lse, b.lsev, kPoisonByte);
  const Shape qs = b.p.q.view.shape(), ks = b.p.k.view.shape();
  b.dout = contiguous(dev, c.dtype, qs);
  std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ull);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  b.dov.resize(std::size_t(qs.numel()));
  for (float& x : b.dov) x = round_to(c.dtype, normal(rng));
  upload_values(b.dout, b.dov, std::byte{0});
  b.dq = grad_tensor(dev, c.dtype, qs, c.packed_qkv);
  b.dk = grad_tensor(dev, c.dtype, ks, c.packed_qkv);
  b.dv = grad_tensor(dev, c.dtype, ks, c.packed_qkv);
  for (const DevTensor* t : {&b.dq, &b.dk, &b.dv}) poison(*t);
  return b;
}

using cases::Gradients;

// The oracle: the CPU reference backward on f32 copies of the same values.
Gradients reference_grads(const BwdProblem& b) {
  cases::Case c = b.p.c;
  c.scale = b.scale;
  return cases::reference_backward(c, {b.p.qv, b.p.kv, b.p.vv, b.outv, b.lsev, b.dov});
}

struct GradError {
  double rel = 0;                    // ||got - ref|| / ||ref|| (absolute when ref is all zero)
  std::int64_t non_finite = 0;
  std::int64_t padding_touched = 0;  // elements of the allocation outside the view that were written
};

GradError compare_grad(const DevTensor& t, const std::vector<float>& ref) {
  GradError e;
  const std::vector<float> got = t.read();
  for (float x : got) e.non_finite += !std::isfinite(x);
  e.rel = cases::rel_l2_error(got, ref);
  if (t.base.extent_bytes() != t.view.extent_bytes()) {
    const auto img = t.image();
    std::vector<char> inside(img.size(), 0);
    const std::size_t es = dtype_size(t.view.dtype());
    t.for_each([&](std::int64_t, std::int64_t ei) { std::memset(&inside[std::size_t(ei) * es], 1, es); });
    for (std::size_t i = 0; i < img.size(); ++i)
      if (!inside[i] && img[i] != kPoisonByte) ++e.padding_touched;
  }
  return e;
}

Options bwd_options(const BwdProblem& b, Path path, bool deterministic) {
  Options opt;
  opt.path = path;
  opt.causal = b.p.c.causal;
  opt.scale = b.scale;
  opt.deterministic = deterministic;
  return opt;
}

Result run_backward(BwdProblem& b, const Options& opt) {
  return attention_backward(b.p.q.view, b.p.k.view, b.p.v.view, b.p.out.view, b.p.lse.view, b.dout.view, b.dq.view,
                            b.dk.view, b.dv.view, opt);
}

// Runs case c's backward on one path against the oracle; returns the refusal's reason (Unsupported) or "".
std::string check_backward_case(const Device& dev, Path path, const cases::Case& c, std::uint64_t seed,
                                std::set<std::string>& kernels, const Inputs& in = {}) {
  BwdProblem b = make_bwd_problem(dev, c, seed, in);
  Result r;
  try {
    r = run_backward(b, bwd_options(b, path, false));
  } catch (const Error& e) {
    if (e.code() == ErrorCode::Unsupported) return e.what();
    FAIL_CHECK("attention_backward threw: ", std::string(e.what()));
    return "";
  }
  CHECK(r.path == path);
  kernels.insert(r.kernel.substr(0, r.kernel.find('<')));
  const Gradients ref = reference_grads(b);
  for (auto [t, g, name] : {std::tuple{&b.dq, &ref.dq, "dq"}, {&b.dk, &ref.dk, "dk"}, {&b.dv, &ref.dv, "dv"}}) {
    const GradError e = compare_grad(*t, *g);
    INFO("kernel ", r.kernel, ", ", name, " rel_error ", e.rel);
    CHECK(e.non_finite == 0);
    CHECK(e.rel <= cases::grad_tolerance(c.dtype));
    CHECK(e.padding_touched == 0);
  }
  return "";
}

// Runs `list` on every backward path of the selected devices. A path with no backward at all (every call refused
// with "no backward kernel") is reported as skipped with its reason; a required case refused otherwise fails. Paths
// of the backend that a device does not list are reported as skipped, with the reason a forced call gets.
void check_backward_list(const std::vector<std::pair<cases::Case, Inputs>>& list, const char* what,
                         std::uint64_t seed) {
  const auto devices = selected_devices();
  REQUIRE_MESSAGE(!devices.empty(), "no device of the selected backend");
  for (const Device& dev : devices) {
    report_absent_paths(dev, [&](const Device& d, Path path) -> std::string {
      std::set<std::string> kernels;
      return check_backward_case(d, path, list.front().first, seed, kernels, list.front().second);
    });
    for (Path path : dev.info().paths) {
      if (config().path && *config().path != path) continue;
      int ran = 0;
      std::string none;
      std::set<std::string> kernels;
      for (std::size_t ci = 0; ci < list.size(); ++ci) {
        const auto& [c, in] = list[ci];
        INFO("device ", dev.info().name, ", path ", to_string(path), ", case ", c.name(), " ", what, ", seed ",
             seed + ci);
        const std::string refusal = check_backward_case(dev, path, c, seed + ci, kernels, in);
        if (refusal.empty()) ++ran;
        else if (refusal.find("no backward kernel") != std::string::npos) none = refusal;
        else if (c.required) FAIL_CHECK("a required case was refused: ", refusal);
      }
      if (ran == 0 && !none.empty()) {
        MESSAGE("skipped: ", to_string(path), " on ", dev.info().name, " has no backward (", none, ")");
        continue;
      }
      std::string names;
      for (const std::string& k : kernels) names += (names.empty() ? "" : ", ") + k;
      std::printf("backward conformance (%s): %s / %s: %d of %zu cases ran; kernels: %s\n", what,
                  dev.info().name.c_str(), std::string(to_string(path)).c_str(), ran, list.size(), names.c_str());
      CHECK(ran > 0);
    }
  }
}

}  // namespace

TEST_CASE("conformance backward: every backward path matches the CPU reference") {
  std::vector<std::pair<cases::Case, Inputs>> list;
  for (const cases::Case& c : cases::backward_cases()) list.push_back({c, Inputs{}});
  check_backward_list(list, "cases", config().seed + 30000);
}

// Large logits (q x3: scores near ±25 at scale 1/sqrt(d)), spiky keys (every 97th key x12) and scales of either
// sign: P far from uniform, running maxima far apart across key blocks.
TEST_CASE("conformance backward: large logits, spiky keys, negative and zero scales") {
  std::vector<std::pair<cases::Case, Inputs>> list;
  for (std::int64_t d : {64, 128, 256})
    for (bool causal : {false, true}) {
      const DType dt = d == 128 ? DType::BF16 : DType::F16;
      list.push_back({cases::Case{1, 130, 300, 2, 1, d, causal, dt}, Inputs{3.0f}});
      list.push_back({cases::Case{1, 70, 400, 2, 1, d, causal, dt}, Inputs{1.0f, 0.0f, 97}});
      cases::Case neg{1, 65, 90, 2, 2, d, causal, dt};
      neg.scale = d == 64 ? 0.0f : -0.2f;
      list.push_back({neg, Inputs{}});
    }
  check_backward_list(list, "hostile", config().seed + 31000);
}

// FLASHTILE_RANDOM_CASES / 2 random cases (at least 4), reusing the forward suite's generator shapes.
TEST_CASE("conformance backward: randomized cases") {
  const char* env = std::getenv("FLASHTILE_RANDOM_CASES");
  const std::uint64_t n = std::max<std::uint64_t>(4, (env && *env ? std::strtoull(env, nullptr, 10) : 8) / 2);
  std::mt19937_64 rng(config().seed ^ 0xbb67ae8584caa73bull);
  auto pick = [&](std::uint64_t m) { return static_cast<std::int64_t>(rng() % m); };
  std::vector<std::pair<cases::Case, Inputs>> list;
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::int64_t dims[] = {64, 128, 256};
    cases::Case c;
    c.head_dim = dims[pick(3)];
    c.dtype = pick(2) ? DType::F16 : DType::BF16;
    c.batch = 1 + pick(2);
    c.seqlen_q = 1 + pick(pick(2) ? 40 : 700);
    c.seqlen_k = 1 + pick(pick(2) ? 40 : 700);
    c.heads_kv = 1 + pick(2);
    c.heads_q = c.heads_kv * (std::int64_t{1} << pick(3));
    c.causal = pick(2) == 1;
    while (c.flops() > 5e7) {
      if (c.batch > 1) c.batch = 1;
      else if (c.heads_q > c.heads_kv) c.heads_q /= 2;
      else if (c.seqlen_q >= c.seqlen_k) c.seqlen_q = (c.seqlen_q + 1) / 2;
      else c.seqlen_k = (c.seqlen_k + 1) / 2;
    }
    const float magnitudes[] = {0.25f, 1.0f, 2.0f};
    list.push_back({c, Inputs{magnitudes[pick(3)]}});
  }
  check_backward_list(list, "randomized", config().seed + 32000);
}

// Options::deterministic: two runs give bit-identical dq, dk and dv (a long key range, so any dQ accumulation order
// would show), and agree with the oracle.
TEST_CASE("conformance backward: deterministic runs are bit-identical") {
  for (const Device& dev : selected_devices())
    for (Path path : dev.info().paths) {
      if (config().path && *config().path != path) continue;
      for (bool causal : {false, true}) {
        const cases::Case c{2, 300, 700, 4, 2, 128, causal, DType::BF16};
        INFO("device ", dev.info().name, ", path ", to_string(path), ", case ", c.name());
        BwdProblem b = make_bwd_problem(dev, c, config().seed + 33000 + causal);
        std::vector<std::byte> first[3];
        bool refused = false;
        for (int run = 0; run < 2 && !refused; ++run) {
          for (const DevTensor* t : {&b.dq, &b.dk, &b.dv}) poison(*t);
          try {
            run_backward(b, bwd_options(b, path, true));
          } catch (const Error& e) {
            CHECK_MESSAGE(e.code() == ErrorCode::Unsupported, std::string(e.what()));
            MESSAGE("skipped: ", to_string(path), ": ", std::string(e.what()));
            refused = true;
            break;
          }
          const DevTensor* ts[] = {&b.dq, &b.dk, &b.dv};
          const char* names[] = {"dq", "dk", "dv"};
          for (int i = 0; i < 3; ++i) {
            if (run == 0) first[i] = ts[i]->image();
            else CHECK_MESSAGE(ts[i]->image() == first[i], "run 2 differs from run 1 in ", names[i]);
          }
        }
        if (refused) continue;
        const Gradients ref = reference_grads(b);
        CHECK(compare_grad(b.dq, ref.dq).rel <= cases::grad_tolerance(c.dtype));
        CHECK(compare_grad(b.dk, ref.dk).rel <= cases::grad_tolerance(c.dtype));
        CHECK(compare_grad(b.dv, ref.dv).rel <= cases::grad_tolerance(c.dtype));
      }
    }
}

// The caller's workspace: plan_attention_backward says how much; a call given that much runs correctly, and the
// result names the same amount.
TEST_CASE("conformance backward: a caller-provided workspace") {
  for (const Device& dev : selected_devices()) {
    const cases::Case c{1, 77, 130, 4, 2, 64, true, DType::F16};
    BwdProblem b = make_bwd_problem(dev, c, config().seed + 34000);
    Options opt = bwd_options(b, dev.info().paths.front(), false);
    opt.path.reset();
    Result planned;
    try {
      planned = plan_attention_backward(b.p.q.view, b.p.k.view, b.p.v.view, b.p.out.view, b.p.lse.view, b.dout.view,
                                        b.dq.view, b.dk.view, b.dv.view, opt);
    } catch (const Error& e) {
      CHECK_MESSAGE(e.code() == ErrorCode::Unsupported, std::string(e.what()));
      MESSAGE("skipped: ", dev.info().name, ": ", std::string(e.what()));
      continue;
    }
    Tensor ws = Tensor::empty(dev, DType::F32, Shape::of(1, 1, std::max<std::int64_t>(1, std::int64_t(planned.workspace_bytes + 3) / 4)));
    opt.workspace = &ws;
    const Result r = run_backward(b, opt);
    CHECK(r.workspace_bytes == planned.workspace_bytes);
    CHECK(r.kernel == planned.kernel);
    const Gradients ref = reference_grads(b);
    CHECK(compare_grad(b.dq, ref.dq).rel <= cases::grad_tolerance(c.dtype));
    CHECK(compare_grad(b.dk, ref.dk).rel <= cases::grad_tolerance(c.dtype));
    CHECK(compare_grad(b.dv, ref.dv).rel <= cases::grad_tolerance(c.dtype));
  }
}

// The oracle itself: the CPU backward's gradients against central differences of the CPU forward's loss
// L = sum(dout ∘ out), in f32 on tiny shapes (Sq != Sk both ways, GQA, causal with rows that see no key).
TEST_CASE("conformance backward: the CPU reference matches finite differences of the CPU forward") {
  const Device cpu = Device::open(Backend::Cpu);
  const cases::Case shapes[] = {{1, 3, 5, 2, 1, 8, false, DType::F32}, {1, 5, 3, 2, 1, 8, true, DType::F32},
                                {2, 4, 4, 2, 2, 8, true, DType::F32}};
  for (const cases::Case& c : shapes) {
    INFO("case ", c.name());
    BwdProblem b = make_bwd_problem(cpu, c, config().seed + 35000);
    const Gradients g = reference_grads(b);
    auto loss = [&](const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v) {
      Problem p = b.p;
      p.qv = q, p.kv = k, p.vv = v;
      const Reference r = reference(p, b.scale);
      double l = 0;
      for (std::size_t i = 0; i < r.out.size(); ++i) l += double(r.out[i]) * b.dov[i];
      return l;
    };
    constexpr float h = 1e-2f;  // f32 outputs: a smaller step drowns in their rounding
    double worst = 0;
    for (int which = 0; which < 3; ++which) {
      std::vector<float> x[3] = {b.p.qv, b.p.kv, b.p.vv};
      const std::vector<float>& grad = which == 0 ? g.dq : which == 1 ? g.dk : g.dv;
      for (std::size_t i = 0; i < x[which].size(); ++i) {
        const float x0 = x[which][i];
        x[which][i] = x0 + h;
        const double up = loss(x[0], x[1], x[2]);
        x[which][i] = x0 - h;
        const double down = loss(x[0], x[1], x[2]);
        x[which][i] = x0;
        const double fd = (up - down) / (2.0 * double(h));
        worst = std::max(worst, std::abs(fd - grad[i]) / std::max(1.0, std::abs(fd)));
      }
    }
    INFO("worst |fd - grad| / max(1, |fd|) = ", worst);
    CHECK(worst < 2e-4);  // measured 1.6-2.0e-5
  }
}
