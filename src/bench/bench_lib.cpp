// The benchmark's logic: case selection, input rotation, timing, and the table/CSV/JSON writers. It times the forward
// (attention_forward), the backward (attention_backward, --backward) or both in turn (--fwd-bwd).
//
// Timing. On CUDA devices, when this file is built with FLASHTILE_BENCH_CUDA_EVENTS (src/bench/CMakeLists.txt does
// when the CUDA toolkit is found), every call is queued on a stream of the benchmark's own and bracketed with CUDA
// events: the median is the kernels' time, launch gaps excluded. Elsewhere (Vulkan, CPU, or no CUDA toolkit at build
// time) the host clock brackets each synchronous call (the library waits for its queue before returning), so the
// time also holds submission and the wait: a few microseconds per call, which matters only for the smallest shapes.
// On Vulkan devices, when the library has its benchmark hook (flashtile_vk_last_gpu_ms, found with dlsym), the
// benchmark sets FLASHTILE_VK_TIMESTAMPS=1 and takes each call's GPU time from the timestamps the library writes
// around its dispatches (timer `vk_timestamps`; submission and the wait excluded). The CSV's `timer` column says
// which was used.
#include "bench_lib.hpp"

#include "cases.hpp"
#include "values.hpp"

#include <flashtile/flashtile.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <dlfcn.h>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#if FLASHTILE_BENCH_CUDA_EVENTS
#include <cuda_runtime_api.h>
#endif

namespace flashtile::bench {

namespace {

// What a row times: the forward, the backward (after an untimed forward wrote out and lse), or one then the other.
enum class Pass { Fwd, Bwd, FwdBwd };

const char* pass_name(Pass p) { return p == Pass::Fwd ? "fwd" : p == Pass::Bwd ? "bwd" : "fwd+bwd"; }

// FLOPs of a pass: the forward's (cases::attention_flops), the backward's (2.5x, cases::backward_flops), or both.
double pass_flops(const cases::Case& c, Pass p) {
  const double fwd = c.flops();
  const double bwd = cases::backward_flops(c.batch, c.heads_q, c.seqlen_q, c.seqlen_k, c.head_dim, c.causal);
  return p == Pass::Fwd ? fwd : p == Pass::Bwd ? bwd : fwd + bwd;
}

// One timed (or skipped) case on one device and path.
struct Row {
  std::string device;   // device name
  std::string backend;  // cpu, cuda, vulkan
  std::string path;     // the forced path
  std::string pass;     // pass_name
  std::string kernel;   // Result::kernel of the timed call ("fwd + bwd" kernels for fwd+bwd)
  std::string dtype;
  std::int64_t batch = 0, seqlen_q = 0, seqlen_k = 0, heads_q = 0, heads_kv = 0, head_dim = 0;
  bool causal = false;
  double ms = 0;        // median milliseconds per call
  double ms_min = 0;    // fastest call
  double tflops = 0;    // pass_flops / median time
  std::uint64_t workspace_bytes = 0;  // the backward's scratch (Result::workspace_bytes); 0 for the forward
  std::string timer;    // "cuda_events", "vk_timestamps" or "host_clock"
  int iters = 0, sets = 0;
  std::string variants;  // the attention variants of every call (Args::variants_name), "" for plain attention
  std::string status;   // "ok", "skipped" (the path refused the case), "error"
  std::string note;     // the refusal reason or error message
};

// Enough input sets that one rotation moves well past the H200's 60 MB L2 (and any other GPU's).
constexpr double kRotationBytes = 512.0 * 1024 * 1024;
constexpr int kMaxSets = 16;
// Outputs larger than this are not downloaded for the NaN check.
constexpr std::size_t kMaxCheckBytes = std::size_t{512} << 20;

struct Args {
  std::vector<Backend> backends;  // empty: every hardware device
  std::vector<Path> paths;        // empty: every path a device lists
  std::vector<DType> dtypes{DType::BF16, DType::F16};
  std::vector<std::int64_t> dims, seqs;  // empty: all
  int causal = -1;                       // -1 both
  bool grid = true, quick = false, lse = false, check = true;
  bool reduced = false;  // Options::allow_reduced_precision_accumulation
  // Attention variants on every call (Options): a window, softcap, ALiBi's usual slopes, a sink per head.
  std::int64_t window_left = -1, window_right = -1;
  float softcap = 0.0f;
  bool alibi = false, sinks = false;
  std::string variants_name() const {
    std::string s;
    if (window_left >= 0 || window_right >= 0)
      s += " window " + std::to_string(window_left) + "," + std::to_string(window_right);
    if (softcap > 0) {
      char buf[32];
      std::snprintf(buf, sizeof buf, " softcap %g", double(softcap));
      s += buf;
    }
    if (alibi) s += " alibi";
    if (sinks) s += " sinks";
    return s.empty() ? s : s.substr(1);
  }
  std::vector<Pass> passes{Pass::Fwd};  // --backward, --fwd-bwd replace the forward
  std::vector<cases::Case> shapes;
  int warmup = 5, iters = 30, sets = 0;  // sets 0: automatic
  double warmup_ms = 200;                 // and at least this long (GPU clocks ramp up; Vulkan idles them)
  bool help = false;
  std::string csv, json;
};

void usage(std::FILE* f, const char* prog) {
  std::fprintf(f, "usage: %s [options]\n", prog);
  std::fputs(
      "  Times attention_forward (or the backward) on the standard grid (bf16 and f16, hidden 2048: heads =\n"
      "  2048/d, batch x seqlen = 16384, seqlen 512..16384, d 64/128/256, causal and not) on every hardware\n"
      "  device and each of its paths.\n"
      "  --backend cpu|cuda|vulkan[,..]  devices to run (default: every non-software device)\n"
      "  --path NAME[,..]      paths to force (default: each path the device lists), e.g. cuda_sm90\n"
      "  --dtype bf16,f16,f32  dtypes (default bf16,f16)\n"
      "  --dim 64,128,256      head dims of the grid;  --seq 512,4096  seqlens of the grid\n"
      "  --causal 0|1          only non-causal or causal (default both)\n"
      "  --shape B,Sq,Sk,Hq,Hkv,D[,causal]  an extra case (repeatable), in each --dtype: GQA, batch-1 long context\n"
      "  --no-grid             only the --shape cases;  --quick  the grid at seqlen 1024 and 8192 only\n"
      "  --warmup N (5)  --warmup-ms T (200): at least N calls and T ms before timing, counted after\n"
      "                        prepare_attention built the pipeline (GPU clocks drop while it compiles)\n"
      "  --iters N (30): median of N timed calls;  --sets N: input sets rotated (default: enough\n"
      "                        to move 512 MiB per rotation, 2..16)\n"
      "  --lse                 also write the LSE;  --no-check  skip the NaN check of the last output\n"
      "  --reduced-precision   allow reduced-precision accumulation (Options::allow_reduced_precision_accumulation;\n"
      "                        kernels that use it end in _o16)\n"
      "  --window L,R  --softcap X  --alibi  --sinks   attention variants on every call (-1: unbounded side; ALiBi's\n"
      "                        usual slopes 2^(-8 (h+1) / Hq); sinks 0.5 a head); TFLOP/s still counts full attention\n"
      "  --backward            time attention_backward instead of the forward: dout random, out and lse from an\n"
      "                        untimed forward of each input set, the workspace (plan_attention_backward's\n"
      "                        workspace_bytes, in the table and files) allocated once; TFLOP/s counts 2.5x the\n"
      "                        forward's FLOPs; --no-check aside, dq, dk and dv are checked for NaN\n"
      "  --fwd-bwd             time a forward and a backward together (3.5x the forward's FLOPs); with --backward,\n"
      "                        a row of each\n"
      "  --csv FILE  --json FILE   write the results\n",
      f);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, sep))
    if (!cur.empty()) out.push_back(cur);
  return out;
}

