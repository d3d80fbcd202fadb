// The CPU backend: a plain reference (double accumulation, no tiling), forward and backward, the oracle of every test
// and a real, slow fallback. Work is split over (batch, head) pairs across threads (the backward: (batch, kv head),
// so each thread owns the dK and dV it sums over the group).
#include "backend.hpp"
#include "checked.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <thread>

namespace flashtile::detail {

namespace {

constexpr std::size_t kAlignment = 64;  // bytes; a cache line, and what aligned_alloc must be given a multiple of

double load(const std::byte* base, DType dt, std::int64_t index) {
  switch (dt) {
    case DType::F32: {
      float f;
      std::memcpy(&f, base + index * 4, 4);
      return f;
    }
    case DType::F16: {
      std::uint16_t h;
      std::memcpy(&h, base + index * 2, 2);
      return f16_to_float(h);
    }
    case DType::BF16: {
      std::uint16_t h;
      std::memcpy(&h, base + index * 2, 2);
      return bf16_to_float(h);
    }
  }
  return 0;
}

void store(std::byte* base, DType dt, std::int64_t index, double value) {
  const float f = static_cast<float>(value);
  if (dt == DType::F32) {
    std::memcpy(base + index * 4, &f, 4);
  } else {
    const std::uint16_t h = dt == DType::F16 ? float_to_f16(f) : float_to_bf16(f);
    std::memcpy(base + index * 2, &h, 2);
  }
}

const std::byte* ptr(const TensorArg& t) {
  return reinterpret_cast<const std::byte*>(t.buf.handle) + t.buf.offset;
}

// Scratch for one (batch, head): K and V of its kv head widened to double once, then every query row.
struct HeadScratch {
  std::vector<double> k, v, q, scores, acc;
  explicit HeadScratch(const AttnArgs& a)
      : k(static_cast<std::size_t>(a.seqlen_k * a.head_dim)), v(k.size()), q(static_cast<std::size_t>(a.head_dim)),
        scores(static_cast<std::size_t>(a.seqlen_k)), acc(q.size()) {}
};

// One (batch, head): every query row, exact softmax over the keys it may see.
void reference_head(const AttnArgs& a, std::int64_t b, std::int64_t h, HeadScratch& s) {
  const std::int64_t D = a.head_dim, Sq = a.seqlen_q, Sk = a.seqlen_k;
  const std::int64_t hk = h / (a.heads_q / a.heads_kv);
  const std::byte *q = ptr(a.q), *k = ptr(a.k), *v = ptr(a.v);
  auto* o = const_cast<std::byte*>(ptr(a.o));
  const auto& qs = a.q.strides;
  const auto& ks = a.k.strides;
  const auto& vs = a.v.strides;
  const auto& os = a.o.strides;
  const auto at = [](std::int64_t i) { return static_cast<std::size_t>(i); };
  for (std::int64_t j = 0; j < Sk; ++j)
    for (std::int64_t d = 0; d < D; ++d) {
      s.k[at(j * D + d)] = load(k, a.k.dtype, b * ks[0] + j * ks[1] + hk * ks[2] + d);
      s.v[at(j * D + d)] = load(v, a.v.dtype, b * vs[0] + j * vs[1] + hk * vs[2] + d);
    }
  for (std::int64_t i = 0; i < Sq; ++i) {
    // Causal, bottom-right aligned: row i sees keys j <= i + Sk - Sq.
    const std::int64_t visible = a.causal ? std::clamp<std::int64_t>(i + Sk - Sq + 1, 0, Sk) : Sk;
    for (std::int64_t d = 0; d < D; ++d) s.q[at(d)] = load(q, a.q.dtype, b * qs[0] + i * qs[1] + h * qs[2] + d);
    double m = -std::numeric_limits<double>::infinity();
    for (std::int64_t j = 0; j < visible; ++j) {
      const double* kr = &s.k[at(j * D)];
      double dot = 0;
      for (std::int64_t d = 0; d < D; ++d) dot += s.q[at(d)] * kr[d];
      s.scores[at(j)] = dot * static_cast<double>(a.scale);
      m = std::max(m, s.scores[at(j)]);
    }
    std::fill(s.acc.begin(), s.acc.end(), 0.0);
    double l = 0;
    for (std::int64_t j = 0; j < visible; ++j) {
      const double p = std::exp(s.scores[at(j)] - m);
      l += p;
      const double* vr = &s.v[at(j * D)];
      for (std::int64_t d = 0; d < D; ++d) s.acc[at(d)] += p * vr[d];
    }
    const std::int64_t orow = b * os[0] + i * os[1] + h * os[2];
    for (std::int64_t d = 0; d < D; ++d) store(o, a.o.dtype, orow + d, visible ? s.acc[at(d)] / l : 0.0);
    if (a.has_lse) {
      auto* lse = reinterpret_cast<float*>(const_cast<std::byte*>(ptr(a.lse)));
      lse[(b * a.heads_q + h) * Sq + i] =
          visible ? static_cast<float>(m + std::log(l)) : -std::numeric_limits<float>::infinity();
    }
  }
}


// The backward of one kv head of one batch: every query head of its group and every row, from the given out and lse
// (as the kernels use them): P = exp(S·scale - lse), Delta = rowsum(dO ∘ O), dS = P ∘ (dO·Vᵀ - Delta),
// dV = Σ Pᵀ·dO, dK = scale · Σ dSᵀ·Q, dQ = scale · dS·K. Rows with lse = -inf saw no key: zero gradients.
void reference_backward_head(const BwdArgs& g, std::int64_t b, std::int64_t hk, HeadScratch& s,
                             std::vector<double>& dk, std::vector<double>& dv, std::vector<double>& dq) {
  const AttnArgs& a = g.fwd;
  const std::int64_t D = a.head_dim, Sq = a.seqlen_q, Sk = a.seqlen_k, group = a.heads_q / a.heads_kv;
  const auto at = [](std::int64_t i) { return static_cast<std::size_t>(i); };
  const auto& ks = a.k.strides;
  const auto& vs = a.v.strides;
  for (std::int64_t j = 0; j < Sk; ++j)
    for (std::int64_t d = 0; d < D; ++d) {
      s.k[at(j * D + d)] = load(ptr(a.k), a.k.dtype, b * ks[0] + j * ks[1] + hk * ks[2] + d);
      s.v[at(j * D + d)] = load(ptr(a.v), a.v.dtype, b * vs[0] + j * vs[1] + hk * vs[2] + d);
    }
  std::fill(dk.begin(), dk.end(), 0.0);
  std::fill(dv.begin(), dv.end(), 0.0);
  const double scale = a.scale;
  const auto* lse = reinterpret_cast<const float*>(ptr(a.lse));
  for (std::int64_t h = hk * group; h < (hk + 1) * group; ++h)
    for (std::int64_t i = 0; i < Sq; ++i) {
      const std::int64_t visible = a.causal ? std::clamp<std::int64_t>(i + Sk - Sq + 1, 0, Sk) : Sk;
      const double l = lse[(b * a.heads_q + h) * Sq + i];
      std::fill(dq.begin(), dq.end(), 0.0);
      if (visible > 0 && l != -std::numeric_limits<double>::infinity()) {
        double delta = 0;
        for (std::int64_t d = 0; d < D; ++d) {
          s.q[at(d)] = load(ptr(a.q), a.q.dtype, b * a.q.strides[0] + i * a.q.strides[1] + h * a.q.strides[2] + d);
          s.acc[at(d)] = load(ptr(g.dout), g.dout.dtype,
                              b * g.dout.strides[0] + i * g.dout.strides[1] + h * g.dout.strides[2] + d);
          delta += s.acc[at(d)] *
                   load(ptr(a.o), a.o.dtype, b * a.o.strides[0] + i * a.o.strides[1] + h * a.o.strides[2] + d);
        }
        for (std::int64_t j = 0; j < visible; ++j) {
          const double *kr = &s.k[at(j * D)], *vr = &s.v[at(j * D)];
          double dot = 0, dp = 0;
          for (std::int64_t d = 0; d < D; ++d) {
            dot += s.q[at(d)] * kr[d];
            dp += s.acc[at(d)] * vr[d];
          }
          const double p = std::exp(dot * scale - l);
          const double ds = p * (dp - delta);
          for (std::int64_t d = 0; d < D; ++d) {
            dv[at(j * D + d)] += p * s.acc[at(d)];
            dk[at(j * D + d)] += ds * s.q[at(d)] * scale;
            dq[at(d)] += ds * kr[d] * scale;
          }
        }
      }
      auto* out = const_cast<std::byte*>(ptr(g.dq));
      const std::int64_t row = b * g.dq.strides[0] + i * g.dq.strides[1] + h * g.dq.strides[2];
      for (std::int64_t d = 0; d < D; ++d) store(out, g.dq.dtype, row + d, dq[at(d)]);
    }
  for (std::int64_t j = 0; j < Sk; ++j) {
    const std::int64_t krow = b * g.dk.strides[0] + j * g.dk.strides[1] + hk * g.dk.strides[2];
    const std::int64_t vrow = b * g.dv.strides[0] + j * g.dv.strides[1] + hk * g.dv.strides[2];
    for (std::int64_t d = 0; d < D; ++d) {
      store(const_cast<std::byte*>(ptr(g.dk)), g.dk.dtype, krow + d, dk[at(j * D + d)]);
      store(const_cast<std::byte*>(ptr(g.dv)), g.dv.dtype, vrow + d, dv[at(j * D + d)]);
    }
  }
}

// Runs work(item, scratch...) for item in [0, items) over the hardware's threads.
template <class Work>
void parallel_for(std::int64_t items, Work work) {
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  const auto nthreads = static_cast<unsigned>(std::min<std::int64_t>(items, hw));
  std::atomic<std::int64_t> next{0};
  auto worker = [&] { work(next); };
  std::vector<std::thread> threads;
  for (unsigned t = 1; t < nthreads; ++t) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
}

void reference_attention(const AttnArgs& a) {
  const std::int64_t pairs = a.batch * a.heads_q;
  parallel_for(pairs, [&](std::atomic<std::int64_t>& next) {
    HeadScratch s(a);
    for (std::int64_t p; (p = next.fetch_add(1)) < pairs;) reference_head(a, p / a.heads_q, p % a.heads_q, s);
  });
}

void reference_backward(const BwdArgs& g) {
  const AttnArgs& a = g.fwd;
  const std::int64_t pairs = a.batch * a.heads_kv;
  parallel_for(pairs, [&](std::atomic<std::int64_t>& next) {
    HeadScratch s(a);
    std::vector<double> dk(s.k.size()), dv(s.k.size()), dq(s.q.size());
    for (std::int64_t p; (p = next.fetch_add(1)) < pairs;)
      reference_backward_head(g, p / a.heads_kv, p % a.heads_kv, s, dk, dv, dq);
  });
}

class CpuDevice final : public DeviceImpl {
 public:
  CpuDevice() {
    info_.backend = Backend::Cpu;
    info_.index = 0;
    info_.name = "CPU reference";
    info_.software = true;
    info_.paths = {Path::CpuReference};
    info_.caps = {{"threads", std::to_string(std::max(1u, std::thread::hardware_concurrency()))},
                  {"dtypes", "f16, bf16, f32"},
                  {"head_dims", "multiples of " + std::to_string(kHeadDimMultiple) + " up to " +
                                    std::to_string(kMaxHeadDim)},
                  {"accumulation", "double"}};
  }
  const DeviceInfo& info() const override { return info_; }
  std::uint64_t max_index_elements() const override { return std::uint64_t{1} << 62; }

