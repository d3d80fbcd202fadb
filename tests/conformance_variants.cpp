// The attention variants (sliding window, softcap, ALiBi, sinks): the CPU reference against a direct evaluation
// written here from the definitions, named model cases on every path (paths without the variants must refuse with
// the reason), the backward against finite differences, and bad input.
#include <doctest/doctest.h>

#include "common.hpp"
#include "every_path.hpp"
#include "reference.hpp"
#include "test_config.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <string>
#include <tuple>

using namespace flashtile;
using namespace flashtile::testing;

namespace {

struct Variant {
  std::int64_t window_left = -1, window_right = -1;
  float softcap = 0.0f;
  bool alibi = false, sinks = false;
  bool alibi_per_batch = false;  // slopes [B, Hq] instead of [Hq]
  std::string name() const {
    std::string s;
    if (window_left >= 0 || window_right >= 0) s += " window " + std::to_string(window_left) + "," + std::to_string(window_right);
    if (softcap > 0) s += " softcap " + std::to_string(softcap);
    if (alibi) s += alibi_per_batch ? " alibi[B,H]" : " alibi";
    if (sinks) s += " sinks";
    return s;
  }
};

// ALiBi's usual slopes: the geometric series 2^(-8 (h + 1) / H).
std::vector<float> alibi_slopes(std::int64_t heads) {
  std::vector<float> s(static_cast<std::size_t>(heads));
  for (std::int64_t h = 0; h < heads; ++h) s[std::size_t(h)] = std::exp2(-8.0f * float(h + 1) / float(heads));
  return s;
}

// Slopes [Hq], or [B, Hq] (each batch's row a different multiple of the usual ones) for per-batch slopes.
std::vector<float> alibi_slopes(const Variant& var, std::int64_t batch, std::int64_t heads) {
  std::vector<float> s;
  const std::vector<float> row = alibi_slopes(heads);
  for (std::int64_t b = 0; b < (var.alibi_per_batch ? batch : 1); ++b)
    for (float x : row) s.push_back(x * (1.0f + 0.5f * float(b)));
  return s;
}
Shape slopes_shape(const Variant& var, std::int64_t batch, std::int64_t heads) {
  return var.alibi_per_batch ? Shape{2, {batch, heads, 0, 0}} : Shape{1, {heads, 0, 0, 0}};
}

std::vector<float> sink_logits(std::int64_t heads, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.5f);
  std::vector<float> s(static_cast<std::size_t>(heads));
  for (float& x : s) x = normal(rng);
  return s;
}

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
          if (var.alibi) x -= double(slopes[std::size_t((var.alibi_per_batch ? b * Hq : 0) + h)]) * double(std::abs(diag - j));
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

// Out and LSE against the oracle's: no NaN or inf where the oracle is finite, a row the oracle gives -inf LSE is -inf.
void check_close(const std::vector<float>& out, const std::vector<float>& lse, const std::vector<float>& ref_out,
                 const std::vector<float>& ref_lse, DType dtype) {
  REQUIRE(out.size() == ref_out.size());
  REQUIRE(lse.size() == ref_lse.size());
  double num = 0, den = 0, lse_err = 0;
  std::int64_t bad = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    bad += !std::isfinite(out[i]);
    num += (double(out[i]) - ref_out[i]) * (double(out[i]) - ref_out[i]);
    den += double(ref_out[i]) * ref_out[i];
  }
  for (std::size_t i = 0; i < lse.size(); ++i) {
    if (std::isinf(ref_lse[i])) {
      bad += !(std::isinf(lse[i]) && lse[i] < 0);
      continue;
    }
    lse_err = std::max(lse_err, std::abs(double(lse[i]) - ref_lse[i]) / std::max(1.0, std::abs(double(ref_lse[i]))));
  }
  const double rel = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  INFO("rel_error ", rel, ", lse_error ", lse_err);
  CHECK(bad == 0);
  CHECK(rel <= cases::out_tolerance(dtype));
  CHECK(lse_err <= cases::lse_tolerance(dtype));
}

