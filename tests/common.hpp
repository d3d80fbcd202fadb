// Test helpers: random inputs, poisoned outputs, the CPU oracle, error norms. Shared by the suites.
#pragma once

#include "cases.hpp"
#include "constants.hpp"
#include "values.hpp"

#include <flashtile/flashtile.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace flashtile::testing {

using cases::get;
using cases::kPoisonByte;
using cases::put;
using cases::round_to;

// A tensor view on a device plus the base allocation it lives in, so tests can fill, poison and inspect the
// whole allocation (padding included) with one upload/download.
struct DevTensor {
  Tensor base, view;
  std::int64_t offset = 0;  // elements from base element 0 to view element 0

  // Logical [d0, d1, d2, d3] contiguous values <-> strided positions in a host image of the base.
  std::vector<std::byte> image() const {
    std::vector<std::byte> img(base.extent_bytes());
    base.download(img.data(), img.size());
    return img;
  }
  template <class F>
  void for_each(F&& f) const {  // f(logical index, element index in base)
    const Shape& s = view.shape();
    const Strides& st = view.strides();
    std::int64_t li = 0;
    std::array<std::int64_t, 4> d{1, 1, 1, 1};
    for (int i = 0; i < s.rank; ++i) d[static_cast<std::size_t>(4 - s.rank + i)] = s[i];
    std::array<std::int64_t, 4> t{0, 0, 0, 0};
    for (int i = 0; i < s.rank; ++i) t[static_cast<std::size_t>(4 - s.rank + i)] = st[i];
    for (std::int64_t a = 0; a < d[0]; ++a)
      for (std::int64_t b = 0; b < d[1]; ++b)
        for (std::int64_t c = 0; c < d[2]; ++c)
          for (std::int64_t e = 0; e < d[3]; ++e) f(li++, offset + a * t[0] + b * t[1] + c * t[2] + e * t[3]);
  }
  std::vector<float> read() const {
    const auto img = image();
    std::vector<float> out(static_cast<std::size_t>(view.shape().numel()));
    for_each([&](std::int64_t li, std::int64_t ei) { out[static_cast<std::size_t>(li)] = get(img.data(), view.dtype(), ei); });
    return out;
  }
};

inline DevTensor contiguous(const Device& dev, DType dt, const Shape& s) {
  Tensor t = Tensor::empty(dev, dt, s);
  return DevTensor{t, t, 0};
}

// Fills every byte of a base allocation with kPoisonByte (a NaN in every dtype).
inline void poison(const DevTensor& t) {
  std::vector<std::byte> img(t.base.extent_bytes(), kPoisonByte);
  Tensor b = t.base;
  b.upload(img.data(), img.size());
}

// Host values <-> whole tensors (contiguous, any dtype; 16-bit values rounded as the dtype stores them).
inline Tensor upload_floats(const Device& dev, DType dt, const Shape& s, const std::vector<float>& values) {
  Tensor t = Tensor::empty(dev, dt, s);
  std::vector<std::byte> img(t.extent_bytes());
  for (std::size_t i = 0; i < values.size(); ++i) put(img.data(), dt, std::int64_t(i), values[i]);
  t.upload(img.data(), img.size());
  return t;
}

inline Tensor upload_ints(const Device& dev, const Shape& s, const std::vector<std::int32_t>& values) {
  Tensor t = Tensor::empty(dev, DType::I32, s);
  t.upload(values.data(), values.size() * sizeof(std::int32_t));
  return t;
}

inline std::vector<float> download_all(const Tensor& t) {
  std::vector<std::byte> img(t.extent_bytes());
  t.download(img.data(), img.size());
  std::vector<float> out(std::size_t(t.shape().numel()));
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = get(img.data(), t.dtype(), std::int64_t(i));
  return out;
}

inline std::vector<float> random_values(std::mt19937_64& rng, DType dt, std::int64_t n) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (float& x : v) x = round_to(dt, normal(rng));
  return v;
}

