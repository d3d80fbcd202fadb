// The variants' command-line flags and tables (variants.hpp).
#include "variants.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>

namespace flashtile::cases {

namespace {

constexpr float kSinkSpread = 1.5f;  // the sinks' standard deviation: some rows dominated by the sink, some not

[[noreturn]] void bad(const std::string& flag, const std::string& what) {
  throw Error(ErrorCode::InvalidArgument, flag + ": " + what);
}

std::int64_t window_side(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || v < -1)
    bad(flag, "'" + text + "' is not -1 (unbounded) or a key count >= 0");
  return v;
}

}  // namespace

std::string VariantSpec::name() const {
  std::string s;
  auto add = [&](const std::string& part) { s += (s.empty() ? "" : ", ") + part; };
  if (window_left >= 0 || window_right >= 0) add("window " + std::to_string(window_left) + "," + std::to_string(window_right));
  if (softcap > 0) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "softcap %g", double(softcap));
    add(buf);
  }
  if (alibi) add("alibi");
  if (sinks) add("sinks");
  return s;
}

bool VariantSpec::parse(const std::string& flag, const std::function<std::string()>& next) {
  if (flag == "--alibi") {
    alibi = true;
  } else if (flag == "--sinks") {
    sinks = true;
  } else if (flag == "--window") {
    const std::string text = next();
    const auto comma = text.find(',');
    if (comma == std::string::npos) bad(flag, "expected L,R (-1 for unbounded), got '" + text + "'");
    window_left = window_side(flag, text.substr(0, comma));
    window_right = window_side(flag, text.substr(comma + 1));
  } else if (flag == "--softcap") {
    const std::string text = next();
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !(v > 0) || !std::isfinite(static_cast<float>(v)))
      bad(flag, "'" + text + "' is not a positive finite number");
    softcap = static_cast<float>(v);
  } else {
    return false;
  }
  return true;
}

std::vector<float> alibi_slopes(std::int64_t heads) {
  std::vector<float> s(static_cast<std::size_t>(heads));
  for (std::int64_t h = 0; h < heads; ++h)
    s[static_cast<std::size_t>(h)] = std::exp2(-8.0f * static_cast<float>(h + 1) / static_cast<float>(heads));
  return s;
}

std::vector<float> sink_logits(std::int64_t heads, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, kSinkSpread);
  std::vector<float> s(static_cast<std::size_t>(heads));
  for (float& x : s) x = normal(rng);
  return s;
}

VariantTables::VariantTables(const Device& dev, const VariantSpec& spec, std::int64_t heads_q, std::uint64_t seed) {
  const Shape s{1, {heads_q, 0, 0, 0}};
  auto upload = [&](const std::vector<float>& host) {
    Tensor t = Tensor::empty(dev, DType::F32, s);
    t.upload(host.data(), host.size() * sizeof(float));
    return t;
  };
  if (spec.alibi) alibi = upload(alibi_host = alibi_slopes(heads_q));
  if (spec.sinks) sinks = upload(sinks_host = sink_logits(heads_q, seed));
}

void VariantTables::apply(const VariantSpec& spec, Options& opt) const {
  opt.window_left = spec.window_left;
  opt.window_right = spec.window_right;
  opt.softcap = spec.softcap;
  opt.alibi_slopes = spec.alibi ? &alibi : nullptr;
  opt.sinks = spec.sinks ? &sinks : nullptr;
}

}  // namespace flashtile::cases
