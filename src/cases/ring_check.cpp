// The simulated ring against full attention (ring_check.hpp).
#include "ring_check.hpp"

#include "reference.hpp"
#include "values.hpp"

#include <flashtile/attention.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace flashtile::cases {

namespace {

// Host values of a tensor, rounded to its dtype, and the tensor holding them on a device.
struct Filled {
  Tensor t;
  std::vector<float> host;
};

Filled random_tensor(const Device& dev, DType dt, const Shape& s, std::mt19937_64& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Filled f{Tensor::empty(dev, dt, s), std::vector<float>(std::size_t(s.numel()))};
  std::vector<std::byte> img(f.host.size() * dtype_size(dt));
  for (std::size_t i = 0; i < f.host.size(); ++i) {
    put(img.data(), dt, std::int64_t(i), normal(rng));
    f.host[i] = get(img.data(), dt, std::int64_t(i));
  }
  f.t.upload(img.data(), img.size());
  return f;
}

Tensor upload_f32(const Device& dev, const std::vector<float>& v, const Shape& s) {
  Tensor t = Tensor::empty(dev, DType::F32, s);
  t.upload(v.data(), v.size() * sizeof(float));
  return t;
}

template <class Call>
double ms_of(Call&& call) {
  const auto t0 = std::chrono::steady_clock::now();
  call();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

Tensor poisoned(const Device& dev, DType dt, const Shape& s) {
  Tensor t = Tensor::empty(dev, dt, s);
  std::vector<std::byte> img(t.extent_bytes(), kPoisonByte);
  t.upload(img.data(), img.size());
  return t;
}

// Each rank's shard of a global tensor, and the global tensor put back together from per-rank ones.
std::vector<Tensor> shard_all(const Tensor& global, const RingCase& rc) {
  const Shape& g = global.shape();
  std::vector<Tensor> local;
  for (int r = 0; r < rc.world; ++r) {
    local.push_back(Tensor::empty(global.device(), global.dtype(), Shape::of(g[0], g[1] / rc.world, g[2], g[3])));
    shard_sequence(local.back(), global, RingLayout{rc.world, r, rc.sharding});
  }
  return local;
}

std::vector<float> unshard_all(const std::vector<Tensor>& local, const RingCase& rc) {
  const Shape& l = local[0].shape();
  Tensor g = Tensor::empty(local[0].device(), local[0].dtype(), Shape::of(l[0], l[1] * rc.world, l[2], l[3]));
  for (int r = 0; r < rc.world; ++r) unshard_sequence(g, local[std::size_t(r)], RingLayout{rc.world, r, rc.sharding});
  return download_floats(g);
}

// LSE [B, H, L] per rank into [B, H, S] through ring_positions.
std::vector<float> unshard_lse(const std::vector<Tensor>& local, const RingCase& rc) {
  const Shape& l = local[0].shape();
  const std::int64_t S = l[2] * rc.world;
  std::vector<float> g(std::size_t(l[0] * l[1] * S));
  for (int r = 0; r < rc.world; ++r) {
    const std::vector<float> v = download_floats(local[std::size_t(r)]);
    const std::vector<std::int64_t> pos = ring_positions(RingLayout{rc.world, r, rc.sharding}, l[2]);
    for (std::int64_t bh = 0; bh < l[0] * l[1]; ++bh)
      for (std::int64_t i = 0; i < l[2]; ++i) g[std::size_t(bh * S + pos[std::size_t(i)])] = v[std::size_t(bh * l[2] + i)];
  }
  return g;
}

double lse_error(const std::vector<float>& got, const std::vector<float>& want) {
  double worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::isinf(want[i]) && got[i] == want[i]) continue;
    if (!std::isfinite(got[i])) return std::numeric_limits<double>::infinity();
    worst = std::max(worst, std::abs(double(got[i]) - want[i]) / std::max(1.0, std::abs(double(want[i]))));
  }
  return worst;
}

}  // namespace

