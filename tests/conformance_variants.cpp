// The attention variants (sliding window, softcap, ALiBi, sinks): the CPU reference against a direct evaluation
// written here from the definitions, named model cases on every path (paths without the variants must refuse with
// the reason), the backward against finite differences, and bad input.
#include <doctest/doctest.h>

#include "common.hpp"
#include "every_path.hpp"
#include "reference.hpp"
#include "test_config.hpp"
#include "variants.hpp"

#include <cstdio>
#include <set>
#include <string>

using namespace flashtile;
using namespace flashtile::testing;

namespace {

struct Variant {
  std::int64_t window_left = -1, window_right = -1;
  float softcap = 0.0f;
  bool alibi = false, sinks = false;
  std::string name() const {
    std::string s;
    if (window_left >= 0 || window_right >= 0) s += " window " + std::to_string(window_left) + "," + std::to_string(window_right);
    if (softcap > 0) s += " softcap " + std::to_string(softcap);
    if (alibi) s += " alibi";
    if (sinks) s += " sinks";
    return s;
  }
};

using cases::alibi_slopes;  // ALiBi's geometric slopes, as the CLI's --alibi gives them
using cases::sink_logits;

// Out and LSE straight from the definitions (FlashAttention's): logical [B, Sq, Hq, D] values in, double sums.
struct Direct {
  std::vector<float> out, lse;
};
Direct direct(const cases::Case& c, const Variant& var, const std::vector<float>& q, const std::vector<float>& k,
              const std::vector<float>& v, const std::vector<float>& slopes, const std::vector<float>& sinks, float scale) {
  const std::int64_t B = c.batch, Sq = c.seqlen_q, Sk = c.seqlen_k, Hq = c.heads_q, Hkv = c.heads_kv, D = c.head_dim;
  Direct r;
  r.out.assign(std::size_t(B * Sq * Hq * D), 0.0f);
  r.lse.assign(std::size_t(B * Hq * Sq), 0.0f);
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t h = 0; h < Hq; ++h)
      for (std::int64_t i = 0; i < Sq; ++i) {
        const std::int64_t hk = h / (Hq / Hkv), diag = i + Sk - Sq;
        std::vector<double> w(std::size_t(Sk), 0.0);
        std::vector<bool> seen(std::size_t(Sk), false);
        double m = var.sinks ? double(sinks[std::size_t(h)]) : -INFINITY;
        for (std::int64_t j = 0; j < Sk; ++j) {
          bool ok = true;
          if (c.causal && j > diag) ok = false;
          if (var.window_left >= 0 && j < diag - var.window_left) ok = false;
          if (var.window_right >= 0 && j > diag + var.window_right) ok = false;
          if (!ok) continue;
          double dot = 0;
          for (std::int64_t d = 0; d < D; ++d)
            dot += double(q[std::size_t(((b * Sq + i) * Hq + h) * D + d)]) * k[std::size_t(((b * Sk + j) * Hkv + hk) * D + d)];
          double x = dot * scale;
          if (var.softcap > 0) x = var.softcap * std::tanh(x / var.softcap);
          if (var.alibi) x -= double(slopes[std::size_t(h)]) * double(std::abs(diag - j));
          w[std::size_t(j)] = x;
          seen[std::size_t(j)] = true;
          m = std::max(m, x);
        }
        double l = var.sinks ? std::exp(double(sinks[std::size_t(h)]) - m) : 0.0;
        std::vector<double> acc(std::size_t(D), 0.0);
        bool any = var.sinks;
        for (std::int64_t j = 0; j < Sk; ++j) {
          if (!seen[std::size_t(j)]) continue;
          any = true;
          const double p = std::exp(w[std::size_t(j)] - m);
          l += p;
          for (std::int64_t d = 0; d < D; ++d) acc[std::size_t(d)] += p * v[std::size_t(((b * Sk + j) * Hkv + hk) * D + d)];
        }
        for (std::int64_t d = 0; d < D; ++d)
          r.out[std::size_t(((b * Sq + i) * Hq + h) * D + d)] = any ? float(acc[std::size_t(d)] / l) : 0.0f;
        r.lse[std::size_t((b * Hq + h) * Sq + i)] = any ? float(m + std::log(l)) : -INFINITY;
      }
  return r;
}

