// The bad-input suite: every validation rule is triggered once, the forward's and the backward's; each test checks the
// error code, that the message names the argument, and that the outputs (out and LSE; dq, dk and dv) were not touched.
#include <doctest/doctest.h>

#include "bad_input.hpp"

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

using namespace flashtile;
using namespace flashtile::testing;

namespace {

struct Fixture {
  // Outputs start filled with this byte, so that a rejected call that wrote anything shows (expect_error's watch).
  static constexpr int kOutByte = 0x5A;
  Device cpu = Device::open(Backend::Cpu);
  Tensor q, k, v, out, lse;
  Fixture(DType dt = DType::F16, std::int64_t B = 2, std::int64_t Sq = 5, std::int64_t Sk = 7, std::int64_t Hq = 4,
          std::int64_t Hkv = 2, std::int64_t D = 64) {
    q = filled(Tensor::empty(cpu, dt, Shape::of(B, Sq, Hq, D)), 0x11);
    k = filled(Tensor::empty(cpu, dt, Shape::of(B, Sk, Hkv, D)), 0x22);
    v = filled(Tensor::empty(cpu, dt, Shape::of(B, Sk, Hkv, D)), 0x33);
    out = filled(Tensor::empty(cpu, dt, Shape::of(B, Sq, Hq, D)), kOutByte);
    lse = filled(Tensor::empty(cpu, DType::F32, Shape::of(B, Hq, Sq)), kOutByte);
  }
  static Tensor filled(Tensor t, int byte) { return filled_with(std::move(t), byte); }
};

// attention_forward, plan_attention and prepare_attention share the checks: each must reject the call the same way
// (the cases written with expect_error directly check attention_forward only).
void expect_call_error(Fixture& f, const Tensor& q, const Tensor& k, const Tensor& v, Tensor& out, Tensor* lse,
                       const Options& opt, ErrorCode code, const std::string& needle) {
  expect_error([&] { attention_forward(q, k, v, out, lse, opt); }, code, needle, {&f.out, &f.lse});
  expect_error([&] { plan_attention(q, k, v, out, lse, opt); }, code, needle, {&f.out, &f.lse});
  expect_error([&] { prepare_attention(q, k, v, out, lse, opt); }, code, needle, {&f.out, &f.lse});
}

}  // namespace

TEST_CASE("bad input: undefined tensors") {
  Fixture f;
  Tensor none;
  expect_call_error(f, f.q, none, f.v, f.out, &f.lse, {}, ErrorCode::InvalidArgument, "k: tensor is undefined");
}

TEST_CASE("bad input: ranks") {
  Fixture f;
  Tensor k3 = f.k.as_strided(Shape::of(2, 7, 128), Strides::contiguous(Shape::of(2, 7, 128)));
  expect_call_error(f, f.q, k3, f.v, f.out, &f.lse, {}, ErrorCode::InvalidArgument, "k: must have rank 4");
  Tensor lse4 = Fixture::filled(Tensor::empty(f.cpu, DType::F32, Shape::of(2, 4, 5, 1)), 0);
  expect_call_error(f, f.q, f.k, f.v, f.out, &lse4, {}, ErrorCode::InvalidArgument, "lse: must have rank 3");
}

TEST_CASE("bad input: dtypes") {
  Fixture f;
  Tensor kb = Tensor::empty(f.cpu, DType::BF16, f.k.shape());
  expect_call_error(f, f.q, kb, f.v, f.out, &f.lse, {}, ErrorCode::DTypeMismatch, "k: dtype bf16");
  Tensor vb = Tensor::empty(f.cpu, DType::F32, f.v.shape());
  expect_call_error(f, f.q, f.k, vb, f.out, &f.lse, {}, ErrorCode::DTypeMismatch, "v: dtype f32");
  Fixture g;
  Tensor ob = Tensor::empty(g.cpu, DType::BF16, g.out.shape());
  expect_error([&] { attention_forward(g.q, g.k, g.v, ob, &g.lse); }, ErrorCode::DTypeMismatch, "out: dtype bf16",
               {&g.lse});
  Tensor l16 = Fixture::filled(Tensor::empty(f.cpu, DType::F16, f.lse.shape()), Fixture::kOutByte);
  expect_error([&] { attention_forward(f.q, f.k, f.v, f.out, &l16); }, ErrorCode::DTypeMismatch,
               "lse: dtype must be f32", {&f.out, &l16});
}

TEST_CASE("bad input: shapes") {
  Fixture f;
  Tensor k3b = Tensor::empty(f.cpu, DType::F16, Shape::of(3, 7, 2, 64));
  expect_call_error(f, f.q, k3b, k3b, f.out, &f.lse, {}, ErrorCode::ShapeMismatch, "k: batch 3");
  Tensor kd = Tensor::empty(f.cpu, DType::F16, Shape::of(2, 7, 2, 128));
  expect_call_error(f, f.q, kd, kd, f.out, &f.lse, {}, ErrorCode::ShapeMismatch, "k: head_dim 128");
  Tensor v8 = Tensor::empty(f.cpu, DType::F16, Shape::of(2, 8, 2, 64));
  expect_call_error(f, f.q, f.k, v8, f.out, &f.lse, {}, ErrorCode::ShapeMismatch, "v: shape");
  Tensor o6 = Tensor::empty(f.cpu, DType::F16, Shape::of(2, 6, 4, 64));
  expect_error([&] { attention_forward(f.q, f.k, f.v, o6, &f.lse); }, ErrorCode::ShapeMismatch, "out: shape",
               {&f.lse});
  Tensor k3h = Tensor::empty(f.cpu, DType::F16, Shape::of(2, 7, 3, 64));
  expect_call_error(f, f.q, k3h, k3h, f.out, &f.lse, {}, ErrorCode::ShapeMismatch, "must divide q's heads 4");
  Tensor lbad = Fixture::filled(Tensor::empty(f.cpu, DType::F32, Shape::of(2, 5, 4)), Fixture::kOutByte);
  expect_error([&] { attention_forward(f.q, f.k, f.v, f.out, &lbad); }, ErrorCode::ShapeMismatch, "lse: shape",
               {&f.out, &lbad});
}

