// The bad-input suite of the serving layouts: each rule of validate_kvcache and validate_varlen
// (src/validate_serving.cpp) is triggered once. Each test checks the error code, that the message names the argument,
// and that nothing was written: out, lse and, when the call appends, the caches. Every call is tried as the run and as
// the plan.
#include <doctest/doctest.h>

#include "bad_input.hpp"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

using namespace flashtile;
using namespace flashtile::testing;

namespace {

constexpr int kOutByte = 0x5A;  // outputs (and the caches) start filled with it

using Needles = std::vector<std::string>;

Shape shape1(std::int64_t a) { return Shape{1, {a, 0, 0, 0}}; }
Shape shape2(std::int64_t a, std::int64_t b) { return Shape{2, {a, b, 0, 0}}; }

Tensor ints(const Device& dev, const Shape& s, const std::vector<std::int32_t>& values) {
  Tensor t = Tensor::empty(dev, DType::I32, s);
  t.upload(values.data(), values.size() * sizeof(std::int32_t));
  return t;
}

Tensor bytes(const Device& dev, DType dt, const Shape& s, int byte) { return filled_with(Tensor::empty(dev, dt, s), byte); }

// A view of t with another rank: same memory, contiguous strides of `s` (which must not need more elements).
Tensor reshaped(const Tensor& t, const Shape& s) { return t.as_strided(s, Strides::contiguous(s)); }

// ---- attention_with_kvcache. -----------------------------------------------------------------------------------

// B 2, Sq 3, heads 4/2, D 64, f16; 5 pages of 16 keys, 2 a sequence; sequences of 5 and 17 keys, 2 new keys each.
struct KvFixture {
  static constexpr std::int64_t B = 2, Sq = 3, Hq = 4, Hkv = 2, D = 64, P = 5, page = 16, per = 2, S_new = 2;
  Device dev;
  Tensor q, k_cache, v_cache, block_table, seqlens, out, lse, k_new, v_new;
  static Shape qs() { return Shape::of(B, Sq, Hq, D); }
  static Shape cs() { return Shape::of(P, page, Hkv, D); }
  static Shape ns() { return Shape::of(B, S_new, Hkv, D); }
  explicit KvFixture(Device d = Device::open(Backend::Cpu)) : dev(std::move(d)) {
    q = bytes(dev, DType::F16, qs(), 0x11);
    k_cache = bytes(dev, DType::F16, cs(), kOutByte);
    v_cache = bytes(dev, DType::F16, cs(), kOutByte);
    block_table = ints(dev, shape2(B, per), {3, 0, 4, 1});
    seqlens = ints(dev, shape1(B), {5, 17});
    out = bytes(dev, DType::F16, qs(), kOutByte);
    lse = bytes(dev, DType::F32, Shape::of(B, Hq, Sq), kOutByte);
    k_new = bytes(dev, DType::F16, ns(), 0x22);
    v_new = bytes(dev, DType::F16, ns(), 0x33);
  }
  // The tensor arguments by the names messages give them.
  static std::vector<std::string> names() {
    return {"q", "out", "cache.k_cache", "cache.v_cache", "cache.block_table", "cache.seqlens", "lse", "k_new", "v_new"};
  }
  std::vector<const Tensor*> tensors() const {
    return {&q, &out, &k_cache, &v_cache, &block_table, &seqlens, &lse, &k_new, &v_new};
  }
};

// One call's arguments: the fixture's, with some replaced.
struct KvCall {
  const Tensor* q;
  PagedKv cache;
  Tensor* out;
  Tensor* lse;
  const Tensor *k_new, *v_new;
  Options opt;
  explicit KvCall(KvFixture& f)
      : q(&f.q), cache{f.k_cache, f.v_cache, f.block_table, f.seqlens}, out(&f.out), lse(&f.lse), k_new(&f.k_new),
        v_new(&f.v_new) {}
  // Points the argument messages call `name` at t.
  void set(const std::string& name, Tensor& t) {
    if (name == "q") q = &t;
    else if (name == "out") out = &t;
    else if (name == "cache.k_cache") cache.k_cache = t;
    else if (name == "cache.v_cache") cache.v_cache = t;
    else if (name == "cache.block_table") cache.block_table = t;
    else if (name == "cache.seqlens") cache.seqlens = t;
    else if (name == "lse") lse = &t;
    else if (name == "k_new") k_new = &t;
    else v_new = &t;
  }
};

// attention_with_kvcache and its plan must reject c with `code` and every needle, writing nothing: out, lse, the
// caches (which the append would write), and `watched`.
void expect_call_error(const KvCall& c, ErrorCode code, const Needles& needles, std::vector<const Tensor*> watched = {}) {
  for (const Tensor* t : std::initializer_list<const Tensor*>{c.out, c.lse, &c.cache.k_cache, &c.cache.v_cache})
    if (t && t->defined()) watched.push_back(t);
  expect_error([&] { attention_with_kvcache(*c.q, c.cache, *c.out, c.lse, c.k_new, c.v_new, c.opt); }, code, needles,
               watched);
  expect_error([&] { plan_attention_with_kvcache(*c.q, c.cache, *c.out, c.lse, c.k_new, c.v_new, c.opt); }, code,
               needles, watched);
}

// The fixture's tensor that messages call `name`: tensors[i] is called names[i].
const Tensor& named(const std::vector<std::string>& names, const std::vector<const Tensor*>& tensors,
                    const std::string& name) {
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return *tensors[i];
  FAIL("no argument " << name);
  return *tensors[0];
}

// For each named argument: the call with it replaced by make(name, the fixture's tensor) must fail with `code` and
// needles(name), writing nothing (the replacement included, when defined).
template <class Fixture, class Call>
void expect_each(const std::vector<std::string>& names, ErrorCode code,
                 const std::function<Tensor(const std::string&, const Tensor&)>& make,
                 const std::function<Needles(const std::string&)>& needles) {
  for (const std::string& name : names) {
    INFO("argument ", name);
    Fixture f;
    Tensor t = make(name, named(Fixture::names(), f.tensors(), name));
    Call c(f);
    c.set(name, t);
    std::vector<const Tensor*> watched;
    if (t.defined()) watched.push_back(&t);
    expect_call_error(c, code, needles(name), watched);
  }
}

const auto expect_each_kv = expect_each<KvFixture, KvCall>;
const std::vector<std::string> kKvArgs = KvFixture::names();

// A copy of the argument on a second device (every argument but q is tried there).
std::function<Tensor(const std::string&, const Tensor&)> on_proxy() {
  return [other = proxy_device()](const std::string&, const Tensor& t) {
    Tensor o = Tensor::empty(other, t.dtype(), t.shape());
    o.upload(bytes_of(t).data(), t.extent_bytes());
    return o;
  };
}
Needles on_device_needles(const std::string& name) {
  return {name + ": is on device cpu:1 (CPU proxy) but q is on cpu:0", "all tensors must be on one device"};
}

// t's shape over every other element of a buffer twice as long in the last dimension: not contiguous.
Tensor every_other(const std::string&, const Tensor& t) {
  Shape big = t.shape();
  big.dims[std::size_t(big.rank - 1)] *= 2;
  Tensor b = bytes(t.device(), t.dtype(), big, t.dtype() == DType::I32 ? 0 : kOutByte);
  Strides st = Strides::contiguous(big);
  st.dims[std::size_t(big.rank - 1)] = 2;
  return b.as_strided(t.shape(), st);
}

}  // namespace

