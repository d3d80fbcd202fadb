// The attention variants as the CLI (`flashtile run`) and the benchmark take them from the command line: --window L,R,
// --softcap X, --alibi (ALiBi's geometric slopes) and --sinks (random sink logits), and the per-head tables they need
// on a device. Built from the public API only (target flashtile_cases).
#pragma once

#include <flashtile/attention.hpp>
#include <flashtile/device.hpp>
#include <flashtile/tensor.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace flashtile::cases {

struct VariantSpec {
  std::int64_t window_left = -1, window_right = -1;  // Options' meaning: -1 unbounded
  float softcap = 0.0f;
  bool alibi = false, sinks = false;

  bool any() const { return window_left >= 0 || window_right >= 0 || softcap > 0 || alibi || sinks; }
  std::string name() const;  // "window 4096,0, softcap 50, alibi, sinks"; "" without variants
  // `flag` ("--window", "--softcap", "--alibi", "--sinks") with its value from next() when it takes one; false for
  // any other flag. A bad value is an Error naming the flag.
  bool parse(const std::string& flag, const std::function<std::string()>& next);
};

// The flags' help lines, for the usage texts of `flashtile run` and `flashtile bench`.
inline constexpr const char* kVariantUsage =
    "--window L,R (a sliding window: row i sees keys i+Sk-Sq-L .. i+Sk-Sq+R; -1 unbounded) --softcap X\n"
    "         (scores become X*tanh(score/X)) --alibi (ALiBi slopes 2^(-8h/H), h = 1..H) --sinks (random sink\n"
    "         logits, one a head)";

// ALiBi's slopes for `heads` heads: the geometric series 2^(-8 h / heads) for h = 1 .. heads (BLOOM, the ALiBi paper).
std::vector<float> alibi_slopes(std::int64_t heads);
// Sink logits, normal(0, 1.5), one a head, from `seed`.
std::vector<float> sink_logits(std::int64_t heads, std::uint64_t seed);

// The tables a spec needs (f32 [heads_q] slopes and sinks) uploaded to `dev`, and their host values. The same spec,
// heads and seed give the same values on any device, so a reference can rebuild them on the CPU.
struct VariantTables {
  std::vector<float> alibi_host, sinks_host;
  Tensor alibi, sinks;
  VariantTables(const Device& dev, const VariantSpec& spec, std::int64_t heads_q, std::uint64_t seed);
  // Sets opt's window, softcap and table pointers (into this object: keep it alive through the call).
  void apply(const VariantSpec& spec, Options& opt) const;
};

}  // namespace flashtile::cases
