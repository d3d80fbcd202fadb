// flashtile CLI: `info` lists backends, devices and the path each would take; `run` runs one attention problem
// (forward, and with --backward the backward; with --page-size or --varlen a serving layout); `bench` runs the
// benchmark (src/bench/).
#include "cli.hpp"
#include "bench_lib.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

namespace flashtile::cli {

namespace {
[[noreturn]] void usage_error(const std::string& msg) { throw Error(ErrorCode::InvalidArgument, msg); }
}  // namespace

Args::Args(int argc, char** argv, int first, const std::vector<std::string>& flags,
           const std::vector<std::string>& valued) {
  auto is = [](const std::vector<std::string>& v, const std::string& s) {
    for (const auto& x : v)
      if (x == s) return true;
    return false;
  };
  for (int i = first; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--", 0) != 0) usage_error("argument '" + a + "': expected a --flag");
    a = a.substr(2);
    std::string value;
    const auto eq = a.find('=');
    const bool inline_value = eq != std::string::npos;
    if (inline_value) {
      value = a.substr(eq + 1);
      a = a.substr(0, eq);
    }
    if (is(flags, a)) {
      if (inline_value) usage_error("--" + a + ": takes no value");
      values_[a] = "1";
    } else if (is(valued, a)) {
      if (!inline_value) {
        if (i + 1 >= argc) usage_error("--" + a + ": needs a value");
        value = argv[++i];
      }
      values_[a] = value;
    } else {
      usage_error("--" + a + ": unknown option (see flashtile --help)");
    }
  }
}

std::string Args::str(const std::string& name, const std::string& fallback) const {
  auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second;
}

long long Args::integer(const std::string& name, long long fallback, long long min_value, long long max_value) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(it->second.c_str(), &end, 10);
  if (it->second.empty() || *end != '\0') usage_error("--" + name + ": '" + it->second + "' is not an integer");
  if (errno == ERANGE || v < min_value || v > max_value)
    usage_error("--" + name + ": " + it->second + " is out of range [" + std::to_string(min_value) + ", " +
                std::to_string(max_value) + "]");
  return v;
}

double Args::real(const std::string& name, double fallback) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  char* end = nullptr;
  const double v = std::strtod(it->second.c_str(), &end);
  if (it->second.empty() || *end != '\0') usage_error("--" + name + ": '" + it->second + "' is not a number");
  return v;
}

std::string json_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\', o += c;
    else if (c == '\n') o += "\\n";
    else if (static_cast<unsigned char>(c) < 0x20) o += ' ';
    else o += c;
  }
  return o;
}

}  // namespace flashtile::cli

namespace {
const std::string kUsage =
    "usage: flashtile <command> [options]    (flashtile --version: the version; <command> --help: this text)\n"
    "  info [--json]                       backends, devices, capabilities and the path each would take\n"
    "  run  [options]                      run one attention problem and report path, time, TFLOP/s\n"
    "       --batch N (1) --seq N (512) --seq-k N (= seq) --heads N (8) --heads-kv N (= heads) --dim N (64)\n"
    "       --dtype f16|bf16|f32 (f16) --causal | --no-causal (causal) --scale X (1/sqrt(dim))\n"
    "       --backend auto|cuda|vulkan|cpu (auto) --device N (0) --path NAME --seed N --iters N (5) --warmup N (1)\n"
    "       --check (compare sampled rows with the CPU reference; exit 1 on mismatch) --json\n"
    "       --reduced-precision (allow O accumulated in f16 where a path offers it: vulkan_coopmat2, f16)\n"
    "       variants (each composes with the others, causal, GQA and the layouts below; --check runs them on the CPU\n"
    "         reference too): " + std::string(flashtile::cases::kVariantUsage) + "\n" +
    "       --backward (then attention_backward on a random dout: its path, kernel, workspace bytes, time and\n"
    "         TFLOP/s at 2.5x the forward's FLOPs; with --check, dq, dk and dv against the CPU reference backward\n"
    "         given the same q, k, v, out, lse and dout, exit 1 naming a gradient that differs)\n"
    "       --deterministic (with --backward: Options::deterministic; with --check, a second backward must write\n"
    "         the same bytes)\n"
    "       --page-size N (attention_with_kvcache: --seq query rows (1) over a paged KV cache of --seq-k keys a\n"
    "         sequence, in pages of N keys in shuffled order) --append N (first append N new keys a sequence)\n"
    "       --varlen L1,L2,... (attention_varlen: a packed batch of sequences of those query lengths, keys as many\n"
    "         unless --varlen-k K1,K2,... gives them); both with --check compare every sequence with the CPU\n"
    "         reference (exit 1 on mismatch); a device without the kernel reports why (exit 2)\n"
    "       --ring N [--zigzag] (ring attention over N simulated ranks on the device: --seq split contiguously, or\n"
    "         zigzag in 2N chunks; with --backward the ring backward too; --check compares out, lse and the\n"
    "         gradients with full attention on the CPU reference, exit 1 on mismatch)\n"
    "  bench [options]                     the benchmark grid, --backward and --fwd-bwd too (flashtile bench --help)\n";

bool is_help_flag(const char* a) { return !std::strcmp(a, "--help") || !std::strcmp(a, "-h"); }

}  // namespace

int main(int argc, char** argv) {
  using namespace flashtile;
  if (argc < 2 || is_help_flag(argv[1]) || !std::strcmp(argv[1], "help")) {
    std::fputs(kUsage.c_str(), argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  if (!std::strcmp(argv[1], "--version")) {
    // The version this program was built with; the library's too when another one was loaded.
    const std::string built = std::to_string(kVersionMajor) + "." + std::to_string(kVersionMinor) + "." +
                              std::to_string(kVersionPatch);
    std::printf("flashtile %s", built.c_str());
    if (built != version_string()) std::printf(" (library %s)", version_string());
    std::printf("\n");
    return 0;
  }
  const bool info_or_run = !std::strcmp(argv[1], "info") || !std::strcmp(argv[1], "run");
  for (int i = 2; i < argc; ++i) {
    if (info_or_run && is_help_flag(argv[i])) {
      std::fputs(kUsage.c_str(), stdout);
      return 0;
    }
  }
  try {
    if (!std::strcmp(argv[1], "info")) return cli::cmd_info(argc, argv);
    if (!std::strcmp(argv[1], "run")) return cli::cmd_run(argc, argv);
    if (!std::strcmp(argv[1], "bench")) return bench_main(argc - 1, argv + 1, "flashtile bench");
    std::fprintf(stderr, "flashtile: unknown command '%s'\n%s", argv[1], kUsage.c_str());
    return 2;
  } catch (const Error& e) {
    std::fprintf(stderr, "flashtile: error (%s): %s\n", std::string(to_string(e.code())).c_str(), e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "flashtile: error: %s\n", e.what());
    return 1;
  }
}