TEST_CASE("bad input (kvcache): the fixture's call is valid and appends") {
  KvFixture f;
  const Result plan = plan_attention_with_kvcache(f.q, {f.k_cache, f.v_cache, f.block_table, f.seqlens}, f.out, &f.lse,
                                                  &f.k_new, &f.v_new);
  CHECK(plan.kernel == "cpu_reference<f16>");
  CHECK(bytes_of(f.k_cache) == std::vector<std::byte>(f.k_cache.extent_bytes(), std::byte(kOutByte)));
  KvCall c(f);
  CHECK_NOTHROW(attention_with_kvcache(f.q, c.cache, f.out, &f.lse, &f.k_new, &f.v_new));
  CHECK(bytes_of(f.out) != std::vector<std::byte>(f.out.extent_bytes(), std::byte(kOutByte)));
  CHECK(bytes_of(f.k_cache) != std::vector<std::byte>(f.k_cache.extent_bytes(), std::byte(kOutByte)));
}

TEST_CASE("bad input (kvcache): undefined tensors") {
  expect_each_kv(kKvArgs, ErrorCode::InvalidArgument, [](const std::string&, const Tensor&) { return Tensor(); },
                 [](const std::string& name) { return Needles{name + ": tensor is undefined"}; });
}

TEST_CASE("bad input (kvcache): k_new and v_new come together") {
  KvFixture f;
  KvCall c(f);
  c.v_new = nullptr;
  expect_call_error(c, ErrorCode::InvalidArgument, {"v_new: k_new and v_new come together"});
  c.v_new = &f.v_new;
  c.k_new = nullptr;
  expect_call_error(c, ErrorCode::InvalidArgument, {"k_new: k_new and v_new come together"});
}

TEST_CASE("bad input (kvcache): ranks") {
  expect_each_kv(
      kKvArgs, ErrorCode::InvalidArgument,
      [](const std::string& name, const Tensor& t) {
        // One rank less (the tables: one more), over the same memory.
        const Shape& s = t.shape();
        if (name == "cache.seqlens") return reshaped(t, shape2(s[0], 1));
        if (name == "cache.block_table") return reshaped(t, shape1(s[0] * s[1]));
        if (s.rank == 3) return reshaped(t, Shape::of(s[0], s[1], s[2], 1));
        return reshaped(t, Shape::of(s[0], s[1], s[2] * s[3]));
      },
      [](const std::string& name) {
        const int rank = name == "lse" || name == "cache.block_table" ? 3 - (name == "cache.block_table")
                         : name == "cache.seqlens"                    ? 1
                                                                      : 4;
        return Needles{name + ": must have rank " + std::to_string(rank)};
      });
}