// The call's Options for var, with the slope and sink tensors it points to.
Options variant_options(const Variant& var, bool causal, Path path, const Tensor* slopes, const Tensor* sinks) {
  Options opt;
  opt.causal = causal;
  opt.path = path;
  opt.window_left = var.window_left;
  opt.window_right = var.window_right;
  opt.softcap = var.softcap;
  if (var.alibi) opt.alibi_slopes = slopes;
  if (var.sinks) opt.sinks = sinks;
  return opt;
}

// Runs case c with variant var on one path of dev against the direct evaluation; returns the refusal or "".
std::string check_variant(const Device& dev, Path path, const cases::Case& c, const Variant& var, std::uint64_t seed) {
  Problem p = make_problem(dev, c, seed);
  const float scale = 1.0f / std::sqrt(float(c.head_dim));
  const std::vector<float> slopes = alibi_slopes(var, c.batch, c.heads_q), sinks = sink_logits(c.heads_q, seed);
  const Tensor ts = f32_tensor(dev, slopes, slopes_shape(var, c.batch, c.heads_q));
  const Tensor tk = f32_tensor(dev, sinks, Shape{1, {c.heads_q, 0, 0, 0}});
  const Options opt = variant_options(var, c.causal, path, &ts, &tk);
  try {
    attention_forward(p.q.view, p.k.view, p.v.view, p.out.view, &p.lse.view, opt);
  } catch (const Error& e) {
    if (e.code() == ErrorCode::Unsupported) return e.what();
    FAIL_CHECK("attention_forward threw: ", std::string(e.what()));
    return "";
  }
  const Direct ref = direct(c, var, p.qv, p.kv, p.vv, slopes, sinks, scale);
  check_close(p.out.read(), p.lse.read(), ref.out, ref.lse, c.dtype);
  return "";
}

// A serving call with variants: a paged KV cache (no append; pages shuffled, NaN in every slot no sequence owns) or a
// packed varlen batch, checked against the CPU reference's result for the same call.
struct ServingCase {
  bool paged;
  std::vector<std::int32_t> lq, lk;  // per sequence: query rows (paged: lq[0] for all), keys (paged: cache lengths)
  std::int64_t hq, hkv, d, page;
  bool causal;
  DType dtype;
  Variant var;
  std::string name() const {
    std::string s = std::string(paged ? "paged page" + std::to_string(page) : "varlen") + " " + std::string(to_string(dtype)) +
                    " H" + std::to_string(hq) + "/" + std::to_string(hkv) + " D" + std::to_string(d) +
                    (causal ? " causal" : "") + " lengths";
    for (std::size_t i = 0; i < lk.size(); ++i) s += " " + std::to_string(lq[paged ? 0 : i]) + "x" + std::to_string(lk[i]);
    return s + var.name();
  }
};

struct ServingInputs {
  std::int64_t B = 0, rows_q = 0, rows_k = 0, pages_per_seq = 0;  // rows_k: varlen total_k, paged num_pages * page
  std::vector<float> q, k, v, slopes, sinks;
  std::vector<std::int32_t> table, lens;  // paged: block_table, seqlens; varlen: cu_seqlens_q, cu_seqlens_k
};

