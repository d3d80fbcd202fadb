// Serving layouts on every path of the selected backend: a paged KV cache (shuffled pages, NaN in every slot no
// sequence owns, an optional append of new keys) and packed variable-length batches, each checked sequence by
// sequence against the CPU reference's dense forward. A path without kernels for a layout is reported as skipped,
// with its reason.
#include <doctest/doctest.h>

#include "common.hpp"
#include "every_path.hpp"
#include "test_config.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <optional>
#include <string>

using namespace flashtile;
using namespace flashtile::testing;

namespace {

Tensor upload_ints(const Device& dev, const Shape& s, const std::vector<std::int32_t>& values) {
  Tensor t = Tensor::empty(dev, DType::I32, s);
  t.upload(values.data(), values.size() * sizeof(std::int32_t));
  return t;
}

std::vector<float> download_all(const Tensor& t) {
  std::vector<std::byte> img(t.extent_bytes());
  t.download(img.data(), img.size());
  std::vector<float> out(std::size_t(t.shape().numel()));
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = get(img.data(), t.dtype(), std::int64_t(i));
  return out;
}

std::vector<float> random_values(std::mt19937_64& rng, DType dt, std::int64_t n) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (float& x : v) x = round_to(dt, normal(rng));
  return v;
}

// The attention variants a serving case runs with (Options), the oracle's call the same: window, softcap, ALiBi's
// geometric slopes, a sink logit per head.
struct Mods {
  std::int64_t window_left = -1, window_right = -1;
  float softcap = 0.0f;
  bool alibi = false, sinks = false;
  std::string name() const {
    std::string s;
    if (window_left >= 0 || window_right >= 0)
      s += " window " + std::to_string(window_left) + "," + std::to_string(window_right);
    if (softcap > 0) s += " softcap " + std::to_string(softcap);
    return s + (alibi ? " alibi" : "") + (sinks ? " sinks" : "");
  }
  std::vector<float> sink_logits(std::int64_t hq) const {
    std::vector<float> v(std::size_t(hq), 0.0f);
    for (std::size_t h = 0; h < v.size(); ++h) v[h] = 0.75f * float(h % 5) - 1.0f;
    return v;
  }
  // Sets opt's variants, their tensors (f32 [Hq]) made on dev and kept in slopes / sinks.
  void apply(Options& opt, const Device& dev, std::int64_t hq, Tensor& slopes, Tensor& sink) const {
    opt.window_left = window_left;
    opt.window_right = window_right;
    opt.softcap = softcap;
    if (alibi) {
      std::vector<float> v(static_cast<std::size_t>(hq));
      for (std::size_t h = 0; h < v.size(); ++h) v[h] = std::exp2(-8.0f * float(h + 1) / float(hq));
      slopes = upload_floats(dev, DType::F32, Shape{1, {hq, 0, 0, 0}}, v);
      opt.alibi_slopes = &slopes;
    }
    if (sinks) {
      sink = upload_floats(dev, DType::F32, Shape{1, {hq, 0, 0, 0}}, sink_logits(hq));
      opt.sinks = &sink;
    }
  }
};

// The oracle for one sequence: the CPU reference's dense forward on f32 rows [S, H, D].
struct Dense {
  std::vector<float> out, lse;
};
Dense dense_reference(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v,
                      std::int64_t sq, std::int64_t sk, std::int64_t hq, std::int64_t hkv, std::int64_t d, bool causal,
                      const Mods& mods = {}) {
  Dense r;
  r.out.assign(std::size_t(sq * hq * d), 0.0f);
  r.lse.assign(std::size_t(sq * hq), -std::numeric_limits<float>::infinity());
  if (sq > 0 && sk == 0 && mods.sinks) {  // rows that see no key but a sink: 0 and the sink
    const std::vector<float> sink = mods.sink_logits(hq);
    for (std::int64_t h = 0; h < hq; ++h)
      for (std::int64_t i = 0; i < sq; ++i) r.lse[std::size_t(h * sq + i)] = sink[std::size_t(h)];
  }
  if (sq == 0 || sk == 0) return r;  // no query rows, or rows that see no key: 0 and -inf
  const Device cpu = Device::open(Backend::Cpu);
  const Tensor tq = upload_floats(cpu, DType::F32, Shape::of(1, sq, hq, d), q);
  const Tensor tk = upload_floats(cpu, DType::F32, Shape::of(1, sk, hkv, d), k);
  const Tensor tv = upload_floats(cpu, DType::F32, Shape::of(1, sk, hkv, d), v);
  Tensor o = Tensor::empty(cpu, DType::F32, tq.shape()), l = Tensor::empty(cpu, DType::F32, Shape::of(1, hq, sq));
  Options opt;
  opt.causal = causal;
  Tensor slopes, sink;
  mods.apply(opt, cpu, hq, slopes, sink);
  attention_forward(tq, tk, tv, o, &l, opt);
  r.out = download_all(o);
  r.lse = download_all(l);
  return r;
}