TEST_CASE("bad input (kvcache): dtypes") {
  KvFixture g;
  KvCall ci(g);
  Tensor qi = bytes(g.dev, DType::I32, KvFixture::qs(), 0);
  ci.q = &qi;
  expect_call_error(ci, ErrorCode::DTypeMismatch, {"q: dtype i32 is an index type"});
  expect_each_kv({"out", "cache.k_cache", "cache.v_cache", "k_new", "v_new"}, ErrorCode::DTypeMismatch,
                 [](const std::string&, const Tensor& t) { return bytes(t.device(), DType::BF16, t.shape(), kOutByte); },
                 [](const std::string& name) { return Needles{name + ": dtype bf16 differs from q's f16"}; });
  expect_each_kv({"lse"}, ErrorCode::DTypeMismatch,
                 [](const std::string&, const Tensor& t) { return bytes(t.device(), DType::F16, t.shape(), kOutByte); },
                 [](const std::string&) { return Needles{"lse: dtype must be f32, got f16"}; });
  expect_each_kv({"cache.block_table", "cache.seqlens"}, ErrorCode::DTypeMismatch,
                 [](const std::string&, const Tensor& t) { return bytes(t.device(), DType::F32, t.shape(), 0); },
                 [](const std::string& name) { return Needles{name + ": dtype must be i32, got f32"}; });
}

TEST_CASE("bad input (kvcache): shapes") {
  const auto with_shape = [](const Shape& s) {
    return [s](const std::string&, const Tensor& t) { return bytes(t.device(), t.dtype(), s, kOutByte); };
  };
  using F = KvFixture;
  expect_each_kv({"out"}, ErrorCode::ShapeMismatch, with_shape(Shape::of(F::B, F::Sq + 1, F::Hq, F::D)),
                 [](const std::string&) { return Needles{"out: shape [2, 4, 4, 64] differs from q's [2, 3, 4, 64]"}; });
  expect_each_kv({"cache.v_cache"}, ErrorCode::ShapeMismatch, with_shape(Shape::of(F::P + 1, F::page, F::Hkv, F::D)),
                 [](const std::string&) { return Needles{"cache.v_cache: shape [6, 16, 2, 64] differs from cache.k_cache's"}; });
  expect_each_kv({"lse"}, ErrorCode::ShapeMismatch, with_shape(Shape::of(F::B, F::Sq, F::Hq)),
                 [](const std::string&) { return Needles{"lse: shape [2, 3, 4] differs from [batch, heads, seqlen_q] ="}; });
  expect_each_kv({"k_new"}, ErrorCode::ShapeMismatch, with_shape(Shape::of(F::B, F::S_new, F::Hkv + 1, F::D)),
                 [](const std::string&) { return Needles{"k_new: shape [2, 2, 3, 64] differs from"}; });
  expect_each_kv({"v_new"}, ErrorCode::ShapeMismatch, with_shape(Shape::of(F::B, F::S_new + 1, F::Hkv, F::D)),
                 [](const std::string&) { return Needles{"v_new: shape [2, 3, 2, 64] differs from k_new's"}; });

  // The caches: head dim, heads (must divide q's), page size (a multiple of 16).
  KvFixture f;
  const auto both_caches = [&](const Shape& s, ErrorCode code, const Needles& needles) {
    KvCall c(f);
    c.cache.k_cache = bytes(f.dev, DType::F16, s, kOutByte);
    c.cache.v_cache = bytes(f.dev, DType::F16, s, kOutByte);
    expect_call_error(c, code, needles);
  };
  both_caches(Shape::of(F::P, F::page, F::Hkv, 128), ErrorCode::ShapeMismatch,
              {"cache.k_cache: head_dim 128 differs from q's head_dim 64"});
  both_caches(Shape::of(F::P, F::page, 3, F::D), ErrorCode::ShapeMismatch,
              {"cache.k_cache: heads 3 must divide q's heads 4"});
  both_caches(Shape::of(F::P, 24, F::Hkv, F::D), ErrorCode::InvalidArgument,
              {"cache.k_cache: page_size must be a multiple of 16, got 24"});

  // The tables' batch.
  KvCall c(f);
  c.cache.block_table = ints(f.dev, shape2(3, F::per), {0, 0, 0, 0, 0, 0});
  expect_call_error(c, ErrorCode::ShapeMismatch, {"cache.block_table: batch 3 differs from q's batch 2"});
  c = KvCall(f);
  c.cache.seqlens = ints(f.dev, shape1(1), {0});
  expect_call_error(c, ErrorCode::ShapeMismatch, {"cache.seqlens: batch 1 differs from q's batch 2"});
}