Tensor f32_tensor(const Device& dev, const std::vector<float>& values, const Shape& s) {
  Tensor t = Tensor::empty(dev, DType::F32, s);
  t.upload(values.data(), values.size() * 4);
  return t;
}

// Options of case c with variant var (slopes, sinks: the tensors the variant uses).
Options variant_options(const cases::Case& c, const Variant& var, const Tensor* slopes, const Tensor* sinks) {
  Options opt;
  opt.causal = c.causal;
  opt.window_left = var.window_left;
  opt.window_right = var.window_right;
  opt.softcap = var.softcap;
  if (var.alibi) opt.alibi_slopes = slopes;
  if (var.sinks) opt.sinks = sinks;
  return opt;
}

// Runs case c with variant var on one path of dev against the direct evaluation; returns the refusal or "".
// allow_reduced sets Options::allow_reduced_precision_accumulation (a kernel that then accumulated in f16 is held to
// reduced_out_tolerance); kernels, when given, collects the base names of the kernels that ran.
std::string check_variant(const Device& dev, Path path, const cases::Case& c, const Variant& var, std::uint64_t seed,
                          bool allow_reduced = false, std::set<std::string>* kernels = nullptr) {
  Problem p = make_problem(dev, c, seed);
  const float scale = 1.0f / std::sqrt(float(c.head_dim));
  const std::vector<float> slopes = alibi_slopes(c.heads_q), sinks = sink_logits(c.heads_q, seed);
  const Tensor ts = f32_tensor(dev, slopes, Shape{1, {c.heads_q, 0, 0, 0}});
  const Tensor tk = f32_tensor(dev, sinks, Shape{1, {c.heads_q, 0, 0, 0}});
  Options opt = variant_options(c, var, &ts, &tk);
  opt.path = path;
  opt.allow_reduced_precision_accumulation = allow_reduced;
  Result r;
  try {
    r = attention_forward(p.q.view, p.k.view, p.v.view, p.out.view, &p.lse.view, opt);
  } catch (const Error& e) {
    if (e.code() == ErrorCode::Unsupported) return e.what();
    FAIL_CHECK("attention_forward threw: ", std::string(e.what()));
    return "";
  }
  if (kernels) kernels->insert(std::string(to_string(path)) + ": " + r.kernel.substr(0, r.kernel.find('<')));
  if (!allow_reduced) CHECK_FALSE(r.reduced_precision);
  const Direct ref = direct(c, var, p.qv, p.kv, p.vv, slopes, sinks, scale);
  const std::vector<float> out = p.out.read(), lse = p.lse.read();
  double num = 0, den = 0, lse_err = 0;
  std::int64_t bad = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    bad += !std::isfinite(out[i]);
    num += (double(out[i]) - ref.out[i]) * (double(out[i]) - ref.out[i]);
    den += double(ref.out[i]) * ref.out[i];
  }
  for (std::size_t i = 0; i < lse.size(); ++i) {
    if (std::isinf(ref.lse[i])) {
      bad += !(std::isinf(lse[i]) && lse[i] < 0);
      continue;
    }
    lse_err = std::max(lse_err, std::abs(double(lse[i]) - ref.lse[i]) / std::max(1.0, std::abs(double(ref.lse[i]))));
  }
  const double rel = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  INFO("rel_error ", rel, ", lse_error ", lse_err);
  CHECK(bad == 0);
  CHECK(rel <= (r.reduced_precision ? cases::reduced_out_tolerance(c.dtype) : cases::out_tolerance(c.dtype)));
  CHECK(lse_err <= cases::lse_tolerance(c.dtype));
  return "";
}