struct Errors {
  double num = 0, den = 0, lse = 0;
  std::int64_t bad = 0;  // non-finite where the oracle is finite, or a masked row that is not 0 / -inf
  void add(float got, float want) {
    if (!std::isfinite(got)) ++bad;
    num += (double(got) - want) * (double(got) - want);
    den += double(want) * want;
  }
  void add_lse(float got, float want) {
    if (std::isinf(want)) {
      bad += !(std::isinf(got) && got < 0);
      return;
    }
    lse = std::max(lse, std::abs(double(got) - want) / std::max(1.0, std::abs(double(want))));
  }
  double rel() const { return den > 0 ? std::sqrt(num / den) : std::sqrt(num); }
};

// On Vulkan, a case marked decode true must run the decode shader, one marked false must not.
void check_decode_kernel(const Device& dev, const Result& r, std::optional<bool> decode) {
  if (dev.info().backend != Backend::Vulkan || !decode || vk_kernel_choice_forced()) return;
  INFO("kernel ", r.kernel);
  CHECK((r.kernel.rfind("vk_decode<", 0) == 0) == decode);
}

struct PagedCase {
  std::vector<std::int32_t> seqlens;  // keys in the cache before the call, per sequence
  std::int64_t sq, s_new, hq, hkv, d, page;
  bool causal;
  DType dtype;
  // The device gets a corrupt table row and length for the last sequence (out-of-range pages, a huge length): the
  // kernels must clamp them (no access outside the cache) and the other sequences stay right.
  bool corrupt_last = false;
  Mods mods = {};
  std::optional<bool> decode;  // set: Vulkan runs it on the decode shader (attn_decode.comp), or must not
  std::string name() const {
    std::string s = std::string(to_string(dtype)) + (corrupt_last ? " corrupt-last" : "") + " Sq" + std::to_string(sq) + " new" + std::to_string(s_new) +
                    " H" + std::to_string(hq) + "/" + std::to_string(hkv) + " D" + std::to_string(d) + " page" +
                    std::to_string(page) + (causal ? " causal" : "") + mods.name() + " seqlens";
    for (auto x : seqlens) s += " " + std::to_string(x);
    return s;
  }
};

