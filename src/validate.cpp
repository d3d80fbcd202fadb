// Every validation rule of attention_forward. tests/bad_input.cpp has one test per rule.
#include "validate.hpp"

#include "checked.hpp"
#include "validate_rules.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace flashtile::detail {

namespace rules {

[[noreturn]] void fail(ErrorCode c, const std::string& msg) { throw Error(c, msg); }

std::string dev_name(const Tensor& t) {
  const DeviceInfo& i = t.storage()->device->info();
  return std::string(to_string(i.backend)) + ":" + std::to_string(i.index) + " (" + i.name + ")";
}

std::string shape_str(const Shape& s) {
  std::string r = "[";
  for (int i = 0; i < s.rank; ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

void require_defined(const Tensor& t, const char* name) {
  if (!t.defined()) fail(ErrorCode::InvalidArgument, std::string(name) + ": tensor is undefined");
}

void require_rank(const Tensor& t, const char* name, int rank, const char* layout) {
  if (t.shape().rank != rank)
    fail(ErrorCode::InvalidArgument, std::string(name) + ": must have rank " + std::to_string(rank) + " " + layout +
                                         ", got rank " + std::to_string(t.shape().rank));
}

// Byte range [begin, end) of a tensor, in a space where overlapping ranges mean shared memory. Vulkan handles are
// buffers (ranges compare within one buffer); CPU and CUDA handles are addresses.
namespace {
struct Range {
  std::uint64_t space, begin, end;
};
Range range_of(const Tensor& t) {
  const auto& s = *t.storage();
  const bool per_buffer = s.device->info().backend == Backend::Vulkan;
  const char* what = "tensor: its byte range wraps past the end of the address space";
  const std::uint64_t base = per_buffer ? s.offset : checked_add(s.handle, s.offset, what);
  return {per_buffer ? s.handle : 0, base, checked_add<std::uint64_t>(base, t.extent_bytes(), what)};
}
}  // namespace

bool overlaps(const Tensor& a, const Tensor& b) {
  const Range x = range_of(a), y = range_of(b);
  return x.space == y.space && x.begin < y.end && y.begin < x.end;
}

// Outputs must not overlap themselves: sorted by stride, each dimension steps past everything inside it.
bool self_overlapping(const Tensor& t, const char* name) {
  std::vector<std::pair<std::int64_t, std::int64_t>> dims;  // (stride, size)
  for (int i = 0; i < t.shape().rank; ++i)
    if (t.shape()[i] > 1) dims.emplace_back(t.strides()[i], t.shape()[i]);
  std::sort(dims.begin(), dims.end());
  std::int64_t extent = 1;  // elements spanned by the dimensions so far
  for (const auto& [stride, size] : dims) {
    if (stride < extent) return true;
    const auto what = [&] { return std::string(name) + ": strides span more than 2^63 - 1 elements"; };
    extent = checked_add(checked_mul(stride, size - 1, what), extent, what);
  }
  return false;
}

TensorArg arg_of(const Tensor& t) {
  return TensorArg{BufferRef{t.storage()->handle, t.storage()->offset}, t.dtype(), t.shape(), t.strides()};
}

// The tensor's last element is within the index range of its device's kernels.
void require_indexable(const Tensor& t, const char* name) {
  const auto& dev = t.storage()->device;
  const std::uint64_t max_index = dev->max_index_elements();
  const std::uint64_t n = t.extent_bytes() / dtype_size(t.dtype());
  const std::uint64_t off = t.storage()->offset / dtype_size(t.dtype());
  const std::uint64_t end = checked_add(n, off, [&] { return std::string(name) + ": its offset plus extent exceed 2^64 elements"; });
  if (end > max_index)
    fail(ErrorCode::Overflow, std::string(name) + ": addresses " + std::to_string(end) + " elements; the " +
                                  std::string(to_string(dev->info().backend)) + " kernels index at most " +
                                  std::to_string(max_index));
}

void require_same_device(const Tensor& t, const char* name, const Tensor& q) {
  if (t.storage()->device != q.storage()->device)
    fail(ErrorCode::DeviceMismatch, std::string(name) + ": is on device " + dev_name(t) + " but q is on " +
                                        dev_name(q) + "; all tensors must be on one device");
}

void require_dtype(const Tensor& t, const char* name, DType want, const char* whose) {
  if (t.dtype() != want)
    fail(ErrorCode::DTypeMismatch, std::string(name) + ": dtype " + std::string(to_string(t.dtype())) + " differs from " +
                                       whose + "'s " + std::string(to_string(want)));
}

void require_shape(const Tensor& t, const char* name, const Shape& want, const char* whose) {
  if (t.shape().dims != want.dims)
    fail(ErrorCode::ShapeMismatch, std::string(name) + ": shape " + shape_str(t.shape()) + " differs from " + whose +
                                       "'s " + shape_str(want));
}

namespace {
// A per-head f32 table (ALiBi slopes, sinks, dsinks): [heads_q], or [batch, heads_q] where batch_ok, contiguous, on
// q's device. Returns whether it is the batched form.
bool require_per_head(const Tensor& t, const char* name, const Tensor& q, std::int64_t batch, std::int64_t heads_q,
                      bool batch_ok) {
  require_defined(t, name);
  require_same_device(t, name, q);
  if (t.dtype() != DType::F32)
    fail(ErrorCode::DTypeMismatch, std::string(name) + ": dtype must be f32, got " + std::string(to_string(t.dtype())));
  const Shape& s = t.shape();
  const bool heads = s.rank == 1 && s[0] == heads_q;
  const bool batched = batch_ok && s.rank == 2 && s[0] == batch && s[1] == heads_q;
  if (!heads && !batched)
    fail(ErrorCode::ShapeMismatch, std::string(name) + ": shape " + shape_str(s) + " must be [heads_q] = [" +
                                       std::to_string(heads_q) + "]" +
                                       (batch_ok ? " or [batch, heads_q] = [" + std::to_string(batch) + ", " +
                                                       std::to_string(heads_q) + "]"
                                                 : std::string()));
  if (t.strides().dims != Strides::contiguous(s).dims) fail(ErrorCode::BadStride, std::string(name) + ": must be contiguous");
  require_indexable(t, name);
  return batched;
}
}  // namespace

void apply_variants(AttnArgs& a, const Options& options, const Tensor& q, std::int64_t batch, std::int64_t heads_q,
                    const std::vector<std::pair<const Tensor*, const char*>>& outs) {
  for (const auto& [name, w] : {std::pair{"options.window_left", options.window_left},
                                {"options.window_right", options.window_right}})
    if (w < -1) fail(ErrorCode::InvalidArgument, std::string(name) + ": must be -1 (unbounded) or >= 0, got " + std::to_string(w));
  if (!(options.softcap >= 0.0f) || !std::isfinite(options.softcap))
    fail(ErrorCode::InvalidArgument, "options.softcap: must be 0 (off) or a positive finite number, got " +
                                         std::to_string(options.softcap));
  a.window_left = options.window_left;
  a.window_right = options.window_right;
  a.softcap = options.softcap;
  // Slopes and sinks are inputs: apart from every output.
  auto per_head = [&](const Tensor& t, const char* name, bool batch_ok) {
    const bool batched = require_per_head(t, name, q, batch, heads_q, batch_ok);
    for (const auto& [o, oname] : outs)
      if (overlaps(*o, t)) fail(ErrorCode::Aliasing, std::string(oname) + ": overlaps " + name + "'s memory");
    return batched;
  };
  if (options.alibi_slopes) {
    a.alibi_per_batch = per_head(*options.alibi_slopes, "options.alibi_slopes", true);
    a.alibi_slopes = arg_of(*options.alibi_slopes);
    a.has_alibi = true;
  }
  if (options.sinks) {
    per_head(*options.sinks, "options.sinks", false);
    a.sinks = arg_of(*options.sinks);
    a.has_sinks = true;
  }
}

AttnArgs call_args(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out, const Tensor* lse,
                   std::int64_t batch, std::int64_t seqlen_q, std::int64_t seqlen_k, std::int64_t heads_q,
                   std::int64_t heads_kv, std::int64_t head_dim, const Options& options) {
  const float scale =
      options.scale ? *options.scale : static_cast<float>(1.0 / std::sqrt(static_cast<double>(head_dim)));
  if (!std::isfinite(scale)) fail(ErrorCode::InvalidArgument, "options.scale: must be finite, got " + std::to_string(scale));
  AttnArgs a;
  a.q = arg_of(q);
  a.k = arg_of(k);
  a.v = arg_of(v);
  a.o = arg_of(out);
  if (lse) {
    a.lse = arg_of(*lse);
    a.has_lse = true;
  }
  a.batch = batch;
  a.seqlen_q = seqlen_q;
  a.seqlen_k = seqlen_k;
  a.heads_q = heads_q;
  a.heads_kv = heads_kv;
  a.head_dim = head_dim;
  a.dtype = q.dtype();
  a.scale = scale;
  a.causal = options.causal;
  a.cuda_stream = options.cuda_stream;
  a.vk_command_buffer = options.vk_command_buffer;
  a.allow_reduced_precision = options.allow_reduced_precision_accumulation;
  return a;
}

void require_streams(const Tensor& q, const Options& options) {
  const Backend backend = q.storage()->device->info().backend;
  if (options.cuda_stream && options.vk_command_buffer)
    fail(ErrorCode::InvalidArgument, "options: set cuda_stream or vk_command_buffer, not both");
  if (options.cuda_stream && backend != Backend::Cuda)
    fail(ErrorCode::DeviceMismatch, "options.cuda_stream: given, but the tensors are on a " +
                                        std::string(to_string(backend)) + " device");
  if (options.vk_command_buffer && backend != Backend::Vulkan)
    fail(ErrorCode::DeviceMismatch, "options.vk_command_buffer: given, but the tensors are on a " +
                                        std::string(to_string(backend)) + " device");
}

}  // namespace rules

using namespace rules;

AttnArgs validate_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out, const Tensor* lse,
                            const Options& options) {
  require_defined(q, "q");
  require_defined(k, "k");
  require_defined(v, "v");
  require_defined(out, "out");
  if (lse) require_defined(*lse, "lse");

  const char* layout = "[batch, seqlen, heads, head_dim]";
  require_rank(q, "q", 4, layout);
  require_rank(k, "k", 4, layout);
  require_rank(v, "v", 4, layout);
  require_rank(out, "out", 4, layout);
  if (lse) require_rank(*lse, "lse", 3, "[batch, heads, seqlen_q]");

  // Devices: one device for all tensors; a stream or command buffer only of that device's backend.
  const auto& dev = q.storage()->device;
  const std::pair<const Tensor*, const char*> others[] = {{&k, "k"}, {&v, "v"}, {&out, "out"}, {lse, "lse"}};
  for (const auto& [t, name] : others)
    if (t && t->storage()->device != dev)
      fail(ErrorCode::DeviceMismatch, std::string(name) + ": is on device " + dev_name(*t) + " but q is on " +
                                          dev_name(q) + "; all tensors must be on one device");
  require_streams(q, options);

  // Dtypes.
  if (q.dtype() == DType::I32)
    fail(ErrorCode::DTypeMismatch, "q: dtype i32 is an index type; attention takes f16, bf16 or f32");
  if (k.dtype() != q.dtype())
    fail(ErrorCode::DTypeMismatch, "k: dtype " + std::string(to_string(k.dtype())) + " differs from q's " +
                                       std::string(to_string(q.dtype())));
  if (v.dtype() != q.dtype())
    fail(ErrorCode::DTypeMismatch, "v: dtype " + std::string(to_string(v.dtype())) + " differs from q's " +
                                       std::string(to_string(q.dtype())));
  if (out.dtype() != q.dtype())
    fail(ErrorCode::DTypeMismatch, "out: dtype " + std::string(to_string(out.dtype())) + " differs from q's " +
                                       std::string(to_string(q.dtype())));
  if (lse && lse->dtype() != DType::F32)
    fail(ErrorCode::DTypeMismatch, "lse: dtype must be f32, got " + std::string(to_string(lse->dtype())));

  // Shapes.
  const Shape& qs = q.shape();
  const Shape& ks = k.shape();
  const std::int64_t B = qs[0], Sq = qs[1], Hq = qs[2], D = qs[3];
  const std::int64_t Sk = ks[1], Hkv = ks[2];
  if (ks[0] != B)
    fail(ErrorCode::ShapeMismatch, "k: batch " + std::to_string(ks[0]) + " differs from q's batch " + std::to_string(B));
  if (ks[3] != D)
    fail(ErrorCode::ShapeMismatch, "k: head_dim " + std::to_string(ks[3]) + " differs from q's head_dim " +
                                       std::to_string(D));
  if (v.shape().dims != ks.dims)
    fail(ErrorCode::ShapeMismatch, "v: shape " + shape_str(v.shape()) + " differs from k's " + shape_str(ks));
  if (out.shape().dims != qs.dims)
    fail(ErrorCode::ShapeMismatch, "out: shape " + shape_str(out.shape()) + " differs from q's " + shape_str(qs));
  if (Hq % Hkv != 0)
    fail(ErrorCode::ShapeMismatch, "k: heads " + std::to_string(Hkv) + " must divide q's heads " + std::to_string(Hq) +
                                       " (GQA/MQA)");
  if (lse && (lse->shape()[0] != B || lse->shape()[1] != Hq || lse->shape()[2] != Sq))
    fail(ErrorCode::ShapeMismatch, "lse: shape " + shape_str(lse->shape()) + " must be [batch, heads, seqlen_q] = " +
                                       shape_str(Shape::of(B, Hq, Sq)));
  if (D % kHeadDimMultiple != 0 || D > kMaxHeadDim)
    fail(ErrorCode::InvalidArgument, "head_dim: must be a multiple of " + std::to_string(kHeadDimMultiple) + " in [" +
                                         std::to_string(kHeadDimMultiple) + ", " + std::to_string(kMaxHeadDim) +
                                         "], got " + std::to_string(D));
  for (const auto& [name, value] : {std::pair{"batch", B}, {"seqlen_q", Sq}, {"seqlen_k", Sk}, {"heads", Hq}})
    if (value > kMaxDim)
      fail(ErrorCode::Overflow, std::string(name) + ": " + std::to_string(value) + " exceeds the kernels' int32 range");

  // Strides: head dim contiguous; outputs without self-overlap; lse contiguous.
  const std::pair<const Tensor*, const char*> all4[] = {{&q, "q"}, {&k, "k"}, {&v, "v"}, {&out, "out"}};
  for (const auto& [t, name] : all4)
    if (t->strides()[3] != 1)
      fail(ErrorCode::BadStride, std::string(name) + ": head_dim stride must be 1 (contiguous), got " +
                                     std::to_string(t->strides()[3]));
  if (self_overlapping(out, "out"))
    fail(ErrorCode::BadStride, "out: strides make elements overlap; an output needs distinct elements");
  if (lse && lse->strides().dims != Strides::contiguous(lse->shape()).dims)
    fail(ErrorCode::BadStride, "lse: must be contiguous [batch, heads, seqlen_q]");

  // Index ranges of this device's kernels.
  for (const auto& [t, name] : {std::pair{&q, "q"}, {&k, "k"}, {&v, "v"}, {&out, "out"}, {lse, "lse"}})
    if (t) require_indexable(*t, name);

  // Aliasing: outputs may not overlap inputs or each other.
  for (const auto& [t, name] : {std::pair{&q, "q"}, {&k, "k"}, {&v, "v"}})
    if (overlaps(out, *t)) fail(ErrorCode::Aliasing, std::string("out: overlaps ") + name + "'s memory");
  if (lse)
    for (const auto& [t, name] : {std::pair{&q, "q"}, {&k, "k"}, {&v, "v"}, {&out, "out"}})
      if (overlaps(*lse, *t)) fail(ErrorCode::Aliasing, std::string("lse: overlaps ") + name + "'s memory");

  AttnArgs a = call_args(q, k, v, out, lse, B, Sq, Sk, Hq, Hkv, D, options);
  std::vector<std::pair<const Tensor*, const char*>> outs = {{&out, "out"}};
  if (lse) outs.push_back({lse, "lse"});
  apply_variants(a, options, q, B, Hq, outs);
  return a;
}

BwdArgs validate_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out, const Tensor& lse,
                          const Tensor& dout, const Tensor& dq, const Tensor& dk, const Tensor& dv,
                          const Options& options) {
  require_defined(lse, "lse");  // the forward's checks below then hold lse to [batch, heads, seqlen_q] f32
  BwdArgs a;
  a.fwd = validate_attention(q, k, v, out, &lse, options);
  const std::pair<const Tensor*, const char*> grads[] = {{&dout, "dout"}, {&dq, "dq"}, {&dk, "dk"}, {&dv, "dv"}};
  for (const auto& [t, name] : grads) require_defined(*t, name);
  for (const auto& [t, name] : grads) require_rank(*t, name, 4, "[batch, seqlen, heads, head_dim]");
  for (const auto& [t, name] : grads) require_same_device(*t, name, q);
  for (const auto& [t, name] : grads) require_dtype(*t, name, q.dtype(), "q");
  require_shape(dout, "dout", q.shape(), "q");
  require_shape(dq, "dq", q.shape(), "q");
  require_shape(dk, "dk", k.shape(), "k");
  require_shape(dv, "dv", v.shape(), "v");
  for (const auto& [t, name] : grads)
    if (t->strides()[3] != 1)
      fail(ErrorCode::BadStride, std::string(name) + ": head_dim stride must be 1 (contiguous), got " +
                                     std::to_string(t->strides()[3]));
  const std::pair<const Tensor*, const char*> outs[] = {{&dq, "dq"}, {&dk, "dk"}, {&dv, "dv"}};
  for (const auto& [t, name] : outs)
    if (self_overlapping(*t, name))
      fail(ErrorCode::BadStride, std::string(name) + ": strides make elements overlap; an output needs distinct elements");
  for (const auto& [t, name] : grads) require_indexable(*t, name);

  // Aliasing: a gradient may not overlap an input, another gradient or the workspace.
  const std::pair<const Tensor*, const char*> inputs[] = {{&q, "q"},     {&k, "k"},     {&v, "v"},
                                                          {&out, "out"}, {&lse, "lse"}, {&dout, "dout"}};
  for (std::size_t i = 0; i < std::size(outs); ++i) {
    const auto& [o, oname] = outs[i];
    for (const auto& [t, name] : inputs)
      if (overlaps(*o, *t)) fail(ErrorCode::Aliasing, std::string(oname) + ": overlaps " + name + "'s memory");
    for (std::size_t j = 0; j < i; ++j)  // the same tensor passed twice overlaps itself
      if (overlaps(*o, *outs[j].first))
        fail(ErrorCode::Aliasing, std::string(oname) + ": overlaps " + outs[j].second + "'s memory");
  }
  for (const auto& [t, name] : {std::pair{options.sinks, "options.sinks"}, {options.alibi_slopes, "options.alibi_slopes"}})
    for (const auto& [o, oname] : outs)
      if (t && overlaps(*o, *t)) fail(ErrorCode::Aliasing, std::string(oname) + ": overlaps " + name + "'s memory");
  if (const Tensor* w = options.workspace) {
    require_defined(*w, "options.workspace");
    require_same_device(*w, "options.workspace", q);
    if (w->strides().dims != Strides::contiguous(w->shape()).dims)
      fail(ErrorCode::BadStride, "options.workspace: must be contiguous");
    for (const auto& [t, name] : inputs)
      if (overlaps(*w, *t)) fail(ErrorCode::Aliasing, std::string("options.workspace: overlaps ") + name + "'s memory");
    for (const auto& [t, name] : outs)
      if (overlaps(*w, *t)) fail(ErrorCode::Aliasing, std::string("options.workspace: overlaps ") + name + "'s memory");
    a.workspace = arg_of(*w);
    a.has_workspace = true;
    a.workspace_capacity = w->extent_bytes();
  }
  // dsinks: the gradient of options.sinks, f32 [Hq], apart from every other argument.
  if (Tensor* ds = options.dsinks) {
    require_defined(*ds, "options.dsinks");
    if (!options.sinks)
      fail(ErrorCode::InvalidArgument, "options.dsinks: given without options.sinks (it is the gradient of sinks)");
    require_per_head(*ds, "options.dsinks", q, a.fwd.batch, a.fwd.heads_q, false);
    std::vector<std::pair<const Tensor*, const char*>> others(std::begin(inputs), std::end(inputs));
    others.insert(others.end(), std::begin(outs), std::end(outs));
    for (const auto& [t, name] : {std::pair{options.workspace, "options.workspace"},
                                  {options.sinks, "options.sinks"}, {options.alibi_slopes, "options.alibi_slopes"}})
      if (t) others.push_back({t, name});
    for (const auto& [t, name] : others)
      if (overlaps(*ds, *t)) fail(ErrorCode::Aliasing, std::string("options.dsinks: overlaps ") + name + "'s memory");
    a.dsinks = arg_of(*ds);
    a.has_dsinks = true;
  }
  a.dout = arg_of(dout);
  a.dq = arg_of(dq);
  a.dk = arg_of(dk);
  a.dv = arg_of(dv);
  a.deterministic = options.deterministic;
  return a;
}

}  // namespace flashtile::detail