void check_variant_list(const std::vector<std::pair<cases::Case, Variant>>& list, const char* what, std::uint64_t seed,
                        bool allow_reduced = false, std::set<std::string>* kernels = nullptr) {
  run_on_every_path(
      list.size(), (std::string("variants (") + what + ")").c_str(), "implements these variants yet", seed,
      [&](std::size_t i) { return list[i].first.name() + list[i].second.name(); },
      [&](const Device& dev, Path path, std::size_t i) {
        return check_variant(dev, path, list[i].first, list[i].second, seed + i, allow_reduced, kernels);
      });
}

// The backward of case c with variant var on one path against the CPU reference's backward of the same inputs, out,
// lse (the CPU forward's) and dout; returns the refusal or "".
std::string check_variant_backward(const Device& dev, Path path, const cases::Case& c, const Variant& var,
                                   bool deterministic, std::uint64_t seed) {
  const Device cpu = Device::open(Backend::Cpu);
  const std::vector<float> slopes = alibi_slopes(c.heads_q), sinks = sink_logits(c.heads_q, seed);
  const Shape qs = Shape::of(c.batch, c.seqlen_q, c.heads_q, c.head_dim);
  const Shape ks = Shape::of(c.batch, c.seqlen_k, c.heads_kv, c.head_dim);
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  auto values = [&](std::int64_t n) {
    std::vector<float> v(static_cast<std::size_t>(n));
    for (float& x : v) x = round_to(c.dtype, normal(rng));
    return v;
  };
  const std::vector<float> qv = values(qs.numel()), kv = values(ks.numel()), vv = values(ks.numel()),
                           dov = values(qs.numel());
  struct Call {  // one device's tensors
    Tensor q, k, v, out, lse, dout, dq, dk, dv, slopes, sinks, dsinks;
  };
  const Shape heads{1, {c.heads_q, 0, 0, 0}};
  auto make = [&](const Device& d) {
    Call t{upload_floats(d, c.dtype, qs, qv), upload_floats(d, c.dtype, ks, kv), upload_floats(d, c.dtype, ks, vv),
           Tensor::empty(d, c.dtype, qs), Tensor::empty(d, DType::F32, Shape::of(c.batch, c.heads_q, c.seqlen_q)),
           upload_floats(d, c.dtype, qs, dov), Tensor::empty(d, c.dtype, qs), Tensor::empty(d, c.dtype, ks),
           Tensor::empty(d, c.dtype, ks), f32_tensor(d, slopes, heads), f32_tensor(d, sinks, heads),
           f32_tensor(d, std::vector<float>(std::size_t(c.heads_q), NAN), heads)};
    return t;
  };
  Call ref = make(cpu), got = make(dev);
  Options opt;
  opt.causal = c.causal;
  opt.window_left = var.window_left;
  opt.window_right = var.window_right;
  opt.softcap = var.softcap;
  opt.deterministic = deterministic;
  if (var.alibi) opt.alibi_slopes = &ref.slopes;
  if (var.sinks) opt.sinks = &ref.sinks;
  attention_forward(ref.q, ref.k, ref.v, ref.out, &ref.lse, opt);
  if (var.sinks) opt.dsinks = &ref.dsinks;
  attention_backward(ref.q, ref.k, ref.v, ref.out, ref.lse, ref.dout, ref.dq, ref.dk, ref.dv, opt);
  // The path gets the CPU forward's out (in the dtype) and lse, so only its backward is measured.
  std::vector<std::byte> img(ref.out.extent_bytes());
  ref.out.download(img.data(), img.size());
  got.out.upload(img.data(), img.size());
  img.resize(ref.lse.extent_bytes());
  ref.lse.download(img.data(), img.size());
  got.lse.upload(img.data(), img.size());
  for (Tensor* t : {&got.dq, &got.dk, &got.dv}) {
    std::vector<std::byte> nan(t->extent_bytes(), kPoisonByte);
    t->upload(nan.data(), nan.size());
  }
  opt.path = path;
  if (var.alibi) opt.alibi_slopes = &got.slopes;
  if (var.sinks) opt.sinks = &got.sinks, opt.dsinks = &got.dsinks;
  try {
    attention_backward(got.q, got.k, got.v, got.out, got.lse, got.dout, got.dq, got.dk, got.dv, opt);
  } catch (const Error& e) {
    if (e.code() == ErrorCode::Unsupported) return e.what();
    FAIL_CHECK("attention_backward threw: ", std::string(e.what()));
    return "";
  }
  auto read = [&](const Tensor& t) {
    std::vector<std::byte> b(t.extent_bytes());
    t.download(b.data(), b.size());
    std::vector<float> v(std::size_t(t.shape().numel()));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = get(b.data(), t.dtype(), std::int64_t(i));
    return v;
  };
  const char* names[] = {"dq", "dk", "dv", "dsinks"};
  const Tensor* gots[] = {&got.dq, &got.dk, &got.dv, &got.dsinks};
  const Tensor* refs[] = {&ref.dq, &ref.dk, &ref.dv, &ref.dsinks};
  for (int i = 0; i < (var.sinks ? 4 : 3); ++i) {
    const std::vector<float> g = read(*gots[i]), r = read(*refs[i]);
    std::int64_t bad = 0;
    for (float x : g) bad += !std::isfinite(x);
    const double rel = cases::rel_l2_error(g, r);
    INFO(names[i], ": rel_error ", rel, ", non-finite ", bad);
    CHECK(bad == 0);
    CHECK(rel <= cases::grad_tolerance(c.dtype));
  }
  return "";
}

}  // namespace

