// `flashtile info` and `flashtile run` (with --backward, the backward after the forward).
#include "cli.hpp"
#include "cases.hpp"
#include "reference.hpp"
#include "values.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <random>

namespace flashtile::cli {

// A plan's note on one line: the paths passed over, separated by ';'.
std::string one_line(std::string note) {
  std::replace(note.begin(), note.end(), '\n', ';');
  return note;
}

// Normal(0, 1) values in t's dtype, uploaded; returns them as the device holds them (rounded), for the references.
std::vector<float> fill_random(Tensor& t, std::mt19937_64& rng, std::normal_distribution<float>& normal) {
  const DType dt = t.dtype();
  std::vector<float> host(std::size_t(t.shape().numel()));
  std::vector<std::byte> enc(host.size() * dtype_size(dt));
  for (std::size_t i = 0; i < host.size(); ++i) {
    const auto at = static_cast<std::int64_t>(i);
    cases::put(enc.data(), dt, at, normal(rng));
    host[i] = cases::get(enc.data(), dt, at);
  }
  t.upload(enc.data(), enc.size());
  return host;
}

// Every byte a NaN, so an element a kernel never writes shows up in --check.
void poison(Tensor& t) {
  std::vector<std::byte> bytes(t.extent_bytes(), cases::kPoisonByte);
  t.upload(bytes.data(), bytes.size());
}

cases::VariantSpec variant_flags(const Args& args) {
  cases::VariantSpec spec;
  for (const auto* names : {&kVariantFlags, &kVariantValued})
    for (const std::string& name : *names)
      if (args.has(name)) spec.parse("--" + name, [&] { return args.str(name, ""); });
  return spec;
}

namespace {

struct Problem {
  std::int64_t B, Sq, Sk, Hq, Hkv, D;
  DType dtype;
  bool causal;
  float scale;
  cases::VariantSpec var;
  std::uint64_t seed;  // of the inputs and the variants' tables
};

// The backward's tensors: dout (random) and the gradients it writes (dsinks: with --sinks).
struct Grads {
  Tensor dout, dq, dk, dv, dsinks;
};

// The forward's tensors, as the backward reads them, and the rounded values of its inputs on the host.
struct Inputs {
  const Tensor *q, *k, *v, *out, *lse;
  const std::vector<float>*q_host, *k_host, *v_host;
};

struct BackwardReport {
  Result r;
  double median_ms = 0, tflops = 0;
  bool checked = false;             // --check: dq, dk, dv against the CPU reference backward
  double tolerance = 0;
  std::array<double, 3> error{};    // relative L2 error of dq, dk, dv
  bool determinism_checked = false;  // --check --deterministic: a second call wrote the same bytes
  std::array<bool, 3> identical{true, true, true};
  double dsinks_error = NAN;         // with --sinks: dsinks against the CPU reference's
  bool ok = true;
};

constexpr std::array<const char*, 3> kGradNames{"dq", "dk", "dv"};

// JSON has no infinities: a non-finite error is null.
std::string json_number(double x) {
  if (!std::isfinite(x)) return "null";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3e", x);
  return buf;
}

std::vector<std::byte> bytes_of(const Tensor& t) {
  std::vector<std::byte> img(t.extent_bytes());
  t.download(img.data(), img.size());
  return img;
}

// The backward on a random dout after the forward wrote out and lse: timed like the forward and, with check, each
// gradient compared with the CPU reference backward given the same q, k, v, out, lse and dout (f32 copies), so that
// the comparison measures the device's backward alone.
BackwardReport run_backward(const Problem& p, Options opt, const Inputs& in, Grads& g, std::mt19937_64& rng,
                            std::normal_distribution<float>& normal, int warmup, int iters, bool quiet, bool check) {
  BackwardReport rep;
  if (p.var.sinks) opt.dsinks = &g.dsinks;
  std::vector<float> dout_host = fill_random(g.dout, rng, normal);
  for (Tensor* t : {&g.dq, &g.dk, &g.dv}) poison(*t);
  rep.median_ms = median_ms(warmup, iters, quiet, [&] {
    rep.r = attention_backward(*in.q, *in.k, *in.v, *in.out, *in.lse, g.dout, g.dq, g.dk, g.dv, opt);
  });
  rep.tflops = cases::backward_flops(p.B, p.Hq, p.Sq, p.Sk, p.D, p.causal) / (rep.median_ms * 1e-3) / 1e12;
  if (!check) return rep;

  cases::Case c;
  c.batch = p.B, c.seqlen_q = p.Sq, c.seqlen_k = p.Sk, c.heads_q = p.Hq, c.heads_kv = p.Hkv, c.head_dim = p.D;
  c.causal = p.causal;
  c.dtype = p.dtype;
  c.scale = opt.scale;
  const cases::Gradients want = cases::reference_backward(
      c,
      cases::BackwardInputs{*in.q_host, *in.k_host, *in.v_host, cases::download_floats(*in.out),
                            cases::download_floats(*in.lse), std::move(dout_host)},
      p.var, p.seed);
  const std::array<const Tensor*, 3> got{&g.dq, &g.dk, &g.dv};
  const std::array<const std::vector<float>*, 3> ref{&want.dq, &want.dk, &want.dv};
  rep.checked = true;
  rep.tolerance = cases::grad_tolerance(p.dtype);
  for (std::size_t i = 0; i < got.size(); ++i) {
    rep.error[i] = cases::rel_l2_error(cases::download_floats(*got[i]), *ref[i]);
    rep.ok &= rep.error[i] <= rep.tolerance;
  }
  if (p.var.sinks) {
    rep.dsinks_error = cases::rel_l2_error(cases::download_floats(g.dsinks), want.dsinks);
    rep.ok &= rep.dsinks_error <= rep.tolerance;
  }
  if (opt.deterministic) {  // one more call must write the same bytes
    std::array<std::vector<std::byte>, 3> before;
    for (std::size_t i = 0; i < got.size(); ++i) before[i] = bytes_of(*got[i]);
    attention_backward(*in.q, *in.k, *in.v, *in.out, *in.lse, g.dout, g.dq, g.dk, g.dv, opt);
    rep.determinism_checked = true;
    for (std::size_t i = 0; i < got.size(); ++i) {
      rep.identical[i] = bytes_of(*got[i]) == before[i];
      rep.ok &= rep.identical[i];
    }
  }
  return rep;
}

std::string backward_json(const BackwardReport& b) {
  std::string js = "{\"path\":\"" + std::string(to_string(b.r.path)) + "\",\"kernel\":\"" + json_escape(b.r.kernel) +
                   "\",\"note\":\"" + json_escape(b.r.note) + "\",\"workspace_bytes\":" +
                   std::to_string(b.r.workspace_bytes) + ",\"median_ms\":" + json_number(b.median_ms) +
                   ",\"tflops\":" + json_number(b.tflops);
  for (std::size_t i = 0; i < kGradNames.size(); ++i)
    js += ",\"" + std::string(kGradNames[i]) + "_rel_error\":" + (b.checked ? json_number(b.error[i]) : "null");
  js += ",\"dsinks_rel_error\":" + json_number(b.dsinks_error);
  js += ",\"tolerance\":" + (b.checked ? json_number(b.tolerance) : "null");
  js += ",\"bit_identical\":" +
        std::string(!b.determinism_checked ? "null" : b.identical == std::array{true, true, true} ? "true" : "false");
  return js + ",\"ok\":" + (b.ok ? "true" : "false") + "}";
}

void print_backward(const BackwardReport& b, int iters, bool deterministic) {
  std::printf("backward path %s  kernel %s%s  workspace %llu bytes\n", std::string(to_string(b.r.path)).c_str(),
              b.r.kernel.c_str(), deterministic ? " (deterministic)" : "",
              static_cast<unsigned long long>(b.r.workspace_bytes));
  if (!b.r.note.empty()) std::printf("backward note passed over: %s\n", one_line(b.r.note).c_str());
  std::printf("backward time %.3f ms (median of %d, host clock around synchronous calls)  %.4g TFLOP/s (2.5x the "
              "forward's FLOPs)\n", b.median_ms, iters, b.tflops);
  if (!b.checked) return;
  std::printf("backward check dq %.2e, dk %.2e, dv %.2e relative L2 error vs the CPU reference backward (tolerance "
              "%.0e) %s\n", b.error[0], b.error[1], b.error[2], b.tolerance,
              std::all_of(b.error.begin(), b.error.end(), [&](double e) { return e <= b.tolerance; }) ? "OK"
                                                                                                       : "MISMATCH");
  for (std::size_t i = 0; i < kGradNames.size(); ++i)
    if (!(b.error[i] <= b.tolerance))
      std::printf("backward MISMATCH %s: relative L2 error %.3e > tolerance %.0e%s\n", kGradNames[i], b.error[i],
                  b.tolerance, std::isfinite(b.error[i]) ? "" : " (NaN or infinity: unwritten or overflowed)");
  if (!std::isnan(b.dsinks_error))
    std::printf("backward check dsinks %.2e relative L2 error vs the CPU reference backward (tolerance %.0e) %s\n",
                b.dsinks_error, b.tolerance, b.dsinks_error <= b.tolerance ? "OK" : "MISMATCH");
  if (b.determinism_checked)
    for (std::size_t i = 0; i < kGradNames.size(); ++i)
      std::printf("backward deterministic %s: a second call wrote %s bytes%s\n", kGradNames[i],
                  b.identical[i] ? "identical" : "different", b.identical[i] ? "" : " MISMATCH");
}

// The path a device would take for a small default problem (f16, seq 512, 8 heads, dim 64, causal).
Result default_plan(const Device& dev) {
  const Shape s = Shape::of(1, 512, 8, 64);
  Tensor q = Tensor::empty(dev, DType::F16, s), o = Tensor::empty(dev, DType::F16, s);
  Options opt;
  opt.causal = true;
  return plan_attention(q, q, q, o, nullptr, opt);
}

}  // namespace

int cmd_info(int argc, char** argv) {
  const Args args(argc, argv, 2, {"json"}, {});
  const bool json = args.has("json");
  std::string js = "{\"version\":\"" + std::string(version_string()) + "\",\"backends\":[";
  if (!json) std::printf("flashtile %s\n\nbackends:\n", version_string());
  bool first = true;
  for (Backend b : {Backend::Cuda, Backend::Vulkan, Backend::Cpu}) {
    const std::string why = Device::unavailable_reason(b);
    if (json) {
      js += std::string(first ? "" : ",") + "{\"name\":\"" + std::string(to_string(b)) + "\",\"available\":" +
            (why.empty() ? "true" : "false") + ",\"reason\":\"" + json_escape(why) + "\"}";
    } else {
      std::printf("  %-7s %s\n", std::string(to_string(b)).c_str(), why.empty() ? "available" : ("unavailable: " + why).c_str());
    }
    first = false;
  }
  js += "],\"devices\":[";
  if (!json) std::printf("\ndevices (in the order --backend auto considers them):\n");
  first = true;
  for (const DeviceInfo& info : Device::list()) {
    const Device dev = Device::open(info.backend, info.index);
    std::string path, kernel, note;
    try {
      const Result r = default_plan(dev);
      path = std::string(to_string(r.path));
      kernel = r.kernel;
      note = r.note;
    } catch (const Error& e) {
      path = "none";
      note = e.what();
    }
    std::string paths, paths_json;
    for (Path p : info.paths) {
      paths += (paths.empty() ? "" : ", ") + std::string(to_string(p));
      paths_json += (paths_json.empty() ? "\"" : ",\"") + std::string(to_string(p)) + "\"";
    }
    if (json) {
      js += std::string(first ? "" : ",") + "{\"backend\":\"" + std::string(to_string(info.backend)) +
            "\",\"index\":" + std::to_string(info.index) + ",\"name\":\"" + json_escape(info.name) +
            "\",\"software\":" + (info.software ? "true" : "false") + ",\"paths\":[" + paths_json + "],\"caps\":{";
      bool f2 = true;
      for (const auto& [k, v] : info.caps) {
        js += std::string(f2 ? "" : ",") + "\"" + json_escape(k) + "\":\"" + json_escape(v) + "\"";
        f2 = false;
      }
      js += "},\"default_path\":\"" + path + "\",\"kernel\":\"" + json_escape(kernel) + "\",\"note\":\"" +
            json_escape(note) + "\"}";
    } else {
      std::printf("  %s:%d  %s%s\n", std::string(to_string(info.backend)).c_str(), info.index, info.name.c_str(),
                  info.software ? "  (software)" : "");
      std::printf("      paths: %s\n", paths.c_str());
      for (const auto& [k, v] : info.caps) std::printf("      %-22s %s\n", k.c_str(), v.c_str());
      std::printf("      f16 d64 causal -> %s %s\n", path.c_str(), kernel.c_str());
      if (!note.empty()) std::printf("      passed over: %s\n", one_line(note).c_str());
    }
    first = false;
  }
  if (json) std::printf("%s]}\n", js.c_str());
  return 0;
}

int cmd_run(int argc, char** argv) {
  std::vector<std::string> flags{"causal", "no-causal", "check", "json", "reduced-precision", "backward",
                                 "deterministic", "zigzag"};
  std::vector<std::string> valued{"batch", "seq",   "seq-k", "heads",  "heads-kv", "dim",       "dtype",  "scale",
                                  "backend", "device", "path", "seed", "iters", "warmup", "page-size", "append",
                                  "varlen", "varlen-k", "ring"};
  flags.insert(flags.end(), kVariantFlags.begin(), kVariantFlags.end());
  valued.insert(valued.end(), kVariantValued.begin(), kVariantValued.end());
  const Args args(argc, argv, 2, flags, valued);
  if (args.has("ring")) return run_ring(args);
  if (args.has("zigzag")) throw Error(ErrorCode::InvalidArgument, "--zigzag: a sharding of --ring; add --ring N");
  if (args.has("page-size") || args.has("varlen") || args.has("append") || args.has("varlen-k"))
    return run_serving(args);
  Problem p;
  p.B = args.integer("batch", 1, 1);
  p.Sq = args.integer("seq", 512, 1);
  p.Sk = args.integer("seq-k", p.Sq, 1);
  p.Hq = args.integer("heads", 8, 1);
  p.Hkv = args.integer("heads-kv", p.Hq, 1);
  p.D = args.integer("dim", 64, 1);
  p.dtype = parse_dtype(args.str("dtype", "f16"));
  if (args.has("causal") && args.has("no-causal")) throw Error(ErrorCode::InvalidArgument, "--causal and --no-causal: pick one");
  p.causal = !args.has("no-causal");
  p.scale = static_cast<float>(args.real("scale", 1.0 / std::sqrt(double(p.D))));
  // Checked here too so that the message names the option (beyond float's range is an infinity as well).
  if (!std::isfinite(p.scale))
    throw Error(ErrorCode::InvalidArgument, "--scale: must be a finite number, got " + args.str("scale", ""));
  if (args.has("deterministic") && !args.has("backward"))
    throw Error(ErrorCode::InvalidArgument, "--deterministic: applies to the backward; add --backward");
  const Backend backend = parse_backend(args.str("backend", "auto"));
  constexpr long long kIntMax = std::numeric_limits<int>::max();
  const int device_index = static_cast<int>(args.integer("device", 0, 0, kIntMax));
  const std::uint64_t seed = static_cast<std::uint64_t>(args.integer("seed", 1234, 0));
  p.seed = seed;
  p.var = variant_flags(args);
  const int iters = static_cast<int>(args.integer("iters", 5, 1, kIntMax));
  const int warmup = static_cast<int>(args.integer("warmup", 1, 0, kIntMax));
  const bool json = args.has("json");

  Options opt;
  opt.causal = p.causal;
  if (args.has("scale")) opt.scale = p.scale;  // otherwise the library's default, which p.scale equals
  if (args.has("path")) opt.path = parse_path(args.str("path", ""));
  opt.allow_reduced_precision_accumulation = args.has("reduced-precision");
  opt.deterministic = args.has("deterministic");

  const Device dev = Device::open(backend, device_index);
  const cases::VariantTables tables(dev, p.var, p.Hq, seed);
  tables.apply(p.var, opt);
  const Shape qs = Shape::of(p.B, p.Sq, p.Hq, p.D), ks = Shape::of(p.B, p.Sk, p.Hkv, p.D);
  Tensor q = Tensor::empty(dev, p.dtype, qs), k = Tensor::empty(dev, p.dtype, ks), v = Tensor::empty(dev, p.dtype, ks);
  Tensor out = Tensor::empty(dev, p.dtype, qs), lse = Tensor::empty(dev, DType::F32, Shape::of(p.B, p.Hq, p.Sq));
  // Check everything (shapes, head dim, path; the backward's too) before generating inputs.
  const Result planned = plan_attention(q, k, v, out, &lse, opt);
  std::optional<Grads> g;
  if (args.has("backward")) {
    g.emplace(Grads{Tensor::empty(dev, p.dtype, qs), Tensor::empty(dev, p.dtype, qs), Tensor::empty(dev, p.dtype, ks),
                    Tensor::empty(dev, p.dtype, ks), Tensor::empty(dev, DType::F32, Shape{1, {p.Hq, 0, 0, 0}})});
    Options bwd = opt;
    if (p.var.sinks) bwd.dsinks = &g->dsinks;
    (void)plan_attention_backward(q, k, v, out, lse, g->dout, g->dq, g->dk, g->dv, bwd);
  }

  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const std::vector<float> hq = fill_random(q, rng, normal), hk = fill_random(k, rng, normal),
                           hv = fill_random(v, rng, normal);
  poison(out);

  Result r = planned;
  const double median = median_ms(warmup, iters, json, [&] { r = attention_forward(q, k, v, out, &lse, opt); });
  const double tflops = cases::attention_flops(p.B, p.Hq, p.Sq, p.Sk, p.D, p.causal) / (median * 1e-3) / 1e12;

  // --check: sampled rows against a double-precision reference computed here from the same rounded inputs.
  double max_rel = 0;
  int checked = 0;
  bool nan_seen = false;
  if (args.has("check") && p.var.any()) {
    // With variants: every row against the CPU reference's forward from the same rounded inputs.
    cases::Case c;
    c.batch = p.B, c.seqlen_q = p.Sq, c.seqlen_k = p.Sk, c.heads_q = p.Hq, c.heads_kv = p.Hkv, c.head_dim = p.D;
    c.causal = p.causal;
    c.scale = opt.scale;
    const cases::Forward want = cases::reference_forward(c, hq, hk, hv, p.var, seed);
    const std::vector<float> got_lse = cases::download_floats(lse);
    double lse_err = 0;
    for (std::size_t i = 0; i < got_lse.size(); ++i) {
      if (std::isnan(got_lse[i])) nan_seen = true;
      lse_err = std::max(lse_err, std::isinf(want.lse[i])
                                      ? (got_lse[i] == want.lse[i] ? 0.0 : INFINITY)
                                      : std::abs(double(got_lse[i]) - want.lse[i]) / std::max(1.0, std::abs(double(want.lse[i]))));
    }
    const double out_err = cases::rel_l2_error(cases::download_floats(out), want.out);
    nan_seen |= !std::isfinite(out_err);
    max_rel = std::max(out_err, lse_err);
    checked = static_cast<int>(std::min<std::int64_t>(p.B * p.Hq * p.Sq, std::numeric_limits<int>::max()));
  } else if (args.has("check")) {
    std::vector<std::byte> ob(out.extent_bytes());
    out.download(ob.data(), ob.size());
    std::vector<float> lh(std::size_t(lse.shape().numel()));
    lse.download(lh.data(), lh.size() * 4);
    std::uniform_int_distribution<std::int64_t> pick(0, p.B * p.Hq * p.Sq - 1);
    const int samples = static_cast<int>(std::min<std::int64_t>(64, p.B * p.Hq * p.Sq));
    for (int s = 0; s < samples; ++s) {
      const std::int64_t idx = s == 0 ? p.B * p.Hq * p.Sq - 1 : pick(rng);
      const std::int64_t b = idx / (p.Hq * p.Sq), h = (idx / p.Sq) % p.Hq, i = idx % p.Sq;
      const std::int64_t hk_ = h / (p.Hq / p.Hkv);
      const std::int64_t visible = p.causal ? std::clamp<std::int64_t>(i + p.Sk - p.Sq + 1, 0, p.Sk) : p.Sk;
      std::vector<double> w(static_cast<std::size_t>(visible)), ref(static_cast<std::size_t>(p.D), 0.0);
      double m = -INFINITY, l = 0;
      for (std::int64_t j = 0; j < visible; ++j) {
        double dot = 0;
        for (std::int64_t d = 0; d < p.D; ++d)
          dot += double(hq[std::size_t(((b * p.Sq + i) * p.Hq + h) * p.D + d)]) *
                 hk[std::size_t(((b * p.Sk + j) * p.Hkv + hk_) * p.D + d)];
        w[std::size_t(j)] = dot * p.scale;
        m = std::max(m, w[std::size_t(j)]);
      }
      for (std::int64_t j = 0; j < visible; ++j) {
        const double e = std::exp(w[std::size_t(j)] - m);
        l += e;
        for (std::int64_t d = 0; d < p.D; ++d) ref[std::size_t(d)] += e * hv[std::size_t(((b * p.Sk + j) * p.Hkv + hk_) * p.D + d)];
      }
      double num = 0, den = 0;
      for (std::int64_t d = 0; d < p.D; ++d) {
        const double want = visible ? ref[std::size_t(d)] / l : 0.0;
        const double got = cases::get(ob.data(), p.dtype, ((b * p.Sq + i) * p.Hq + h) * p.D + d);
        if (!std::isfinite(got)) nan_seen = true;
        num += (got - want) * (got - want);
        den += want * want;
      }
      const double lse_want = visible ? m + std::log(l) : -INFINITY;
      const double lse_got = lh[std::size_t((b * p.Hq + h) * p.Sq + i)];
      const double lse_err = visible ? std::abs(lse_got - lse_want) / std::max(1.0, std::abs(lse_want))
                                     : (std::isinf(lse_got) && lse_got < 0 ? 0.0 : INFINITY);
      if (std::isnan(lse_got)) nan_seen = true;
      max_rel = std::max({max_rel, den > 0 ? std::sqrt(num / den) : std::sqrt(num), lse_err});
      ++checked;
    }
  }
  // The conformance suite's tolerances (src/cases/cases.hpp).
  const double tol = r.reduced_precision ? cases::reduced_out_tolerance(p.dtype) : cases::out_tolerance(p.dtype);
  const bool fwd_ok = !args.has("check") || (!nan_seen && max_rel <= tol);

  BackwardReport bwd;
  if (g) {
    const Inputs in{&q, &k, &v, &out, &lse, &hq, &hk, &hv};
    bwd = run_backward(p, opt, in, *g, rng, normal, warmup, iters, json, args.has("check"));
  }
  const bool ok = fwd_ok && (!g || bwd.ok);

  if (json) {
    std::printf("{\"device\":\"%s\",\"backend\":\"%s\",\"path\":\"%s\",\"kernel\":\"%s\",\"note\":\"%s\",\"batch\":%lld,"
                "\"seq_q\":%lld,\"seq_k\":%lld,\"heads\":%lld,\"heads_kv\":%lld,\"dim\":%lld,\"dtype\":\"%s\","
                "\"causal\":%s,\"variants\":\"%s\",\"median_ms\":%.6f,\"tflops\":%.4f,\"checked_rows\":%d,\"max_rel_error\":%.3e,"
                "\"reduced_precision\":%s,\"backward\":%s,\"ok\":%s}\n",
                json_escape(dev.info().name).c_str(), std::string(to_string(r.backend)).c_str(),
                std::string(to_string(r.path)).c_str(), json_escape(r.kernel).c_str(), json_escape(r.note).c_str(),
                (long long)p.B, (long long)p.Sq, (long long)p.Sk, (long long)p.Hq, (long long)p.Hkv, (long long)p.D,
                std::string(to_string(p.dtype)).c_str(), p.causal ? "true" : "false", p.var.name().c_str(), median, tflops,
                checked, max_rel,
                r.reduced_precision ? "true" : "false", g ? backward_json(bwd).c_str() : "null", ok ? "true" : "false");
  } else {
    std::printf("device   %s (%s)\n", dev.info().name.c_str(), std::string(to_string(r.backend)).c_str());
    std::printf("path     %s  kernel %s%s\n", std::string(to_string(r.path)).c_str(), r.kernel.c_str(),
                r.reduced_precision ? " (O accumulated in f16)" : "");
    if (!r.note.empty()) std::printf("note     passed over: %s\n", one_line(r.note).c_str());
    std::printf("problem  batch %lld, seq %lld x %lld, heads %lld/%lld, dim %lld, %s%s%s%s\n", (long long)p.B,
                (long long)p.Sq, (long long)p.Sk, (long long)p.Hq, (long long)p.Hkv, (long long)p.D,
                std::string(to_string(p.dtype)).c_str(), p.causal ? ", causal" : "", p.var.any() ? ", " : "",
                p.var.name().c_str());
    std::printf("time     %.3f ms (median of %d, host clock around synchronous calls)  %.4g TFLOP/s\n", median, iters,
                tflops);
    if (args.has("check"))
      std::printf("check    %d %s: max rel error %.2e (tolerance %.0e) %s\n", checked,
                  p.var.any() ? "rows vs the CPU reference" : "sampled rows vs double reference", max_rel, tol,
                  fwd_ok ? "OK" : "MISMATCH");
    if (g) print_backward(bwd, iters, opt.deterministic);
  }
  return ok ? 0 : 1;
}

}  // namespace flashtile::cli