// Runs one paged case; returns the refusal's reason, or "" after checking it.
std::string check_paged(const Device& dev, Path path, const PagedCase& c, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const std::int64_t B = std::int64_t(c.seqlens.size()), row = c.hkv * c.d;
  std::int64_t pages_per_seq = 1;
  for (auto len : c.seqlens) pages_per_seq = std::max(pages_per_seq, (len + c.s_new + c.page - 1) / c.page);
  const std::int64_t P = B * pages_per_seq + 3;  // spare pages no sequence owns
  std::vector<std::int32_t> perm(static_cast<std::size_t>(P));
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng);
  std::vector<std::int32_t> table(static_cast<std::size_t>(B * pages_per_seq));
  for (std::size_t i = 0; i < table.size(); ++i) table[i] = perm[i];
  // Keys of each sequence (the old and the new ones), and the cache: NaN everywhere but the old keys' slots.
  std::vector<std::vector<float>> keys(static_cast<std::size_t>(B)), vals(static_cast<std::size_t>(B));
  std::vector<float> kc(std::size_t(P * c.page * row), std::numeric_limits<float>::quiet_NaN()), vc = kc;
  std::vector<float> knew, vnew;
  for (std::int64_t b = 0; b < B; ++b) {
    const std::int64_t n = c.seqlens[std::size_t(b)] + c.s_new;
    keys[std::size_t(b)] = random_values(rng, c.dtype, n * row);
    vals[std::size_t(b)] = random_values(rng, c.dtype, n * row);
    for (std::int64_t j = 0; j < n; ++j) {
      const std::int64_t slot = (table[std::size_t(b * pages_per_seq + j / c.page)] * c.page + j % c.page) * row;
      if (j < c.seqlens[std::size_t(b)]) {
        std::copy_n(&keys[std::size_t(b)][std::size_t(j * row)], row, &kc[std::size_t(slot)]);
        std::copy_n(&vals[std::size_t(b)][std::size_t(j * row)], row, &vc[std::size_t(slot)]);
      } else {
        knew.insert(knew.end(), &keys[std::size_t(b)][std::size_t(j * row)], &keys[std::size_t(b)][std::size_t((j + 1) * row)]);
        vnew.insert(vnew.end(), &vals[std::size_t(b)][std::size_t(j * row)], &vals[std::size_t(b)][std::size_t((j + 1) * row)]);
      }
    }
  }
  const std::vector<float> qv = random_values(rng, c.dtype, B * c.sq * c.hq * c.d);
  const Tensor q = upload_floats(dev, c.dtype, Shape::of(B, c.sq, c.hq, c.d), qv);
  std::vector<std::int32_t> dev_table = table, dev_lens = c.seqlens;
  if (c.corrupt_last) {
    for (std::int64_t p = 0; p < pages_per_seq; ++p)
      dev_table[std::size_t((B - 1) * pages_per_seq + p)] = p % 2 ? -7 : 1000003;
    dev_lens.back() = 1 << 30;
  }
  PagedKv cache{upload_floats(dev, c.dtype, Shape::of(P, c.page, c.hkv, c.d), kc),
                upload_floats(dev, c.dtype, Shape::of(P, c.page, c.hkv, c.d), vc),
                upload_ints(dev, Shape{2, {B, pages_per_seq, 0, 0}}, dev_table),
                upload_ints(dev, Shape{1, {B, 0, 0, 0}}, dev_lens)};
  Tensor kn, vn;
  if (c.s_new > 0) {
    kn = upload_floats(dev, c.dtype, Shape::of(B, c.s_new, c.hkv, c.d), knew);
    vn = upload_floats(dev, c.dtype, Shape::of(B, c.s_new, c.hkv, c.d), vnew);
  }
  DevTensor out = contiguous(dev, c.dtype, q.shape()), lse = contiguous(dev, DType::F32, Shape::of(B, c.hq, c.sq));
  poison(out);
  poison(lse);
  Options opt;
  opt.causal = c.causal;
  opt.path = path;
  Tensor slopes, sink;
  c.mods.apply(opt, dev, c.hq, slopes, sink);
  Result r;
  try {
    r = attention_with_kvcache(q, cache, out.view, &lse.view, c.s_new ? &kn : nullptr, c.s_new ? &vn : nullptr, opt);
  } catch (const Error& e) {
    if (e.code() == ErrorCode::Unsupported) return e.what();
    FAIL_CHECK("attention_with_kvcache threw: ", std::string(e.what()));
    return "";
  }
  check_decode_kernel(dev, r, c.decode);
  const std::vector<float> got = out.read(), got_lse = lse.read();
  Errors err;
  for (std::int64_t b = 0; b < B - (c.corrupt_last ? 1 : 0); ++b) {
    const std::int64_t n = c.seqlens[std::size_t(b)] + c.s_new;
    const std::vector<float> qb(&qv[std::size_t(b * c.sq * c.hq * c.d)], &qv[std::size_t((b + 1) * c.sq * c.hq * c.d)]);
    const Dense ref =
        dense_reference(qb, keys[std::size_t(b)], vals[std::size_t(b)], c.sq, n, c.hq, c.hkv, c.d, c.causal, c.mods);
    for (std::size_t i = 0; i < ref.out.size(); ++i) err.add(got[std::size_t(b * c.sq * c.hq * c.d) + i], ref.out[i]);
    for (std::size_t i = 0; i < ref.lse.size(); ++i) err.add_lse(got_lse[std::size_t(b * c.hq * c.sq) + i], ref.lse[i]);
  }
  INFO("rel_error ", err.rel(), ", lse_error ", err.lse);
  CHECK(err.bad == 0);
  CHECK(err.rel() <= cases::out_tolerance(c.dtype));
  CHECK(err.lse <= cases::lse_tolerance(c.dtype));
  // The cache after an append: the new keys in their slots, every other slot as it was (NaN stays NaN).
  if (c.s_new > 0 && !c.corrupt_last) {
    const std::vector<float> after = download_all(cache.k_cache);
    std::int64_t wrong = 0;
    std::vector<float> want = kc;
    for (std::int64_t b = 0; b < B; ++b)
      for (std::int64_t j = c.seqlens[std::size_t(b)]; j < c.seqlens[std::size_t(b)] + c.s_new; ++j) {
        const std::int64_t slot = (table[std::size_t(b * pages_per_seq + j / c.page)] * c.page + j % c.page) * row;
        std::copy_n(&keys[std::size_t(b)][std::size_t(j * row)], row, &want[std::size_t(slot)]);
      }
    for (std::size_t i = 0; i < want.size(); ++i)
      wrong += std::isnan(want[i]) ? !std::isnan(after[i]) : after[i] != want[i];
    CHECK_MESSAGE(wrong == 0, wrong, " cache elements differ from the expected append");
  }
  return "";
}