TEST_CASE("bad input: head_dim must be a multiple of 8 up to 256") {
  for (std::int64_t d : {100, 264, 4}) {
    Fixture f(DType::F16, 1, 3, 3, 2, 2, d);
    expect_call_error(f, f.q, f.k, f.v, f.out, &f.lse, {}, ErrorCode::InvalidArgument,
                      "head_dim: must be a multiple of 8");
  }
}

TEST_CASE("bad input: strides") {
  Fixture f;
  // Head dim not contiguous: every other element of a [.., 128] row.
  Tensor wide = Tensor::empty(f.cpu, DType::F16, Shape::of(2, 5, 4, 128));
  Tensor qs = wide.as_strided(f.q.shape(), Strides{{5 * 4 * 128, 4 * 128, 128, 2}});
  expect_call_error(f, qs, f.k, f.v, f.out, &f.lse, {}, ErrorCode::BadStride, "q: head_dim stride must be 1");
  // An output whose heads overlap each other.
  Tensor ob = Fixture::filled(Tensor::empty(f.cpu, DType::F16, f.out.shape()), Fixture::kOutByte);
  Tensor overlapping = ob.as_strided(f.out.shape(), Strides{{5 * 64, 64, 0, 1}});
  expect_error([&] { attention_forward(f.q, f.k, f.v, overlapping, &f.lse); }, ErrorCode::BadStride,
               "out: strides make elements overlap", {&ob, &f.lse});
  // LSE must be contiguous.
  Tensor lb = Fixture::filled(Tensor::empty(f.cpu, DType::F32, Shape::of(2, 4, 10)), Fixture::kOutByte);
  Tensor ls = lb.as_strided(f.lse.shape(), Strides{{40, 10, 1}});
  expect_error([&] { attention_forward(f.q, f.k, f.v, f.out, &ls); }, ErrorCode::BadStride, "lse: must be contiguous",
               {&f.out, &lb});
  // Negative strides are refused when the view is made.
  expect_error([&] { (void)f.q.as_strided(f.q.shape(), Strides{{-1, 1, 1, 1}}); }, ErrorCode::BadStride,
               "stride 0 must be >= 0");
}

TEST_CASE("bad input: aliasing") {
  Fixture f;
  expect_error([&] { attention_forward(f.q, f.k, f.v, f.q, &f.lse); }, ErrorCode::Aliasing, "out: overlaps q",
               {&f.q, &f.lse});
  // lse inside out's memory (two host views of one buffer).
  std::vector<float> host(2 * 5 * 4 * 64);
  Tensor o_host = Tensor::wrap_host(f.cpu, host.data(), DType::F16, f.out.shape(), Strides::contiguous(f.out.shape()));
  Tensor l_host = Tensor::wrap_host(f.cpu, host.data(), DType::F32, Shape::of(2, 4, 5), Strides::contiguous(Shape::of(2, 4, 5)));
  expect_error([&] { attention_forward(f.q, f.k, f.v, o_host, &l_host); }, ErrorCode::Aliasing, "lse: overlaps out",
               {&o_host});
}

TEST_CASE("bad input: sizes beyond the kernels' index types") {
  const Device cpu = Device::open(Backend::Cpu);
  std::vector<std::uint16_t> small(64);
  // seqlen beyond int32: a wrapped view that is never touched.
  const Shape huge = Shape::of(1, std::int64_t{3} << 30, 1, 8);
  Tensor qh = Tensor::wrap_host(cpu, small.data(), DType::F16, huge, Strides{{0, 0, 0, 1}});
  Tensor oh = Fixture::filled(Tensor::empty(cpu, DType::F16, Shape::of(1, 1, 1, 8)), Fixture::kOutByte);
  Tensor ohv = oh.as_strided(huge, Strides{{0, 0, 0, 1}});
  expect_error([&] { attention_forward(qh, qh, qh, ohv); }, ErrorCode::Overflow, "seqlen_q", {&oh});
  // A stride past 2^62 f16 elements spans more than 2^63 - 1 bytes: refused when the view is made.
  expect_error([&] {
    (void)Tensor::wrap_host(cpu, small.data(), DType::F16, Shape::of(2, 1, 1, 8),
                            Strides{{std::int64_t{1} << 62, 8, 8, 1}});
  }, ErrorCode::Overflow, "strides: a tensor of shape [2, 1, 1, 8] with strides [4611686018427387904");
}