TEST_CASE("bad input (kvcache): head_dim must be a multiple of 8 up to 256") {
  const Device cpu = Device::open(Backend::Cpu);
  for (std::int64_t d : {100, 264}) {
    INFO("head_dim ", d);
    Tensor q = bytes(cpu, DType::F16, Shape::of(1, 1, 1, d), 0), out = bytes(cpu, DType::F16, q.shape(), kOutByte);
    const PagedKv cache{bytes(cpu, DType::F16, Shape::of(1, 16, 1, d), kOutByte),
                        bytes(cpu, DType::F16, Shape::of(1, 16, 1, d), kOutByte), ints(cpu, shape2(1, 1), {0}),
                        ints(cpu, shape1(1), {3})};
    expect_error([&] { attention_with_kvcache(q, cache, out); }, ErrorCode::InvalidArgument,
                 "head_dim: must be a multiple of 8 in [8, 256], got " + std::to_string(d), {&out});
  }
}

TEST_CASE("bad input (kvcache): the head dim's stride") {
  expect_each_kv(
      {"q", "out", "cache.k_cache", "cache.v_cache", "k_new", "v_new"}, ErrorCode::BadStride,
      [](const std::string&, const Tensor& t) {
        // Every other element of rows twice as long.
        const Shape& s = t.shape();
        Tensor wide = bytes(t.device(), t.dtype(), Shape::of(s[0], s[1], s[2], 2 * s[3]), kOutByte);
        return wide.as_strided(s, Strides{{s[1] * s[2] * 2 * s[3], s[2] * 2 * s[3], 2 * s[3], 2}});
      },
      [](const std::string& name) { return Needles{name + ": head_dim stride must be 1 (contiguous), got 2"}; });
}

TEST_CASE("bad input (kvcache): outputs whose strides make elements overlap") {
  // out (always written) and the caches (written when appending): every head the same memory.
  expect_each_kv(
      {"out", "cache.k_cache", "cache.v_cache"}, ErrorCode::BadStride,
      [](const std::string&, const Tensor& t) {
        const Shape& s = t.shape();
        return t.as_strided(s, Strides{{s[1] * s[3], s[3], 0, 1}});
      },
      [](const std::string& name) { return Needles{name + ": strides make elements overlap"}; });
  // Without an append the caches are only read: the same strides are fine.
  KvFixture f;
  KvCall c(f);
  const Shape s = KvFixture::cs();
  c.cache.k_cache = f.k_cache.as_strided(s, Strides{{s[1] * s[3], s[3], 0, 1}});
  CHECK_NOTHROW(plan_attention_with_kvcache(f.q, c.cache, f.out, &f.lse));
}

TEST_CASE("bad input (kvcache): lse and the tables must be contiguous") {
  expect_each_kv({"lse", "cache.block_table", "cache.seqlens"}, ErrorCode::BadStride, every_other,
                 [](const std::string& name) { return Needles{name + ": must be contiguous"}; });
}

TEST_CASE("bad input (kvcache): tensors on another device") {
  expect_each_kv(std::vector<std::string>(kKvArgs.begin() + 1, kKvArgs.end()), ErrorCode::DeviceMismatch, on_proxy(),
                 on_device_needles);
}

TEST_CASE("bad input (kvcache): options") {
  KvFixture f;
  int dummy = 0;
  KvCall c(f);
  c.opt.cuda_stream = &dummy;
  expect_call_error(c, ErrorCode::DeviceMismatch, {"options.cuda_stream: given, but the tensors are on a cpu device"});
  c.opt.vk_command_buffer = &dummy;
  expect_call_error(c, ErrorCode::InvalidArgument, {"options: set cuda_stream or vk_command_buffer, not both"});
  c = KvCall(f);
  c.opt.vk_command_buffer = &dummy;
  expect_call_error(c, ErrorCode::DeviceMismatch, {"options.vk_command_buffer: given"});
  c = KvCall(f);
  c.opt.scale = std::numeric_limits<float>::infinity();
  expect_call_error(c, ErrorCode::InvalidArgument, {"options.scale: must be finite"});
  c = KvCall(f);
  c.opt.path = Path::CudaSm90;
  expect_call_error(c, ErrorCode::Unsupported, {"options.path: cuda_sm90"});
}

TEST_CASE("bad input (kvcache): sizes beyond the kernels' index types") {
  const Device cpu = Device::open(Backend::Cpu);
  std::vector<std::uint16_t> small(256);
  const auto zero_strided = [&](const Shape& s) {  // views that are never touched
    return Tensor::wrap_host(cpu, small.data(), DType::F16, s, Strides{{0, 0, s[3], 1}});
  };
  {  // seqlen_q beyond int32
    const Shape huge = Shape::of(1, std::int64_t{3} << 30, 1, 64);
    Tensor q = zero_strided(huge), out = zero_strided(huge);
    const PagedKv cache{zero_strided(Shape::of(1, 16, 1, 64)), zero_strided(Shape::of(1, 16, 1, 64)),
                        ints(cpu, shape2(1, 1), {0}), ints(cpu, shape1(1), {1})};
    expect_error([&] { attention_with_kvcache(q, cache, out); }, ErrorCode::Overflow,
                 "seqlen_q: 3221225472 exceeds the kernels' int32 range");
  }
  {  // pages_per_seq x page_size beyond int32: 4096 pages of 2^20 keys
    Tensor q = zero_strided(Shape::of(1, 1, 1, 64));
    Tensor out = bytes(cpu, DType::F16, q.shape(), kOutByte);
    const Shape cs = Shape::of(1, std::int64_t{1} << 20, 1, 64);
    const PagedKv cache{zero_strided(cs), zero_strided(cs), ints(cpu, shape2(1, 4096), std::vector<std::int32_t>(4096)),
                        ints(cpu, shape1(1), {1})};
    expect_error([&] { attention_with_kvcache(q, cache, out); }, ErrorCode::Overflow,
                 "keys: 4294967296 exceeds the kernels' int32 range", {&out});
  }
  {  // a device that indexes 20000 elements: the cache (10240) fits, a table view 20000 elements in does not
    KvFixture f(proxy_device(20000));
    Tensor big = ints(f.dev, shape1(20004), std::vector<std::int32_t>(20004));
    Tensor table = big.as_strided(shape2(2, 2), Strides::contiguous(shape2(2, 2)), 20000);
    KvCall c(f);
    c.cache.block_table = table;
    expect_call_error(c, ErrorCode::Overflow, {"cache.block_table: addresses 20004 elements", "index at most 20000"});
    KvFixture g(proxy_device(10000));
    expect_call_error(KvCall(g), ErrorCode::Overflow, {"cache.k_cache: addresses 10240 elements"});
  }
}