// Runs `list` on every path; a path without the layout's kernels ("... kernel on this path") or, for the variant
// lists, without the variants ("... implements these variants yet") is reported skipped.
template <class Case, class Check>
void run_serving(const std::vector<Case>& list, const char* what, std::uint64_t seed, Check check,
                 const char* absent = "kernel on this path") {
  run_on_every_path(
      list.size(), (std::string("serving conformance (") + what + ")").c_str(), absent, seed,
      [&](std::size_t i) { return list[i].name(); },
      [&](const Device& dev, Path path, std::size_t i) { return check(dev, path, list[i], seed + i); });
}

struct VarlenCase {
  std::vector<std::int32_t> lq, lk;  // per-sequence query and key lengths
  std::int64_t hq, hkv, d;
  bool causal;
  DType dtype;
  // The device gets cu_seqlens whose last entries are out of range (q negative, k huge): clamped by the kernels, and
  // the other sequences stay right.
  bool corrupt_last = false;
  Mods mods = {};
  std::optional<bool> decode;  // set: Vulkan runs it on the decode shader (attn_decode.comp), or must not
  std::string name() const {
    std::string s = std::string(to_string(dtype)) + (corrupt_last ? " corrupt-last" : "") + " H" + std::to_string(hq) + "/" + std::to_string(hkv) + " D" +
                    std::to_string(d) + (causal ? " causal" : "") + mods.name() + " lengths";
    for (std::size_t i = 0; i < lq.size(); ++i) s += " " + std::to_string(lq[i]) + "x" + std::to_string(lk[i]);
    return s;
  }
};

std::string check_varlen(const Device& dev, Path path, const VarlenCase& c, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const std::int64_t B = std::int64_t(c.lq.size());
  std::vector<std::int32_t> cq{0}, ck{0};
  for (std::int64_t b = 0; b < B; ++b) {
    cq.push_back(cq.back() + c.lq[std::size_t(b)]);
    ck.push_back(ck.back() + c.lk[std::size_t(b)]);
  }
  const std::int64_t tq = std::max(1, cq.back()), tk = std::max(1, ck.back());
  const std::vector<float> qv = random_values(rng, c.dtype, tq * c.hq * c.d);
  const std::vector<float> kv = random_values(rng, c.dtype, tk * c.hkv * c.d), vv = random_values(rng, c.dtype, tk * c.hkv * c.d);
  const Tensor q = upload_floats(dev, c.dtype, Shape{3, {tq, c.hq, c.d, 0}}, qv);
  const Tensor k = upload_floats(dev, c.dtype, Shape{3, {tk, c.hkv, c.d, 0}}, kv);
  const Tensor v = upload_floats(dev, c.dtype, Shape{3, {tk, c.hkv, c.d, 0}}, vv);
  DevTensor out = contiguous(dev, c.dtype, q.shape()), lse = contiguous(dev, DType::F32, Shape{2, {c.hq, tq, 0, 0}});
  poison(out);
  poison(lse);
  std::vector<std::int32_t> dev_cq = cq, dev_ck = ck;
  if (c.corrupt_last) dev_cq.back() = -3, dev_ck.back() = 1 << 30;
  Varlen lens{upload_ints(dev, Shape{1, {B + 1, 0, 0, 0}}, dev_cq), upload_ints(dev, Shape{1, {B + 1, 0, 0, 0}}, dev_ck),
              *std::max_element(c.lq.begin(), c.lq.end()), *std::max_element(c.lk.begin(), c.lk.end())};
  Options opt;
  opt.causal = c.causal;
  opt.path = path;
  Tensor slopes, sink;
  c.mods.apply(opt, dev, c.hq, slopes, sink);
  Result r;
  try {
    r = attention_varlen(q, k, v, out.view, &lse.view, lens, opt);
  } catch (const Error& e) {
    if (e.code() == ErrorCode::Unsupported) return e.what();
    FAIL_CHECK("attention_varlen threw: ", std::string(e.what()));
    return "";
  }
  check_decode_kernel(dev, r, c.decode);
  const std::vector<float> got = out.read(), got_lse = lse.read();
  Errors err;
  const std::int64_t qrow = c.hq * c.d, krow = c.hkv * c.d;
  for (std::int64_t b = 0; b < B - (c.corrupt_last ? 1 : 0); ++b) {
    const auto slice = [](const std::vector<float>& x, std::int64_t from, std::int64_t n) {
      return std::vector<float>(x.begin() + from, x.begin() + from + n);
    };
    const std::int64_t sq = c.lq[std::size_t(b)], sk = c.lk[std::size_t(b)];
    const Dense ref = dense_reference(
        slice(qv, cq[std::size_t(b)] * qrow, sq * qrow), slice(kv, ck[std::size_t(b)] * krow, sk * krow),
        slice(vv, ck[std::size_t(b)] * krow, sk * krow), sq, sk, c.hq, c.hkv, c.d, c.causal, c.mods);
    for (std::int64_t i = 0; i < sq * qrow; ++i) err.add(got[std::size_t(cq[std::size_t(b)] * qrow + i)], ref.out[std::size_t(i)]);
    for (std::int64_t h = 0; h < c.hq; ++h)
      for (std::int64_t i = 0; i < sq; ++i)
        err.add_lse(got_lse[std::size_t(h * tq + cq[std::size_t(b)] + i)], ref.lse[std::size_t(h * sq + i)]);
  }
  INFO("rel_error ", err.rel(), ", lse_error ", err.lse);
  CHECK(err.bad == 0);
  CHECK(err.rel() <= cases::out_tolerance(c.dtype));
  CHECK(err.lse <= cases::lse_tolerance(c.dtype));
  return "";
}

}  // namespace

