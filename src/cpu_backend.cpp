// The CPU backend: a plain reference (double accumulation, no tiling), forward and backward, the oracle of every test
// and a real, slow fallback. Work is split over (batch, head) pairs across threads (the backward: (batch, kv head),
// so each thread owns the dK and dV it sums over the group).
#include "backend.hpp"
#include "checked.hpp"

#include <algorithm>
#include <array>
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

// Where a call's rows live, for the dense, paged and varlen layouts (backend.hpp): per-sequence lengths and the
// element offsets of query rows, keys and LSE entries. Tables are host memory on this backend.
struct Layout {
  const AttnArgs& a;
  const std::int32_t* table(const TensorArg& t) const { return reinterpret_cast<const std::int32_t*>(ptr(t)); }

  std::int64_t seqlen_q(std::int64_t b) const {
    if (!a.varlen) return a.seqlen_q;
    const std::int32_t* cu = table(a.varlen->cu_seqlens_q);
    return cu[b + 1] - cu[b];
  }
  std::int64_t seqlen_k(std::int64_t b) const {
    if (a.paged) return table(a.paged->seqlens)[b] + a.paged->seqlen_new;
    if (!a.varlen) return a.seqlen_k;
    const std::int32_t* cu = table(a.varlen->cu_seqlens_k);
    return cu[b + 1] - cu[b];
  }
  // Row i of sequence b in a [B, S, H, D] tensor (varlen: [1, total, H, D], rows from cu_seqlens).
  std::int64_t q_row(const TensorArg& t, std::int64_t b, std::int64_t i, std::int64_t h) const {
    if (a.varlen) return (table(a.varlen->cu_seqlens_q)[b] + i) * t.strides[1] + h * t.strides[2];
    return b * t.strides[0] + i * t.strides[1] + h * t.strides[2];
  }
  std::int64_t k_row(const TensorArg& t, std::int64_t b, std::int64_t j, std::int64_t hk) const {
    if (a.varlen) return (table(a.varlen->cu_seqlens_k)[b] + j) * t.strides[1] + hk * t.strides[2];
    if (a.paged) {
      const PagedLayout& pg = *a.paged;
      const std::int64_t page = table(pg.block_table)[b * pg.block_table.strides[0] + j / pg.page_size];
      return page * t.strides[0] + (j % pg.page_size) * t.strides[1] + hk * t.strides[2];
    }
    return b * t.strides[0] + j * t.strides[1] + hk * t.strides[2];
  }
  std::int64_t lse_index(std::int64_t b, std::int64_t h, std::int64_t i) const {
    if (a.varlen) return h * a.varlen->total_q + table(a.varlen->cu_seqlens_q)[b] + i;
    return (b * a.heads_q + h) * a.seqlen_q + i;
  }
};

// Paged calls with new keys: write them into the cache at seqlens[b] .. seqlens[b] + seqlen_new - 1 first.
void append_to_cache(const AttnArgs& a) {
  const PagedLayout& pg = *a.paged;
  const Layout lay{a};
  const std::int32_t* seqlens = lay.table(pg.seqlens);
  for (std::int64_t b = 0; b < a.batch; ++b)
    for (std::int64_t t = 0; t < pg.seqlen_new; ++t)
      for (std::int64_t hk = 0; hk < a.heads_kv; ++hk)
        for (const auto& [src, dst] : {std::pair{&pg.k_new, &a.k}, {&pg.v_new, &a.v}}) {
          const std::int64_t from = b * src->strides[0] + t * src->strides[1] + hk * src->strides[2];
          const std::int64_t to = lay.k_row(*dst, b, seqlens[b] + t, hk);
          const std::size_t es = dtype_size(src->dtype);
          std::memcpy(const_cast<std::byte*>(ptr(*dst)) + to * std::int64_t(es), ptr(*src) + from * std::int64_t(es),
                      static_cast<std::size_t>(a.head_dim) * es);
        }
}

// The keys a row sees and the score each gets, with the variants (backend.hpp, AttnArgs): causal and window bounds
// relative to the bottom-right diagonal, softcap, ALiBi, and the sink that joins the denominator.
struct RowRules {
  const AttnArgs& a;
  std::int64_t b, h, Sq, Sk;