// Sizes and offsets whose arithmetic would wrap: each is refused with Overflow (InvalidArgument for dims < 1)
// before any memory is allocated or touched.
TEST_CASE("bad input: size arithmetic that would wrap") {
  const Device cpu = Device::open(Backend::Cpu);
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  // The C API finding: 2^62 - 15 f32 elements are 2^64 - 60 bytes, which once wrapped to a 0-byte block.
  expect_error([&] { (void)Tensor::empty(cpu, DType::F32, Shape::of(1, 1, 4611686018427387889)); },
               ErrorCode::Overflow, "shape: a tensor of shape [1, 1, 4611686018427387889] with strides");
  // Dims near INT64_MAX; a contiguous stride that wraps; an element count of exactly 2^64 (wraps to 0).
  expect_error([&] { (void)Tensor::empty(cpu, DType::F16, Shape::of(kMax, 2, 1, 8)); }, ErrorCode::Overflow, "shape:");
  expect_error([&] { (void)Tensor::empty(cpu, DType::F16, Shape::of(1, kMax, kMax, 8)); }, ErrorCode::Overflow,
               "shape: the contiguous stride of dimension 1");
  expect_error([&] { (void)Tensor::empty(cpu, DType::F16, Shape::of(1 << 21, 1 << 21, 1 << 22)); },
               ErrorCode::Overflow, "shape:");
  expect_error([&] { (void)Shape::of(1 << 21, 1 << 21, 1 << 22).numel(); }, ErrorCode::Overflow,
               "shape: the element count exceeds 2^63 - 1");
  // Negative, zero and minimal dims, and ranks out of range.
  expect_error([&] { (void)Tensor::empty(cpu, DType::F16, Shape::of(1, -5, 1, 8)); }, ErrorCode::InvalidArgument,
               "shape: dimension 1 must be >= 1, got -5");
  expect_error([&] { (void)Tensor::empty(cpu, DType::F16, Shape::of(1, 1, std::numeric_limits<std::int64_t>::min())); },
               ErrorCode::InvalidArgument, "shape: dimension 2 must be >= 1");
  expect_error([&] { (void)Strides::contiguous(Shape::of(1, 0, 1, 8)); }, ErrorCode::InvalidArgument,
               "shape: dimension 1 must be >= 1, got 0");
  expect_error([&] { (void)Shape::of(2, -3, 1).numel(); }, ErrorCode::InvalidArgument, "shape: dimension 1");
  for (int rank : {0, 5, -1}) {
    expect_error([&] { (void)Tensor::empty(cpu, DType::F16, Shape{rank, {1, 1, 1, 8}}); }, ErrorCode::InvalidArgument,
                 "shape: rank must be 1..4, got " + std::to_string(rank));
  }
  expect_error([&] { (void)Shape{9, {}}.numel(); }, ErrorCode::InvalidArgument, "shape: rank must be 0..4, got 9");

  // Views of a poisoned tensor: huge strides, strides whose products' sum wraps, offsets whose bytes or whose sum
  // with the extent wrap. None may touch the memory.
  Tensor base = Fixture::filled(Tensor::empty(cpu, DType::F32, Shape::of(2, 1, 1, 8)), Fixture::kOutByte);
  const Shape s4 = Shape::of(2, 1, 1, 8);
  expect_error([&] { (void)base.as_strided(s4, Strides{{kMax, 8, 8, 1}}); }, ErrorCode::Overflow,
               "strides: a tensor of shape [2, 1, 1, 8] with strides [9223372036854775807", {&base});
  const std::int64_t half = std::int64_t{1} << 61;
  expect_error([&] { (void)base.as_strided(Shape::of(3, 3, 1, 8), Strides{{half, half, 8, 1}}); },
               ErrorCode::Overflow, "strides: a tensor of shape [3, 3, 1, 8]", {&base});
  expect_error([&] { (void)base.as_strided(s4, Strides::contiguous(s4), half); }, ErrorCode::Overflow,
               "offset: 2305843009213693952 elements", {&base});
  expect_error([&] { (void)base.as_strided(s4, Strides::contiguous(s4), half - 1); }, ErrorCode::Overflow,
               "offset: 2305843009213693951 elements plus the view's 64 bytes exceed", {&base});
  expect_error([&] { (void)base.as_strided(s4, Strides::contiguous(s4), -1); }, ErrorCode::InvalidArgument,
               "offset: must be >= 0", {&base});

  // Host memory whose byte range would wrap past the end of the address space.
  auto* top = reinterpret_cast<void*>(~std::uintptr_t{0} - 15);
  expect_error([&] { (void)Tensor::wrap_host(cpu, top, DType::F32, s4, Strides::contiguous(s4)); },
               ErrorCode::Overflow, "ptr: the view's 64 bytes wrap");

  // Copies of any size but extent_bytes() are refused, the largest included.
  std::vector<std::byte> img(base.extent_bytes());
  expect_error([&] { base.upload(img.data(), std::numeric_limits<std::size_t>::max()); },
               ErrorCode::InvalidArgument, "bytes: upload needs exactly extent_bytes() = 64", {&base});
  expect_error([&] { base.download(img.data(), std::numeric_limits<std::size_t>::max()); },
               ErrorCode::InvalidArgument, "bytes: download needs exactly extent_bytes() = 64");
}

TEST_CASE("bad input: the CPU allocator refuses sizes whose rounding would wrap") {
  const Device cpu = Device::open(Backend::Cpu);
  for (std::size_t bytes : {std::numeric_limits<std::size_t>::max() - 59, std::numeric_limits<std::size_t>::max(),
                            std::size_t{1} << 63}) {
    expect_error([&] { (void)cpu.impl()->alloc(bytes); }, ErrorCode::Overflow, "bytes: cpu alloc of");
  }
  const std::uint64_t h = cpu.impl()->alloc(1);  // small sizes still work
  CHECK(h != 0);
  cpu.impl()->free(h);
}