ServingInputs serving_inputs(const ServingCase& c, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  ServingInputs in;
  in.B = std::int64_t(c.lk.size());
  in.slopes = alibi_slopes(c.var, in.B, c.hq);
  in.sinks = sink_logits(c.hq, seed);
  const std::int64_t row = c.hkv * c.d;
  if (c.paged) {
    in.rows_q = in.B * c.lq[0];
    in.pages_per_seq = 1;
    for (auto len : c.lk) in.pages_per_seq = std::max<std::int64_t>(in.pages_per_seq, (len + c.page - 1) / c.page);
    const std::int64_t P = in.B * in.pages_per_seq + 3;
    in.rows_k = P * c.page;
    std::vector<std::int32_t> perm(static_cast<std::size_t>(P));
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    in.table.assign(perm.begin(), perm.begin() + in.B * in.pages_per_seq);
    in.lens = c.lk;
    in.k.assign(std::size_t(in.rows_k * row), std::numeric_limits<float>::quiet_NaN());
    in.v = in.k;
    for (std::int64_t b = 0; b < in.B; ++b)
      for (std::int64_t j = 0; j < c.lk[std::size_t(b)]; ++j) {
        const std::int64_t slot = (in.table[std::size_t(b * in.pages_per_seq + j / c.page)] * c.page + j % c.page) * row;
        const std::vector<float> kr = random_values(rng, c.dtype, row), vr = random_values(rng, c.dtype, row);
        std::copy(kr.begin(), kr.end(), in.k.begin() + slot);
        std::copy(vr.begin(), vr.end(), in.v.begin() + slot);
      }
  } else {
    in.table = {0};
    in.lens = {0};
    for (std::int64_t b = 0; b < in.B; ++b) {
      in.table.push_back(in.table.back() + c.lq[std::size_t(b)]);
      in.lens.push_back(in.lens.back() + c.lk[std::size_t(b)]);
    }
    in.rows_q = std::max(1, in.table.back());
    in.rows_k = std::max(1, in.lens.back());
    in.k = random_values(rng, c.dtype, in.rows_k * row);
    in.v = random_values(rng, c.dtype, in.rows_k * row);
  }
  in.q = random_values(rng, c.dtype, in.rows_q * c.hq * c.d);
  return in;
}

// Runs the serving call on one path of dev; returns the refusal or "" with out and lse read back.
std::string run_serving(const Device& dev, Path path, const ServingCase& c, const ServingInputs& in,
                        std::vector<float>& out, std::vector<float>& lse) {
  const Tensor ts = f32_tensor(dev, in.slopes, slopes_shape(c.var, in.B, c.hq));
  const Tensor tk = f32_tensor(dev, in.sinks, Shape{1, {c.hq, 0, 0, 0}});
  const Options opt = variant_options(c.var, c.causal, path, &ts, &tk);
  const Shape q_shape = c.paged ? Shape::of(in.B, c.lq[0], c.hq, c.d) : Shape{3, {in.rows_q, c.hq, c.d, 0}};
  const Shape kv_shape = c.paged ? Shape::of(in.rows_k / c.page, c.page, c.hkv, c.d) : Shape{3, {in.rows_k, c.hkv, c.d, 0}};
  const Tensor q = upload_floats(dev, c.dtype, q_shape, in.q);
  const Tensor k = upload_floats(dev, c.dtype, kv_shape, in.k), v = upload_floats(dev, c.dtype, kv_shape, in.v);
  DevTensor o = contiguous(dev, c.dtype, q_shape);
  DevTensor l = contiguous(dev, DType::F32, c.paged ? Shape::of(in.B, c.hq, c.lq[0]) : Shape{2, {c.hq, in.rows_q, 0, 0}});
  poison(o);
  poison(l);
  try {
    if (c.paged) {
      const PagedKv cache{k, v, upload_ints(dev, Shape{2, {in.B, in.pages_per_seq, 0, 0}}, in.table),
                          upload_ints(dev, Shape{1, {in.B, 0, 0, 0}}, in.lens)};
      attention_with_kvcache(q, cache, o.view, &l.view, nullptr, nullptr, opt);
    } else {
      const Varlen lens{upload_ints(dev, Shape{1, {in.B + 1, 0, 0, 0}}, in.table),
                        upload_ints(dev, Shape{1, {in.B + 1, 0, 0, 0}}, in.lens),
                        *std::max_element(c.lq.begin(), c.lq.end()), *std::max_element(c.lk.begin(), c.lk.end())};
      attention_varlen(q, k, v, o.view, &l.view, lens, opt);
    }
  } catch (const Error& e) {
    if (e.code() == ErrorCode::Unsupported) return e.what();
    FAIL_CHECK("the serving call threw: ", std::string(e.what()));
    return "";
  }
  out = o.read();
  lse = l.read();
  return "";
}

std::string check_serving_variant(const Device& dev, Path path, const ServingCase& c, std::uint64_t seed) {
  const ServingInputs in = serving_inputs(c, seed);
  std::vector<float> out, lse, ref_out, ref_lse;
  if (std::string refusal = run_serving(dev, path, c, in, out, lse); !refusal.empty() || out.empty()) return refusal;
  const Device cpu = Device::open(Backend::Cpu);
  REQUIRE(run_serving(cpu, Path::CpuReference, c, in, ref_out, ref_lse).empty());
  check_close(out, lse, ref_out, ref_lse, c.dtype);
  return "";
}