TEST_CASE("conformance variants: each variant and combinations, odd sizes, Sq != Sk both ways, GQA") {
  std::vector<std::pair<cases::Case, Variant>> list;
  const Variant variants[] = {
      {5, 3, 0, false, false},  {0, 0, 0, false, false},   {-1, 7, 0, false, false},  {20, -1, 0, false, false},
      {-1, -1, 5, false, false}, {-1, -1, 0, true, false}, {-1, -1, 0, false, true}, {16, 0, 30, true, true}};
  int n = 0;
  for (const Variant& var : variants)
    for (const auto& [sq, sk] : {std::pair{17, 17}, {1, 70}, {70, 33}}) {
      const bool causal = n % 2 == 1;
      list.push_back({cases::Case{1 + n % 2, sq, sk, 4, n % 3 ? 2 : 4, n % 2 ? 64 : 128, causal,
                                  n % 2 ? DType::F16 : DType::BF16},
                      var});
      ++n;
    }
  check_variant_list(list, "grid", config().seed + 50000);
}

// The models the variants exist for, at their real window sizes.
TEST_CASE("conformance variants: named models") {
  std::vector<std::pair<cases::Case, Variant>> list = {
      {cases::Case{1, 65, 4500, 4, 1, 128, true, DType::BF16}, {4096, 0, 0, false, false}},   // Mistral
      {cases::Case{1, 33, 4300, 4, 2, 128, true, DType::BF16}, {4096, 0, 50, false, false}},  // Gemma-2 local layer
      {cases::Case{1, 40, 600, 4, 2, 128, true, DType::BF16}, {-1, -1, 50, false, false}},    // Gemma-2 global layer
      {cases::Case{1, 77, 300, 8, 1, 64, true, DType::BF16}, {128, 0, 0, false, true}},       // gpt-oss
      {cases::Case{2, 31, 200, 8, 8, 64, true, DType::F16}, {-1, -1, 0, true, false}},        // BLOOM
  };
  check_variant_list(list, "models", config().seed + 51000);
}