TEST_CASE("bad input: options") {
  Fixture f;
  Options bad_scale;
  bad_scale.scale = std::numeric_limits<float>::quiet_NaN();
  expect_call_error(f, f.q, f.k, f.v, f.out, &f.lse, bad_scale, ErrorCode::InvalidArgument, "options.scale");
  for (float inf : {std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()}) {
    Options inf_scale;
    inf_scale.scale = inf;
    expect_call_error(f, f.q, f.k, f.v, f.out, &f.lse, inf_scale, ErrorCode::InvalidArgument, "options.scale");
  }
  int dummy = 0;
  Options stream;
  stream.cuda_stream = &dummy;
  expect_call_error(f, f.q, f.k, f.v, f.out, &f.lse, stream, ErrorCode::DeviceMismatch, "options.cuda_stream");
  Options cmd;
  cmd.vk_command_buffer = &dummy;
  expect_call_error(f, f.q, f.k, f.v, f.out, &f.lse, cmd, ErrorCode::DeviceMismatch, "options.vk_command_buffer");
  Options both;
  both.cuda_stream = &dummy;
  both.vk_command_buffer = &dummy;
  expect_call_error(f, f.q, f.k, f.v, f.out, &f.lse, both, ErrorCode::InvalidArgument, "not both");
  Options forced;
  forced.path = Path::CudaSm90;
  expect_call_error(f, f.q, f.k, f.v, f.out, &f.lse, forced, ErrorCode::Unsupported, "options.path: cuda_sm90");
}

TEST_CASE("options: negative finite scales are valid") {
  // q matches key 0 (logit scale * 8) and is orthogonal to key 1 (logit 0); v is 1 on key 0 only, so out is the
  // softmax weight of key 0: 1 / (1 + exp(-8 * scale)), well below 1/2 for a negative scale.
  Device cpu = Device::open(Backend::Cpu);
  std::vector<float> q(8, 1.0f), k(16, 0.0f), v(16, 0.0f), out(8, -1.0f), lse(1, 0.0f);
  for (int i = 0; i < 8; ++i) k[std::size_t(i)] = v[std::size_t(i)] = 1.0f;
  auto wrap = [&](std::vector<float>& h, const Shape& s) {
    return Tensor::wrap_host(cpu, h.data(), DType::F32, s, Strides::contiguous(s));
  };
  Tensor tq = wrap(q, Shape::of(1, 1, 1, 8)), tk = wrap(k, Shape::of(1, 2, 1, 8)), tv = wrap(v, Shape::of(1, 2, 1, 8));
  Tensor to = wrap(out, Shape::of(1, 1, 1, 8)), tl = wrap(lse, Shape::of(1, 1, 1));
  for (float scale : {-0.5f, -1e-3f, 0.0f, 0.25f}) {
    Options opt;
    opt.scale = scale;
    attention_forward(tq, tk, tv, to, &tl, opt);
    INFO("scale ", scale);
    CHECK(out[0] == doctest::Approx(1.0 / (1.0 + std::exp(-8.0 * scale))).epsilon(1e-6));
    CHECK(lse[0] == doctest::Approx(std::log(std::exp(8.0 * scale) + 1.0)).epsilon(1e-6));
  }
}

TEST_CASE("bad input: tensors on different devices") {
  if (!Device::unavailable_reason(Backend::Vulkan).empty()) {
    MESSAGE("not run: needs a second device (Vulkan: " << Device::unavailable_reason(Backend::Vulkan) << ")");
  } else {
    Fixture f;
    const Device vk = Device::open(Backend::Vulkan);
    Tensor kv = Tensor::empty(vk, DType::F16, f.k.shape());
    expect_call_error(f, f.q, kv, f.v, f.out, &f.lse, {}, ErrorCode::DeviceMismatch, "k: is on device vulkan");
  }
}

TEST_CASE("bad input: tensor construction and copies") {
  const Device cpu = Device::open(Backend::Cpu);
  expect_error([&] { (void)Tensor::empty(cpu, DType::F16, Shape::of(1, 0, 1, 8)); }, ErrorCode::InvalidArgument,
               "dimension 1 must be >= 1");
  Tensor t = Tensor::empty(cpu, DType::F16, Shape::of(1, 2, 1, 8));
  std::vector<std::byte> img(t.extent_bytes() + 2);
  expect_error([&] { t.upload(img.data(), img.size()); }, ErrorCode::InvalidArgument, "bytes: upload needs");
  expect_error([&] { (void)t.as_strided(Shape::of(1, 3, 1, 8), Strides::contiguous(Shape::of(1, 3, 1, 8))); },
               ErrorCode::InvalidArgument, "as_strided: the view needs");
  int x = 0;
  expect_error([&] { (void)Tensor::wrap_cuda(cpu, &x, DType::F16, Shape::of(1, 1, 1, 8), Strides{{8, 8, 8, 1}}); },
               ErrorCode::DeviceMismatch, "Tensor::wrap_cuda: needs a cuda device");
  expect_error([&] { (void)Tensor::wrap_vulkan(cpu, 1, 0, 64, DType::F16, Shape::of(1, 1, 1, 8), Strides{{8, 8, 8, 1}}); },
               ErrorCode::DeviceMismatch, "Tensor::wrap_vulkan: needs a vulkan device");
  expect_error([&] { (void)Device::open(Backend::Cpu, 5); }, ErrorCode::InvalidArgument, "device index: 5 out of range");
  expect_error([&] { (void)parse_dtype("f8"); }, ErrorCode::InvalidArgument, "dtype: unknown value 'f8'");
}

// ---- The backward (validate_backward, and the workspace size check of attention_backward). ----------------------