TEST_CASE("bad input (kvcache): aliasing") {
  KvFixture f;
  {  // out over q's memory through another Tensor object
    Tensor q_again = f.q;
    KvCall c(f);
    c.out = &q_again;
    expect_call_error(c, ErrorCode::Aliasing, {"out: overlaps q's memory"}, {&f.q});
  }
  {  // out inside the cache
    KvCall c(f);
    Tensor in_cache = f.k_cache.as_strided(KvFixture::qs(), Strides::contiguous(KvFixture::qs()));
    c.out = &in_cache;
    expect_call_error(c, ErrorCode::Aliasing, {"out: overlaps cache.k_cache's memory"});
  }
  {  // lse inside out (host views of one buffer)
    std::vector<float> host(std::size_t(KvFixture::qs().numel()));
    const Shape ls = Shape::of(KvFixture::B, KvFixture::Hq, KvFixture::Sq);
    Tensor out = Tensor::wrap_host(f.dev, host.data(), DType::F16, KvFixture::qs(), Strides::contiguous(KvFixture::qs()));
    Tensor lse = Tensor::wrap_host(f.dev, host.data() + 8, DType::F32, ls, Strides::contiguous(ls));
    KvCall c(f);
    c.out = &out;
    c.lse = &lse;
    expect_call_error(c, ErrorCode::Aliasing, {"out: overlaps lse's memory"});
  }
  {  // the append writes into k_new's memory: k_new a view of the cache
    KvCall c(f);
    Tensor k_new = f.k_cache.as_strided(KvFixture::ns(), Strides::contiguous(KvFixture::ns()));
    c.k_new = &k_new;
    expect_call_error(c, ErrorCode::Aliasing, {"cache.k_cache: overlaps k_new's memory"});
  }
  {  // out over the block table's memory (two host views of one buffer)
    std::vector<std::uint16_t> host(std::size_t(KvFixture::qs().numel()));
    Tensor out = Tensor::wrap_host(f.dev, host.data(), DType::F16, KvFixture::qs(), Strides::contiguous(KvFixture::qs()));
    Tensor table = Tensor::wrap_host(f.dev, host.data(), DType::I32, shape2(2, 2), Strides::contiguous(shape2(2, 2)));
    KvCall c(f);
    c.out = &out;
    c.cache.block_table = table;
    expect_call_error(c, ErrorCode::Aliasing, {"out: overlaps cache.block_table's memory"});
  }
}

// The very same Tensor object as q and out overlaps itself.
TEST_CASE("bad input (kvcache): the same Tensor object as q and out") {
  KvFixture f;
  KvCall c(f);
  c.out = &f.q;
  expect_call_error(c, ErrorCode::Aliasing, {"out: overlaps q's memory"}, {&f.q});
}

TEST_CASE("bad input (kvcache): table contents") {
  KvFixture f;
  const auto with = [&](const std::vector<std::int32_t>& table, const std::vector<std::int32_t>& lens, ErrorCode code,
                        const Needles& needles) {
    KvCall c(f);
    c.cache.block_table = ints(f.dev, shape2(2, 2), table);
    c.cache.seqlens = ints(f.dev, shape1(2), lens);
    expect_call_error(c, code, needles);
  };
  with({3, 0, 4, 5}, {5, 17}, ErrorCode::InvalidArgument, {"cache.block_table: entry [1, 1] = 5 is not a page (0..4)"});
  with({-1, 0, 4, 1}, {5, 17}, ErrorCode::InvalidArgument, {"cache.block_table: entry [0, 0] = -1 is not a page"});
  with({3, 0, 4, 1}, {-1, 17}, ErrorCode::InvalidArgument, {"cache.seqlens: sequence 0 holds -1 keys"});
  with({3, 0, 4, 1}, {5, 31}, ErrorCode::InvalidArgument,
       {"cache.seqlens: sequence 1 holds 31 keys (+2 new); its pages hold 0..32"});
  // Two sequences appending into one slot: both hold 5 keys in page 3.
  with({3, 0, 3, 1}, {5, 5}, ErrorCode::Aliasing,
       {"k_new: sequence 1 writes page 3, slot 5, which another sequence also writes"});
  // Entries past a sequence's keys are never read: any value is fine there.
  KvCall c(f);
  c.cache.block_table = ints(f.dev, shape2(2, 2), {3, -7, 4, 1});
  CHECK_NOTHROW(plan_attention_with_kvcache(f.q, c.cache, f.out, &f.lse, &f.k_new, &f.v_new));
}

