// `flashtile info` and `flashtile run`.
#include "cli.hpp"
#include "cases.hpp"
#include "values.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>

namespace flashtile::cli {

namespace {

using Clock = std::chrono::steady_clock;

struct Problem {
  std::int64_t B, Sq, Sk, Hq, Hkv, D;
  DType dtype;
  bool causal;
  float scale;
};

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
      if (!note.empty()) {
        std::string n = note;
        std::replace(n.begin(), n.end(), '\n', ';');
        std::printf("      passed over: %s\n", n.c_str());
      }
    }
    first = false;
  }
  if (json) std::printf("%s]}\n", js.c_str());
  return 0;
}

int cmd_run(int argc, char** argv) {
  const Args args(argc, argv, 2, {"causal", "no-causal", "check", "json", "reduced-precision"},
                  {"batch", "seq", "seq-k", "heads", "heads-kv", "dim", "dtype", "scale", "backend", "device", "path",
                   "seed", "iters", "warmup"});
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
  const Backend backend = parse_backend(args.str("backend", "auto"));
  constexpr long long kIntMax = std::numeric_limits<int>::max();
  const int device_index = static_cast<int>(args.integer("device", 0, 0, kIntMax));
  const std::uint64_t seed = static_cast<std::uint64_t>(args.integer("seed", 1234, 0));
  const int iters = static_cast<int>(args.integer("iters", 5, 1, kIntMax));
  const int warmup = static_cast<int>(args.integer("warmup", 1, 0, kIntMax));
  const bool json = args.has("json");

  Options opt;
  opt.causal = p.causal;
  if (args.has("scale")) opt.scale = p.scale;  // otherwise the library's default, which p.scale equals
  if (args.has("path")) opt.path = parse_path(args.str("path", ""));
  opt.allow_reduced_precision_accumulation = args.has("reduced-precision");

  const Device dev = Device::open(backend, device_index);
  const Shape qs = Shape::of(p.B, p.Sq, p.Hq, p.D), ks = Shape::of(p.B, p.Sk, p.Hkv, p.D);
  Tensor q = Tensor::empty(dev, p.dtype, qs), k = Tensor::empty(dev, p.dtype, ks), v = Tensor::empty(dev, p.dtype, ks);
  Tensor out = Tensor::empty(dev, p.dtype, qs), lse = Tensor::empty(dev, DType::F32, Shape::of(p.B, p.Hq, p.Sq));
  // Check everything (shapes, head dim, path) before generating inputs.
  const Result planned = plan_attention(q, k, v, out, &lse, opt);

  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> hq(std::size_t(qs.numel())), hk(std::size_t(ks.numel())), hv(std::size_t(ks.numel()));
  std::vector<std::vector<std::byte>> enc;
  for (auto* h : {&hq, &hk, &hv}) {
    enc.emplace_back(h->size() * dtype_size(p.dtype));
    for (std::size_t i = 0; i < h->size(); ++i) {
      const auto at = static_cast<std::int64_t>(i);
      cases::put(enc.back().data(), p.dtype, at, normal(rng));
      (*h)[i] = cases::get(enc.back().data(), p.dtype, at);  // the rounded value
    }
  }
  q.upload(enc[0].data(), enc[0].size());
  k.upload(enc[1].data(), enc[1].size());
  v.upload(enc[2].data(), enc[2].size());
  std::vector<std::byte> poison(out.extent_bytes(), cases::kPoisonByte);
  out.upload(poison.data(), poison.size());

  std::vector<double> times;
  Result r = planned;
  const auto start = Clock::now();
  bool progress = false;
  for (int i = 0; i < warmup + iters; ++i) {
    const auto t0 = Clock::now();
    r = attention_forward(q, k, v, out, &lse, opt);
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (i >= warmup) times.push_back(ms);
    if (std::chrono::duration<double>(Clock::now() - start).count() > 3.0 && !json) {
      std::fprintf(stderr, "\r  run %d/%d (%.1f ms each)   ", i + 1, warmup + iters, ms);
      progress = true;
    }
  }
  if (progress) std::fprintf(stderr, "\n");
  std::sort(times.begin(), times.end());
  const double median = times[times.size() / 2];
  const double tflops = cases::attention_flops(p.B, p.Hq, p.Sq, p.Sk, p.D, p.causal) / (median * 1e-3) / 1e12;

  // --check: sampled rows against a double-precision reference computed here from the same rounded inputs.
  double max_rel = 0;
  int checked = 0;
  bool nan_seen = false;
  if (args.has("check")) {
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
  const bool ok = !args.has("check") || (!nan_seen && max_rel <= tol);

  if (json) {
    std::printf("{\"device\":\"%s\",\"backend\":\"%s\",\"path\":\"%s\",\"kernel\":\"%s\",\"note\":\"%s\",\"batch\":%lld,"
                "\"seq_q\":%lld,\"seq_k\":%lld,\"heads\":%lld,\"heads_kv\":%lld,\"dim\":%lld,\"dtype\":\"%s\","
                "\"causal\":%s,\"median_ms\":%.6f,\"tflops\":%.4f,\"checked_rows\":%d,\"max_rel_error\":%.3e,\"reduced_precision\":%s,\"ok\":%s}\n",
                json_escape(dev.info().name).c_str(), std::string(to_string(r.backend)).c_str(),
                std::string(to_string(r.path)).c_str(), json_escape(r.kernel).c_str(), json_escape(r.note).c_str(),
                (long long)p.B, (long long)p.Sq, (long long)p.Sk, (long long)p.Hq, (long long)p.Hkv, (long long)p.D,
                std::string(to_string(p.dtype)).c_str(), p.causal ? "true" : "false", median, tflops, checked, max_rel,
                r.reduced_precision ? "true" : "false", ok ? "true" : "false");
  } else {
    std::printf("device   %s (%s)\n", dev.info().name.c_str(), std::string(to_string(r.backend)).c_str());
    std::printf("path     %s  kernel %s%s\n", std::string(to_string(r.path)).c_str(), r.kernel.c_str(),
                r.reduced_precision ? " (O accumulated in f16)" : "");
    if (!r.note.empty()) {
      std::string n = r.note;
      std::replace(n.begin(), n.end(), '\n', ';');
      std::printf("note     passed over: %s\n", n.c_str());
    }
    std::printf("problem  batch %lld, seq %lld x %lld, heads %lld/%lld, dim %lld, %s%s\n", (long long)p.B,
                (long long)p.Sq, (long long)p.Sk, (long long)p.Hq, (long long)p.Hkv, (long long)p.D,
                std::string(to_string(p.dtype)).c_str(), p.causal ? ", causal" : "");
    std::printf("time     %.3f ms (median of %d, host clock around synchronous calls)  %.4g TFLOP/s\n", median, iters,
                tflops);
    if (args.has("check"))
      std::printf("check    %d sampled rows vs double reference: max rel error %.2e (tolerance %.0e) %s\n", checked,
                  max_rel, tol, ok ? "OK" : "MISMATCH");
  }
  return ok ? 0 : 1;
}

}  // namespace flashtile::cli