namespace {

// The tensors of one backward call (B 2, Sq 5, Sk 7, heads 4/2, D 64, f16); the gradients start filled with
// Fixture::kOutByte, so a rejected call that wrote anything shows.
struct BwdFixture {
  Device dev;
  Tensor q, k, v, out, lse, dout, dq, dk, dv;
  static Shape qs() { return Shape::of(2, 5, 4, 64); }
  static Shape ks() { return Shape::of(2, 7, 2, 64); }
  explicit BwdFixture(Device d = Device::open(Backend::Cpu)) : dev(std::move(d)) {
    auto make = [&](DType dt, const Shape& s, int byte) { return Fixture::filled(Tensor::empty(dev, dt, s), byte); };
    q = make(DType::F16, qs(), 0x11);
    k = make(DType::F16, ks(), 0x22);
    v = make(DType::F16, ks(), 0x33);
    out = make(DType::F16, qs(), 0x3C);
    lse = make(DType::F32, Shape::of(2, 4, 5), 0x40);
    dout = make(DType::F16, qs(), 0x44);
    dq = make(DType::F16, qs(), Fixture::kOutByte);
    dk = make(DType::F16, ks(), Fixture::kOutByte);
    dv = make(DType::F16, ks(), Fixture::kOutByte);
  }
};

// One backward call's arguments: the fixture's, with some replaced.
struct BwdCall {
  const Tensor *q, *k, *v, *out, *lse, *dout;
  Tensor *dq, *dk, *dv;
  explicit BwdCall(BwdFixture& f)
      : q(&f.q), k(&f.k), v(&f.v), out(&f.out), lse(&f.lse), dout(&f.dout), dq(&f.dq), dk(&f.dk), dv(&f.dv) {}
};

// attention_backward and plan_attention_backward share the checks: each must reject the call with `code` and a
// message holding every needle, and leave the fixture's gradients (and `watched`) as they were.
void expect_bwd_error(BwdFixture& f, const BwdCall& c, const Options& opt, ErrorCode code,
                      const std::vector<std::string>& needles, std::vector<const Tensor*> watched = {}) {
  for (const Tensor* t : {&f.dq, &f.dk, &f.dv}) watched.push_back(t);
  expect_error([&] { attention_backward(*c.q, *c.k, *c.v, *c.out, *c.lse, *c.dout, *c.dq, *c.dk, *c.dv, opt); },
               code, needles, watched);
  expect_error([&] { plan_attention_backward(*c.q, *c.k, *c.v, *c.out, *c.lse, *c.dout, *c.dq, *c.dk, *c.dv, opt); },
               code, needles, watched);
}

Tensor*& grad_slot(BwdCall& c, const std::string& name) { return name == "dq" ? c.dq : name == "dk" ? c.dk : c.dv; }
// Points the named argument of c at t.
void set_arg(BwdCall& c, const std::string& name, Tensor& t) {
  if (name == "dout") c.dout = &t;
  else grad_slot(c, name) = &t;
}
// dout and dq are shaped like q, dk and dv like k and v.
bool shaped_like_q(const std::string& name) { return name == "dout" || name == "dq"; }

using Needles = std::vector<std::string>;

// The rules every one of dout, dq, dk, dv obeys: the call with that argument replaced by make(name, the shape it
// should have) must fail with `code` and needles(name), writing nothing (the replacement included).
void expect_each_arg_error(BwdFixture& f, ErrorCode code,
                           const std::function<Tensor(const std::string&, const Shape&)>& make,
                           const std::function<Needles(const std::string&)>& needles) {
  for (const std::string name : {"dout", "dq", "dk", "dv"}) {
    INFO(name);
    Tensor t = make(name, shaped_like_q(name) ? BwdFixture::qs() : BwdFixture::ks());
    if (t.defined()) t = Fixture::filled(t, Fixture::kOutByte);
    BwdCall c(f);
    set_arg(c, name, t);
    std::vector<const Tensor*> watched;
    if (t.defined()) watched.push_back(&t);
    expect_bwd_error(f, c, {}, code, needles(name), watched);
  }
}

// A `make` for expect_each_arg_error: an f16 tensor of reshape(the shape the argument should have).
std::function<Tensor(const std::string&, const Shape&)> reshaped(BwdFixture& f, Shape (*reshape)(const Shape&)) {
  return [&f, reshape](const std::string&, const Shape& s) { return Tensor::empty(f.dev, DType::F16, reshape(s)); };
}

}  // namespace

TEST_CASE("bad input (backward): the fixture's call is valid") {
  BwdFixture f;
  const Result plan = plan_attention_backward(f.q, f.k, f.v, f.out, f.lse, f.dout, f.dq, f.dk, f.dv);
  CHECK(plan.kernel == "cpu_reference_bwd<f16>");
  CHECK(plan.workspace_bytes == 0);
  CHECK_NOTHROW(attention_backward(f.q, f.k, f.v, f.out, f.lse, f.dout, f.dq, f.dk, f.dv));
  CHECK(bytes_of(f.dq) != std::vector<std::byte>(f.dq.extent_bytes(), std::byte(Fixture::kOutByte)));
}

TEST_CASE("bad input (backward): lse undefined") {
  BwdFixture f;
  BwdCall c(f);
  Tensor none;
  c.lse = &none;
  expect_bwd_error(f, c, {}, ErrorCode::InvalidArgument, {"lse: tensor is undefined"});
}

TEST_CASE("bad input (backward): lse shape and dtype") {
  BwdFixture f;
  BwdCall c(f);
  Tensor wrong = Fixture::filled(Tensor::empty(f.dev, DType::F32, Shape::of(2, 5, 4)), 0);
  c.lse = &wrong;
  expect_bwd_error(f, c, {}, ErrorCode::ShapeMismatch, {"lse: shape [2, 5, 4] must be [batch, heads, seqlen_q]"});
  Tensor half = Fixture::filled(Tensor::empty(f.dev, DType::F16, f.lse.shape()), 0);
  c.lse = &half;
  expect_bwd_error(f, c, {}, ErrorCode::DTypeMismatch, {"lse: dtype must be f32, got f16"});
}