std::int64_t parse_int(const std::string& s, const char* what) {
  std::size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != s.size() || s.empty()) throw Error(ErrorCode::InvalidArgument, std::string(what) + ": not an integer: '" + s + "'");
  return v;
}

cases::Case parse_shape(const std::string& s) {
  const auto f = split(s, ',');
  if (f.size() != 6 && f.size() != 7)
    throw Error(ErrorCode::InvalidArgument, "--shape: expected B,Sq,Sk,Hq,Hkv,D[,causal], got '" + s + "'");
  cases::Case c;
  c.batch = parse_int(f[0], "--shape B");
  c.seqlen_q = parse_int(f[1], "--shape Sq");
  c.seqlen_k = parse_int(f[2], "--shape Sk");
  c.heads_q = parse_int(f[3], "--shape Hq");
  c.heads_kv = parse_int(f[4], "--shape Hkv");
  c.head_dim = parse_int(f[5], "--shape D");
  if (f.size() == 7) {
    if (f[6] == "causal" || f[6] == "1") c.causal = true;
    else if (f[6] == "0" || f[6] == "full") c.causal = false;
    else throw Error(ErrorCode::InvalidArgument, "--shape: the 7th field is 'causal', '1' or '0', got '" + f[6] + "'");
  }
  return c;
}