// ---- attention_varlen. -----------------------------------------------------------------------------------------

namespace {

// Three sequences of 1x6, 4x0 and 3x5 query x key rows; heads 4/2, D 64, f16.
struct VarFixture {
  static constexpr std::int64_t Tq = 8, Tk = 11, Hq = 4, Hkv = 2, D = 64;
  Device dev;
  Tensor q, k, v, out, lse, cu_q, cu_k;
  explicit VarFixture(Device d = Device::open(Backend::Cpu)) : dev(std::move(d)) {
    q = bytes(dev, DType::F16, Shape::of(Tq, Hq, D), 0x11);
    k = bytes(dev, DType::F16, Shape::of(Tk, Hkv, D), 0x22);
    v = bytes(dev, DType::F16, Shape::of(Tk, Hkv, D), 0x33);
    out = bytes(dev, DType::F16, q.shape(), kOutByte);
    lse = bytes(dev, DType::F32, shape2(Hq, Tq), kOutByte);
    cu_q = ints(dev, shape1(4), {0, 1, 5, 8});
    cu_k = ints(dev, shape1(4), {0, 6, 6, 11});
  }
  static std::vector<std::string> names() {
    return {"q", "k", "v", "out", "lse", "lengths.cu_seqlens_q", "lengths.cu_seqlens_k"};
  }
  std::vector<const Tensor*> tensors() const { return {&q, &k, &v, &out, &lse, &cu_q, &cu_k}; }
};

struct VarCall {
  const Tensor *q, *k, *v;
  Tensor *out, *lse;
  Varlen lengths;
  Options opt;
  explicit VarCall(VarFixture& f)
      : q(&f.q), k(&f.k), v(&f.v), out(&f.out), lse(&f.lse), lengths{f.cu_q, f.cu_k, 4, 6} {}
  void set(const std::string& name, Tensor& t) {
    if (name == "q") q = &t;
    else if (name == "k") k = &t;
    else if (name == "v") v = &t;
    else if (name == "out") out = &t;
    else if (name == "lse") lse = &t;
    else if (name == "lengths.cu_seqlens_q") lengths.cu_seqlens_q = t;
    else lengths.cu_seqlens_k = t;
  }
};

void expect_call_error(const VarCall& c, ErrorCode code, const Needles& needles, std::vector<const Tensor*> watched = {}) {
  for (const Tensor* t : std::initializer_list<const Tensor*>{c.out, c.lse})
    if (t && t->defined()) watched.push_back(t);
  expect_error([&] { attention_varlen(*c.q, *c.k, *c.v, *c.out, c.lse, c.lengths, c.opt); }, code, needles, watched);
  expect_error([&] { plan_attention_varlen(*c.q, *c.k, *c.v, *c.out, c.lse, c.lengths, c.opt); }, code, needles,
               watched);
}

const auto expect_each_var = expect_each<VarFixture, VarCall>;
const std::vector<std::string> kVarArgs = VarFixture::names();

}  // namespace

TEST_CASE("bad input (varlen): the fixture's call is valid") {
  VarFixture f;
  VarCall c(f);
  CHECK(plan_attention_varlen(f.q, f.k, f.v, f.out, &f.lse, c.lengths).kernel == "cpu_reference<f16>");
  CHECK_NOTHROW(attention_varlen(f.q, f.k, f.v, f.out, &f.lse, c.lengths));
  CHECK(bytes_of(f.out) != std::vector<std::byte>(f.out.extent_bytes(), std::byte(kOutByte)));
}

TEST_CASE("bad input (varlen): undefined tensors") {
  expect_each_var(kVarArgs, ErrorCode::InvalidArgument, [](const std::string&, const Tensor&) { return Tensor(); },
                  [](const std::string& name) { return Needles{name + ": tensor is undefined"}; });
}

TEST_CASE("bad input (varlen): ranks") {
  expect_each_var(
      kVarArgs, ErrorCode::InvalidArgument,
      [](const std::string&, const Tensor& t) {
        const Shape& s = t.shape();  // one more dimension, of size 1
        return reshaped(t, s.rank == 3 ? Shape::of(s[0], s[1], s[2], 1) : s.rank == 2 ? Shape::of(s[0], s[1], 1)
                                                                                      : shape2(s[0], 1));
      },
      [](const std::string& name) {
        const int rank = name == "lse" ? 2 : name.rfind("lengths", 0) == 0 ? 1 : 3;
        return Needles{name + ": must have rank " + std::to_string(rank)};
      });
}