TEST_CASE("bad input (backward): dout, dq, dk, dv undefined") {
  BwdFixture f;
  expect_each_arg_error(f, ErrorCode::InvalidArgument, [](const std::string&, const Shape&) { return Tensor(); },
                        [](const std::string& name) { return Needles{name + ": tensor is undefined"}; });
}

TEST_CASE("bad input (backward): dout, dq, dk, dv rank") {
  BwdFixture f;
  const auto rank3 = [](const Shape& s) { return Shape::of(s[0], s[1], s[2] * s[3]); };
  expect_each_arg_error(f, ErrorCode::InvalidArgument, reshaped(f, rank3),
                        [](const std::string& name) { return Needles{name + ": must have rank 4"}; });
}

TEST_CASE("bad input (backward): dout, dq, dk, dv shape") {
  BwdFixture f;
  const auto longer = [](const Shape& s) { return Shape::of(s[0], s[1] + 1, s[2], s[3]); };
  expect_each_arg_error(f, ErrorCode::ShapeMismatch, reshaped(f, longer), [](const std::string& name) {
    return Needles{name + ": shape [", "differs from " + (shaped_like_q(name) ? "q" : name.substr(1)) + "'s"};
  });
}

TEST_CASE("bad input (backward): dout, dq, dk, dv dtype") {
  BwdFixture f;
  expect_each_arg_error(
      f, ErrorCode::DTypeMismatch,
      [&](const std::string&, const Shape& s) { return Tensor::empty(f.dev, DType::BF16, s); },
      [](const std::string& name) { return Needles{name + ": dtype bf16 differs from q's f16"}; });
}

TEST_CASE("bad input (backward): dout, dq, dk, dv head_dim stride") {
  BwdFixture f;
  expect_each_arg_error(
      f, ErrorCode::BadStride,
      [&](const std::string&, const Shape& s) {  // every other element of rows twice as long
        Tensor wide = Tensor::empty(f.dev, DType::F16, Shape::of(s[0], s[1], s[2], 2 * s[3]));
        return wide.as_strided(s, Strides{{s[1] * s[2] * 2 * s[3], s[2] * 2 * s[3], 2 * s[3], 2}});
      },
      [](const std::string& name) { return Needles{name + ": head_dim stride must be 1 (contiguous), got 2"}; });
}

TEST_CASE("bad input (backward): dout, dq, dk, dv on another device") {
  BwdFixture f;
  const Device other = proxy_device();
  expect_each_arg_error(
      f, ErrorCode::DeviceMismatch,
      [&](const std::string&, const Shape& s) { return Tensor::empty(other, DType::F16, s); },
      [](const std::string& name) {
        return Needles{name + ": is on device cpu:1 (CPU proxy) but q is on cpu:0",
                       "all tensors must be on one device"};
      });
}

TEST_CASE("bad input (backward): dq, dk, dv strides that make elements overlap") {
  BwdFixture f;
  for (const std::string name : {"dq", "dk", "dv"}) {
    INFO(name);
    const Shape s = name == std::string("dq") ? BwdFixture::qs() : BwdFixture::ks();
    Tensor base = Fixture::filled(Tensor::empty(f.dev, DType::F16, s), Fixture::kOutByte);
    Tensor heads_alike = base.as_strided(s, Strides{{s[1] * s[3], s[3], 0, 1}});  // every head the same memory
    BwdCall c(f);
    set_arg(c, name, heads_alike);
    expect_bwd_error(f, c, {}, ErrorCode::BadStride,
                     {std::string(name) + ": strides make elements overlap; an output needs distinct elements"},
                     {&base});
  }
}

TEST_CASE("bad input (backward): a gradient beyond the device's index range") {
  // The device indexes 10000 elements: q and the other contiguous tensors (at most 2560 elements) fit; dq with head
  // rows padded to 1024 elements (2·5·4·1024 - 960 from its first element to past its last) does not.
  BwdFixture f(proxy_device(10000));
  Tensor padded = Fixture::filled(Tensor::empty(f.dev, DType::F16, Shape::of(2, 5, 4, 1024)), Fixture::kOutByte);
  Tensor dq = padded.as_strided(BwdFixture::qs(), Strides{{5 * 4 * 1024, 4 * 1024, 1024, 1}});
  BwdCall c(f);
  c.dq = &dq;
  expect_bwd_error(f, c, {}, ErrorCode::Overflow, {"dq: addresses 40000 elements", "index at most 10000"}, {&padded});
}

TEST_CASE("bad input (backward): gradients overlapping inputs") {
  BwdFixture f;
  {
    BwdCall c(f);
    c.dq = &f.q;  // dq aliasing q
    expect_bwd_error(f, c, {}, ErrorCode::Aliasing, {"dq: overlaps q's memory"}, {&f.q});
  }
  {
    BwdCall c(f);
    Tensor k_view = f.k.as_strided(BwdFixture::ks(), Strides::contiguous(BwdFixture::ks()));
    c.dk = &k_view;  // dk aliasing k through another handle
    expect_bwd_error(f, c, {}, ErrorCode::Aliasing, {"dk: overlaps k's memory"}, {&f.k});
  }
  {
    BwdCall c(f);
    Tensor in_dout = f.dout.as_strided(BwdFixture::ks(), Strides::contiguous(BwdFixture::ks()), 64);
    c.dv = &in_dout;  // dv inside dout's memory
    expect_bwd_error(f, c, {}, ErrorCode::Aliasing, {"dv: overlaps dout's memory"}, {&f.dout});
  }
  {
    // dq over lse's memory (two host views of one buffer).
    std::vector<float> host(static_cast<std::size_t>(BwdFixture::qs().numel()), 7.0f);
    const Shape qs = BwdFixture::qs();
    Tensor dq = Tensor::wrap_host(f.dev, host.data(), DType::F16, qs, Strides::contiguous(qs));
    Tensor lse = Tensor::wrap_host(f.dev, host.data(), DType::F32, f.lse.shape(), Strides::contiguous(f.lse.shape()));
    BwdCall c(f);
    c.dq = &dq;
    c.lse = &lse;
    expect_bwd_error(f, c, {}, ErrorCode::Aliasing, {"dq: overlaps lse's memory"}, {&dq});
  }
}