Args parse_args(int argc, char** argv) {
  Args a;
  auto value = [&](int& i) -> std::string {
    if (i + 1 >= argc) throw Error(ErrorCode::InvalidArgument, std::string(argv[i]) + ": needs a value");
    return argv[++i];
  };
  for (int i = 1; i < argc; ++i) {
    const std::string o = argv[i];
    if (o == "--backend") {
      for (const auto& s : split(value(i), ',')) a.backends.push_back(parse_backend(s));
    } else if (o == "--path") {
      for (const auto& s : split(value(i), ',')) a.paths.push_back(parse_path(s));
    } else if (o == "--dtype") {
      a.dtypes.clear();
      for (const auto& s : split(value(i), ',')) a.dtypes.push_back(parse_dtype(s));
    } else if (o == "--dim") {
      for (const auto& s : split(value(i), ',')) a.dims.push_back(parse_int(s, "--dim"));
    } else if (o == "--seq") {
      for (const auto& s : split(value(i), ',')) a.seqs.push_back(parse_int(s, "--seq"));
    } else if (o == "--causal") {
      a.causal = static_cast<int>(parse_int(value(i), "--causal")) != 0 ? 1 : 0;
    } else if (o == "--shape") {
      a.shapes.push_back(parse_shape(value(i)));
    } else if (o == "--no-grid") {
      a.grid = false;
    } else if (o == "--quick") {
      a.quick = true;
    } else if (o == "--lse") {
      a.lse = true;
    } else if (o == "--no-check") {
      a.check = false;
    } else if (o == "--window") {
      const auto f = split(value(i), ',');
      if (f.size() != 2) throw Error(ErrorCode::InvalidArgument, "--window: expected L,R (-1 unbounded)");
      a.window_left = parse_int(f[0], "--window L");
      a.window_right = parse_int(f[1], "--window R");
    } else if (o == "--softcap") {
      const std::string x = value(i);
      std::size_t used = 0;
      try {
        a.softcap = std::stof(x, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != x.size() || x.empty()) throw Error(ErrorCode::InvalidArgument, "--softcap: not a number: '" + x + "'");
    } else if (o == "--alibi") {
      a.alibi = true;
    } else if (o == "--sinks") {
      a.sinks = true;
    } else if (o == "--reduced-precision") {
      a.reduced = true;
    } else if (o == "--backward" || o == "--fwd-bwd") {
      const Pass p = o == "--backward" ? Pass::Bwd : Pass::FwdBwd;
      if (a.passes == std::vector<Pass>{Pass::Fwd}) a.passes.clear();
      if (std::find(a.passes.begin(), a.passes.end(), p) == a.passes.end()) a.passes.push_back(p);
    } else if (o == "--warmup") {
      a.warmup = static_cast<int>(parse_int(value(i), "--warmup"));
    } else if (o == "--warmup-ms") {
      a.warmup_ms = static_cast<double>(parse_int(value(i), "--warmup-ms"));
    } else if (o == "--iters") {
      a.iters = static_cast<int>(parse_int(value(i), "--iters"));
    } else if (o == "--sets") {
      a.sets = static_cast<int>(parse_int(value(i), "--sets"));
    } else if (o == "--csv") {
      a.csv = value(i);
    } else if (o == "--json") {
      a.json = value(i);
    } else if (o == "-h" || o == "--help") {
      a.help = true;
    } else {
      throw Error(ErrorCode::InvalidArgument, "unknown option '" + o + "' (--help lists them)");
    }
  }
  if (a.iters < 1 || a.warmup < 0 || a.sets < 0 || a.sets > 64)
    throw Error(ErrorCode::InvalidArgument, "--iters >= 1, --warmup >= 0, --sets in [0, 64]");
  return a;
}

template <class T>
bool allowed(const std::vector<T>& filter, const T& v) {
  return filter.empty() || std::find(filter.begin(), filter.end(), v) != filter.end();
}

std::vector<cases::Case> select_cases(const Args& a) {
  std::vector<cases::Case> out;
  for (DType dt : a.dtypes) {
    if (a.grid)
      for (const auto& c : cases::bench_grid(dt)) {
        if (!allowed(a.dims, c.head_dim) || !allowed(a.seqs, c.seqlen_q)) continue;
        if (a.quick && c.seqlen_q != 1024 && c.seqlen_q != 8192) continue;
        if (a.causal >= 0 && c.causal != (a.causal == 1)) continue;
        out.push_back(c);
      }
    for (auto c : a.shapes) {
      c.dtype = dt;
      out.push_back(c);
    }
  }
  return out;
}

// ---- Timers. ---------------------------------------------------------------------------------------------------

class Timer {
 public:
  virtual ~Timer() = default;
  virtual const char* name() const = 0;
  virtual void* stream() { return nullptr; }
  virtual void begin() = 0;
  virtual void end() = 0;
  // Milliseconds of each call since the last collect (waits for the device).
  virtual std::vector<double> collect() = 0;
};

class HostTimer final : public Timer {
 public:
  explicit HostTimer(const Device& d) : device_(d) {}
  const char* name() const override { return "host_clock"; }
  void begin() override { t0_ = Clock::now(); }
  void end() override {
    device_.sync();  // a no-op for synchronous calls; keeps the bracket honest if a backend ever queues
    times_.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0_).count());
  }
  std::vector<double> collect() override { return std::exchange(times_, {}); }

 private:
  using Clock = std::chrono::steady_clock;
  Device device_;
  Clock::time_point t0_;
  std::vector<double> times_;
};

