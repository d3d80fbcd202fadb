// `flashtile run --page-size N` (attention over a paged KV cache, optionally appending keys) and `flashtile run
// --varlen L1,L2,...` (a packed batch of sequences of those lengths). --check compares with the CPU reference's dense
// forward, sequence by sequence, on the same rounded inputs.
#include "cli.hpp"
#include "cases.hpp"
#include "reference.hpp"
#include "values.hpp"

#include <cmath>
#include <cstdio>
#include <numeric>
#include <optional>
#include <sstream>

namespace flashtile::cli {

namespace {

struct Common {
  std::int64_t Hq, Hkv, D;
  DType dtype;
  Options opt;  // with the variants' tables (in `tables`)
  int iters, warmup;
  bool check, json;
  cases::VariantSpec var;
  std::uint64_t seed;
  std::optional<cases::VariantTables> tables;
};

std::vector<std::int32_t> parse_lengths(const std::string& name, const std::string& text) {
  std::vector<std::int32_t> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    char* end = nullptr;
    const long long v = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v < 0 || v > std::numeric_limits<std::int32_t>::max())
      throw Error(ErrorCode::InvalidArgument, "--" + name + ": '" + item + "' is not a length in [0, 2^31 - 1]");
    out.push_back(static_cast<std::int32_t>(v));
  }
  if (out.empty()) throw Error(ErrorCode::InvalidArgument, "--" + name + ": needs lengths separated by commas");
  return out;
}

Tensor ints(const Device& dev, const Shape& s, const std::vector<std::int32_t>& values) {
  Tensor t = Tensor::empty(dev, DType::I32, s);
  t.upload(values.data(), values.size() * sizeof(std::int32_t));
  return t;
}

// The CPU reference's dense forward of one sequence (f32 rows [S, H, D]); no query rows, or no keys: 0 and -inf.
struct Dense {
  std::vector<float> out, lse;  // [Sq, Hq, D], [Hq, Sq]
};
Dense dense(const Common& c, const float* q, const float* k, const float* v, std::int64_t sq, std::int64_t sk) {
  Dense r{std::vector<float>(std::size_t(sq * c.Hq * c.D), 0.0f),
          std::vector<float>(std::size_t(sq * c.Hq), -INFINITY)};
  if (sq == 0 || sk == 0) return r;
  const Device cpu = Device::open(Backend::Cpu);
  auto wrap = [&](const float* p, std::int64_t s, std::int64_t h) {
    const Shape sh = Shape::of(1, s, h, c.D);
    return Tensor::wrap_host(cpu, const_cast<float*>(p), DType::F32, sh, Strides::contiguous(sh));
  };
  Tensor o = wrap(r.out.data(), sq, c.Hq);
  const Shape ls = Shape::of(1, c.Hq, sq);
  Tensor l = Tensor::wrap_host(cpu, r.lse.data(), DType::F32, ls, Strides::contiguous(ls));
  Options opt;
  opt.causal = c.opt.causal;
  opt.scale = c.opt.scale;
  const cases::VariantTables tables(cpu, c.var, c.Hq, c.seed);  // the same values as the run's, on the CPU
  tables.apply(c.var, opt);
  attention_forward(wrap(q, sq, c.Hq), wrap(k, sk, c.Hkv), wrap(v, sk, c.Hkv), o, &l, opt);
  return r;
}

// What --check found: the worst relative L2 error of out over the sequences, and of lse (relative, per element).
struct Check {
  double out = 0, lse = 0;
  bool nan = false;
  void add(const std::vector<float>& got_out, const std::vector<float>& want_out, const std::vector<float>& got_lse,
           const std::vector<float>& want_lse) {
    out = std::max(out, cases::rel_l2_error(got_out, want_out));
    for (std::size_t i = 0; i < want_lse.size(); ++i) {
      if (std::isnan(got_lse[i])) nan = true;
      const double e = std::isinf(want_lse[i]) ? (got_lse[i] == want_lse[i] ? 0.0 : INFINITY)
                                               : std::abs(got_lse[i] - want_lse[i]) / std::max(1.0, std::abs(double(want_lse[i])));
      lse = std::max(lse, e);
    }
  }
};