void check_variant_list(const std::vector<std::pair<cases::Case, Variant>>& list, const char* what, std::uint64_t seed) {
  // f32 cases are skipped where a path (the cooperative-matrix ones, a forced 16-bit form) has no f32 kernel at all.
  run_on_every_path(
      list.size(), (std::string("variants (") + what + ")").c_str(),
      {"implements these variants yet", "dtype f32 not supported"}, seed,
      [&](std::size_t i) { return list[i].first.name() + list[i].second.name(); },
      [&](const Device& dev, Path path, std::size_t i) {
        return check_variant(dev, path, list[i].first, list[i].second, seed + i);
      });
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

// What the kernels' block skipping and epilogues must get right: windows that leave whole key tiles out on either
// side (narrow bands, long caches), rows whose window holds no key (with and without a sink: 0 and -inf, or 0 and the
// sink), split-KV (few rows over many keys; llvmpipe splits past 2048 keys) with the sink joining once, per-batch
// slopes, and softcap far below and far above the scores.
TEST_CASE("conformance variants: skipped key tiles, empty windows, split-KV, per-batch slopes, softcap extremes") {
  Variant all{3, 2, 1.5f, true, true};
  all.alibi_per_batch = true;
  Variant per_batch{-1, -1, 0, true, false};
  per_batch.alibi_per_batch = true;
  const std::vector<std::pair<cases::Case, Variant>> list = {
      {cases::Case{1, 1, 3000, 2, 1, 64, false, DType::BF16}, {512, 0, 0, false, true}},
      {cases::Case{1, 3, 2600, 2, 2, 64, true, DType::F16}, {100, -1, 0, true, true}},
      {cases::Case{1, 2, 900, 4, 1, 128, false, DType::F16}, {-1, -1, 20, false, true}},
      {cases::Case{1, 200, 200, 2, 1, 64, false, DType::F16}, {8, 8, 0, false, false}},
      {cases::Case{1, 300, 300, 2, 1, 128, false, DType::BF16}, {40, 100, 0, false, false}},
      {cases::Case{1, 40, 10, 2, 1, 64, false, DType::F16}, {2, 0, 0, false, true}},
      {cases::Case{1, 40, 10, 2, 1, 64, true, DType::F16}, {0, 0, 0, false, false}},
      {cases::Case{2, 33, 65, 4, 2, 64, false, DType::F32}, {-1, -1, 1e4f, false, false}},
      {cases::Case{2, 33, 65, 4, 2, 64, true, DType::BF16}, {-1, -1, 0.5f, false, false}},
      {cases::Case{3, 17, 40, 4, 4, 64, true, DType::F16}, per_batch},
      {cases::Case{2, 20, 30, 4, 2, 64, false, DType::F16}, all},
  };
  check_variant_list(list, "kernels", config().seed + 53000);
}

// The serving layouts with variants: decode over a paged cache (a sequence without keys), GQA, per-batch slopes.
TEST_CASE("conformance variants: paged KV cache and varlen batches") {
  Variant cap_alibi{-1, -1, 30, true, false};
  cap_alibi.alibi_per_batch = true;
  Variant window_all{16, 0, 0, true, true};
  window_all.alibi_per_batch = true;
  const std::vector<ServingCase> list = {
      {true, {1}, {0, 17, 300}, 4, 1, 64, 16, true, DType::F16, {64, 0, 0, false, true}},
      {true, {4}, {33, 257}, 8, 2, 128, 32, true, DType::BF16, cap_alibi},
      {false, {5, 0, 64, 33}, {70, 9, 0, 33}, 8, 2, 128, 0, true, DType::BF16, window_all},
      {false, {100, 7}, {30, 200}, 2, 2, 64, 0, false, DType::F16, {10, 10, 5, false, false}},
  };
  const std::uint64_t seed = config().seed + 54000;
  run_on_every_path(
      list.size(), "variants (serving)", {"implements these variants yet", "kernel on this path"}, seed,
      [&](std::size_t i) { return list[i].name(); },
      [&](const Device& dev, Path path, std::size_t i) { return check_serving_variant(dev, path, list[i], seed + i); });
}

// The backward with variants on one path against the CPU reference backward, from the CPU forward's out and lse
// (out rounded to the dtype, as a forward stores it); returns the refusal or "".
std::string check_variant_backward(const Device& dev, Path path, const cases::Case& c, const Variant& var,
                                   std::uint64_t seed) {
  const Device cpu = Device::open(Backend::Cpu);
  const std::vector<float> slopes = alibi_slopes(var, c.batch, c.heads_q), sinks = sink_logits(c.heads_q, seed);
  const Shape qs = Shape::of(c.batch, c.seqlen_q, c.heads_q, c.head_dim), ks = Shape::of(c.batch, c.seqlen_k, c.heads_kv, c.head_dim);
  const Shape ls = Shape::of(c.batch, c.heads_q, c.seqlen_q);
  std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ull);
  const std::vector<float> dov = random_values(rng, c.dtype, qs.numel());
  struct Grads {
    std::vector<float> dq, dk, dv;
  };
  std::vector<float> outv, lsev;
  // The forward (CPU only), or the backward on device d and path p from the CPU forward's out and lse.
  auto run = [&](const Device& d, Path p, Grads* g) -> std::string {
    Problem pr = make_problem(d, c, seed);
    const Tensor ts = f32_tensor(d, slopes, slopes_shape(var, c.batch, c.heads_q));
    const Tensor tk = f32_tensor(d, sinks, Shape{1, {c.heads_q, 0, 0, 0}});
    const Options opt = variant_options(var, c.causal, p, &ts, &tk);
    if (!g) {
      attention_forward(pr.q.view, pr.k.view, pr.v.view, pr.out.view, &pr.lse.view, opt);
      outv = pr.out.read();
      lsev = pr.lse.read();
      return "";
    }
    const Tensor out = upload_floats(d, c.dtype, qs, outv), lse = upload_floats(d, DType::F32, ls, lsev);
    const Tensor dout = upload_floats(d, c.dtype, qs, dov);
    DevTensor dq = contiguous(d, c.dtype, qs), dk = contiguous(d, c.dtype, ks), dv = contiguous(d, c.dtype, ks);
    for (const DevTensor* t : {&dq, &dk, &dv}) poison(*t);
    try {
      attention_backward(pr.q.view, pr.k.view, pr.v.view, out, lse, dout, dq.view, dk.view, dv.view, opt);
    } catch (const Error& e) {
      if (e.code() == ErrorCode::Unsupported) return e.what();
      FAIL_CHECK("attention_backward threw: ", std::string(e.what()));
      return "threw";
    }
    *g = {dq.read(), dk.read(), dv.read()};
    return "";
  };
  Grads ref, got;
  run(cpu, Path::CpuReference, nullptr);
  if (std::string refusal = run(dev, path, &got); !refusal.empty()) return refusal;
  const std::string cpu_refusal = run(cpu, Path::CpuReference, &ref);
  REQUIRE_MESSAGE(cpu_refusal.empty(), "ran a backward the CPU reference refuses: ", cpu_refusal);
  for (auto [g, r, name] : {std::tuple{&got.dq, &ref.dq, "dq"}, {&got.dk, &ref.dk, "dk"}, {&got.dv, &ref.dv, "dv"}}) {
    std::int64_t non_finite = 0;
    for (float x : *g) non_finite += !std::isfinite(x);
    const double rel = cases::rel_l2_error(*g, *r);
    INFO(name, " rel_error ", rel);
    CHECK(non_finite == 0);
    CHECK(rel <= cases::grad_tolerance(c.dtype));
  }
  return "";
}