// Vulkan: the library's GPU timestamps of each call (see the top of this file).
class VkTimestampTimer final : public Timer {
 public:
  using Hook = double (*)();
  explicit VkTimestampTimer(Hook hook) : hook_(hook) {}
  const char* name() const override { return "vk_timestamps"; }
  void begin() override {}
  void end() override {
    const double ms = hook_();
    if (ms < 0) throw Error(ErrorCode::BackendFailure, "vk_timestamps: the call wrote no GPU timestamps");
    times_.push_back(ms);
  }
  std::vector<double> collect() override { return std::exchange(times_, {}); }

 private:
  Hook hook_;
  std::vector<double> times_;
};

#if FLASHTILE_BENCH_CUDA_EVENTS
class CudaEventTimer final : public Timer {
 public:
  // Throws when the CUDA runtime can't give a stream (no driver, no device): the caller falls back to the host.
  CudaEventTimer() {
    if (cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking) != cudaSuccess) {
      cudaGetLastError();
      throw std::runtime_error("cudaStreamCreate failed");
    }
  }
  ~CudaEventTimer() override {
    for (auto e : events_) cudaEventDestroy(e);
    cudaStreamDestroy(stream_);
  }
  const char* name() const override { return "cuda_events"; }
  void* stream() override { return stream_; }
  void begin() override { cudaEventRecord(event(used_++), stream_); }
  void end() override { cudaEventRecord(event(used_++), stream_); }
  std::vector<double> collect() override {
    std::vector<double> out;
    if (used_ == 0) return out;
    if (cudaEventSynchronize(events_[used_ - 1]) != cudaSuccess)
      throw Error(ErrorCode::BackendFailure, std::string("cudaEventSynchronize: ") + cudaGetErrorString(cudaGetLastError()));
    for (std::size_t i = 0; i + 1 < used_; i += 2) {
      float ms = 0;
      cudaEventElapsedTime(&ms, events_[i], events_[i + 1]);
      out.push_back(ms);
    }
    used_ = 0;
    return out;
  }

 private:
  cudaEvent_t event(std::size_t i) {
    while (events_.size() <= i) {
      cudaEvent_t e{};
      if (cudaEventCreate(&e) != cudaSuccess) throw Error(ErrorCode::BackendFailure, "cudaEventCreate failed");
      events_.push_back(e);
    }
    return events_[i];
  }
  cudaStream_t stream_{};
  std::vector<cudaEvent_t> events_;
  std::size_t used_ = 0;
};
#endif

std::unique_ptr<Timer> make_timer(const Device& d, std::string& note) {
  if (d.backend() == Backend::Vulkan) {
    const char* e = std::getenv("FLASHTILE_VK_TIMESTAMPS");
    void* sym = dlsym(RTLD_DEFAULT, "flashtile_vk_last_gpu_ms");
    if (sym && !(e && std::strcmp(e, "0") == 0)) {
      setenv("FLASHTILE_VK_TIMESTAMPS", "1", 1);
      return std::make_unique<VkTimestampTimer>(reinterpret_cast<VkTimestampTimer::Hook>(sym));
    }
    note = sym ? "FLASHTILE_VK_TIMESTAMPS=0: host clock around synchronous calls"
               : "library without the Vulkan timestamp hook: host clock around synchronous calls";
  }
#if FLASHTILE_BENCH_CUDA_EVENTS
  if (d.backend() == Backend::Cuda) {
    try {
      return std::make_unique<CudaEventTimer>();
    } catch (const std::exception& e) {
      note = std::string("CUDA events unavailable (") + e.what() + "), host clock used";
    }
  }
#else
  if (d.backend() == Backend::Cuda) note = "built without the CUDA toolkit: host clock around synchronous calls";
#endif
  return std::make_unique<HostTimer>(d);
}

// ---- Inputs. ---------------------------------------------------------------------------------------------------

// Random normal values in a dtype's storage format, shared by all cases; each tensor uploads a slice at its own
// offset so the input sets differ.
class InputPool {
 public:
  const std::byte* slice(DType dt, std::size_t elements, std::uint64_t salt) {
    auto& pool = pools_[static_cast<int>(dt)];
    const std::size_t need = elements + kSlack;
    if (pool.size() < need * dtype_size(dt)) {
      std::mt19937_64 rng(0x5EEDu + static_cast<unsigned>(dt));
      std::normal_distribution<float> normal(0.0f, 1.0f);
      pool.resize(need * dtype_size(dt));
      for (std::size_t i = 0; i < need; ++i) cases::put(pool.data(), dt, static_cast<std::int64_t>(i), normal(rng));
    }
    const std::size_t shift = static_cast<std::size_t>((salt * 0x9E3779B97F4A7C15ull) >> 40) % kSlack;
    return pool.data() + shift * dtype_size(dt);
  }