  std::uint64_t alloc(std::size_t bytes) override {
    // aligned_alloc wants a multiple of the alignment; a rounding that wrapped would hand back a short block.
    const auto what = [bytes] { return "bytes: cpu alloc of " + std::to_string(bytes) + " bytes"; };
    const std::uint64_t padded = checked_round_up(std::max<std::size_t>(bytes, 1), kAlignment,
                                                  [&] { return what() + " wraps when rounded up"; });
    const std::size_t rounded = checked_bytes(padded, what);
    void* p = std::aligned_alloc(kAlignment, rounded);
    if (!p) throw Error(ErrorCode::OutOfMemory, "cpu: cannot allocate " + std::to_string(bytes) + " bytes");
    return reinterpret_cast<std::uint64_t>(p);
  }
  void free(std::uint64_t handle) noexcept override { std::free(reinterpret_cast<void*>(handle)); }
  void upload(BufferRef dst, const void* src, std::size_t bytes) override {
    std::memcpy(reinterpret_cast<std::byte*>(dst.handle) + dst.offset, src, bytes);
  }
  void download(void* dst, BufferRef src, std::size_t bytes) override {
    std::memcpy(dst, reinterpret_cast<const std::byte*>(src.handle) + src.offset, bytes);
  }

  Plan plan(const AttnArgs& a, const std::optional<Path>& forced) const override {
    const std::string kernel = "cpu_reference<" + std::string(to_string(a.dtype)) + ">";
    return choose_path({{Path::CpuReference, "", kernel}}, forced, "cpu:0");
  }
  void run(const Plan&, const AttnArgs& a) override { reference_attention(a); }
  Plan plan_backward(const BwdArgs& g, const std::optional<Path>& forced) const override {
    const std::string kernel = "cpu_reference_bwd<" + std::string(to_string(g.fwd.dtype)) + ">";
    return choose_path({{Path::CpuReference, "", kernel}}, forced, "cpu:0");
  }
  void run_backward(const Plan&, const BwdArgs& g) override { reference_backward(g); }
  void sync() override {}

 private:
  DeviceInfo info_;
};

}  // namespace

std::vector<std::shared_ptr<DeviceImpl>> enumerate_cpu() { return {std::make_shared<CpuDevice>()}; }

}  // namespace flashtile::detail