int report(const Common& c, const Device& dev, const Result& r, const std::string& problem, double median,
           const Check& chk) {
  const double out_tol = cases::out_tolerance(c.dtype), lse_tol = cases::lse_tolerance(c.dtype);
  const bool ok = !c.check || (!chk.nan && chk.out <= out_tol && chk.lse <= lse_tol);
  if (c.json) {
    std::printf("{\"device\":\"%s\",\"path\":\"%s\",\"kernel\":\"%s\",\"problem\":\"%s\",\"median_ms\":%.6f,"
                "\"out_rel_error\":%s,\"lse_error\":%s,\"ok\":%s}\n",
                json_escape(dev.info().name).c_str(), std::string(to_string(r.path)).c_str(),
                json_escape(r.kernel).c_str(), json_escape(problem).c_str(), median,
                c.check && std::isfinite(chk.out) ? std::to_string(chk.out).c_str() : "null",
                c.check && std::isfinite(chk.lse) ? std::to_string(chk.lse).c_str() : "null", ok ? "true" : "false");
    return ok ? 0 : 1;
  }
  std::printf("device   %s (%s)\n", dev.info().name.c_str(), std::string(to_string(r.backend)).c_str());
  std::printf("path     %s  kernel %s\n", std::string(to_string(r.path)).c_str(), r.kernel.c_str());
  if (!r.note.empty()) std::printf("note     passed over: %s\n", one_line(r.note).c_str());
  std::printf("problem  %s\n", problem.c_str());
  std::printf("time     %.3f ms (median of %d, host clock around synchronous calls)\n", median, c.iters);
  if (c.check)
    std::printf("check    every sequence vs the CPU reference's dense forward: out %.2e (tolerance %.0e), lse %.2e "
                "(tolerance %.0e) %s\n", chk.out, out_tol, chk.lse, lse_tol, ok ? "OK" : "MISMATCH");
  return ok ? 0 : 1;
}

std::string head_text(const Common& c) {
  return "heads " + std::to_string(c.Hq) + "/" + std::to_string(c.Hkv) + ", dim " + std::to_string(c.D) + ", " +
         std::string(to_string(c.dtype)) + (c.opt.causal ? ", causal" : "") + (c.var.any() ? ", " + c.var.name() : "");
}

// Rows [from, from + n) of a flat [rows, row] vector.
std::vector<float> rows(const std::vector<float>& x, std::int64_t row, std::int64_t from, std::int64_t n) {
  return std::vector<float>(x.begin() + from * row, x.begin() + (from + n) * row);
}