 private:
  static constexpr std::size_t kSlack = 1 << 16;
  std::vector<std::byte> pools_[3];
};

// One input set. The forward's out (and lse) are one tensor shared by every set; the backward's inputs out, lse and
// dout are the set's own, out and lse written by a forward of the set's q, k, v.
struct InputSet {
  Tensor q, k, v, out, lse, dout;
};

// Elements of a contiguous tensor that are NaN or infinite.
std::int64_t count_nonfinite(const Tensor& t) {
  std::vector<std::byte> host(t.extent_bytes());
  t.download(host.data(), host.size());
  std::int64_t bad = 0;
  const std::int64_t elems = t.shape().numel();
  for (std::int64_t i = 0; i < elems; ++i) bad += std::isfinite(cases::get(host.data(), t.dtype(), i)) ? 0 : 1;
  return bad;
}

// ---- Output. ---------------------------------------------------------------------------------------------------

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), f, v);
  return buf;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c == '\n' ? ' ' : c;
  }
  return out + "\"";
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

void print_header() {
  std::printf("%-8s %-16s %-5s %4s %6s %4s %6s %6s %4s %4s %9s %8s  %s\n", "backend", "path", "dtype", "d", "causal",
              "B", "Sq", "Sk", "Hq", "Hkv", "ms", "TFLOP/s", "kernel / status");
}

void print_row(const Row& r) {
  std::string tail = r.status == "ok" ? r.kernel : r.status + ": " + r.note;
  if (!r.variants.empty()) tail = "[" + r.variants + "] " + tail;
  if (r.pass != "fwd")
    tail = r.pass + ": " + tail +
           (r.status == "ok" ? ", workspace " + std::to_string(r.workspace_bytes) + " bytes" : std::string());
  std::printf("%-8s %-16s %-5s %4lld %6s %4lld %6lld %6lld %4lld %4lld %9s %8s  %s\n", r.backend.c_str(),
              r.path.c_str(), r.dtype.c_str(), static_cast<long long>(r.head_dim), r.causal ? "yes" : "no",
              static_cast<long long>(r.batch), static_cast<long long>(r.seqlen_q), static_cast<long long>(r.seqlen_k),
              static_cast<long long>(r.heads_q), static_cast<long long>(r.heads_kv),
              r.status == "ok" ? fmt("%.4f", r.ms).c_str() : "-",
              r.status != "ok" ? "-" : fmt(r.tflops >= 10 ? "%.1f" : "%.3g", r.tflops).c_str(),
              tail.c_str());
  std::fflush(stdout);
}

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

bool write_file(const std::string& path, const std::string& text, const char* prog) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  f.close();
  if (!f) {
    std::fprintf(stderr, "%s: cannot write %s\n", prog, path.c_str());
    return false;
  }
  return true;
}

// ---- One case. -------------------------------------------------------------------------------------------------