// What the kernels need beyond the grid: windows that skip whole key blocks at either end (short queries against
// long keys), rows and whole query tiles whose window holds no key (with and without sinks), softcap from saturated to
// linear, every variant at once past 4096 keys (the sm90 main kernels), per-(batch, head) ALiBi slopes via the grid
// above. Sizes keep the direct evaluation fast on two cores.
TEST_CASE("conformance variants: block skipping, rows without keys, large softcap, long keys") {
  const std::vector<std::pair<cases::Case, Variant>> list = {
      {cases::Case{1, 300, 2000, 4, 2, 128, false, DType::BF16}, {100, 20, 0, false, false}},
      {cases::Case{1, 400, 1500, 4, 1, 64, true, DType::F16}, {200, 0, 0, true, true}},
      {cases::Case{1, 1000, 257, 4, 2, 128, false, DType::BF16}, {3, 2, 0, false, false}},  // rows to 740: no key
      {cases::Case{1, 1000, 257, 4, 2, 64, true, DType::F16}, {3, 0, 0, false, true}},      // the same with sinks
      {cases::Case{1, 257, 300, 2, 1, 256, false, DType::F16}, {-1, -1, 1e4f, false, false}},
      {cases::Case{1, 257, 300, 2, 1, 128, true, DType::BF16}, {-1, -1, 1.0f, false, false}},
      {cases::Case{1, 300, 700, 2, 1, 256, true, DType::BF16}, {128, 0, 50, false, false}},
      {cases::Case{1, 130, 5000, 4, 2, 128, false, DType::BF16}, {1000, 100, 30, true, true}},
  };
  check_variant_list(list, "kernels (long keys)", config().seed + 53500);
}

// What the kernels' block skipping and special rows need: windows that skip whole key tiles (both sides, every head
// dim's tile size), rows whose window holds no key (with a sink: O = 0, LSE = the sink), split-KV decode shapes with a
// sink over many splits (a sink counted per split would be caught), softcaps that saturate and that barely bend.
TEST_CASE("conformance variants: block skipping, rows without keys, decode splits, extreme softcaps") {
  std::vector<std::pair<cases::Case, Variant>> list = {
      {cases::Case{2, 700, 700, 4, 2, 128, false, DType::BF16}, {50, 20, 0, false, false}},
      {cases::Case{1, 700, 900, 4, 1, 64, true, DType::F16}, {100, 0, 0, true, false}},
      {cases::Case{1, 300, 500, 2, 2, 256, false, DType::F16}, {33, 70, 0, false, true}},
      {cases::Case{1, 200, 1000, 4, 4, 128, false, DType::BF16}, {-1, 40, 0, false, false}},  // right side only
      {cases::Case{1, 1000, 200, 4, 2, 64, false, DType::F16}, {0, 0, 0, false, true}},      // most rows see none
      {cases::Case{1, 100, 20, 4, 2, 128, true, DType::BF16}, {3, 0, 0, false, false}},      // ... and no sink
      {cases::Case{1, 1, 3000, 8, 1, 128, false, DType::BF16}, {-1, -1, 0, false, true}},    // decode: many splits
      {cases::Case{2, 5, 3000, 8, 2, 64, true, DType::F16}, {300, 0, 0, true, true}},        // decode, window, GQA
      {cases::Case{1, 16, 2000, 4, 4, 256, false, DType::BF16}, {7, 2, 0, false, true}},     // decode, window in 1 tile
      {cases::Case{1, 2, 100, 4, 1, 64, false, DType::F16}, {0, 0, 0, false, true}},         // decode, rows see 1 key
      {cases::Case{1, 130, 130, 4, 2, 128, true, DType::BF16}, {-1, -1, 1000, false, false}},
      {cases::Case{1, 130, 257, 4, 2, 64, false, DType::F16}, {-1, -1, 0.5f, true, false}},
  };
  check_variant_list(list, "kernel cases", config().seed + 53000);
}