RingCheck check_ring(const Device& dev, const RingCase& rc, std::uint64_t seed) {
  const Case& c = rc.c;
  const Shape qs = Shape::of(c.batch, c.seqlen_q, c.heads_q, c.head_dim);
  const Shape ks = Shape::of(c.batch, c.seqlen_q, c.heads_kv, c.head_dim);
  const Shape lq = Shape::of(c.batch, c.seqlen_q / rc.world, c.heads_q, c.head_dim);
  const Shape lk = Shape::of(c.batch, c.seqlen_q / rc.world, c.heads_kv, c.head_dim);
  const Shape ll = Shape::of(c.batch, c.heads_q, c.seqlen_q / rc.world);
  std::mt19937_64 rng(seed);
  const Filled q = random_tensor(dev, c.dtype, qs, rng), k = random_tensor(dev, c.dtype, ks, rng),
               v = random_tensor(dev, c.dtype, ks, rng);
  Options opt;
  opt.causal = c.causal;
  opt.scale = c.scale;

  RingCheck res;
  const std::vector<Tensor> ql = shard_all(q.t, rc), kl = shard_all(k.t, rc), vl = shard_all(v.t, rc);
  std::vector<Tensor> out, lse;
  for (int r = 0; r < rc.world; ++r) out.push_back(poisoned(dev, c.dtype, lq)), lse.push_back(poisoned(dev, DType::F32, ll));
  res.forward_ms = ms_of([&] { res.forward = ring_attention_forward_simulated(rc.sharding, ql, kl, vl, out, &lse, opt); });
  res.ok = true;
  std::vector<Tensor> dl, dq, dk, dv;
  Filled dout;
  if (rc.backward) {
    dout = random_tensor(dev, c.dtype, qs, rng);
    dl = shard_all(dout.t, rc);
    for (int r = 0; r < rc.world; ++r) {
      dq.push_back(poisoned(dev, c.dtype, lq));
      dk.push_back(poisoned(dev, c.dtype, lk));
      dv.push_back(poisoned(dev, c.dtype, lk));
    }
    res.backward_ms = ms_of(
        [&] { res.backward = ring_attention_backward_simulated(rc.sharding, ql, kl, vl, out, lse, dl, dq, dk, dv, opt); });
  }
  if (!rc.compare) return res;

  // The reference: the whole sequence on the CPU device, from the same rounded values.
  const Device cpu = Device::open(Backend::Cpu);
  const Tensor rq = upload_f32(cpu, q.host, qs), rk = upload_f32(cpu, k.host, ks), rv = upload_f32(cpu, v.host, ks);
  Tensor rout = Tensor::empty(cpu, DType::F32, qs), rlse = Tensor::empty(cpu, DType::F32, Shape::of(c.batch, c.heads_q, c.seqlen_q));
  attention_forward(rq, rk, rv, rout, &rlse, opt);
  std::vector<float> want_out = download_floats(rout);
  const std::vector<float> want_lse = download_floats(rlse);
  res.out_error = rel_l2_error(unshard_all(out, rc), want_out);
  res.lse_error = lse_error(unshard_lse(lse, rc), want_lse);
  res.out_tol = out_tolerance(c.dtype);
  res.lse_tol = lse_tolerance(c.dtype);
  res.ok = res.out_error <= res.out_tol && res.lse_error <= res.lse_tol;
  if (!rc.backward) return res;

  Case whole = c;
  whole.seqlen_k = c.seqlen_q;
  for (float& x : want_out) x = round_to(c.dtype, x);  // out as a forward stores it
  const Gradients want = reference_backward(whole, BackwardInputs{q.host, k.host, v.host, want_out, want_lse, dout.host});
  res.grad_error = {rel_l2_error(unshard_all(dq, rc), want.dq), rel_l2_error(unshard_all(dk, rc), want.dk),
                    rel_l2_error(unshard_all(dv, rc), want.dv)};
  res.grad_tol = grad_tolerance(c.dtype);
  for (double e : res.grad_error) res.ok = res.ok && e <= res.grad_tol;
  return res;
}

}  // namespace flashtile::cases