struct Problem {
  cases::Case c;
  DevTensor q, k, v, out, lse;
  std::vector<float> qv, kv, vv;  // logical contiguous values, already rounded to the dtype
};

// Input distributions other than normal(0,1): q scaled (0: every score equal, uniform attention), v shifted; every
// k_spike_every-th key row (if > 0) scaled by k_spike_scale, so a row's running max jumps between key blocks;
// qk_anti > 0: q = +qk_anti and k = -qk_anti everywhere, every logit equal and far below zero;
// k_step_log2 > 0: q = 1 and k = 0 everywhere but key row 3, whose logit (softmax scale 1/sqrt(D)) is k_step_log2
// in the exp2 domain (to the dtype's rounding): one exact step of the running max, the same in every row.
struct Inputs {
  float q_scale = 1.0f, v_offset = 0.0f;
  int k_spike_every = 0;
  float k_spike_scale = 12.0f;
  float qk_anti = 0.0f;
  float k_step_log2 = 0.0f;
  // kv_tail > 0: k and v are views of Sk keys at the start of buffers of Sk + kv_tail keys a batch, the tail NaN.
  std::int64_t kv_tail = 0;
  // nan_q_row >= 0: q[0, nan_q_row, 0, 0] is NaN (that row's output and LSE must be NaN, every other row's finite).
  std::int64_t nan_q_row = -1;
};