// The forms a path picks by the call's shape and permissions, with variants: f16 key counts that are whole tiles of
// every head dim's tiles (coopmat2's one-loop-body entries, id 30, and the aligned loads of the others), 256-key
// windows that start and end inside tiles, and (allow_reduced) O accumulated in f16 (coopmat2's _o16 entries, held to
// the reduced tolerance). The kernels that ran are printed, so a GPU run shows which forms these cases reached.
TEST_CASE("conformance variants: whole key tiles and reduced-precision forms") {
  const std::vector<std::pair<cases::Case, Variant>> list = {
      {cases::Case{1, 300, 1024, 4, 2, 64, true, DType::F16}, {200, 0, 0, false, true}},
      {cases::Case{1, 257, 1024, 4, 1, 128, true, DType::F16}, {-1, -1, 30, true, false}},
      {cases::Case{2, 200, 512, 4, 2, 128, false, DType::F16}, {100, 50, 0, false, false}},
      {cases::Case{1, 130, 640, 2, 1, 256, true, DType::F16}, {300, 0, 20, false, true}},
      {cases::Case{1, 512, 512, 4, 2, 64, false, DType::F16}, {40, 40, 0, true, true}},
  };
  for (bool allow_reduced : {false, true}) {
    std::set<std::string> kernels;
    check_variant_list(list, allow_reduced ? "whole tiles, reduced precision allowed" : "whole tiles",
                       config().seed + 55000, allow_reduced, &kernels);
    for (const std::string& k : kernels) std::printf("  ran %s\n", k.c_str());
  }
}

// The backward of every variant on every path against the CPU reference backward (with sinks, dsinks too): whole
// query and key blocks skipped, rows without keys (some seeing only the sink), a softcap whose tanh' is far from 1 (a
// missing factor fails), GQA, Sq != Sk both ways, the deterministic dQ kernel too.
TEST_CASE("conformance variants: the backward on every path") {
  struct Item {
    cases::Case c;
    Variant var;
    bool deterministic;
  };
  const std::vector<Item> list = {
      {cases::Case{1, 300, 300, 4, 2, 128, false, DType::BF16}, {40, 10, 0, false, false}, false},
      {cases::Case{1, 300, 300, 4, 2, 128, false, DType::BF16}, {40, 10, 0, false, false}, true},
      {cases::Case{2, 77, 77, 4, 4, 64, false, DType::F16}, {-1, -1, 1.5f, false, false}, false},
      {cases::Case{1, 200, 90, 4, 1, 128, true, DType::F16}, {-1, -1, 2.0f, false, false}, true},
      {cases::Case{1, 90, 200, 8, 2, 64, false, DType::BF16}, {-1, -1, 0, true, false}, false},
      {cases::Case{1, 70, 33, 4, 2, 128, false, DType::F16}, {0, 0, 0, false, false}, false},  // rows without keys
      {cases::Case{1, 257, 400, 4, 2, 128, true, DType::BF16}, {64, 0, 3.0f, true, false}, true},
      {cases::Case{1, 150, 150, 2, 1, 256, false, DType::F16}, {20, 30, 1.0f, true, false}, false},
      {cases::Case{1, 150, 150, 2, 1, 256, true, DType::F16}, {20, 0, 0, false, false}, true},
      {cases::Case{2, 33, 500, 4, 4, 64, false, DType::BF16}, {-1, 60, 0, true, false}, true},
      {cases::Case{2, 300, 300, 4, 2, 128, false, DType::BF16}, {50, 20, 0, false, false}, false},
      {cases::Case{1, 200, 700, 4, 1, 64, true, DType::F16}, {100, 0, 0, true, false}, false},
      {cases::Case{1, 300, 120, 4, 2, 128, true, DType::BF16}, {-1, -1, 30, false, false}, false},
      {cases::Case{1, 100, 400, 2, 1, 256, false, DType::F16}, {-1, -1, 5, true, false}, false},
      {cases::Case{1, 500, 129, 4, 2, 64, false, DType::BF16}, {3, 2, 20, true, false}, false},  // rows without keys
      {cases::Case{1, 64, 1500, 2, 1, 128, false, DType::F16}, {64, 0, 0, false, false}, false},  // key blocks no row sees
      {cases::Case{2, 257, 257, 6, 2, 64, false, DType::BF16}, {-1, -1, 0, false, true}, false},
      {cases::Case{1, 300, 120, 4, 2, 128, true, DType::F16}, {-1, -1, 0, false, true}, true},  // rows with the sink alone
      {cases::Case{2, 200, 500, 8, 2, 128, true, DType::BF16}, {100, 10, 20, true, true}, false},
      {cases::Case{1, 17, 33, 2, 1, 256, false, DType::F16}, {-1, -1, 0, false, true}, true},
  };
  const std::uint64_t seed = config().seed + 54000;
  run_on_every_path(
      list.size(), "variants backward", "implements these variants yet|no backward kernel on this path", seed,
      [&](std::size_t i) {
        return list[i].c.name() + list[i].var.name() + (list[i].deterministic ? " deterministic" : "");
      },
      [&](const Device& dev, Path path, std::size_t i) {
        return check_variant_backward(dev, path, list[i].c, list[i].var, list[i].deterministic, seed + i);
      });
}

