// `flashtile run --ring N [--zigzag] [--backward] --check`: ring attention over N simulated ranks on one device (the
// same sharding, steps and merge as over NCCL, messages as device copies), compared with full attention of the whole
// sequence on the CPU reference (src/cases/ring_check.hpp).
#include "cli.hpp"
#include "ring_check.hpp"

#include <cmath>
#include <cstdio>

namespace flashtile::cli {

namespace {

std::string json_error(double e) {
  if (!std::isfinite(e)) return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3e", e);
  return buf;
}

}  // namespace

int run_ring(const Args& args) {
  cases::RingCase rc;
  constexpr long long kMaxRanks = 1024;
  rc.world = static_cast<int>(args.integer("ring", 2, 1, kMaxRanks));
  rc.sharding = args.has("zigzag") ? Sharding::Zigzag : Sharding::Contiguous;
  rc.backward = args.has("backward");
  rc.compare = args.has("check");
  cases::Case& c = rc.c;
  c.batch = args.integer("batch", 1, 1);
  c.seqlen_q = c.seqlen_k = args.integer("seq", 512, 1);
  if (args.has("seq-k") && args.integer("seq-k", c.seqlen_q, 1) != c.seqlen_q)
    throw Error(ErrorCode::InvalidArgument, "--seq-k: the ring is self-attention over one sequence: leave it out");
  c.heads_q = args.integer("heads", 8, 1);
  c.heads_kv = args.integer("heads-kv", c.heads_q, 1);
  c.head_dim = args.integer("dim", 64, 1);
  c.dtype = parse_dtype(args.str("dtype", "f16"));
  if (args.has("causal") && args.has("no-causal")) throw Error(ErrorCode::InvalidArgument, "--causal and --no-causal: pick one");
  c.causal = !args.has("no-causal");
  if (args.has("scale")) c.scale = static_cast<float>(args.real("scale", 0));
  if (c.scale && !std::isfinite(*c.scale))
    throw Error(ErrorCode::InvalidArgument, "--scale: must be a finite number, got " + args.str("scale", ""));
  for (const char* no : {"path", "deterministic", "reduced-precision", "iters", "warmup"})
    if (args.has(no)) throw Error(ErrorCode::InvalidArgument, std::string("--") + no + ": not taken with --ring");
  const long long parts = rc.sharding == Sharding::Zigzag ? 2LL * rc.world : rc.world;
  if (c.seqlen_q % parts != 0)
    throw Error(ErrorCode::InvalidArgument, "--seq: " + std::to_string(c.seqlen_q) + " must be divisible by " +
                                                std::to_string(parts) + (rc.sharding == Sharding::Zigzag
                                                                             ? " (2 x --ring, for --zigzag)"
                                                                             : " (--ring)"));
  const Device dev = Device::open(parse_backend(args.str("backend", "auto")),
                                  static_cast<int>(args.integer("device", 0, 0, std::numeric_limits<int>::max())));
  const auto seed = static_cast<std::uint64_t>(args.integer("seed", 1234, 0));
  const cases::RingCheck r = cases::check_ring(dev, rc, seed);

  const char* grads[] = {"dq", "dk", "dv"};
  if (args.has("json")) {
    std::string js = "{\"device\":\"" + json_escape(dev.info().name) + "\",\"ring\":" + std::to_string(rc.world) +
                     ",\"sharding\":\"" + std::string(to_string(rc.sharding)) + "\",\"path\":\"" +
                     std::string(to_string(r.forward.path)) + "\",\"kernel\":\"" + json_escape(r.forward.kernel) +
                     "\",\"batch\":" + std::to_string(c.batch) + ",\"seq\":" + std::to_string(c.seqlen_q) +
                     ",\"heads\":" + std::to_string(c.heads_q) + ",\"heads_kv\":" + std::to_string(c.heads_kv) +
                     ",\"dim\":" + std::to_string(c.head_dim) + ",\"dtype\":\"" + std::string(to_string(c.dtype)) +
                     "\",\"causal\":" + (c.causal ? "true" : "false") + ",\"forward_ms\":" +
                     json_error(r.forward_ms) + ",\"out_rel_error\":" + (rc.compare ? json_error(r.out_error) : "null") +
                     ",\"lse_error\":" + (rc.compare ? json_error(r.lse_error) : "null");
    if (rc.backward) {
      js += ",\"backward_ms\":" + json_error(r.backward_ms);
      for (std::size_t i = 0; i < 3; ++i)
        js += ",\"" + std::string(grads[i]) + "_rel_error\":" + (rc.compare ? json_error(r.grad_error[i]) : "null");
    }
    std::printf("%s,\"ok\":%s}\n", js.c_str(), r.ok ? "true" : "false");
    return r.ok ? 0 : 1;
  }
  std::printf("device   %s (%s)\n", dev.info().name.c_str(), std::string(to_string(dev.info().backend)).c_str());
  std::printf("ring     %d simulated ranks, %s sharding, %lld rows each\n", rc.world,
              std::string(to_string(rc.sharding)).c_str(), static_cast<long long>(c.seqlen_q / rc.world));
  std::printf("path     %s  kernel %s\n", std::string(to_string(r.forward.path)).c_str(), r.forward.kernel.c_str());
  std::printf("problem  batch %lld, seq %lld, heads %lld/%lld, dim %lld, %s%s\n", (long long)c.batch,
              (long long)c.seqlen_q, (long long)c.heads_q, (long long)c.heads_kv, (long long)c.head_dim,
              std::string(to_string(c.dtype)).c_str(), c.causal ? ", causal" : "");
  std::printf("time     forward %.3f ms", r.forward_ms);
  if (rc.backward) std::printf(", backward %.3f ms", r.backward_ms);
  std::printf(" (one call each, every rank in turn on one device)\n");
  if (rc.compare) {
    std::printf("check    forward vs full attention on the CPU reference: out %.2e (tolerance %.0e), lse %.2e "
                "(tolerance %.0e) %s\n", r.out_error, r.out_tol, r.lse_error, r.lse_tol,
                r.out_error <= r.out_tol && r.lse_error <= r.lse_tol ? "OK" : "MISMATCH");
    if (rc.backward) {
      bool ok = true;
      for (double e : r.grad_error) ok = ok && e <= r.grad_tol;
      std::printf("check    backward vs the CPU reference backward: dq %.2e, dk %.2e, dv %.2e relative L2 error "
                  "(tolerance %.0e) %s\n", r.grad_error[0], r.grad_error[1], r.grad_error[2], r.grad_tol,
                  ok ? "OK" : "MISMATCH");
    }
  }
  return r.ok ? 0 : 1;
}

}  // namespace flashtile::cli