// Decode (Sq 1), speculative (Sq 4) and chunked rows over caches of odd lengths, empty sequences, GQA 1/4/8, pages of
// 16, 32 and 64, with and without an append.
TEST_CASE("conformance serving: a paged KV cache") {
  std::vector<PagedCase> list;
  list.push_back({{0, 17, 100}, 1, 0, 4, 1, 64, 16, false, DType::F16});
  list.push_back({{33, 1, 257}, 1, 1, 8, 1, 128, 32, true, DType::BF16});
  list.push_back({{5, 64, 0, 130}, 4, 4, 8, 2, 64, 16, true, DType::F16});
  list.push_back({{200, 31}, 17, 17, 4, 4, 256, 64, true, DType::F16});
  list.push_back({{70}, 40, 0, 2, 2, 64, 16, true, DType::F16});  // Sq > keys: rows that see none
  list.push_back({{300, 12, 45}, 3, 0, 8, 1, 128, 64, false, DType::BF16});
  run_serving(list, "paged", config().seed + 40000, check_paged);
}

// Sequences of odd lengths, empty ones (no queries, or no keys), Sq != Sk both ways, GQA, causal.
TEST_CASE("conformance serving: packed variable-length batches") {
  std::vector<VarlenCase> list;
  list.push_back({{1, 17, 300}, {1, 17, 300}, 4, 1, 64, true, DType::F16});
  list.push_back({{5, 0, 64, 33}, {70, 9, 0, 33}, 8, 2, 128, true, DType::BF16});
  list.push_back({{100, 7}, {30, 200}, 2, 2, 256, false, DType::F16});
  list.push_back({{257}, {257}, 4, 4, 64, false, DType::BF16});
  run_serving(list, "varlen", config().seed + 41000, check_varlen);
}