// The backward of every variant on the CPU reference against central differences of its forward: dq, dk, dv, and
// dsinks (Options::dsinks) with sinks, summed over a batch of 2, including rows that see no key but the sink.
TEST_CASE("conformance variants: the CPU backward matches finite differences") {
  const Device cpu = Device::open(Backend::Cpu);
  const cases::Case small{1, 5, 7, 2, 1, 8, true, DType::F32}, batched{2, 7, 4, 2, 1, 8, true, DType::F32};
  const std::pair<cases::Case, Variant> list[] = {
      {small, {2, 1, 0, false, false}},     {small, {-1, -1, 0.7f, false, false}}, {small, {3, 0, 0, true, false}},
      {small, {-1, -1, 0, false, true}},    {batched, {-1, -1, 0, false, true}},   // Sq > Sk: rows 0-2 see no key
      {batched, {2, 0, 0.7f, true, true}},
  };
  for (const auto& [c, var] : list) {
    INFO("case ", c.name(), ", variant", var.name());
    Problem p = make_problem(cpu, c, config().seed + 52000);
    const std::vector<float> slopes = alibi_slopes(c.heads_q), sinks = sink_logits(c.heads_q, 3);
    const Tensor ts = f32_tensor(cpu, slopes, Shape{1, {c.heads_q, 0, 0, 0}});
    const Tensor tk = f32_tensor(cpu, sinks, Shape{1, {c.heads_q, 0, 0, 0}});
    Tensor dsinks = f32_tensor(cpu, std::vector<float>(std::size_t(c.heads_q), NAN), Shape{1, {c.heads_q, 0, 0, 0}});
    Options opt;
    opt.causal = c.causal;
    opt.window_left = var.window_left;
    opt.window_right = var.window_right;
    opt.softcap = var.softcap;
    if (var.alibi) opt.alibi_slopes = &ts;
    if (var.sinks) opt.sinks = &tk;
    attention_forward(p.q.view, p.k.view, p.v.view, p.out.view, &p.lse.view, opt);
    std::mt19937_64 rng(7);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> dov(p.qv.size());
    for (float& x : dov) x = normal(rng);
    const Tensor dout = f32_tensor(cpu, dov, p.q.view.shape());
    Tensor dq = Tensor::empty(cpu, DType::F32, p.q.view.shape()), dk = Tensor::empty(cpu, DType::F32, p.k.view.shape()),
           dv = Tensor::empty(cpu, DType::F32, p.v.view.shape());
    if (var.sinks) opt.dsinks = &dsinks;
    attention_backward(p.q.view, p.k.view, p.v.view, p.out.view, p.lse.view, dout, dq, dk, dv, opt);
    auto loss = [&](const std::vector<float> (&x)[4]) {
      const Direct r = direct(c, var, x[0], x[1], x[2], slopes, x[3], 1.0f / std::sqrt(float(c.head_dim)));
      double l = 0;
      for (std::size_t i = 0; i < r.out.size(); ++i) l += double(r.out[i]) * dov[i];
      return l;
    };
    double worst = 0;
    for (int which = 0; which < (var.sinks ? 4 : 3); ++which) {
      std::vector<float> x[4] = {p.qv, p.kv, p.vv, sinks};
      std::vector<float> grad(x[which].size());
      (which == 0 ? dq : which == 1 ? dk : which == 2 ? dv : dsinks).download(grad.data(), grad.size() * 4);
      for (std::size_t i = 0; i < x[which].size(); ++i) {
        const float x0 = x[which][i];
        x[which][i] = x0 + 1e-2f;
        const double up = loss(x);
        x[which][i] = x0 - 1e-2f;
        const double down = loss(x);
        x[which][i] = x0;
        const double fd = (up - down) / 2e-2;
        INFO("tensor ", which, " element ", i, ": fd ", fd, ", grad ", grad[i]);
        CHECK(std::isfinite(grad[i]));
        worst = std::max(worst, std::abs(fd - grad[i]) / std::max(1.0, std::abs(fd)));
      }
    }
    INFO("worst |fd - grad| / max(1, |fd|) = ", worst);
    CHECK(worst < 2e-4);
  }
}

