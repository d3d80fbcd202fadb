// The flashtile command line: shared pieces of its subcommands.
#pragma once

#include <flashtile/flashtile.hpp>

#include "variants.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace flashtile::cli {

// --name value / --name=value / --flag parsing. Unknown flags are errors naming the flag.
class Args {
 public:
  Args(int argc, char** argv, int first, const std::vector<std::string>& flags, const std::vector<std::string>& valued);
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  std::string str(const std::string& name, const std::string& fallback) const;
  // An integer in [min_value, max_value]; anything else (overflow included) is an error naming the option.
  long long integer(const std::string& name, long long fallback, long long min_value,
                    long long max_value = std::numeric_limits<long long>::max()) const;
  double real(const std::string& name, double fallback) const;

 private:
  std::map<std::string, std::string> values_;
};

std::string json_escape(const std::string& s);
// A plan's note on one line: the paths passed over, separated by ';'.
std::string one_line(std::string note);
// Normal(0, 1) values in t's dtype, uploaded; returns them as the device holds them (rounded), for the references.
std::vector<float> fill_random(Tensor& t, std::mt19937_64& rng, std::normal_distribution<float>& normal);
// Every byte a NaN, so an element a kernel never writes shows up in --check.
void poison(Tensor& t);

// The median milliseconds of `iters` calls after `warmup` more, on the host clock around synchronous calls; a
// progress line on stderr once the calls have taken more than 3 s (unless quiet, for --json).
template <class Call>
double median_ms(int warmup, int iters, bool quiet, Call&& call) {
  std::vector<double> times;
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  bool progress = false;
  for (int i = 0; i < warmup + iters; ++i) {
    const auto t0 = Clock::now();
    call();
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (i >= warmup) times.push_back(ms);
    if (std::chrono::duration<double>(Clock::now() - start).count() > 3.0 && !quiet) {
      std::fprintf(stderr, "\r  run %d/%d (%.1f ms each)   ", i + 1, warmup + iters, ms);
      progress = true;
    }
  }
  if (progress) std::fprintf(stderr, "\n");
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// The variant flags (cases::VariantSpec: --window L,R --softcap X --alibi --sinks), for Args' flag lists, and the
// spec they give.
inline const std::vector<std::string> kVariantFlags{"alibi", "sinks"}, kVariantValued{"window", "softcap"};
cases::VariantSpec variant_flags(const Args& args);

// `flashtile run --page-size N` and `flashtile run --varlen L1,L2,...` (src/cli/serving.cpp).
int run_serving(const Args& args);
// `flashtile run --ring N [--zigzag]`: the simulated ring against full attention (src/cli/ring.cpp).
int run_ring(const Args& args);

int cmd_info(int argc, char** argv);
int cmd_run(int argc, char** argv);

}  // namespace flashtile::cli