// Builds a case's tensors on `dev` with fresh normal(0,1) inputs from `seed` (or as `in` says); out and lse are
// poisoned.
inline Problem make_problem(const Device& dev, const cases::Case& c, std::uint64_t seed, const Inputs& in = {}) {
  Problem p;
  p.c = c;
  const DType dt = c.dtype;
  const Shape qs = Shape::of(c.batch, c.seqlen_q, c.heads_q, c.head_dim);
  const Shape ks = Shape::of(c.batch, c.seqlen_k, c.heads_kv, c.head_dim);
  if (c.packed_qkv) {
    // One [B, S, 3H, D] buffer; q, k, v interleave per token. out has 8 padding elements after each head row.
    const std::int64_t B = c.batch, S = c.seqlen_q, H = c.heads_q, D = c.head_dim;
    Tensor qkv = Tensor::empty(dev, dt, Shape::of(B, S, 3 * H, D));
    const Strides st{{S * 3 * H * D, 3 * H * D, D, 1}};
    p.q = {qkv, qkv.as_strided(qs, st, 0), 0};
    p.k = {qkv, qkv.as_strided(ks, st, H * D), H * D};
    p.v = {qkv, qkv.as_strided(ks, st, 2 * H * D), 2 * H * D};
    Tensor ob = Tensor::empty(dev, dt, Shape::of(B, S, H, D + 8));
    p.out = {ob, ob.as_strided(qs, Strides{{S * H * (D + 8), H * (D + 8), D + 8, 1}}, 0), 0};
  } else if (c.elem_offset) {
    // Each tensor a contiguous view starting elem_offset elements into a slightly larger buffer.
    auto shifted = [&](const Shape& s) {
      Tensor b = Tensor::empty(dev, dt, Shape::of(1, 1, 1, s.numel() + c.elem_offset));
      return DevTensor{b, b.as_strided(s, Strides::contiguous(s), c.elem_offset), c.elem_offset};
    };
    p.q = shifted(qs);
    p.k = shifted(ks);
    p.v = shifted(ks);
    p.out = shifted(qs);
  } else if (in.kv_tail > 0) {
    const Shape bs = Shape::of(c.batch, c.seqlen_k + in.kv_tail, c.heads_kv, c.head_dim);
    auto tailed = [&] {
      Tensor b = Tensor::empty(dev, dt, bs);
      return DevTensor{b, b.as_strided(ks, Strides::contiguous(bs), 0), 0};
    };
    p.q = contiguous(dev, dt, qs);
    p.k = tailed();
    p.v = tailed();
    p.out = contiguous(dev, dt, qs);
  } else {
    p.q = contiguous(dev, dt, qs);
    p.k = contiguous(dev, dt, ks);
    p.v = contiguous(dev, dt, ks);
    p.out = contiguous(dev, dt, qs);
  }
  p.lse = contiguous(dev, DType::F32, Shape::of(c.batch, c.heads_q, c.seqlen_q));

  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  auto fill = [&](DevTensor& t, std::vector<float>& values, float scale, float offset) {
    values.resize(static_cast<std::size_t>(t.view.shape().numel()));
    for (float& x : values) x = round_to(dt, normal(rng) * scale + offset);
  };
  fill(p.q, p.qv, in.q_scale, 0.0f);
  fill(p.k, p.kv, 1.0f, 0.0f);
  if (in.k_spike_every > 0) {
    const std::int64_t row = c.heads_kv * c.head_dim;  // logical [B, Sk, Hkv, D]
    for (std::size_t i = 0; i < p.kv.size(); ++i)
      if (static_cast<std::int64_t>(i) / row % c.seqlen_k % in.k_spike_every == 3)
        p.kv[i] = round_to(dt, p.kv[i] * in.k_spike_scale);
  }
  if (in.qk_anti > 0.0f) {
    for (float& x : p.qv) x = round_to(dt, in.qk_anti);
    for (float& x : p.kv) x = round_to(dt, -in.qk_anti);
  }
  if (in.k_step_log2 > 0.0f) {
    const std::int64_t row = c.heads_kv * c.head_dim;
    const float k3 = in.k_step_log2 / (std::sqrt(static_cast<float>(c.head_dim)) * detail::kLog2e);
    for (float& x : p.qv) x = 1.0f;
    for (std::size_t i = 0; i < p.kv.size(); ++i)
      p.kv[i] = static_cast<std::int64_t>(i) / row % c.seqlen_k == 3 ? round_to(dt, k3) : 0.0f;
  }
  fill(p.v, p.vv, 1.0f, in.v_offset);
  if (in.nan_q_row >= 0) p.qv[static_cast<std::size_t>(in.nan_q_row * c.heads_q * c.head_dim)] = std::numeric_limits<float>::quiet_NaN();
  // Write the three inputs into their base images (one image when packed), then upload.
  std::vector<std::byte> img;
  const Tensor* current = nullptr;
  auto flush = [&] {
    if (current) {
      Tensor b = *current;
      b.upload(img.data(), img.size());
    }
  };
  for (auto [t, values] : {std::pair{&p.q, &p.qv}, {&p.k, &p.kv}, {&p.v, &p.vv}}) {
    if (!current || current->storage() != t->base.storage()) {
      flush();
      current = &t->base;
      img.assign(t->base.extent_bytes(), in.kv_tail > 0 ? kPoisonByte : std::byte{0});  // NaN past Sk
    }
    t->for_each([&](std::int64_t li, std::int64_t ei) { put(img.data(), dt, ei, (*values)[static_cast<std::size_t>(li)]); });
  }
  flush();
  poison(p.out);
  poison(p.lse);
  return p;
}

// The oracle: the CPU reference on f32 copies of the same (rounded) inputs; output and LSE in f32.
struct Reference {
  std::vector<float> out, lse;
};
inline Reference reference(const Problem& p, float scale) {
  const Device cpu = Device::open(Backend::Cpu);
  const auto& c = p.c;
  auto up = [&](const std::vector<float>& v, const Shape& s) {
    Tensor t = Tensor::empty(cpu, DType::F32, s);
    t.upload(v.data(), v.size() * 4);
    return t;
  };
  const Shape qs = Shape::of(c.batch, c.seqlen_q, c.heads_q, c.head_dim);
  const Shape ks = Shape::of(c.batch, c.seqlen_k, c.heads_kv, c.head_dim);
  Tensor q = up(p.qv, qs), k = up(p.kv, ks), v = up(p.vv, ks);
  Tensor o = Tensor::empty(cpu, DType::F32, qs);
  Tensor l = Tensor::empty(cpu, DType::F32, Shape::of(c.batch, c.heads_q, c.seqlen_q));
  Options opt;
  opt.scale = scale;
  opt.causal = c.causal;
  attention_forward(q, k, v, o, &l, opt);
  Reference r;
  r.out.resize(static_cast<std::size_t>(qs.numel()));
  r.lse.resize(static_cast<std::size_t>(l.shape().numel()));
  o.download(r.out.data(), r.out.size() * 4);
  l.download(r.lse.data(), r.lse.size() * 4);
  return r;
}