TEST_CASE("bad input (variants): each rule names its option and writes nothing") {
  const Device cpu = Device::open(Backend::Cpu);
  const cases::Case c{2, 9, 11, 4, 2, 64, false, DType::F16};
  Problem p = make_problem(cpu, c, 1);
  const auto before = p.out.image();
  auto expect = [&](const Options& opt, ErrorCode code, const char* names) {
    try {
      attention_forward(p.q.view, p.k.view, p.v.view, p.out.view, &p.lse.view, opt);
      FAIL_CHECK("accepted, expected an error naming ", names);
    } catch (const Error& e) {
      CHECK(e.code() == code);
      CHECK_MESSAGE(std::string(e.what()).find(names) != std::string::npos, std::string(e.what()));
    }
    CHECK(p.out.image() == before);
  };
  Options o;
  o.window_left = -2;
  expect(o, ErrorCode::InvalidArgument, "options.window_left");
  o = {};
  o.window_right = -5;
  expect(o, ErrorCode::InvalidArgument, "options.window_right");
  for (float bad : {-1.0f, std::nanf(""), INFINITY}) {
    o = {};
    o.softcap = bad;
    expect(o, ErrorCode::InvalidArgument, "options.softcap");
  }
  const Tensor wrong_shape = f32_tensor(cpu, std::vector<float>(3, 0.1f), Shape{1, {3, 0, 0, 0}});
  const Tensor per_batch = f32_tensor(cpu, std::vector<float>(8, 0.1f), Shape{2, {2, 4, 0, 0}});
  Tensor f16 = Tensor::empty(cpu, DType::F16, Shape{1, {4, 0, 0, 0}});
  o = {};
  o.alibi_slopes = &wrong_shape;
  expect(o, ErrorCode::ShapeMismatch, "options.alibi_slopes");
  o = {};
  o.alibi_slopes = &f16;
  expect(o, ErrorCode::DTypeMismatch, "options.alibi_slopes");
  o = {};
  o.sinks = &per_batch;  // sinks are per head only
  expect(o, ErrorCode::ShapeMismatch, "options.sinks");
  o = {};
  o.sinks = &p.out.view;  // an f16 tensor (the output itself)
  expect(o, ErrorCode::DTypeMismatch, "options.sinks");
  o = {};
  o.alibi_slopes = &per_batch;  // [B, Hq] is a valid slope layout
  CHECK_NOTHROW(attention_forward(p.q.view, p.k.view, p.v.view, p.out.view, &p.lse.view, o));
}