// The backward's variants on every backward path: windows that skip blocks of keys (dQ) and of rows (dK/dV) on both
// sides, rows whose window holds no key, softcap, ALiBi (per batch too), GQA, Sq != Sk both ways. Sinks have no
// backward yet (no dsinks output): every path refuses them with the reason.
TEST_CASE("conformance variants: the backward on every path") {
  Variant all{3, 2, 1.5f, true, false};
  all.alibi_per_batch = true;
  const std::vector<std::pair<cases::Case, Variant>> list = {
      {cases::Case{1, 70, 33, 4, 2, 64, true, DType::F16}, {5, 0, 0, false, false}},
      {cases::Case{1, 40, 300, 2, 1, 64, false, DType::BF16}, {16, 8, 0, false, false}},
      {cases::Case{1, 300, 260, 2, 1, 64, false, DType::F16}, {20, 20, 30, true, false}},
      {cases::Case{2, 33, 65, 4, 2, 64, false, DType::F16}, {-1, -1, 5, false, false}},
      {cases::Case{1, 17, 70, 4, 4, 128, true, DType::BF16}, {-1, -1, 0, true, false}},
      {cases::Case{2, 20, 30, 4, 2, 64, false, DType::F32}, all},
      {cases::Case{1, 20, 30, 2, 1, 64, true, DType::F32}, {4, 0, 0, false, true}},
  };
  const std::uint64_t seed = config().seed + 55000;
  run_on_every_path(
      list.size(), "variants (backward)", {"implements these variants yet", "no backward kernel"}, seed,
      [&](std::size_t i) { return list[i].first.name() + list[i].second.name(); },
      [&](const Device& dev, Path path, std::size_t i) {
        return check_variant_backward(dev, path, list[i].first, list[i].second, seed + i);
      });
}