TEST_CASE("bad input (backward): gradients overlapping each other") {
  BwdFixture f;
  // dq and dk as views of one buffer whose ranges share 64 elements; either may be the one named first.
  Tensor base = Fixture::filled(Tensor::empty(f.dev, DType::F16, Shape::of(1, 1, 1, 2560 + 1792 - 64)),
                                Fixture::kOutByte);
  Tensor dq = base.as_strided(BwdFixture::qs(), Strides::contiguous(BwdFixture::qs()));
  Tensor dk = base.as_strided(BwdFixture::ks(), Strides::contiguous(BwdFixture::ks()), 2560 - 64);
  BwdCall c(f);
  c.dq = &dq;
  c.dk = &dk;
  expect_bwd_error(f, c, {}, ErrorCode::Aliasing, {"overlaps", "dq", "dk"}, {&base});
  // dv as another handle on dk's memory.
  Tensor dk_again = f.dk.as_strided(BwdFixture::ks(), Strides::contiguous(BwdFixture::ks()));
  BwdCall c2(f);
  c2.dv = &dk_again;
  expect_bwd_error(f, c2, {}, ErrorCode::Aliasing, {"overlaps", "dk", "dv"});
}

// The same Tensor object passed as two gradients overlaps itself.
TEST_CASE("bad input (backward): the same tensor as dk and dv") {
  BwdFixture f;
  BwdCall c(f);
  c.dv = &f.dk;
  expect_bwd_error(f, c, {}, ErrorCode::Aliasing, {"overlaps", "dk", "dv"});
}

TEST_CASE("bad input (backward): options.workspace") {
  BwdFixture f;
  const BwdCall c(f);
  SUBCASE("undefined") {
    Tensor none;
    Options opt;
    opt.workspace = &none;
    expect_bwd_error(f, c, opt, ErrorCode::InvalidArgument, {"options.workspace: tensor is undefined"});
  }
  SUBCASE("on another device") {
    Tensor ws = Fixture::filled(Tensor::empty(proxy_device(), DType::F32, Shape::of(1, 1, 256)), 0x77);
    Options opt;
    opt.workspace = &ws;
    expect_bwd_error(f, c, opt, ErrorCode::DeviceMismatch, {"options.workspace: is on device cpu:1"}, {&ws});
  }
  SUBCASE("not contiguous") {
    Tensor base = Fixture::filled(Tensor::empty(f.dev, DType::F32, Shape::of(1, 16, 32)), 0x77);
    Tensor ws = base.as_strided(Shape::of(1, 16, 16), Strides{{512, 32, 1}});
    Options opt;
    opt.workspace = &ws;
    expect_bwd_error(f, c, opt, ErrorCode::BadStride, {"options.workspace: must be contiguous"}, {&base});
  }
  SUBCASE("overlapping an input") {
    Tensor ws = f.lse.as_strided(Shape::of(1, 1, 8), Strides::contiguous(Shape::of(1, 1, 8)));
    Options opt;
    opt.workspace = &ws;
    expect_bwd_error(f, c, opt, ErrorCode::Aliasing, {"options.workspace: overlaps lse's memory"}, {&f.lse});
  }
  SUBCASE("overlapping a gradient") {
    Tensor ws = f.dv.as_strided(Shape::of(1, 1, 64), Strides::contiguous(Shape::of(1, 1, 64)), 128);
    Options opt;
    opt.workspace = &ws;
    expect_bwd_error(f, c, opt, ErrorCode::Aliasing, {"options.workspace: overlaps dv's memory"});
  }
}

TEST_CASE("bad input (backward): options.workspace smaller than the path needs") {
  // The proxy's backward needs 4096 bytes of workspace; the CPU reference itself needs none.
  BwdFixture f(proxy_device(std::uint64_t{1} << 62, 4096));
  const BwdCall c(f);
  CHECK(plan_attention_backward(f.q, f.k, f.v, f.out, f.lse, f.dout, f.dq, f.dk, f.dv).workspace_bytes == 4096);
  Tensor small = Fixture::filled(Tensor::empty(f.dev, DType::F32, Shape::of(1, 1, 1023)), 0x77);
  Options opt;
  opt.workspace = &small;
  expect_bwd_error(f, c, opt, ErrorCode::InvalidArgument,
                   {"options.workspace: holds 4092 bytes; cpu_reference needs 4096", "workspace_bytes"}, {&small});
  // Any dtype and rank will do once it is large enough.
  Tensor enough = Tensor::empty(f.dev, DType::F16, Shape::of(1, 1, 2048));
  opt.workspace = &enough;
  CHECK(attention_backward(f.q, f.k, f.v, f.out, f.lse, f.dout, f.dq, f.dk, f.dv, opt).workspace_bytes == 4096);
}

namespace {
// Element 0 of a CPU tensor, for wrapping a second view of its memory with another dtype.
void* host_address(const Tensor& t) { return reinterpret_cast<void*>(t.storage()->handle + t.storage()->offset); }
}  // namespace