// The variants on the serving layouts: windows that skip whole pages and tiles, rows whose window holds no key (with
// and without a sink), a sink in split-KV decode (joins each row once, not per split), softcap and ALiBi with GQA.
TEST_CASE("conformance serving: variants on a paged KV cache and varlen batches") {
  const char* absent = "kernel on this path|implements these variants yet";
  std::vector<PagedCase> paged;
  paged.push_back({{3000, 17, 500}, 1, 0, 8, 2, 128, 64, true, DType::BF16, false, {256, 0, 0, false, true}});
  paged.push_back({{2500, 40}, 4, 4, 8, 1, 64, 16, true, DType::F16, false, {100, 0, 0, true, true}});
  paged.push_back({{1000}, 1, 0, 4, 4, 128, 32, false, DType::BF16, false, {-1, -1, 0, false, true}});
  paged.push_back({{700, 130}, 40, 0, 4, 2, 128, 64, true, DType::BF16, false, {64, 0, 30, true, false}});
  paged.push_back({{70}, 40, 0, 2, 2, 64, 16, false, DType::F16, false, {0, 0, 0, false, true}});  // rows without keys
  paged.push_back({{300, 5}, 3, 2, 8, 2, 256, 16, false, DType::F16, false, {20, 7, 8, true, false}});
  run_serving(paged, "paged variants", config().seed + 42000, check_paged, absent);
  std::vector<VarlenCase> varlen;
  varlen.push_back({{1, 17, 300, 0}, {1, 17, 900, 5}, 4, 1, 64, true, DType::F16, false, {50, 0, 0, false, true}});
  varlen.push_back({{100, 7, 64}, {30, 200, 64}, 8, 2, 128, false, DType::BF16, false, {10, 3, 20, true, true}});
  varlen.push_back({{257, 90}, {257, 600}, 4, 4, 256, true, DType::BF16, false, {-1, -1, 5, true, false}});
  run_serving(varlen, "varlen variants", config().seed + 43000, check_varlen, absent);
}

// Decode shapes on the serving layouts: Sq 1, 3 and 16, GQA 1/4/8, caches of odd lengths (1, 17, 257, 3001) in shuffled
// pages with NaN in every slot no sequence owns, appends, varlen batches with empty sequences, variants. On Vulkan the
// calls with few packed rows (group x seqlen_q) run the decode shader (marked decode), the others the tiled shader.
TEST_CASE("conformance serving: decode shapes on the decode shader") {
  const char* absent = "kernel on this path|implements these variants yet";
  std::vector<PagedCase> paged;
  paged.push_back({{1, 17, 257, 3001}, 1, 0, 8, 2, 128, 16, true, DType::F16, false, {}, true});
  paged.push_back({{3001, 0, 17}, 1, 1, 8, 1, 64, 32, false, DType::BF16, false, {}, true});
  paged.push_back({{257, 1}, 3, 0, 4, 4, 128, 16, true, DType::F16, false, {}, true});
  paged.push_back({{255, 3000}, 3, 2, 8, 2, 256, 64, true, DType::BF16, false, {}, false});  // d256: 12 rows > 8
  paged.push_back({{3001, 40}, 16, 0, 8, 8, 64, 16, true, DType::F16, false, {}, false});   // group 1 x 16: two tiles
  paged.push_back({{2999, 17}, 1, 0, 16, 2, 128, 16, true, DType::F16, false, {300, 0, 30, true, true}, true});
  paged.push_back({{3001}, 2, 0, 32, 4, 128, 32, false, DType::BF16, false, {-1, -1, 0, false, true}, true});
  run_serving(paged, "paged decode", config().seed + 44000, check_paged, absent);
  std::vector<VarlenCase> varlen;
  varlen.push_back({{1, 0, 1, 1}, {3001, 5, 0, 17}, 8, 2, 128, true, DType::F16, false, {}, true});
  varlen.push_back({{3, 1, 0}, {257, 1, 40}, 8, 1, 64, false, DType::BF16, false, {}, false});  // 24 rows
  varlen.push_back({{2, 1, 2}, {0, 257, 3001}, 4, 1, 256, true, DType::F16, false, {64, 0, 0, true, true}, true});
  run_serving(varlen, "varlen decode", config().seed + 45000, check_varlen, absent);
}

// Device-resident tables are not read back before a call (serving.hpp): a corrupt entry must give wrong numbers for its
// sequence only, never an access outside the tensors. Backends whose tables the host checks (CPU) refuse such calls
// before any work (tests/bad_input_serving.cpp), so they are skipped here.
TEST_CASE("conformance serving: corrupt device tables stay inside the tensors") {
  if (config().backend == Backend::Cpu) {
    MESSAGE("skipped: the CPU backend checks its tables on the host");
    return;
  }
  std::vector<PagedCase> paged;
  paged.push_back({{40, 17, 100}, 2, 0, 4, 2, 64, 16, true, DType::F16, true});
  paged.push_back({{40, 17, 100}, 1, 3, 4, 1, 64, 32, false, DType::BF16, true});  // the append, clamped too
  run_serving(paged, "paged, corrupt table", config().seed + 42000, check_paged);
  std::vector<VarlenCase> varlen;
  varlen.push_back({{9, 30, 12}, {20, 45, 7}, 4, 2, 64, true, DType::F16, true});
  run_serving(varlen, "varlen, corrupt cu_seqlens", config().seed + 43000, check_varlen);
}
