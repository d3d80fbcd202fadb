// The one-device ring: N simulated ranks in one process run ring.cpp's algorithm in lockstep, phase by phase, over a
// transport whose messages are device copies into the receiver's buffers, as NCCL delivers them: a rank that read or
// wrote a buffer while a message to it was in flight would get wrong results here too.
#include "ring/ring.hpp"

#include "validate_rules.hpp"

#include <memory>
#include <string>

namespace flashtile {
namespace detail {
namespace {

// The simulated network: per channel, the messages of the current round until every rank has posted, then delivered
// all at once (rank r's copied into rank r + 1's receive buffers).
class SimHub {
 public:
  explicit SimHub(int world) {
    for (Round& r : rounds_) {
      r.send.resize(std::size_t(world));
      r.recv.resize(std::size_t(world));
      r.posted.assign(std::size_t(world), 0);
    }
  }
  void post(int rank, Channel c, const std::vector<Tensor>& send, const std::vector<Tensor*>& recv) {
    Round& r = rounds_[std::size_t(c)];
    const auto at = std::size_t(rank);
    if (r.posted[at] != r.delivered)
      throw Error(ErrorCode::BackendFailure, "simulated ring: rank " + std::to_string(rank) +
                                                 " posted a second message on a channel before waiting for the first");
    r.send[at] = send;
    r.recv[at] = recv;
    ++r.posted[at];
    for (int p : r.posted)
      if (p != r.delivered + 1) return;
    for (std::size_t from = 0; from < r.send.size(); ++from) {
      auto& to = r.recv[(from + 1) % r.send.size()];
      for (std::size_t i = 0; i < to.size(); ++i) ring_op(RingOpKind::Copy, *to[i], r.send[from][i]);
    }
    ++r.delivered;
  }
  void wait(int rank, Channel c) const {
    const Round& r = rounds_[std::size_t(c)];
    if (r.delivered < r.posted[std::size_t(rank)])
      throw Error(ErrorCode::BackendFailure, "simulated ring: rank " + std::to_string(rank) +
                                                 " waits for a message not every rank has posted (a real ring would "
                                                 "deadlock)");
  }
 private:
  struct Round {
    std::vector<std::vector<Tensor>> send;
    std::vector<std::vector<Tensor*>> recv;
    std::vector<int> posted;
    int delivered = 0;
  };
  std::array<Round, kChannels> rounds_;
};

class SimTransport final : public RingTransport {
 public:
  SimTransport(SimHub& hub, int rank) : hub_(hub), rank_(rank) {}
  void post(Channel c, const std::vector<Tensor>& send, const std::vector<Tensor*>& recv) override {
    hub_.post(rank_, c, send, recv);
  }
  void wait(Channel c) override { hub_.wait(rank_, c); }

 private:
  SimHub& hub_;
  int rank_;
};

// Every rank's vector holds one tensor per rank, all of rank 0's shape (the ranks of one ring hold equal shards).
void check_ranks(std::size_t world, const std::vector<std::pair<const std::vector<Tensor>*, const char*>>& all) {
  if (world == 0) throw Error(ErrorCode::InvalidArgument, "q: the simulated ring needs at least one rank");
  for (const auto& [ts, name] : all) {
    if (ts->size() != world)
      throw Error(ErrorCode::InvalidArgument, std::string(name) + ": has " + std::to_string(ts->size()) +
                                                  " tensors, one per rank: q has " + std::to_string(world));
    for (std::size_t r = 0; r < world; ++r) {
      rules::require_defined((*ts)[r], name);
      if ((*ts)[r].shape().dims != (*ts)[0].shape().dims)
        throw Error(ErrorCode::ShapeMismatch, std::string(name) + ": rank " + std::to_string(r) + "'s shape " +
                                                  rules::shape_str((*ts)[r].shape()) + " differs from rank 0's " +
                                                  rules::shape_str((*ts)[0].shape()) + " (shards are equal)");
      rules::require_same_device((*ts)[r], name, (*all[0].first)[0]);
    }
  }
}

// Builds rank r's state with make(transport, layout, r) and runs the ranks' phases in lockstep: every post of a
// step, then every compute, then every finish.
template <class Make>
Result run_lockstep(int world, Sharding sharding, Make&& make) {
  SimHub hub(world);
  std::vector<SimTransport> links;
  for (int r = 0; r < world; ++r) links.emplace_back(hub, r);
  std::vector<std::unique_ptr<RingRank>> ranks;
  for (int r = 0; r < world; ++r) ranks.push_back(make(links[std::size_t(r)], RingLayout{world, r, sharding}, std::size_t(r)));
  for (int t = 0; t < world; ++t) {
    for (auto& r : ranks) r->post(t);
    for (auto& r : ranks) r->compute(t);
    for (auto& r : ranks) r->finish(t);
  }
  Result res;
  for (auto& r : ranks) res = r->finalize();
  return res;
}

}  // namespace
}  // namespace detail

Result ring_attention_forward_simulated(Sharding sharding, const std::vector<Tensor>& q, const std::vector<Tensor>& k,
                                        const std::vector<Tensor>& v, std::vector<Tensor>& out,
                                        std::vector<Tensor>* lse, const Options& options) {
  constexpr const char* kWhat = "ring_attention_forward_simulated";
  std::vector<std::pair<const std::vector<Tensor>*, const char*>> all{{&q, "q"}, {&k, "k"}, {&v, "v"}, {&out, "out"}};
  if (lse) all.push_back({lse, "lse"});
  detail::check_ranks(q.size(), all);
  const int world = static_cast<int>(q.size());
  for (int r = 0; r < world; ++r) {  // every check before any work
    const auto i = std::size_t(r);
    (void)plan_attention(q[i], k[i], v[i], out[i], lse ? &(*lse)[i] : nullptr, options);
    detail::check_ring_call({world, r, sharding}, q[i], k[i], options, kWhat);
  }
  return detail::run_lockstep(world, sharding, [&](detail::RingTransport& tr, const RingLayout& l, std::size_t i) {
    return std::make_unique<detail::RingForward>(tr, l, q[i], k[i], v[i], out[i], lse ? &(*lse)[i] : nullptr, options);
  });
}

Result ring_attention_backward_simulated(Sharding sharding, const std::vector<Tensor>& q, const std::vector<Tensor>& k,
                                         const std::vector<Tensor>& v, const std::vector<Tensor>& out,
                                         const std::vector<Tensor>& lse, const std::vector<Tensor>& dout,
                                         std::vector<Tensor>& dq, std::vector<Tensor>& dk, std::vector<Tensor>& dv,
                                         const Options& options) {
  constexpr const char* kWhat = "ring_attention_backward_simulated";
  detail::check_ranks(q.size(), {{&q, "q"}, {&k, "k"}, {&v, "v"}, {&out, "out"}, {&lse, "lse"}, {&dout, "dout"},
                                 {&dq, "dq"}, {&dk, "dk"}, {&dv, "dv"}});
  const int world = static_cast<int>(q.size());
  for (int r = 0; r < world; ++r) {
    const auto i = std::size_t(r);
    (void)plan_attention_backward(q[i], k[i], v[i], out[i], lse[i], dout[i], dq[i], dk[i], dv[i], options);
    detail::check_ring_call({world, r, sharding}, q[i], k[i], options, kWhat);
  }
  return detail::run_lockstep(world, sharding, [&](detail::RingTransport& tr, const RingLayout& l, std::size_t i) {
    return std::make_unique<detail::RingBackward>(tr, l, q[i], k[i], v[i], out[i], lse[i], dout[i], dq[i], dk[i], dv[i],
                                                  options);
  });
}

}  // namespace flashtile
