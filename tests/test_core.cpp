// Unit tests of the core: 16-bit conversions, names, and the CPU reference against a naive materialized softmax
// and hand-worked causal masks.
#include <doctest/doctest.h>

#include "common.hpp"
#include "test_config.hpp"

#include <cmath>
#include <limits>

using namespace flashtile;
using namespace flashtile::testing;

TEST_CASE("f16 and bf16 conversions round to nearest even and keep specials") {
  CHECK(float_to_f16(1.0f) == 0x3C00);
  CHECK(float_to_f16(-2.0f) == 0xC000);
  CHECK(float_to_f16(65504.0f) == 0x7BFF);
  CHECK(float_to_f16(65520.0f) == 0x7C00);                 // rounds to inf
  CHECK(float_to_f16(1.0f + 1.0f / 2048) == 0x3C00);       // halfway, ties to even
  CHECK(float_to_f16(1.0f + 3.0f / 2048) == 0x3C02);       // halfway, ties to even (up)
  CHECK(float_to_f16(5.9604645e-8f) == 0x0001);            // smallest subnormal
  CHECK(float_to_f16(std::numeric_limits<float>::infinity()) == 0x7C00);
  CHECK(std::isnan(f16_to_float(float_to_f16(std::numeric_limits<float>::quiet_NaN()))));
  CHECK(f16_to_float(0x0001) == doctest::Approx(5.9604645e-8f));
  for (std::uint32_t h = 0; h < 0x7C00; h += 7) CHECK(float_to_f16(f16_to_float(static_cast<std::uint16_t>(h))) == h);
  CHECK(float_to_bf16(1.0f) == 0x3F80);
  CHECK(float_to_bf16(1.0f + 1.0f / 256) == 0x3F80);       // halfway, ties to even
  CHECK(float_to_bf16(1.0f + 3.0f / 256) == 0x3F82);
  CHECK(std::isnan(bf16_to_float(float_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
  CHECK(bf16_to_float(0xC040) == -3.0f);
}

TEST_CASE("names parse back") {
  for (Path p : {Path::CpuReference, Path::CudaSm80, Path::CudaSm90, Path::VulkanPortable, Path::VulkanCoopmat,
                 Path::VulkanCoopmat2})
    CHECK(parse_path(to_string(p)) == p);
  for (DType d : {DType::F16, DType::BF16, DType::F32}) CHECK(parse_dtype(to_string(d)) == d);
  CHECK(parse_backend("vulkan") == Backend::Vulkan);
}

namespace {
// softmax(scale QK^T + mask) V with the whole score matrix materialized: independent of the reference's loop.
std::vector<double> naive(const Problem& p, double scale, std::vector<double>& lse) {
  const auto& c = p.c;
  const std::int64_t D = c.head_dim, G = c.heads_q / c.heads_kv;
  std::vector<double> out(static_cast<std::size_t>(c.batch * c.seqlen_q * c.heads_q * D), 0.0);
  lse.assign(static_cast<std::size_t>(c.batch * c.heads_q * c.seqlen_q), 0.0);
  for (std::int64_t b = 0; b < c.batch; ++b)
    for (std::int64_t h = 0; h < c.heads_q; ++h) {
      std::vector<double> S(static_cast<std::size_t>(c.seqlen_q * c.seqlen_k));
      for (std::int64_t i = 0; i < c.seqlen_q; ++i)
        for (std::int64_t j = 0; j < c.seqlen_k; ++j) {
          double dot = 0;
          for (std::int64_t d = 0; d < D; ++d)
            dot += double(p.qv[std::size_t(((b * c.seqlen_q + i) * c.heads_q + h) * D + d)]) *
                   p.kv[std::size_t(((b * c.seqlen_k + j) * c.heads_kv + h / G) * D + d)];
          const bool masked = c.causal && j > i + c.seqlen_k - c.seqlen_q;
          S[std::size_t(i * c.seqlen_k + j)] = masked ? -INFINITY : dot * scale;
        }
      for (std::int64_t i = 0; i < c.seqlen_q; ++i) {
        double m = -INFINITY, l = 0;
        for (std::int64_t j = 0; j < c.seqlen_k; ++j) m = std::max(m, S[std::size_t(i * c.seqlen_k + j)]);
        double& L = lse[std::size_t((b * c.heads_q + h) * c.seqlen_q + i)];
        if (std::isinf(m)) {
          L = -INFINITY;
          continue;
        }
        for (std::int64_t j = 0; j < c.seqlen_k; ++j) l += std::exp(S[std::size_t(i * c.seqlen_k + j)] - m);
        L = m + std::log(l);
        for (std::int64_t j = 0; j < c.seqlen_k; ++j) {
          const double w = std::exp(S[std::size_t(i * c.seqlen_k + j)] - m) / l;
          for (std::int64_t d = 0; d < D; ++d)
            out[std::size_t(((b * c.seqlen_q + i) * c.heads_q + h) * D + d)] +=
                w * p.vv[std::size_t(((b * c.seqlen_k + j) * c.heads_kv + h / G) * D + d)];
        }
      }
    }
  return out;
}
}  // namespace

TEST_CASE("the CPU reference matches a naive materialized softmax") {
  const Device cpu = Device::open(Backend::Cpu);
  const cases::Case shapes[] = {{2, 9, 13, 4, 2, 16, true, DType::F32, false, true},
                                {1, 13, 5, 2, 1, 8, true, DType::F32, false, true},   // Sq > Sk: masked rows
                                {1, 6, 6, 3, 3, 24, false, DType::F32, false, true}};
  for (const auto& c : shapes) {
    INFO(c.name());
    Problem p = make_problem(cpu, c, config().seed);
    const float scale = 0.3f;
    const Reference ref = reference(p, scale);
    std::vector<double> lse;
    const std::vector<double> want = naive(p, scale, lse);
    for (std::size_t i = 0; i < want.size(); ++i) CHECK(ref.out[i] == doctest::Approx(want[i]).epsilon(1e-5));
    for (std::size_t i = 0; i < lse.size(); ++i) {
      if (std::isinf(lse[i])) CHECK((std::isinf(ref.lse[i]) && ref.lse[i] < 0));
      else CHECK(ref.lse[i] == doctest::Approx(lse[i]).epsilon(1e-5));
    }
  }
}

TEST_CASE("causal masks align to the bottom-right; rows with no key give 0 and -inf") {
  // Sq = 3, Sk = 2, causal: row i sees keys j <= i - 1, so row 0 sees none, row 1 sees key 0, row 2 both.
  const Device cpu = Device::open(Backend::Cpu);
  // One meaningful coordinate, padded to head_dim 8 with zeros (head dims are multiples of 8).
  std::vector<float> q(3, 1.0f), k = {0.5f, -1.0f}, v = {2.0f, 6.0f}, lse(3, 123.0f);
  std::vector<float> q8(24, 0.0f), k8(16, 0.0f), v8(16, 0.0f), o8(24, 123.0f);
  for (int i = 0; i < 3; ++i) q8[std::size_t(i * 8)] = q[std::size_t(i)];
  for (int j = 0; j < 2; ++j) {
    k8[std::size_t(j * 8)] = k[std::size_t(j)];
    v8[std::size_t(j * 8)] = v[std::size_t(j)];
  }
  auto w8 = [&](std::vector<float>& x, std::int64_t s) {
    return Tensor::wrap_host(cpu, x.data(), DType::F32, Shape::of(1, s, 1, 8), Strides::contiguous(Shape::of(1, s, 1, 8)));
  };
  Tensor tq = w8(q8, 3), tk = w8(k8, 2), tv = w8(v8, 2), to = w8(o8, 3);
  Tensor tl = Tensor::wrap_host(cpu, lse.data(), DType::F32, Shape::of(1, 1, 3), Strides{{3, 3, 1}});
  Options opt;
  opt.causal = true;
  opt.scale = 1.0f;
  const Result r = attention_forward(tq, tk, tv, to, &tl, opt);
  CHECK(r.path == Path::CpuReference);
  CHECK(o8[0] == 0.0f);
  CHECK((std::isinf(lse[0]) && lse[0] < 0));
  CHECK(o8[8] == doctest::Approx(2.0));                         // one key: its value
  CHECK(lse[1] == doctest::Approx(0.5));                        // log(exp(0.5))
  const double w0 = std::exp(0.5), w1 = std::exp(-1.0);
  CHECK(o8[16] == doctest::Approx((2.0 * w0 + 6.0 * w1) / (w0 + w1)));
  CHECK(lse[2] == doctest::Approx(std::log(w0 + w1)));
}

TEST_CASE("the CPU reference ignores the reduced-precision permission") {
  const Device cpu = Device::open(Backend::Cpu);
  const cases::Case c{1, 17, 33, 2, 1, 16, true, DType::F32, false, true};
  Problem p = make_problem(cpu, c, config().seed);
  Options opt;
  opt.causal = true;
  const Result plain = attention_forward(p.q.view, p.k.view, p.v.view, p.out.view, nullptr, opt);
  const std::vector<float> want = p.out.read();
  opt.allow_reduced_precision_accumulation = true;
  poison(p.out);
  const Result allowed = attention_forward(p.q.view, p.k.view, p.v.view, p.out.view, nullptr, opt);
  CHECK_FALSE(plain.reduced_precision);
  CHECK_FALSE(allowed.reduced_precision);
  CHECK(allowed.kernel == plain.kernel);
  CHECK(p.out.read() == want);
}
