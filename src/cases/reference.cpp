// The CPU reference backward and gradient error (reference.hpp).
#include "reference.hpp"

#include "values.hpp"

#include <flashtile/attention.hpp>
#include <flashtile/device.hpp>

#include <cmath>
#include <cstddef>
#include <limits>

namespace flashtile::cases {

namespace {

Tensor upload_f32(const Device& cpu, const std::vector<float>& v, const Shape& s) {
  Tensor t = Tensor::empty(cpu, DType::F32, s);
  t.upload(v.data(), v.size() * sizeof(float));
  return t;
}

}  // namespace

Gradients reference_backward(const Case& c, const BackwardInputs& in, const VariantSpec& var, std::uint64_t seed) {
  const Device cpu = Device::open(Backend::Cpu);
  const Shape qs = Shape::of(c.batch, c.seqlen_q, c.heads_q, c.head_dim);
  const Shape ks = Shape::of(c.batch, c.seqlen_k, c.heads_kv, c.head_dim);
  const Tensor q = upload_f32(cpu, in.q, qs), k = upload_f32(cpu, in.k, ks), v = upload_f32(cpu, in.v, ks),
               out = upload_f32(cpu, in.out, qs), dout = upload_f32(cpu, in.dout, qs),
               lse = upload_f32(cpu, in.lse, Shape::of(c.batch, c.heads_q, c.seqlen_q));
  Tensor dq = Tensor::empty(cpu, DType::F32, qs), dk = Tensor::empty(cpu, DType::F32, ks),
         dv = Tensor::empty(cpu, DType::F32, ks), dsinks = Tensor::empty(cpu, DType::F32, Shape{1, {c.heads_q, 0, 0, 0}});
  Options opt;
  opt.causal = c.causal;
  opt.scale = c.scale;
  const VariantTables tables(cpu, var, c.heads_q, seed);
  tables.apply(var, opt);
  if (var.sinks) opt.dsinks = &dsinks;
  attention_backward(q, k, v, out, lse, dout, dq, dk, dv, opt);
  return Gradients{download_floats(dq), download_floats(dk), download_floats(dv),
                   var.sinks ? download_floats(dsinks) : std::vector<float>{}};
}

Forward reference_forward(const Case& c, const std::vector<float>& q, const std::vector<float>& k,
                          const std::vector<float>& v, const VariantSpec& var, std::uint64_t seed) {
  const Device cpu = Device::open(Backend::Cpu);
  const Shape qs = Shape::of(c.batch, c.seqlen_q, c.heads_q, c.head_dim);
  const Shape ks = Shape::of(c.batch, c.seqlen_k, c.heads_kv, c.head_dim);
  Tensor out = Tensor::empty(cpu, DType::F32, qs), lse = Tensor::empty(cpu, DType::F32, Shape::of(c.batch, c.heads_q, c.seqlen_q));
  Options opt;
  opt.causal = c.causal;
  opt.scale = c.scale;
  const VariantTables tables(cpu, var, c.heads_q, seed);
  tables.apply(var, opt);
  attention_forward(upload_f32(cpu, q, qs), upload_f32(cpu, k, ks), upload_f32(cpu, v, ks), out, &lse, opt);
  return Forward{download_floats(out), download_floats(lse)};
}

std::vector<float> download_floats(const Tensor& t) {
  if (t.strides().dims != Strides::contiguous(t.shape()).dims)
    throw Error(ErrorCode::BadStride, "download_floats: the tensor must be contiguous");
  std::vector<std::byte> img(t.extent_bytes());
  t.download(img.data(), img.size());
  std::vector<float> out(static_cast<std::size_t>(t.shape().numel()));
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = get(img.data(), t.dtype(), static_cast<std::int64_t>(i));
  return out;
}

double rel_l2_error(const std::vector<float>& got, const std::vector<float>& want) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < got.size() && i < want.size(); ++i) {
    if (!std::isfinite(got[i])) return std::numeric_limits<double>::infinity();
    const double d = static_cast<double>(got[i]) - want[i];
    num += d * d;
    den += static_cast<double>(want[i]) * want[i];
  }
  if (got.size() != want.size()) return std::numeric_limits<double>::infinity();
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

}  // namespace flashtile::cases