using cases::lse_tolerance;
using cases::out_tolerance;
using cases::reduced_out_tolerance;

struct Comparison {
  double rel_error = 0;     // ||out - ref|| / ||ref||
  double lse_error = 0;     // max |lse - ref| / max(1, |ref|) over rows with a visible key
  std::int64_t nan_out = 0;     // NaN or inf in out
  std::int64_t bad_masked = 0;  // rows with no visible key whose out != 0 or lse != -inf
  std::int64_t padding_touched = 0;  // elements of out's allocation outside the view that were written
};

inline Comparison compare(const Problem& p, const Reference& ref, bool with_lse) {
  Comparison cmp;
  const std::vector<float> out = p.out.read();
  double num = 0, den = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (!std::isfinite(out[i])) ++cmp.nan_out;
    const double d = static_cast<double>(out[i]) - ref.out[i];
    num += d * d;
    den += static_cast<double>(ref.out[i]) * ref.out[i];
  }
  cmp.rel_error = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  if (cmp.nan_out) cmp.rel_error = std::numeric_limits<double>::infinity();
  const std::int64_t D = p.c.head_dim;
  if (with_lse) {
    const std::vector<float> lse = p.lse.read();
    for (std::size_t i = 0; i < lse.size(); ++i) {
      if (std::isinf(ref.lse[i]) && ref.lse[i] < 0) {
        if (!(std::isinf(lse[i]) && lse[i] < 0)) ++cmp.bad_masked;
        continue;
      }
      const double e = std::abs(static_cast<double>(lse[i]) - ref.lse[i]) / std::max(1.0, std::abs(double(ref.lse[i])));
      cmp.lse_error = std::isfinite(e) ? std::max(cmp.lse_error, e) : std::numeric_limits<double>::infinity();
    }
    // Fully masked rows must give exactly zero output. lse index (b, h, i) -> out rows (b, i, h, :).
    const auto& c = p.c;
    for (std::int64_t b = 0; b < c.batch; ++b)
      for (std::int64_t h = 0; h < c.heads_q; ++h)
        for (std::int64_t i = 0; i < c.seqlen_q; ++i) {
          if (!std::isinf(ref.lse[static_cast<std::size_t>((b * c.heads_q + h) * c.seqlen_q + i)])) continue;
          for (std::int64_t d = 0; d < D; ++d)
            if (out[static_cast<std::size_t>(((b * c.seqlen_q + i) * c.heads_q + h) * D + d)] != 0.0f) {
              ++cmp.bad_masked;
              break;
            }
        }
  }
  // Padding outside the view keeps its poison.
  if (p.out.base.storage() != p.out.view.storage() || p.out.base.extent_bytes() != p.out.view.extent_bytes()) {
    const auto img = p.out.image();
    std::vector<char> inside(img.size(), 0);
    const std::size_t es = dtype_size(p.c.dtype);
    p.out.for_each([&](std::int64_t, std::int64_t ei) { std::memset(&inside[static_cast<std::size_t>(ei) * es], 1, es); });
    for (std::size_t i = 0; i < img.size(); ++i)
      if (!inside[i] && img[i] != kPoisonByte) ++cmp.padding_touched;
  }
  return cmp;
}

}  // namespace flashtile::testing