int run_paged(const Args& args, const Common& c, const Device& dev, std::uint64_t seed) {
  const std::int64_t B = args.integer("batch", 1, 1), Sq = args.integer("seq", 1, 1);
  const std::int64_t Sk = args.integer("seq-k", Sq, 0, std::numeric_limits<std::int32_t>::max());
  const std::int64_t page = args.integer("page-size", 16, 1), S_new = args.integer("append", 0, 0);
  const std::int64_t per = std::max<std::int64_t>(1, (Sk + S_new + page - 1) / page), P = B * per + 1;
  const std::int64_t row = c.Hkv * c.D;
  std::mt19937_64 rng(seed);
  std::vector<std::int32_t> order(static_cast<std::size_t>(P));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);  // pages in no particular order; one spare page
  const std::vector<std::int32_t> table(order.begin(), order.begin() + B * per);
  const std::vector<std::int32_t> seqlens(static_cast<std::size_t>(B), static_cast<std::int32_t>(Sk));

  const Shape qs = Shape::of(B, Sq, c.Hq, c.D), cs = Shape::of(P, page, c.Hkv, c.D);
  Tensor q = Tensor::empty(dev, c.dtype, qs), out = Tensor::empty(dev, c.dtype, qs);
  Tensor lse = Tensor::empty(dev, DType::F32, Shape::of(B, c.Hq, Sq));
  PagedKv cache{Tensor::empty(dev, c.dtype, cs), Tensor::empty(dev, c.dtype, cs),
                ints(dev, Shape{2, {B, per, 0, 0}}, table), ints(dev, Shape{1, {B, 0, 0, 0}}, seqlens)};
  Tensor kn, vn;
  if (S_new) kn = Tensor::empty(dev, c.dtype, Shape::of(B, S_new, c.Hkv, c.D)), vn = Tensor::empty(dev, c.dtype, kn.shape());
  const Tensor* kp = S_new ? &kn : nullptr;
  const Tensor* vp = S_new ? &vn : nullptr;
  (void)plan_attention_with_kvcache(q, cache, out, &lse, kp, vp, c.opt);  // refusals before any input is made

  // Dense keys per sequence, then scattered into the pages (slots no sequence owns stay NaN) and k_new.
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const std::vector<float> hq = fill_random(q, rng, normal);
  Tensor dk = Tensor::empty(dev, c.dtype, Shape::of(B, Sk + S_new + 1, c.Hkv, c.D)), dv = Tensor::empty(dev, c.dtype, dk.shape());
  const std::vector<float> keys = fill_random(dk, rng, normal), vals = fill_random(dv, rng, normal);
  std::vector<std::byte> kimg(cache.k_cache.extent_bytes(), cases::kPoisonByte), vimg(kimg);
  std::vector<std::byte> knew(S_new ? kn.extent_bytes() : 0), vnew(knew);
  const std::int64_t per_seq = Sk + S_new + 1;
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t j = 0; j < Sk + S_new; ++j)
      for (std::int64_t e = 0; e < row; ++e) {
        const std::int64_t src = (b * per_seq + j) * row + e;
        const bool is_new = j >= Sk;
        const std::int64_t dst = is_new ? (b * S_new + j - Sk) * row + e
                                        : (table[std::size_t(b * per + j / page)] * page + j % page) * row + e;
        cases::put(is_new ? knew.data() : kimg.data(), c.dtype, dst, keys[std::size_t(src)]);
        cases::put(is_new ? vnew.data() : vimg.data(), c.dtype, dst, vals[std::size_t(src)]);
      }
  cache.k_cache.upload(kimg.data(), kimg.size());
  cache.v_cache.upload(vimg.data(), vimg.size());
  if (S_new) kn.upload(knew.data(), knew.size()), vn.upload(vnew.data(), vnew.size());
  poison(out);

  Result r;
  const double median = median_ms(c.warmup, c.iters, c.json, [&] {
    r = attention_with_kvcache(q, cache, out, &lse, kp, vp, c.opt);  // appends land in the same slots each time
  });
  Check chk;
  if (c.check) {
    const std::vector<float> got = cases::download_floats(out), got_lse = cases::download_floats(lse);
    for (std::int64_t b = 0; b < B; ++b) {
      const Dense ref = dense(c, &hq[std::size_t(b * Sq * c.Hq * c.D)], &keys[std::size_t(b * per_seq * row)],
                              &vals[std::size_t(b * per_seq * row)], Sq, Sk + S_new);
      chk.add(rows(got, Sq * c.Hq * c.D, b, 1), ref.out, rows(got_lse, c.Hq * Sq, b, 1), ref.lse);
    }
  }
  const std::string problem = "paged KV cache: batch " + std::to_string(B) + ", " + std::to_string(Sq) +
                              " query rows over " + std::to_string(Sk) + " cached keys" +
                              (S_new ? " + " + std::to_string(S_new) + " appended" : std::string()) + ", pages of " +
                              std::to_string(page) + " (" + std::to_string(P) + " shuffled), " + head_text(c);
  return report(c, dev, r, problem, median, chk);
}