TEST_CASE("bad input (varlen): dtypes") {
  expect_each_var({"k", "v", "out"}, ErrorCode::DTypeMismatch,
                  [](const std::string&, const Tensor& t) { return bytes(t.device(), DType::BF16, t.shape(), kOutByte); },
                  [](const std::string& name) { return Needles{name + ": dtype bf16 differs from q's f16"}; });
  expect_each_var({"q"}, ErrorCode::DTypeMismatch,
                  [](const std::string&, const Tensor& t) { return bytes(t.device(), DType::I32, t.shape(), 0); },
                  [](const std::string&) { return Needles{"q: dtype i32 is an index type"}; });
  expect_each_var({"lse"}, ErrorCode::DTypeMismatch,
                  [](const std::string&, const Tensor& t) { return bytes(t.device(), DType::F16, t.shape(), kOutByte); },
                  [](const std::string&) { return Needles{"lse: dtype must be f32, got f16"}; });
  expect_each_var({"lengths.cu_seqlens_q", "lengths.cu_seqlens_k"}, ErrorCode::DTypeMismatch,
                  [](const std::string&, const Tensor& t) { return bytes(t.device(), DType::F32, t.shape(), 0); },
                  [](const std::string& name) { return Needles{name + ": dtype must be i32, got f32"}; });
}

TEST_CASE("bad input (varlen): shapes") {
  using F = VarFixture;
  const auto with_shape = [](const Shape& s) {
    return [s](const std::string&, const Tensor& t) { return bytes(t.device(), t.dtype(), s, kOutByte); };
  };
  expect_each_var({"out"}, ErrorCode::ShapeMismatch, with_shape(Shape::of(F::Tq + 1, F::Hq, F::D)),
                  [](const std::string&) { return Needles{"out: shape [9, 4, 64] differs from q's [8, 4, 64]"}; });
  expect_each_var({"v"}, ErrorCode::ShapeMismatch, with_shape(Shape::of(F::Tk, F::Hkv, 128)),
                  [](const std::string&) { return Needles{"v: shape [11, 2, 128] differs from k's [11, 2, 64]"}; });
  expect_each_var({"lse"}, ErrorCode::ShapeMismatch, with_shape(shape2(F::Tq, F::Hq)),
                  [](const std::string&) { return Needles{"lse: shape [8, 4] differs from [heads_q, total_q] ="}; });
  VarFixture f;
  {  // k and v: another head dim; heads that do not divide q's
    for (const auto& [s, needle] : {std::pair{Shape::of(F::Tk, F::Hkv, 128), "k: head_dim 128 differs from q's"},
                                    {Shape::of(F::Tk, 3, F::D), "k: heads 3 must divide q's heads 4"}}) {
      VarCall c(f);
      Tensor k = bytes(f.dev, DType::F16, s, 0), v = bytes(f.dev, DType::F16, s, 0);
      c.k = &k, c.v = &v;
      expect_call_error(c, ErrorCode::ShapeMismatch, {needle});
    }
  }
  {  // head dim
    const Device cpu = f.dev;
    Tensor q = bytes(cpu, DType::F16, Shape::of(F::Tq, F::Hq, 100), 0), k = bytes(cpu, DType::F16, Shape::of(F::Tk, F::Hkv, 100), 0);
    Tensor out = bytes(cpu, DType::F16, q.shape(), kOutByte);
    VarCall c(f);
    c.q = &q, c.k = &k, c.v = &k, c.out = &out, c.lse = nullptr;
    expect_call_error(c, ErrorCode::InvalidArgument, {"head_dim: must be a multiple of 8"});
  }
  {  // the two tables' lengths; fewer than 2 entries
    VarCall c(f);
    c.lengths.cu_seqlens_k = ints(f.dev, shape1(3), {0, 6, 11});
    expect_call_error(c, ErrorCode::ShapeMismatch, {"lengths.cu_seqlens_k: 3 entries differ from cu_seqlens_q's 4"});
    c.lengths.cu_seqlens_q = ints(f.dev, shape1(1), {0});
    c.lengths.cu_seqlens_k = ints(f.dev, shape1(1), {0});
    expect_call_error(c, ErrorCode::ShapeMismatch, {"lengths.cu_seqlens_q: needs batch + 1 >= 2 entries, got 1"});
  }
}

TEST_CASE("bad input (varlen): max_seqlen_q and max_seqlen_k") {
  VarFixture f;
  VarCall c(f);
  c.lengths.max_seqlen_q = -1;
  expect_call_error(c, ErrorCode::InvalidArgument, {"lengths.max_seqlen_q: must be in [0, 2^31 - 1], got -1"});
  c = VarCall(f);
  c.lengths.max_seqlen_k = std::int64_t{1} << 31;
  expect_call_error(c, ErrorCode::InvalidArgument, {"lengths.max_seqlen_k: must be in [0, 2^31 - 1], got 2147483648"});
}

