// Ring attention's algorithm (ring.hpp): the sharding, each step's block, and one rank's forward and backward.
#include "ring/ring.hpp"

#include "validate_rules.hpp"

#include <string>
#include <utility>

namespace flashtile {

std::string_view to_string(Sharding s) { return s == Sharding::Zigzag ? "zigzag" : "contiguous"; }

Sharding parse_sharding(std::string_view s) {
  if (s == "contiguous") return Sharding::Contiguous;
  if (s == "zigzag") return Sharding::Zigzag;
  throw Error(ErrorCode::InvalidArgument, "sharding: must be contiguous or zigzag, got '" + std::string(s) + "'");
}

namespace {

void check_layout(const RingLayout& l, std::int64_t local_len, const char* what) {
  if (l.world < 1 || l.rank < 0 || l.rank >= l.world)
    throw Error(ErrorCode::InvalidArgument, std::string(what) + ": rank " + std::to_string(l.rank) +
                                                " must be in [0, world) with world >= 1, world = " +
                                                std::to_string(l.world));
  if (l.sharding == Sharding::Zigzag && local_len % 2 != 0)
    throw Error(ErrorCode::InvalidArgument, std::string(what) + ": zigzag sharding needs an even local length (two "
                                                "chunks of S/(2N): S divisible by 2N), got " +
                                                std::to_string(local_len));
}

// The chunks a rank holds: (global start, local start, length).
struct Chunk {
  std::int64_t global, local, len;
};
std::vector<Chunk> chunks_of(const RingLayout& l, std::int64_t local_len) {
  if (l.sharding == Sharding::Contiguous) return {{l.rank * local_len, 0, local_len}};
  const std::int64_t c = local_len / 2;
  return {{l.rank * c, 0, c}, {(2 * std::int64_t{l.world} - 1 - l.rank) * c, c, c}};
}

enum class Direction { Shard, Unshard };

void reshard(const Tensor& global, const Tensor& local, const RingLayout& l, Direction dir) {
  using detail::rules::fail;
  const char* what = dir == Direction::Shard ? "shard_sequence" : "unshard_sequence";
  detail::rules::require_defined(global, "global");
  detail::rules::require_defined(local, "local");
  detail::rules::require_rank(global, "global", 4, "[batch, seqlen, heads, head_dim]");
  detail::rules::require_rank(local, "local", 4, "[batch, seqlen / world, heads, head_dim]");
  detail::rules::require_same_device(local, "local", global);
  detail::rules::require_dtype(local, "local", global.dtype(), "global");
  const Shape& g = global.shape();
  check_layout(l, local.shape()[1], what);
  const std::int64_t parts = l.sharding == Sharding::Zigzag ? 2 * std::int64_t{l.world} : l.world;
  if (g[1] % parts != 0)
    fail(ErrorCode::InvalidArgument, std::string("global: seqlen ") + std::to_string(g[1]) + " must be divisible by " +
                                         std::to_string(parts) + " for " + std::string(to_string(l.sharding)) +
                                         " sharding over " + std::to_string(l.world) + " ranks");
  detail::rules::require_shape(local, "local", Shape::of(g[0], g[1] / l.world, g[2], g[3]), "global's shard");
  for (const auto& [t, name] : {std::pair{&global, "global"}, {&local, "local"}})
    if (t->strides()[3] != 1) fail(ErrorCode::BadStride, std::string(name) + ": head dim must be contiguous");
  const Tensor& dst = dir == Direction::Shard ? local : global;
  if (detail::rules::self_overlapping(dst, dir == Direction::Shard ? "local" : "global"))
    fail(ErrorCode::Aliasing, std::string(dir == Direction::Shard ? "local" : "global") + ": elements overlap");
  if (detail::rules::overlaps(global, local)) fail(ErrorCode::Aliasing, "local: overlaps global's memory");
  for (const Chunk& c : chunks_of(l, local.shape()[1])) {
    const Tensor gv = detail::seq_rows(global, c.global, c.len), lv = detail::seq_rows(local, c.local, c.len);
    if (dir == Direction::Shard)
      detail::ring_op(detail::RingOpKind::Copy, lv, gv);
    else
      detail::ring_op(detail::RingOpKind::Copy, gv, lv);
  }
}

}  // namespace

std::vector<std::int64_t> ring_positions(const RingLayout& layout, std::int64_t local_len) {
  if (local_len < 1) throw Error(ErrorCode::InvalidArgument, "local_len: must be >= 1, got " + std::to_string(local_len));
  check_layout(layout, local_len, "ring_positions");
  std::vector<std::int64_t> pos;
  for (const Chunk& c : chunks_of(layout, local_len))
    for (std::int64_t i = 0; i < c.len; ++i) pos.push_back(c.global + i);
  return pos;
}

void shard_sequence(Tensor& local, const Tensor& global, const RingLayout& layout) {
  reshard(global, local, layout, Direction::Shard);
}
void unshard_sequence(Tensor& global, const Tensor& local, const RingLayout& layout) {
  reshard(global, local, layout, Direction::Unshard);
}

namespace detail {

Tensor seq_rows(const Tensor& t, std::int64_t begin, std::int64_t len) {
  const Shape& s = t.shape();
  return t.as_strided(Shape::of(s[0], len, s[2], s[3]), t.strides(), begin * t.strides()[1]);
}

Tensor lse_rows(const Tensor& t, std::int64_t begin, std::int64_t len) {
  const Shape& s = t.shape();
  return t.as_strided(Shape::of(s[0], s[1], len), t.strides(), begin * t.strides()[2]);
}

bool is_contiguous(const Tensor& t) { return t.strides().dims == Strides::contiguous(t.shape()).dims; }

void ring_op(RingOpKind kind, const Tensor& dst, const Tensor& src, const Tensor* dst_lse, const Tensor* src_lse,
             void* stream) {
  RingOpArgs op;
  op.kind = kind;
  op.dst = rules::arg_of(dst);
  op.src = rules::arg_of(src);
  if (dst_lse) op.dst_lse = rules::arg_of(*dst_lse);
  if (src_lse) op.src_lse = rules::arg_of(*src_lse);
  op.cuda_stream = stream;
  dst.storage()->device->run_ring_op(op);
}

StepBlock step_block(const RingLayout& l, int src, std::int64_t len, bool causal) {
  if (!causal) return {false, 0, len, 0, len, false};
  if (src == l.rank) return {false, 0, len, 0, len, true};
  if (l.sharding == Sharding::Contiguous) return src < l.rank ? StepBlock{false, 0, len, 0, len, false} : StepBlock{true};
  const std::int64_t half = len / 2;
  return src < l.rank ? StepBlock{false, 0, len, 0, half, false} : StepBlock{false, half, half, 0, len, false};
}

void check_ring_call(const RingLayout& l, const Tensor& q, const Tensor& k, const Options& o, const char* what) {
  using rules::fail;
  check_layout(l, q.shape()[1], what);
  if (q.shape()[1] != k.shape()[1])
    fail(ErrorCode::ShapeMismatch, std::string("k: ") + what + " is self-attention over one sequence: k's local length " +
                                       std::to_string(k.shape()[1]) + " must equal q's " + std::to_string(q.shape()[1]));
  if (o.window_left >= 0 || o.window_right >= 0 || o.softcap > 0 || o.alibi_slopes || o.sinks)
    fail(ErrorCode::Unsupported, std::string("options: ") + what +
                                     " does not take the variants (window, softcap, alibi_slopes, sinks) yet");
  if (o.workspace) fail(ErrorCode::Unsupported, std::string("options.workspace: ") + what + " allocates its own scratch");
  if (o.vk_command_buffer)
    fail(ErrorCode::Unsupported, std::string("options.vk_command_buffer: ") + what + " runs on CPU and CUDA devices");
  const auto& dev = q.storage()->device;
  if (const std::string why = dev->ring_ops_why_not(); !why.empty())
    fail(ErrorCode::Unsupported, std::string(what) + ": " + device_label(dev->info()) + ": " + why);
}

namespace {

Tensor empty_like(const Tensor& t, DType dt) { return Tensor::empty(t.device(), dt, t.shape()); }

// The rank's own K or V as a contiguous tensor (transports send contiguous memory): itself, or a copy.
Tensor contiguous_copy(const Tensor& t, void* stream) {
  if (is_contiguous(t)) return t;
  Tensor c = empty_like(t, t.dtype());
  ring_op(RingOpKind::Copy, c, t, nullptr, nullptr, stream);
  return c;
}

// A contiguous [B, H, len] view at the start of a flat f32 buffer (attention_forward wants lse contiguous).
Tensor lse_prefix(const Tensor& flat, const Shape& lse_shape, std::int64_t len) {
  const Shape s = Shape::of(lse_shape[0], lse_shape[1], len);
  return flat.as_strided(s, Strides::contiguous(s));
}

}  // namespace

StepBlock RingRank::block(int t) const {
  const int src = (layout_.rank - t % layout_.world + layout_.world) % layout_.world;  // whose K/V is held at step t
  return step_block(layout_, src, kv_.k().shape()[1], opt_.causal);
}

Result RingRank::noted(Result r) const {
  r.note = "ring: " + std::to_string(layout_.world) + " ranks, " + std::string(to_string(layout_.sharding)) +
           " sharding" + (r.note.empty() ? "" : "\n" + r.note);
  return r;
}

KvBlocks::KvBlocks(const Tensor& k, const Tensor& v, int world, void* stream) : world_(world) {
  k_[0] = contiguous_copy(k, stream);
  v_[0] = contiguous_copy(v, stream);
  if (world > 1)
    for (std::size_t i = 1; i < k_.size(); ++i) k_[i] = empty_like(k, k.dtype()), v_[i] = empty_like(v, v.dtype());
}

void KvBlocks::post(RingTransport& tr, int t) {
  if (t + 1 >= world_) return;
  const std::size_t next = 1 + std::size_t(t % 2);
  tr.post(Channel::Kv, {k(), v()}, {&k_[next], &v_[next]});
}

void KvBlocks::finish(RingTransport& tr, int t) {
  if (t + 1 >= world_) return;
  tr.wait(Channel::Kv);
  held_ = 1 + t % 2;
}

RingForward::RingForward(RingTransport& transport, const RingLayout& layout, const Tensor& q, const Tensor& k,
                         const Tensor& v, Tensor& out, Tensor* lse, const Options& options)
    : RingRank(transport, layout, k, v, options), q_(q), out_(out) {
  const Shape& s = q.shape();
  const Shape ls = Shape::of(s[0], s[2], s[1]);
  o_acc_ = Tensor::empty(q.device(), DType::F32, s);
  lse_acc_ = lse ? *lse : Tensor::empty(q.device(), DType::F32, ls);  // the caller's lse is f32 and contiguous
  o_blk_ = empty_like(q, q.dtype());
  lse_blk_ = Tensor::empty(q.device(), DType::F32, ls);
}

void RingForward::compute(int t) {
  const StepBlock b = block(t);
  if (b.skip) return;
  Options o = opt_;
  o.causal = b.causal;
  Tensor ob = seq_rows(o_blk_, 0, b.q_len), lb = lse_prefix(lse_blk_, lse_blk_.shape(), b.q_len);
  result_ = attention_forward(seq_rows(q_, b.q_begin, b.q_len), seq_rows(kv_.k(), b.k_begin, b.k_len),
                              seq_rows(kv_.v(), b.k_begin, b.k_len), ob, &lb, o);
  const Tensor oa = seq_rows(o_acc_, b.q_begin, b.q_len), la = lse_rows(lse_acc_, b.q_begin, b.q_len);
  if (t == 0) {  // the rank's own block covers every row (step_block): it sets the accumulators
    ring_op(RingOpKind::Copy, oa, ob, nullptr, nullptr, opt_.cuda_stream);
    ring_op(RingOpKind::Copy, la, lb, nullptr, nullptr, opt_.cuda_stream);
  } else {
    ring_op(RingOpKind::Merge, oa, ob, &la, &lb, opt_.cuda_stream);
  }
}

Result RingForward::finalize() {
  ring_op(RingOpKind::Copy, out_, o_acc_, nullptr, nullptr, opt_.cuda_stream);
  return noted(result_);
}

RingBackward::RingBackward(RingTransport& transport, const RingLayout& layout, const Tensor& q, const Tensor& k,
                           const Tensor& v, const Tensor& out, const Tensor& lse, const Tensor& dout, Tensor& dq,
                           Tensor& dk, Tensor& dv, const Options& options)
    : RingRank(transport, layout, k, v, options), q_(q), out_(out), lse_(lse), dout_(dout), dq_(dq), dk_(dk),
      dv_(dv) {
  dq_acc_ = empty_like(q, DType::F32);
  dk_acc_ = empty_like(k, DType::F32);
  dv_acc_ = empty_like(v, DType::F32);
  if (layout_.world > 1) dk_in_ = empty_like(k, DType::F32), dv_in_ = empty_like(v, DType::F32);
  dq_blk_ = empty_like(q, q.dtype());
  dk_blk_ = empty_like(k, k.dtype());
  dv_blk_ = empty_like(v, v.dtype());
  lse_rows_ = empty_like(lse, DType::F32);
}

void RingBackward::compute(int t) {
  const StepBlock b = block(t);
  void* stream = opt_.cuda_stream;
  // Step 0 (the rank's own block) covers every row: it sets the accumulators; later steps add.
  const RingOpKind kind = t == 0 ? RingOpKind::Copy : RingOpKind::Add;
  Tensor dkb, dvb;
  if (!b.skip) {
    dkb = seq_rows(dk_blk_, 0, b.k_len), dvb = seq_rows(dv_blk_, 0, b.k_len);
    Options o = opt_;
    o.causal = b.causal;
    // attention_backward wants lse contiguous: the whole of it, or a copy of the step's rows.
    Tensor lse = lse_;
    if (b.q_len != q_.shape()[1]) {
      lse = lse_prefix(lse_rows_, lse_.shape(), b.q_len);
      ring_op(RingOpKind::Copy, lse, lse_rows(lse_, b.q_begin, b.q_len), nullptr, nullptr, stream);
    }
    Tensor dqb = seq_rows(dq_blk_, 0, b.q_len);
    result_ = attention_backward(seq_rows(q_, b.q_begin, b.q_len), seq_rows(kv_.k(), b.k_begin, b.k_len),
                                 seq_rows(kv_.v(), b.k_begin, b.k_len), seq_rows(out_, b.q_begin, b.q_len), lse,
                                 seq_rows(dout_, b.q_begin, b.q_len), dqb, dkb, dvb, o);
    ring_op(kind, seq_rows(dq_acc_, b.q_begin, b.q_len), dqb, nullptr, nullptr, stream);
  }
  if (t > 0) take_incoming();  // the accumulators of the held block, from the previous rank
  if (!b.skip) {
    ring_op(kind, seq_rows(dk_acc_, b.k_begin, b.k_len), dkb, nullptr, nullptr, stream);
    ring_op(kind, seq_rows(dv_acc_, b.k_begin, b.k_len), dvb, nullptr, nullptr, stream);
  }
  if (layout_.world > 1) tr_.post(Channel::Dkv, {dk_acc_, dv_acc_}, {&dk_in_, &dv_in_});
}

void RingBackward::take_incoming() {
  tr_.wait(Channel::Dkv);
  std::swap(dk_acc_, dk_in_);
  std::swap(dv_acc_, dv_in_);
}

Result RingBackward::finalize() {
  void* stream = opt_.cuda_stream;
  if (layout_.world > 1) take_incoming();  // the N-th send brought each block's accumulators home
  ring_op(RingOpKind::Copy, dq_, dq_acc_, nullptr, nullptr, stream);
  ring_op(RingOpKind::Copy, dk_, dk_acc_, nullptr, nullptr, stream);
  ring_op(RingOpKind::Copy, dv_, dv_acc_, nullptr, nullptr, stream);
  return noted(result_);
}

}  // namespace detail
}  // namespace flashtile