Row run_case(const Device& dev, Path path, const cases::Case& c, Pass pass, const Args& a, Timer& timer,
             InputPool& pool) {
  Row r;
  r.device = dev.info().name;
  r.backend = std::string(to_string(dev.backend()));
  r.path = std::string(to_string(path));
  r.pass = pass_name(pass);
  r.dtype = std::string(to_string(c.dtype));
  r.batch = c.batch, r.seqlen_q = c.seqlen_q, r.seqlen_k = c.seqlen_k;
  r.heads_q = c.heads_q, r.heads_kv = c.heads_kv, r.head_dim = c.head_dim, r.causal = c.causal;
  r.timer = timer.name();
  r.iters = a.iters;
  const bool bwd = pass != Pass::Fwd;
  const Shape qs = Shape::of(c.batch, c.seqlen_q, c.heads_q, c.head_dim);
  const Shape ks = Shape::of(c.batch, c.seqlen_k, c.heads_kv, c.head_dim);
  const Shape ls = Shape::of(c.batch, c.heads_q, c.seqlen_q);
  const std::size_t esz = dtype_size(c.dtype);
  // The backward's sets also hold out, dout and lse.
  const double set_bytes = static_cast<double>((bwd ? 3 : 1) * qs.numel() + 2 * ks.numel()) * static_cast<double>(esz) +
                           (bwd ? static_cast<double>(ls.numel()) * 4 : 0.0);
  const int sets =
      a.sets > 0 ? a.sets : std::clamp(static_cast<int>(std::ceil(kRotationBytes / set_bytes)), 2, kMaxSets);
  r.sets = sets;

  Options opt;
  opt.causal = c.causal;
  opt.path = path;
  opt.cuda_stream = timer.stream();
  opt.allow_reduced_precision_accumulation = a.reduced;
  opt.window_left = a.window_left;
  opt.window_right = a.window_right;
  opt.softcap = a.softcap;
  r.variants = a.variants_name();
  Tensor slopes, sinks;
  try {
    std::vector<float> per_head(static_cast<std::size_t>(c.heads_q));
    if (a.alibi) {
      for (std::size_t h = 0; h < per_head.size(); ++h)
        per_head[h] = std::exp2(-8.0f * float(h + 1) / float(per_head.size()));
      slopes = Tensor::empty(dev, DType::F32, Shape{1, {c.heads_q, 0, 0, 0}});
      slopes.upload(per_head.data(), per_head.size() * 4);
      opt.alibi_slopes = &slopes;
    }
    if (a.sinks) {
      std::fill(per_head.begin(), per_head.end(), 0.5f);
      sinks = Tensor::empty(dev, DType::F32, Shape{1, {c.heads_q, 0, 0, 0}});
      sinks.upload(per_head.data(), per_head.size() * 4);
      opt.sinks = &sinks;
    }
    std::vector<InputSet> in;
    in.reserve(static_cast<std::size_t>(sets));
    std::uint64_t salt = 1;
    Tensor out = Tensor::empty(dev, c.dtype, qs);
    Tensor lse;
    if (a.lse && !bwd) lse = Tensor::empty(dev, DType::F32, ls);
    for (int s = 0; s < sets; ++s) {
      InputSet set{Tensor::empty(dev, c.dtype, qs), Tensor::empty(dev, c.dtype, ks), Tensor::empty(dev, c.dtype, ks),
                   out, lse, {}};
      if (bwd) {
        set.out = s == 0 ? out : Tensor::empty(dev, c.dtype, qs);
        set.lse = Tensor::empty(dev, DType::F32, ls);
        set.dout = Tensor::empty(dev, c.dtype, qs);
      }
      for (Tensor* t : {&set.q, &set.k, &set.v, &set.dout}) {
        if (!t->defined()) continue;
        const std::size_t n = static_cast<std::size_t>(t->shape().numel());
        t->upload(pool.slice(c.dtype, n, salt++), n * esz);
      }
      in.push_back(std::move(set));
    }
    Tensor dq, dk, dv, workspace;
    if (bwd) {
      dq = Tensor::empty(dev, c.dtype, qs);
      dk = Tensor::empty(dev, c.dtype, ks);
      dv = Tensor::empty(dev, c.dtype, ks);
    }
    const auto lse_of = [](InputSet& s) { return s.lse.defined() ? &s.lse : nullptr; };

    InputSet& first = in[0];
    try {
      const Result fwd = plan_attention(first.q, first.k, first.v, first.out, lse_of(first), opt);
      r.kernel = fwd.kernel;
      if (bwd) {
        const Result b = plan_attention_backward(first.q, first.k, first.v, first.out, first.lse, first.dout, dq, dk,
                                                 dv, opt);
        r.kernel = pass == Pass::Bwd ? b.kernel : fwd.kernel + " + " + b.kernel;
        r.workspace_bytes = b.workspace_bytes;
      }
    } catch (const Error& e) {
      if (e.code() != ErrorCode::Unsupported) throw;
      r.status = "skipped";
      r.note = e.what();
      return r;
    }
    if (r.workspace_bytes > 0) {  // once, as a framework's caching allocator would hand it over
      const auto words = static_cast<std::int64_t>((r.workspace_bytes + 3) / 4);
      workspace = Tensor::empty(dev, DType::F32, Shape::of(1, 1, words));
      opt.workspace = &workspace;
    }

    std::vector<Tensor*> outputs{&out};  // poisoned, so an output the kernel never writes shows up as NaN below
    if (bwd) outputs = {&dq, &dk, &dv};
    if (a.check)
      for (Tensor* t : outputs)
        if (t->extent_bytes() <= kMaxCheckBytes) {
          std::vector<std::byte> nan(t->extent_bytes(), cases::kPoisonByte);
          t->upload(nan.data(), nan.size());
        }
    // Warm up by count and by time: GPU clocks ramp up after an idle gap. With one warm-up call, the H200's Vulkan
    // medians sat up to 3x below the best call (bench/results/2026-11-29_h200_persistent_sm90). The pipeline is built
    // first: seconds without the driver's shader cache, the GPU idle meanwhile and its clock down to 345 MHz; the
    // timed warm-up starts after it, or the clock may not ramp back up in time (the "slow mode",
    // bench/results/2026-11-29_h200_sm90_tma_store_vk_clocks).
    prepare_attention(first.q, first.k, first.v, first.out, lse_of(first), opt);
    if (pass == Pass::Bwd)  // the backward reads each set's out and lse
      for (InputSet& s : in) attention_forward(s.q, s.k, s.v, s.out, &s.lse, opt);
    const auto call = [&](InputSet& s) {
      Result res;
      if (pass != Pass::Bwd) res = attention_forward(s.q, s.k, s.v, s.out, lse_of(s), opt);
      if (!bwd) return res.kernel;
      const Result b = attention_backward(s.q, s.k, s.v, s.out, s.lse, s.dout, dq, dk, dv, opt);
      return pass == Pass::Bwd ? b.kernel : res.kernel + " + " + b.kernel;
    };
    const auto w0 = std::chrono::steady_clock::now();
    for (int i = 0; i < a.warmup || (i < 10000 && std::chrono::duration<double, std::milli>(
                                                      std::chrono::steady_clock::now() - w0).count() < a.warmup_ms);
         ++i) {
      call(in[static_cast<std::size_t>(i % sets)]);
      if (i % 8 == 7) dev.sync();
    }
    dev.sync();
    timer.collect();
    std::vector<double> times;
    for (int i = 0; i < a.iters; ++i) {
      InputSet& s = in[static_cast<std::size_t>(i % sets)];
      timer.begin();
      std::string kernel = call(s);
      timer.end();
      if (i == 0) r.kernel = std::move(kernel);
      // Collect in chunks so a slow backend's host timer doesn't hold thousands of entries; events are cheap.
      if ((i + 1) % 64 == 0) {
        auto t = timer.collect();
        times.insert(times.end(), t.begin(), t.end());
      }
    }
    auto t = timer.collect();
    times.insert(times.end(), t.begin(), t.end());
    dev.sync();
    if (const char* e = std::getenv("FT_BENCH_TIMES"); e && *e == '1') {  // every call's time, in order (diagnosis)
      std::string line = "times_ms " + r.path + " " + r.pass + " d" + std::to_string(c.head_dim) + " S" +
                         std::to_string(c.seqlen_q) + (c.causal ? " causal:" : ":");
      for (double t : times) line += fmt(" %.3f", t);
      std::puts(line.c_str());
    }
    std::sort(times.begin(), times.end());
    if (times.empty()) throw Error(ErrorCode::BackendFailure, "no timings collected");
    const std::size_t n = times.size();
    r.ms = n % 2 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
    r.ms_min = times.front();
    r.tflops = pass_flops(c, pass) / (r.ms * 1e-3) / 1e12;
    r.status = "ok";

    if (a.check) {
      const char* names[] = {"dq", "dk", "dv"};
      for (std::size_t i = 0; i < outputs.size(); ++i) {
        if (outputs[i]->extent_bytes() > kMaxCheckBytes) continue;
        if (const std::int64_t bad = count_nonfinite(*outputs[i])) {
          r.status = "error";
          r.note += (r.note.empty() ? "" : "; ") + std::string(bwd ? names[i] : "out") + ": " + std::to_string(bad) +
                    " non-finite elements (unwritten or overflowed)";
        }
      }
    }
  } catch (const Error& e) {
    r.status = "error";
    r.note = std::string(to_string(e.code())) + ": " + e.what();
  }
  return r;
}