  // [lo, hi): the keys row i sees.
  std::pair<std::int64_t, std::int64_t> keys(std::int64_t i) const {
    const std::int64_t diag = i + Sk - Sq;
    std::int64_t lo = 0, hi = Sk;
    if (a.causal) hi = std::clamp<std::int64_t>(diag + 1, 0, Sk);
    if (a.window_right >= 0) hi = std::min(hi, std::clamp<std::int64_t>(diag + a.window_right + 1, 0, Sk));
    if (a.window_left >= 0) lo = std::clamp<std::int64_t>(diag - a.window_left, 0, Sk);
    return {lo, std::max(lo, hi)};
  }
  // The score of key j for row i from the raw dot product; `dcap` receives d(score)/d(scaled dot) (softcap's tanh').
  double score(double dot, std::int64_t i, std::int64_t j, double* dcap = nullptr) const {
    double x = dot * static_cast<double>(a.scale), slope = 1.0;
    if (a.softcap > 0) {
      const double t = std::tanh(x / a.softcap);
      x = a.softcap * t;
      slope = 1.0 - t * t;
    }
    if (a.has_alibi) {
      const auto* slopes = reinterpret_cast<const float*>(ptr(a.alibi_slopes));
      x -= double(slopes[(a.alibi_per_batch ? b * a.heads_q : 0) + h]) * double(std::abs(i + Sk - Sq - j));
    }
    if (dcap) *dcap = slope;
    return x;
  }
  // The sink logit of this head, or -inf without sinks.
  double sink() const {
    return a.has_sinks ? double(reinterpret_cast<const float*>(ptr(a.sinks))[h]) : -std::numeric_limits<double>::infinity();
  }
};

// One (batch, head): every query row, exact softmax over the keys it may see.
void reference_head(const AttnArgs& a, std::int64_t b, std::int64_t h, HeadScratch& s) {
  const Layout lay{a};
  const std::int64_t D = a.head_dim, Sq = lay.seqlen_q(b), Sk = lay.seqlen_k(b);
  const std::int64_t hk = h / (a.heads_q / a.heads_kv);
  const std::byte *q = ptr(a.q), *k = ptr(a.k), *v = ptr(a.v);
  auto* o = const_cast<std::byte*>(ptr(a.o));
  const auto at = [](std::int64_t i) { return static_cast<std::size_t>(i); };
  for (std::int64_t j = 0; j < Sk; ++j) {
    const std::int64_t kr = lay.k_row(a.k, b, j, hk), vr = lay.k_row(a.v, b, j, hk);
    for (std::int64_t d = 0; d < D; ++d) {
      s.k[at(j * D + d)] = load(k, a.k.dtype, kr + d);
      s.v[at(j * D + d)] = load(v, a.v.dtype, vr + d);
    }
  }
  const RowRules rules{a, b, h, Sq, Sk};
  for (std::int64_t i = 0; i < Sq; ++i) {
    const auto [lo, hi] = rules.keys(i);
    const std::int64_t qrow = lay.q_row(a.q, b, i, h);
    for (std::int64_t d = 0; d < D; ++d) s.q[at(d)] = load(q, a.q.dtype, qrow + d);
    // The sink joins the max and the denominator; a row that sees no key keeps output 0 (and its LSE is the sink).
    double m = rules.sink();
    for (std::int64_t j = lo; j < hi; ++j) {
      const double* kr = &s.k[at(j * D)];
      double dot = 0;
      for (std::int64_t d = 0; d < D; ++d) dot += s.q[at(d)] * kr[d];
      s.scores[at(j)] = rules.score(dot, i, j);
      m = std::max(m, s.scores[at(j)]);
    }
    std::fill(s.acc.begin(), s.acc.end(), 0.0);
    double l = a.has_sinks ? std::exp(rules.sink() - m) : 0.0;
    for (std::int64_t j = lo; j < hi; ++j) {
      const double p = std::exp(s.scores[at(j)] - m);
      l += p;
      const double* vr = &s.v[at(j * D)];
      for (std::int64_t d = 0; d < D; ++d) s.acc[at(d)] += p * vr[d];
    }
    const bool any = hi > lo || a.has_sinks;
    const std::int64_t orow = lay.q_row(a.o, b, i, h);
    for (std::int64_t d = 0; d < D; ++d) store(o, a.o.dtype, orow + d, any ? s.acc[at(d)] / l : 0.0);
    if (a.has_lse) {
      auto* lse = reinterpret_cast<float*>(const_cast<std::byte*>(ptr(a.lse)));
      lse[lay.lse_index(b, h, i)] = any ? static_cast<float>(m + std::log(l)) : -std::numeric_limits<float>::infinity();
    }
  }
}

