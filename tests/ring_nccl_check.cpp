// Ring attention over NCCL on real GPUs, one thread per rank (flashtile/ring_nccl.hpp), against the single-GPU result:
// for every rank count 2..G (G visible CUDA devices), contiguous and zigzag, causal and not, forward (out, lse) and
// backward (dq, dk, dv) within the conformance tolerances. Exits 77 with the reason where fewer than 2 CUDA devices
// are visible or the NCCL transport is unavailable.
//   ring_nccl_check                          the correctness grid
//   ring_nccl_check --bench [--seq 131072]   fwd+bwd time of the ring on G GPUs vs attention on one (bf16, d 128,
//                                            causal, zigzag and contiguous), the scaling table
#include "cases.hpp"
#include "reference.hpp"
#include "values.hpp"

#include <flashtile/flashtile.hpp>
#include <flashtile/ring_nccl.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace flashtile;

namespace {

constexpr int kSkip = 77;

struct Config {
  int world = 2;
  Sharding sharding = Sharding::Contiguous;
  bool causal = false;
  DType dtype = DType::BF16;
  std::int64_t batch = 2, seq = 0, heads_q = 8, heads_kv = 2, dim = 128;
  int iters = 0;  // > 0: time, do not compare
};

// Every result of one run, as global [B, S, H, D] (lse [B, H, S]) f32 host arrays.
struct Outputs {
  std::vector<float> out, lse, dq, dk, dv;
  double ms = 0;  // fwd+bwd, median over iters (the slowest rank's)
};

struct Globals {
  std::vector<float> q, k, v, dout;  // rounded to the dtype
};

Tensor upload(const Device& dev, DType dt, const Shape& s, const std::vector<float>& values) {
  std::vector<std::byte> img(values.size() * dtype_size(dt));
  for (std::size_t i = 0; i < values.size(); ++i) cases::put(img.data(), dt, std::int64_t(i), values[i]);
  Tensor t = Tensor::empty(dev, dt, s);
  t.upload(img.data(), img.size());
  return t;
}

template <class Call>
double median_ms(int iters, const Device& dev, Call&& call) {
  std::vector<double> ms;
  for (int i = 0; i < std::max(iters, 1); ++i) {
    dev.sync();
    const auto t0 = std::chrono::steady_clock::now();
    call();
    dev.sync();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// Attention of the whole sequence on cuda:0: the single-GPU result.
Outputs single_gpu(const Config& c, const Globals& g) {
  const Device dev = Device::open(Backend::Cuda, 0);
  const Shape qs = Shape::of(c.batch, c.seq, c.heads_q, c.dim), ks = Shape::of(c.batch, c.seq, c.heads_kv, c.dim);
  const Tensor q = upload(dev, c.dtype, qs, g.q), k = upload(dev, c.dtype, ks, g.k), v = upload(dev, c.dtype, ks, g.v),
               dout = upload(dev, c.dtype, qs, g.dout);
  Tensor out = Tensor::empty(dev, c.dtype, qs), lse = Tensor::empty(dev, DType::F32, Shape::of(c.batch, c.heads_q, c.seq));
  Tensor dq = Tensor::empty(dev, c.dtype, qs), dk = Tensor::empty(dev, c.dtype, ks), dv = Tensor::empty(dev, c.dtype, ks);
  Options opt;
  opt.causal = c.causal;
  Outputs o;
  o.ms = median_ms(c.iters, dev, [&] {
    attention_forward(q, k, v, out, &lse, opt);
    attention_backward(q, k, v, out, lse, dout, dq, dk, dv, opt);
  });
  if (c.iters > 0) return o;
  o.out = cases::download_floats(out);
  o.lse = cases::download_floats(lse);
  o.dq = cases::download_floats(dq);
  o.dk = cases::download_floats(dk);
  o.dv = cases::download_floats(dv);
  return o;
}

// Rank r's rows of a global [B, S, H, D] host array placed from its local [B, L, H, D] one (lse: [B, H, L]).
void place(std::vector<float>& global, const std::vector<float>& local, const std::vector<std::int64_t>& pos,
           std::int64_t outer, std::int64_t inner, std::int64_t seq, bool lse_layout) {
  const auto L = std::int64_t(pos.size());
  for (std::int64_t a = 0; a < outer; ++a)
    for (std::int64_t i = 0; i < L; ++i)
      for (std::int64_t e = 0; e < inner; ++e) {
        const std::int64_t from = lse_layout ? a * L + i : (a * L + i) * inner + e;
        const std::int64_t to = lse_layout ? a * seq + pos[std::size_t(i)] : (a * seq + pos[std::size_t(i)]) * inner + e;
        global[std::size_t(to)] = local[std::size_t(from)];
      }
}

// One thread per rank: its device, a communicator, its shards, the ring forward and backward.
Outputs ring(const Config& c, const Globals& g) {
  const NcclUniqueId id = nccl_unique_id();
  Outputs o;
  o.out.resize(g.q.size()), o.dq.resize(g.q.size()), o.dk.resize(g.k.size()), o.dv.resize(g.k.size());
  o.lse.resize(std::size_t(c.batch * c.heads_q * c.seq));
  std::vector<double> ms(std::size_t(c.world));
  std::vector<std::string> errors(std::size_t(c.world));
  std::vector<std::thread> threads;
  for (int r = 0; r < c.world; ++r)
    threads.emplace_back([&, r] {
      try {
        const Device dev = Device::open(Backend::Cuda, r);
        const RingLayout layout{c.world, r, c.sharding};
        const std::int64_t L = c.seq / c.world;
        const Shape qs = Shape::of(c.batch, c.seq, c.heads_q, c.dim), ks = Shape::of(c.batch, c.seq, c.heads_kv, c.dim);
        const Shape lq = Shape::of(c.batch, L, c.heads_q, c.dim), lk = Shape::of(c.batch, L, c.heads_kv, c.dim);
        auto local = [&](const std::vector<float>& values, const Shape& gs, const Shape& ls) {
          Tensor t = Tensor::empty(dev, c.dtype, ls);
          shard_sequence(t, upload(dev, c.dtype, gs, values), layout);
          return t;
        };
        const Tensor q = local(g.q, qs, lq), k = local(g.k, ks, lk), v = local(g.v, ks, lk), dout = local(g.dout, qs, lq);
        Tensor out = Tensor::empty(dev, c.dtype, lq), lse = Tensor::empty(dev, DType::F32, Shape::of(c.batch, c.heads_q, L));
        Tensor dq = Tensor::empty(dev, c.dtype, lq), dk = Tensor::empty(dev, c.dtype, lk), dv = Tensor::empty(dev, c.dtype, lk);
        ncclComm* comm = nccl_comm_init(c.world, r, id, dev);
        Options opt;
        opt.causal = c.causal;
        const NcclRing ring{comm, c.sharding};
        ms[std::size_t(r)] = median_ms(c.iters, dev, [&] {
          ring_attention_forward(ring, q, k, v, out, &lse, opt);
          ring_attention_backward(ring, q, k, v, out, lse, dout, dq, dk, dv, opt);
        });
        nccl_comm_destroy(comm);
        if (c.iters > 0) return;
        const std::vector<std::int64_t> pos = ring_positions(layout, L);
        place(o.out, cases::download_floats(out), pos, c.batch, c.heads_q * c.dim, c.seq, false);
        place(o.dq, cases::download_floats(dq), pos, c.batch, c.heads_q * c.dim, c.seq, false);
        place(o.dk, cases::download_floats(dk), pos, c.batch, c.heads_kv * c.dim, c.seq, false);
        place(o.dv, cases::download_floats(dv), pos, c.batch, c.heads_kv * c.dim, c.seq, false);
        place(o.lse, cases::download_floats(lse), pos, c.batch * c.heads_q, 1, c.seq, true);
      } catch (const std::exception& e) {
        errors[std::size_t(r)] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  for (int r = 0; r < c.world; ++r)
    if (!errors[std::size_t(r)].empty()) throw Error(ErrorCode::BackendFailure, "rank " + std::to_string(r) + ": " + errors[std::size_t(r)]);
  o.ms = *std::max_element(ms.begin(), ms.end());
  return o;
}

Globals random_globals(const Config& c, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  auto fill = [&](std::int64_t heads) {
    std::vector<float> v(std::size_t(c.batch * c.seq * heads * c.dim));
    for (float& x : v) x = cases::round_to(c.dtype, normal(rng));
    return v;
  };
  Globals g;
  g.q = fill(c.heads_q), g.k = fill(c.heads_kv), g.v = fill(c.heads_kv), g.dout = fill(c.heads_q);
  return g;
}

double lse_error(const std::vector<float>& got, const std::vector<float>& want) {
  double worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(got[i])) return INFINITY;
    worst = std::max(worst, std::abs(double(got[i]) - want[i]) / std::max(1.0, std::abs(double(want[i]))));
  }
  return worst;
}

int check_grid(int gpus) {
  int failed = 0, ran = 0;
  std::printf("%-5s %-10s %-6s %-6s %10s %10s %10s %10s %10s  %s\n", "ranks", "sharding", "causal", "seq", "out", "lse",
              "dq", "dk", "dv", "result");
  for (int world = 2; world <= gpus; ++world)
    for (Sharding sh : {Sharding::Contiguous, Sharding::Zigzag})
      for (bool causal : {false, true}) {
        Config c;
        c.world = world, c.sharding = sh, c.causal = causal;
        c.seq = 2 * world * 160;  // chunks of 160 rows: not a multiple of any kernel's tile
        const Globals g = random_globals(c, 46 + std::uint64_t(ran));
        const Outputs want = single_gpu(c, g), got = ring(c, g);
        const double e[] = {cases::rel_l2_error(got.out, want.out), lse_error(got.lse, want.lse),
                            cases::rel_l2_error(got.dq, want.dq), cases::rel_l2_error(got.dk, want.dk),
                            cases::rel_l2_error(got.dv, want.dv)};
        const bool ok = e[0] <= cases::out_tolerance(c.dtype) && e[1] <= cases::lse_tolerance(c.dtype) &&
                        e[2] <= cases::grad_tolerance(c.dtype) && e[3] <= cases::grad_tolerance(c.dtype) &&
                        e[4] <= cases::grad_tolerance(c.dtype);
        std::printf("%-5d %-10s %-6s %-6lld %10.2e %10.2e %10.2e %10.2e %10.2e  %s\n", world,
                    std::string(to_string(sh)).c_str(), causal ? "yes" : "no", (long long)c.seq, e[0], e[1], e[2], e[3],
                    e[4], ok ? "OK" : "MISMATCH");
        failed += !ok;
        ++ran;
      }
  std::printf("ring_nccl_check: %d of %d configurations within tolerance (bf16, B 2, Hq/Hkv 8/2, d 128; vs one GPU)\n",
              ran - failed, ran);
  return failed ? 1 : 0;
}

int bench(int gpus, std::int64_t seq, int iters) {
  std::printf("%-5s %-10s %-8s %14s %14s %8s\n", "ranks", "sharding", "seq", "one GPU ms", "ring ms", "speedup");
  for (Sharding sh : {Sharding::Zigzag, Sharding::Contiguous}) {
    Config c;
    c.world = gpus, c.sharding = sh, c.causal = true, c.batch = 1, c.heads_q = c.heads_kv = 16, c.seq = seq;
    c.iters = iters;
    const Globals g = random_globals(c, 4600);
    const double one = single_gpu(c, g).ms, many = ring(c, g).ms;
    std::printf("%-5d %-10s %-8lld %14.2f %14.2f %7.2fx\n", gpus, std::string(to_string(sh)).c_str(), (long long)seq, one,
                many, one / many);
  }
  std::printf("fwd+bwd, bf16, causal, B 1, H 16, d 128; medians of %d, host clock around synchronous calls\n", iters);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  bool bench_mode = false;
  std::int64_t seq = 131072;
  int iters = 5;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--bench")) bench_mode = true;
    else if (!std::strcmp(argv[i], "--seq") && i + 1 < argc) seq = std::atoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--iters") && i + 1 < argc) iters = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: ring_nccl_check [--bench [--seq N] [--iters N]]\n");
      return 2;
    }
  }
  int gpus = 0;
  for (const DeviceInfo& d : Device::list()) gpus += d.backend == Backend::Cuda;
  if (gpus < 2) {
    std::printf("SKIP: ring_nccl_check needs 2 or more CUDA devices; %d visible (%s)\n", gpus,
                gpus == 0 ? Device::unavailable_reason(Backend::Cuda).c_str() : "one");
    return kSkip;
  }
  if (const std::string why = nccl_unavailable_reason(); !why.empty()) {
    std::printf("SKIP: ring_nccl_check: %s\n", why.c_str());
    return kSkip;
  }
  try {
    return bench_mode ? bench(gpus, seq, iters) : check_grid(gpus);
  } catch (const std::exception& e) {
    std::printf("ring_nccl_check: error: %s\n", e.what());
    return 1;
  }
}