int run_varlen(const Args& args, const Common& c, const Device& dev, std::uint64_t seed) {
  const std::vector<std::int32_t> lq = parse_lengths("varlen", args.str("varlen", ""));
  const std::vector<std::int32_t> lk = args.has("varlen-k") ? parse_lengths("varlen-k", args.str("varlen-k", "")) : lq;
  if (lk.size() != lq.size())
    throw Error(ErrorCode::InvalidArgument, "--varlen-k: " + std::to_string(lk.size()) + " lengths, but --varlen has " +
                                                std::to_string(lq.size()));
  std::vector<std::int32_t> cq{0}, ck{0};
  for (std::size_t b = 0; b < lq.size(); ++b) {
    if (std::int64_t(cq.back()) + lq[b] > std::numeric_limits<std::int32_t>::max() ||
        std::int64_t(ck.back()) + lk[b] > std::numeric_limits<std::int32_t>::max())
      throw Error(ErrorCode::InvalidArgument, "--varlen: the lengths add up past 2^31 - 1");
    cq.push_back(cq.back() + lq[b]);
    ck.push_back(ck.back() + lk[b]);
  }
  const std::int64_t B = std::int64_t(lq.size()), Tq = std::max(1, cq.back()), Tk = std::max(1, ck.back());
  const Shape qs = Shape{3, {Tq, c.Hq, c.D, 0}}, ks = Shape{3, {Tk, c.Hkv, c.D, 0}};
  Tensor q = Tensor::empty(dev, c.dtype, qs), k = Tensor::empty(dev, c.dtype, ks), v = Tensor::empty(dev, c.dtype, ks);
  Tensor out = Tensor::empty(dev, c.dtype, qs), lse = Tensor::empty(dev, DType::F32, Shape{2, {c.Hq, Tq, 0, 0}});
  // Tensors need a row: a batch of only empty sequences leaves the row unclaimed, which the library refuses (naming
  // cu_seqlens), as it should.
  const Varlen lengths{ints(dev, Shape{1, {B + 1, 0, 0, 0}}, cq), ints(dev, Shape{1, {B + 1, 0, 0, 0}}, ck),
                       *std::max_element(lq.begin(), lq.end()), *std::max_element(lk.begin(), lk.end())};
  (void)plan_attention_varlen(q, k, v, out, &lse, lengths, c.opt);

  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const std::vector<float> hq = fill_random(q, rng, normal), hk = fill_random(k, rng, normal),
                           hv = fill_random(v, rng, normal);
  poison(out);
  Result r;
  const double median =
      median_ms(c.warmup, c.iters, c.json, [&] { r = attention_varlen(q, k, v, out, &lse, lengths, c.opt); });
  Check chk;
  if (c.check) {
    const std::vector<float> got = cases::download_floats(out), got_lse = cases::download_floats(lse);
    const std::int64_t qrow = c.Hq * c.D, krow = c.Hkv * c.D;
    for (std::int64_t b = 0; b < B; ++b) {
      const std::int64_t sq = lq[std::size_t(b)], sk = lk[std::size_t(b)], q0 = cq[std::size_t(b)];
      const Dense ref = dense(c, &hq[std::size_t(q0 * qrow)], &hk[std::size_t(ck[std::size_t(b)] * krow)],
                              &hv[std::size_t(ck[std::size_t(b)] * krow)], sq, sk);
      std::vector<float> mine;  // lse is [Hq, total_q]
      for (std::int64_t h = 0; h < c.Hq; ++h)
        for (std::int64_t i = 0; i < sq; ++i) mine.push_back(got_lse[std::size_t(h * Tq + q0 + i)]);
      chk.add(rows(got, qrow, q0, sq), ref.out, mine, ref.lse);
    }
  }
  std::string problem = "packed batch of " + std::to_string(B) + " sequences (query x key rows:";
  for (std::size_t b = 0; b < lq.size(); ++b) problem += " " + std::to_string(lq[b]) + "x" + std::to_string(lk[b]);
  return report(c, dev, r, problem + "), " + head_text(c), median, chk);
}

}  // namespace

int run_serving(const Args& args) {
  if (args.has("page-size") && args.has("varlen"))
    throw Error(ErrorCode::InvalidArgument, "--page-size and --varlen: pick one layout");
  for (const char* only : {"backward", "deterministic", "reduced-precision"})
    if (args.has(only))
      throw Error(ErrorCode::InvalidArgument, std::string("--") + only + ": not with --page-size or --varlen");
  if (args.has("append") && !args.has("page-size"))
    throw Error(ErrorCode::InvalidArgument, "--append: applies to a paged cache; add --page-size");
  if (args.has("varlen-k") && !args.has("varlen"))
    throw Error(ErrorCode::InvalidArgument, "--varlen-k: applies to --varlen");
  Common c;
  c.Hq = args.integer("heads", 8, 1);
  c.Hkv = args.integer("heads-kv", c.Hq, 1);
  c.D = args.integer("dim", 64, 1);
  c.dtype = parse_dtype(args.str("dtype", "f16"));
  if (args.has("causal") && args.has("no-causal"))
    throw Error(ErrorCode::InvalidArgument, "--causal and --no-causal: pick one");
  c.opt.causal = !args.has("no-causal");
  if (args.has("scale")) {
    const float scale = static_cast<float>(args.real("scale", 0));
    if (!std::isfinite(scale))
      throw Error(ErrorCode::InvalidArgument, "--scale: must be a finite number, got " + args.str("scale", ""));
    c.opt.scale = scale;
  }
  if (args.has("path")) c.opt.path = parse_path(args.str("path", ""));
  constexpr long long kIntMax = std::numeric_limits<int>::max();
  c.iters = static_cast<int>(args.integer("iters", 5, 1, kIntMax));
  c.warmup = static_cast<int>(args.integer("warmup", 1, 0, kIntMax));
  c.check = args.has("check");
  c.json = args.has("json");
  const Device dev = Device::open(parse_backend(args.str("backend", "auto")),
                                  static_cast<int>(args.integer("device", 0, 0, kIntMax)));
  const std::uint64_t seed = static_cast<std::uint64_t>(args.integer("seed", 1234, 0));
  c.var = variant_flags(args);
  c.seed = seed;
  c.tables.emplace(dev, c.var, c.Hq, seed);
  c.tables->apply(c.var, c.opt);
  return args.has("page-size") ? run_paged(args, c, dev, seed) : run_varlen(args, c, dev, seed);
}

}  // namespace flashtile::cli