// dsinks (Options::dsinks): the gradient of sinks, f32 [Hq], contiguous, on q's device, apart from every argument.
TEST_CASE("bad input (backward): options.dsinks") {
  BwdFixture f;
  const BwdCall c(f);
  const Shape heads{1, {4, 0, 0, 0}};
  auto f32 = [&](const Shape& s, int byte) { return Fixture::filled(Tensor::empty(f.dev, DType::F32, s), byte); };
  const Tensor sinks = f32(heads, 0x3F);  // 0.75 each
  Options opt;
  opt.sinks = &sinks;
  SUBCASE("valid: written") {
    Tensor ds = f32(heads, Fixture::kOutByte);
    opt.dsinks = &ds;
    CHECK_NOTHROW(attention_backward(f.q, f.k, f.v, f.out, f.lse, f.dout, f.dq, f.dk, f.dv, opt));
    CHECK(bytes_of(ds) != std::vector<std::byte>(ds.extent_bytes(), std::byte(Fixture::kOutByte)));
  }
  SUBCASE("undefined") {
    Tensor none;
    opt.dsinks = &none;
    expect_bwd_error(f, c, opt, ErrorCode::InvalidArgument, {"options.dsinks: tensor is undefined"});
  }
  SUBCASE("without sinks") {
    Tensor ds = f32(heads, Fixture::kOutByte);
    opt.sinks = nullptr;
    opt.dsinks = &ds;
    expect_bwd_error(f, c, opt, ErrorCode::InvalidArgument, {"options.dsinks: given without options.sinks"}, {&ds});
  }
  SUBCASE("on another device") {
    Tensor ds = Fixture::filled(Tensor::empty(proxy_device(), DType::F32, heads), Fixture::kOutByte);
    opt.dsinks = &ds;
    expect_bwd_error(f, c, opt, ErrorCode::DeviceMismatch, {"options.dsinks: is on device cpu:1"}, {&ds});
  }
  SUBCASE("dtype") {
    Tensor ds = Fixture::filled(Tensor::empty(f.dev, DType::F16, heads), Fixture::kOutByte);
    opt.dsinks = &ds;
    expect_bwd_error(f, c, opt, ErrorCode::DTypeMismatch, {"options.dsinks: dtype must be f32, got f16"}, {&ds});
  }
  SUBCASE("shape") {
    Tensor ds = f32(Shape{2, {2, 4, 0, 0}}, Fixture::kOutByte);  // [B, Hq] is a layout of ALiBi slopes, not of sinks
    opt.dsinks = &ds;
    expect_bwd_error(f, c, opt, ErrorCode::ShapeMismatch, {"options.dsinks: shape [2, 4] must be [heads_q] = [4]"},
                     {&ds});
  }
  SUBCASE("not contiguous") {
    Tensor base = f32(Shape{1, {8, 0, 0, 0}}, Fixture::kOutByte);
    Tensor ds = base.as_strided(heads, Strides{{2}});
    opt.dsinks = &ds;
    expect_bwd_error(f, c, opt, ErrorCode::BadStride, {"options.dsinks: must be contiguous"}, {&base});
  }
  SUBCASE("beyond the device's index range") {
    BwdFixture g(proxy_device(10000));
    const Tensor gs = Fixture::filled(Tensor::empty(g.dev, DType::F32, heads), 0x3F);
    Tensor base = Fixture::filled(Tensor::empty(g.dev, DType::F32, Shape{1, {10010, 0, 0, 0}}), Fixture::kOutByte);
    Tensor ds = base.as_strided(heads, Strides::contiguous(heads), 10000);
    Options o;
    o.sinks = &gs;
    o.dsinks = &ds;
    expect_bwd_error(g, BwdCall(g), o, ErrorCode::Overflow, {"options.dsinks: addresses 10004 elements"}, {&base});
  }
  SUBCASE("overlapping sinks") {
    Tensor ds = sinks.as_strided(heads, Strides::contiguous(heads));
    opt.dsinks = &ds;
    expect_bwd_error(f, c, opt, ErrorCode::Aliasing, {"options.dsinks: overlaps options.sinks's memory"}, {&sinks});
  }
  SUBCASE("overlapping an input") {
    Tensor ds = f.lse.as_strided(heads, Strides::contiguous(heads), 4);
    opt.dsinks = &ds;
    expect_bwd_error(f, c, opt, ErrorCode::Aliasing, {"options.dsinks: overlaps lse's memory"}, {&f.lse});
  }
  SUBCASE("overlapping a gradient") {
    Tensor ds = Tensor::wrap_host(f.dev, host_address(f.dk), DType::F32, heads, Strides::contiguous(heads));
    opt.dsinks = &ds;
    expect_bwd_error(f, c, opt, ErrorCode::Aliasing, {"options.dsinks: overlaps dk's memory"});
  }
}

// ALiBi slopes and sinks are inputs of the backward too: no gradient may overlap them.
TEST_CASE("bad input (backward): a gradient overlapping options.sinks or options.alibi_slopes") {
  BwdFixture f;
  const BwdCall c(f);
  const Shape heads{1, {4, 0, 0, 0}};
  Tensor in_dv = Tensor::wrap_host(f.dev, host_address(f.dv), DType::F32, heads, Strides::contiguous(heads));
  Options opt;
  opt.sinks = &in_dv;
  expect_bwd_error(f, c, opt, ErrorCode::Aliasing, {"dv: overlaps options.sinks's memory"});
  opt = {};
  opt.alibi_slopes = &in_dv;
  expect_bwd_error(f, c, opt, ErrorCode::Aliasing, {"dv: overlaps options.alibi_slopes's memory"});
}