std::string rows_to_csv(const std::vector<Row>& rows) {
  std::string out =
      "device,backend,path,kernel,dtype,batch,seqlen_q,seqlen_k,heads_q,heads_kv,head_dim,causal,ms,ms_min,tflops,"
      "timer,iters,sets,status,note,pass,workspace_bytes,variants\n";
  for (const Row& r : rows) {
    out += csv_field(r.device) + "," + r.backend + "," + r.path + "," + csv_field(r.kernel) + "," + r.dtype + "," +
           std::to_string(r.batch) + "," + std::to_string(r.seqlen_q) + "," + std::to_string(r.seqlen_k) + "," +
           std::to_string(r.heads_q) + "," + std::to_string(r.heads_kv) + "," + std::to_string(r.head_dim) + "," +
           (r.causal ? "1" : "0") + "," + fmt("%.6f", r.ms) + "," + fmt("%.6f", r.ms_min) + "," +
           fmt("%.3f", r.tflops) + "," + r.timer + "," + std::to_string(r.iters) + "," + std::to_string(r.sets) +
           "," + r.status + "," + csv_field(r.note) + "," + r.pass + "," + std::to_string(r.workspace_bytes) + "," +
           csv_field(r.variants) + "\n";
  }
  return out;
}

std::string rows_to_json(const std::vector<Row>& rows, const std::string& command, const std::string& date) {
  std::string out = "{\n  \"tool\": \"flashtile_bench\",\n  \"flashtile_version\": " +
                    json_string(version_string()) + ",\n  \"date\": " + json_string(date) +
                    ",\n  \"command\": " + json_string(command) + ",\n  \"devices\": [";
  bool first = true;
  for (const auto& d : Device::list()) {
    out += first ? "\n    {" : ",\n    {";
    first = false;
    out += "\"backend\": " + json_string(std::string(to_string(d.backend))) + ", \"index\": " +
           std::to_string(d.index) + ", \"name\": " + json_string(d.name) +
           ", \"software\": " + (d.software ? "true" : "false") + ", \"caps\": {";
    bool fc = true;
    for (const auto& [k, v] : d.caps) {
      out += (fc ? "" : ", ") + json_string(k) + ": " + json_string(v);
      fc = false;
    }
    out += "}}";
  }
  out += "\n  ],\n  \"results\": [";
  first = true;
  for (const Row& r : rows) {
    out += first ? "\n    {" : ",\n    {";
    first = false;
    out += "\"device\": " + json_string(r.device) + ", \"backend\": " + json_string(r.backend) +
           ", \"path\": " + json_string(r.path) + ", \"kernel\": " + json_string(r.kernel) +
           ", \"dtype\": " + json_string(r.dtype) + ", \"batch\": " + std::to_string(r.batch) +
           ", \"seqlen_q\": " + std::to_string(r.seqlen_q) + ", \"seqlen_k\": " + std::to_string(r.seqlen_k) +
           ", \"heads_q\": " + std::to_string(r.heads_q) + ", \"heads_kv\": " + std::to_string(r.heads_kv) +
           ", \"head_dim\": " + std::to_string(r.head_dim) + ", \"causal\": " + (r.causal ? "true" : "false") +
           ", \"ms\": " + fmt("%.6f", r.ms) + ", \"ms_min\": " + fmt("%.6f", r.ms_min) +
           ", \"tflops\": " + fmt("%.3f", r.tflops) + ", \"timer\": " + json_string(r.timer) +
           ", \"iters\": " + std::to_string(r.iters) + ", \"sets\": " + std::to_string(r.sets) +
           ", \"status\": " + json_string(r.status) + ", \"note\": " + json_string(r.note) +
           ", \"pass\": " + json_string(r.pass) + ", \"workspace_bytes\": " + std::to_string(r.workspace_bytes) +
           ", \"variants\": " + json_string(r.variants) + "}";
  }
  out += "\n  ]\n}\n";
  return out;
}

}  // namespace

}  // namespace flashtile::bench