// The backward of one kv head of one batch: every query head of its group and every row, from the given out and lse
// (as the kernels use them): P = exp(score - lse) (score: S·scale with the variants), Delta = rowsum(dO ∘ O), dS = P ∘ (dO·Vᵀ - Delta) (times softcap's tanh'),
// dV = Σ Pᵀ·dO, dK = scale · Σ dSᵀ·Q, dQ = scale · dS·K. Rows with lse = -inf saw no key: zero gradients.
// With sinks, dsink[b, h] (B·Hq partial sums, reduced over b by the caller) gains -exp(sink - lse) · Delta per row.
void reference_backward_head(const BwdArgs& g, std::int64_t b, std::int64_t hk, HeadScratch& s,
                             std::vector<double>& dk, std::vector<double>& dv, std::vector<double>& dq,
                             std::vector<double>& dsink) {
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
      const RowRules rules{a, b, h, Sq, Sk};
      const auto [lo, hi] = rules.keys(i);
      const double l = lse[(b * a.heads_q + h) * Sq + i];
      std::fill(dq.begin(), dq.end(), 0.0);
      // A row that saw only the sink has out = 0, so Delta = 0 and it adds nothing to dsink.
      if (hi > lo && l != -std::numeric_limits<double>::infinity()) {
        double delta = 0;
        for (std::int64_t d = 0; d < D; ++d) {
          s.q[at(d)] = load(ptr(a.q), a.q.dtype, b * a.q.strides[0] + i * a.q.strides[1] + h * a.q.strides[2] + d);
          s.acc[at(d)] = load(ptr(g.dout), g.dout.dtype,
                              b * g.dout.strides[0] + i * g.dout.strides[1] + h * g.dout.strides[2] + d);
          delta += s.acc[at(d)] *
                   load(ptr(a.o), a.o.dtype, b * a.o.strides[0] + i * a.o.strides[1] + h * a.o.strides[2] + d);
        }
        if (g.has_dsinks) dsink[at(b * a.heads_q + h)] -= std::exp(rules.sink() - l) * delta;
        for (std::int64_t j = lo; j < hi; ++j) {
          const double *kr = &s.k[at(j * D)], *vr = &s.v[at(j * D)];
          double dot = 0, dp = 0;
          for (std::int64_t d = 0; d < D; ++d) {
            dot += s.q[at(d)] * kr[d];
            dp += s.acc[at(d)] * vr[d];
          }
          double dcap = 1.0;
          const double p = std::exp(rules.score(dot, i, j, &dcap) - l);
          const double ds = p * (dp - delta) * dcap;  // through softcap's tanh; ALiBi's bias has no gradient here
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
  // dsinks sums over batches that different threads own: each (b, h) writes its own partial, summed in order after.
  std::vector<double> dsink(g.has_dsinks ? static_cast<std::size_t>(a.batch * a.heads_q) : 0, 0.0);
  parallel_for(pairs, [&](std::atomic<std::int64_t>& next) {
    HeadScratch s(a);
    std::vector<double> dk(s.k.size()), dv(s.k.size()), dq(s.q.size());
    for (std::int64_t p; (p = next.fetch_add(1)) < pairs;)
      reference_backward_head(g, p / a.heads_kv, p % a.heads_kv, s, dk, dv, dq, dsink);
  });
  if (!g.has_dsinks) return;
  auto* out = reinterpret_cast<float*>(const_cast<std::byte*>(ptr(g.dsinks)));
  for (std::int64_t h = 0; h < a.heads_q; ++h) {
    double sum = 0;
    for (std::int64_t b = 0; b < a.batch; ++b) sum += dsink[static_cast<std::size_t>(b * a.heads_q + h)];
    out[h] = static_cast<float>(sum);
  }
}

// Ring attention's elementwise work (backend.hpp, RingOpArgs), one loop over the view's rows. Merge reads both LSEs
// before writing either side, row by row.
void ring_op(const RingOpArgs& op) {
  const TensorArg &dst = op.dst, &src = op.src;
  const int rank = dst.shape.rank;
  std::array<std::int64_t, 4> n{1, 1, 1, 1}, sd{0, 0, 0, 0}, ss{0, 0, 0, 0};
  for (int i = 0; i < rank; ++i) {
    const auto at = static_cast<std::size_t>(4 - rank + i);
    n[at] = dst.shape[i], sd[at] = dst.strides[i], ss[at] = src.strides[i];
  }
  auto* d = const_cast<std::byte*>(ptr(dst));
  const std::byte* s = ptr(src);
  for (std::int64_t a = 0; a < n[0]; ++a)
    for (std::int64_t b = 0; b < n[1]; ++b)
      for (std::int64_t c = 0; c < n[2]; ++c) {
        const std::int64_t drow = a * sd[0] + b * sd[1] + c * sd[2], srow = a * ss[0] + b * ss[1] + c * ss[2];
        double wa = 0, wb = 1;  // Merge: o = o_a·wa + o_b·wb
        if (op.kind == RingOpKind::Merge) {  // [B, L, H, D] rows are (b = a, i = b, h = c)
          const std::int64_t dl = a * op.dst_lse.strides[0] + c * op.dst_lse.strides[1] + b * op.dst_lse.strides[2];
          const std::int64_t sl = a * op.src_lse.strides[0] + c * op.src_lse.strides[1] + b * op.src_lse.strides[2];
          const double la = load(ptr(op.dst_lse), DType::F32, dl), lb = load(ptr(op.src_lse), DType::F32, sl);
          if (std::isinf(lb) && lb < 0) continue;  // src saw no key: dst unchanged
          const double m = std::max(la, lb);
          const double lse = (std::isinf(la) && la < 0) ? lb : m + std::log(std::exp(la - m) + std::exp(lb - m));
          wa = (std::isinf(la) && la < 0) ? 0.0 : std::exp(la - lse);
          wb = std::exp(lb - lse);
          store(const_cast<std::byte*>(ptr(op.dst_lse)), DType::F32, dl, lse);
        }
        for (std::int64_t e = 0; e < n[3]; ++e) {
          const double x = load(s, src.dtype, srow + e * ss[3]);
          const std::int64_t at = drow + e * sd[3];
          switch (op.kind) {
            case RingOpKind::Copy: store(d, dst.dtype, at, x); break;
            case RingOpKind::Add: store(d, dst.dtype, at, load(d, dst.dtype, at) + x); break;
            case RingOpKind::Merge: store(d, dst.dtype, at, load(d, dst.dtype, at) * wa + x * wb); break;
          }
        }
      }
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
    return choose_path({{Path::CpuReference, variants_why_not(Path::CpuReference, a, false), kernel}}, forced, "cpu:0");
  }
  void run(const Plan&, const AttnArgs& a) override {
    if (a.paged && a.paged->seqlen_new > 0) append_to_cache(a);
    reference_attention(a);
  }
  Plan plan_backward(const BwdArgs& g, const std::optional<Path>& forced) const override {
    const std::string kernel = "cpu_reference_bwd<" + std::string(to_string(g.fwd.dtype)) + ">";
    return choose_path({{Path::CpuReference, variants_why_not(Path::CpuReference, g.fwd, true), kernel}}, forced,
                       "cpu:0");
  }
  void run_backward(const Plan&, const BwdArgs& g) override { reference_backward(g); }
  std::string ring_ops_why_not() const override { return ""; }
  void run_ring_op(const RingOpArgs& op) override { ring_op(op); }
  void sync() override {}

 private:
  DeviceInfo info_;
};

}  // namespace

std::vector<std::shared_ptr<DeviceImpl>> enumerate_cpu() { return {std::make_shared<CpuDevice>()}; }

}  // namespace flashtile::detail