// The backward of window, softcap and ALiBi on the CPU reference against central differences of its forward.
TEST_CASE("conformance variants: the CPU backward matches finite differences") {
  const Device cpu = Device::open(Backend::Cpu);
  const cases::Case c{1, 5, 7, 2, 1, 8, true, DType::F32};
  for (const Variant& var : {Variant{2, 1, 0, false, false}, Variant{-1, -1, 0.7f, false, false},
                             Variant{3, 0, 0, true, false}}) {
    INFO("variant", var.name());
    Problem p = make_problem(cpu, c, config().seed + 52000);
    const std::vector<float> slopes = alibi_slopes(c.heads_q);
    const Tensor ts = f32_tensor(cpu, slopes, Shape{1, {c.heads_q, 0, 0, 0}});
    Options opt;
    opt.causal = c.causal;
    opt.window_left = var.window_left;
    opt.window_right = var.window_right;
    opt.softcap = var.softcap;
    if (var.alibi) opt.alibi_slopes = &ts;
    attention_forward(p.q.view, p.k.view, p.v.view, p.out.view, &p.lse.view, opt);
    std::mt19937_64 rng(7);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> dov(p.qv.size());
    for (float& x : dov) x = normal(rng);
    const Tensor dout = f32_tensor(cpu, dov, p.q.view.shape());
    Tensor dq = Tensor::empty(cpu, DType::F32, p.q.view.shape()), dk = Tensor::empty(cpu, DType::F32, p.k.view.shape()),
           dv = Tensor::empty(cpu, DType::F32, p.v.view.shape());
    attention_backward(p.q.view, p.k.view, p.v.view, p.out.view, p.lse.view, dout, dq, dk, dv, opt);
    auto loss = [&](const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v) {
      const Direct r = direct(c, var, q, k, v, slopes, {}, 1.0f / std::sqrt(float(c.head_dim)));
      double l = 0;
      for (std::size_t i = 0; i < r.out.size(); ++i) l += double(r.out[i]) * dov[i];
      return l;
    };
    double worst = 0;
    for (int which = 0; which < 3; ++which) {
      std::vector<float> x[3] = {p.qv, p.kv, p.vv};
      std::vector<float> grad(x[which].size());
      (which == 0 ? dq : which == 1 ? dk : dv).download(grad.data(), grad.size() * 4);
      for (std::size_t i = 0; i < x[which].size(); ++i) {
        const float x0 = x[which][i];
        x[which][i] = x0 + 1e-2f;
        const double up = loss(x[0], x[1], x[2]);
        x[which][i] = x0 - 1e-2f;
        const double down = loss(x[0], x[1], x[2]);
        x[which][i] = x0;
        const double fd = (up - down) / 2e-2;
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