int bench_main(int argc, char** argv, const char* prog) {
  using namespace flashtile;
  using namespace flashtile::bench;
  Args a;
  try {
    a = parse_args(argc, argv);
  } catch (const Error& e) {
    std::fprintf(stderr, "%s: %s\n", prog, e.what());
    usage(stderr, prog);
    return 2;
  }
  if (a.help) {
    usage(stdout, prog);
    return 0;
  }
  std::string command;
  for (int i = 0; i < argc; ++i) command += (i ? " " : "") + std::string(argv[i]);
  const std::string date = utc_now();

  std::vector<DeviceInfo> devices;
  try {
    for (const auto& d : Device::list()) {
      if (a.backends.empty() ? d.software : !allowed(a.backends, d.backend)) continue;
      devices.push_back(d);
    }
  } catch (const Error& e) {
    std::fprintf(stderr, "%s: listing devices: %s\n", prog, e.what());
    return 1;
  }
  std::printf("flashtile_bench %s, %s\n", version_string(), date.c_str());
  if (devices.empty()) {
    std::printf("no device selected (%s); software devices (CPU, lavapipe) run only with --backend\n",
                a.backends.empty() ? "no hardware device" : "none of the asked backends");
    for (Backend b : {Backend::Cuda, Backend::Vulkan}) {
      const std::string why = Device::unavailable_reason(b);
      if (!why.empty()) std::printf("  %s: %s\n", std::string(to_string(b)).c_str(), why.c_str());
    }
  }
  const auto cases = select_cases(a);
  std::vector<Row> rows;
  InputPool pool;
  bool failed = false;
  for (const auto& info : devices) {
    Device dev = Device::open(info.backend, info.index);
    std::string timer_note;
    auto timer = make_timer(dev, timer_note);
    std::printf("\n== %s #%d: %s; paths:", std::string(to_string(info.backend)).c_str(), info.index,
                info.name.c_str());
    for (Path p : info.paths) std::printf(" %s", std::string(to_string(p)).c_str());
    std::printf("; timer: %s%s%s\n", timer->name(), timer_note.empty() ? "" : "; ", timer_note.c_str());
    print_header();
    for (Path p : info.paths) {
      if (!allowed(a.paths, p)) continue;
      for (const auto& c : cases)
        for (Pass pass : a.passes) {
          Row r = run_case(dev, p, c, pass, a, *timer, pool);
          failed |= r.status == "error";
          print_row(r);
          rows.push_back(std::move(r));
        }
    }
  }
  bool wrote = true;
  if (!a.csv.empty()) wrote &= write_file(a.csv, rows_to_csv(rows), prog);
  if (!a.json.empty()) wrote &= write_file(a.json, rows_to_json(rows, command, date), prog);
  return failed || !wrote ? 1 : 0;
}