TEST_CASE("bad input (varlen): strides") {
  expect_each_var(
      {"q", "k", "v", "out"}, ErrorCode::BadStride,
      [](const std::string&, const Tensor& t) {
        const Shape& s = t.shape();
        Tensor wide = bytes(t.device(), t.dtype(), Shape::of(s[0], s[1], 2 * s[2]), kOutByte);
        return wide.as_strided(s, Strides{{s[1] * 2 * s[2], 2 * s[2], 2}});
      },
      [](const std::string& name) { return Needles{name + ": head_dim stride must be 1 (contiguous), got 2"}; });
  expect_each_var(
      {"out"}, ErrorCode::BadStride,
      [](const std::string&, const Tensor& t) {
        const Shape& s = t.shape();
        return t.as_strided(s, Strides{{s[2], 0, 1}});  // every head the same memory
      },
      [](const std::string&) { return Needles{"out: strides make elements overlap"}; });
  expect_each_var({"lengths.cu_seqlens_q", "lengths.cu_seqlens_k"}, ErrorCode::BadStride, every_other,
                  [](const std::string& name) { return Needles{name + ": must be contiguous"}; });
}

// A strided lse is refused (the packed layout's lse is contiguous [heads_q, total_q]).
TEST_CASE("bad input (varlen): lse must be contiguous") {
  expect_each_var({"lse"}, ErrorCode::BadStride, every_other,
                  [](const std::string&) { return Needles{"lse: must be contiguous"}; });
}

TEST_CASE("bad input (varlen): tensors on another device") {
  expect_each_var(std::vector<std::string>(kVarArgs.begin() + 1, kVarArgs.end()), ErrorCode::DeviceMismatch,
                  on_proxy(), on_device_needles);
}

TEST_CASE("bad input (varlen): aliasing") {
  VarFixture f;
  {
    VarCall c(f);
    c.out = &f.q;
    expect_call_error(c, ErrorCode::Aliasing, {"out: overlaps q's memory"}, {&f.q});
  }
  {  // out over cu_seqlens_q's memory, lse over cu_seqlens_k's (host views of shared buffers)
    std::vector<std::uint16_t> host(std::size_t(f.q.shape().numel()));
    std::vector<float> lhost(std::size_t(f.lse.shape().numel()));
    Tensor out = Tensor::wrap_host(f.dev, host.data(), DType::F16, f.q.shape(), Strides::contiguous(f.q.shape()));
    Tensor cu_q = Tensor::wrap_host(f.dev, host.data(), DType::I32, shape1(4), Strides::contiguous(shape1(4)));
    std::vector<std::int32_t> cq = {0, 1, 5, 8};
    std::copy(cq.begin(), cq.end(), reinterpret_cast<std::int32_t*>(host.data()));
    VarCall c(f);
    c.out = &out;
    c.lengths.cu_seqlens_q = cu_q;
    expect_call_error(c, ErrorCode::Aliasing, {"out: overlaps lengths.cu_seqlens_q's memory"});
    Tensor lse = Tensor::wrap_host(f.dev, lhost.data(), DType::F32, f.lse.shape(), Strides::contiguous(f.lse.shape()));
    Tensor cu_k = Tensor::wrap_host(f.dev, lhost.data(), DType::I32, shape1(4), Strides::contiguous(shape1(4)));
    std::vector<std::int32_t> ck = {0, 6, 6, 11};
    std::copy(ck.begin(), ck.end(), reinterpret_cast<std::int32_t*>(lhost.data()));
    c = VarCall(f);
    c.lse = &lse;
    c.lengths.cu_seqlens_k = cu_k;
    expect_call_error(c, ErrorCode::Aliasing, {"lse: overlaps lengths.cu_seqlens_k's memory"});
  }
}

TEST_CASE("bad input (varlen): table contents") {
  VarFixture f;
  const auto with = [&](const std::vector<std::int32_t>& cq, const std::vector<std::int32_t>& ck, ErrorCode code,
                        const Needles& needles) {
    VarCall c(f);
    c.lengths.cu_seqlens_q = ints(f.dev, shape1(4), cq);
    c.lengths.cu_seqlens_k = ints(f.dev, shape1(4), ck);
    expect_call_error(c, code, needles);
  };
  with({1, 1, 5, 8}, {0, 6, 6, 11}, ErrorCode::InvalidArgument, {"lengths.cu_seqlens_q: must start at 0, got 1"});
  with({0, 1, 5, 8}, {0, 6, 5, 11}, ErrorCode::InvalidArgument,
       {"lengths.cu_seqlens_k: must not decrease, but entry 2 = 5 < entry 1 = 6"});
  with({0, 5, 5, 8}, {0, 6, 6, 11}, ErrorCode::InvalidArgument,
       {"lengths.cu_seqlens_q: sequence 0 has 5 rows, more than the maximum given (4)"});
  with({0, 1, 5, 7}, {0, 6, 6, 11}, ErrorCode::ShapeMismatch,
       {"lengths.cu_seqlens_q: ends at 7, but the packed tensor has 8 rows"});
  with({0, 1, 5, 8}, {0, 6, 6, 10}, ErrorCode::ShapeMismatch,
       {"lengths.cu_seqlens_k: ends at 10, but the packed tensor has 11 rows"});
}
