// Validation of the serving layouts (include/flashtile/serving.hpp): a paged KV cache with an optional append, and
// packed variable-length batches. tests/bad_input_serving.cpp has one test per rule.
#include "validate.hpp"
#include "validate_rules.hpp"

#include "checked.hpp"

#include <cmath>
#include <set>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace flashtile::detail {

using namespace rules;

namespace {

constexpr std::int64_t kPageMultiple = 16;  // page sizes kernels tile by

// An i32 table's values, when the host can read them without a sync (CPU tensors); empty otherwise.
std::vector<std::int32_t> host_values(const Tensor& t) {
  if (t.storage()->device->info().backend != Backend::Cpu) return {};
  std::vector<std::int32_t> v(static_cast<std::size_t>(t.shape().numel()));
  t.download(v.data(), v.size() * sizeof(std::int32_t));
  return v;
}

void require_table(const Tensor& t, const char* name, int rank, const char* layout, const Tensor& q) {
  require_defined(t, name);
  require_rank(t, name, rank, layout);
  require_same_device(t, name, q);
  if (t.dtype() != DType::I32)
    fail(ErrorCode::DTypeMismatch, std::string(name) + ": dtype must be i32, got " + std::string(to_string(t.dtype())));
  if (t.strides().dims != Strides::contiguous(t.shape()).dims)
    fail(ErrorCode::BadStride, std::string(name) + ": must be contiguous " + layout);
  require_indexable(t, name);
}

void require_head_dim_contiguous(const Tensor& t, const char* name) {
  const int last = t.shape().rank - 1;
  if (t.strides()[last] != 1)
    fail(ErrorCode::BadStride, std::string(name) + ": head_dim stride must be 1 (contiguous), got " +
                                   std::to_string(t.strides()[last]));
}

void require_apart(const std::vector<std::pair<const Tensor*, const char*>>& outs,
                   const std::vector<std::pair<const Tensor*, const char*>>& others) {
  // An output is compared with every other argument, the very same tensor passed twice included (only its own entry,
  // by name, is skipped).
  for (const auto& [o, oname] : outs)
    for (const auto& [t, name] : others)
      if (t && std::string_view(oname) != name && overlaps(*o, *t))
        fail(ErrorCode::Aliasing, std::string(oname) + ": overlaps " + name + "'s memory");
}



}  // namespace

AttnArgs validate_kvcache(const Tensor& q, const PagedKv& cache, const Tensor& out, const Tensor* lse,
                          const Tensor* k_new, const Tensor* v_new, const Options& options) {
  const char* layout = "[batch, seqlen, heads, head_dim]";
  const char* cache_layout = "[num_pages, page_size, heads_kv, head_dim]";
  require_defined(q, "q");
  require_defined(out, "out");
  require_defined(cache.k_cache, "cache.k_cache");
  require_defined(cache.v_cache, "cache.v_cache");
  if (lse) require_defined(*lse, "lse");
  if ((k_new == nullptr) != (v_new == nullptr))
    fail(ErrorCode::InvalidArgument, std::string(k_new ? "v_new" : "k_new") + ": k_new and v_new come together");
  if (k_new) require_defined(*k_new, "k_new"), require_defined(*v_new, "v_new");
  require_rank(q, "q", 4, layout);
  require_rank(out, "out", 4, layout);
  require_rank(cache.k_cache, "cache.k_cache", 4, cache_layout);
  require_rank(cache.v_cache, "cache.v_cache", 4, cache_layout);
  if (lse) require_rank(*lse, "lse", 3, "[batch, heads, seqlen_q]");
  if (k_new) require_rank(*k_new, "k_new", 4, layout), require_rank(*v_new, "v_new", 4, layout);
  require_table(cache.block_table, "cache.block_table", 2, "[batch, pages_per_seq]", q);
  require_table(cache.seqlens, "cache.seqlens", 1, "[batch]", q);

  const std::pair<const Tensor*, const char*> data[] = {{&out, "out"},         {&cache.k_cache, "cache.k_cache"},
                                                        {&cache.v_cache, "cache.v_cache"}, {lse, "lse"},
                                                        {k_new, "k_new"},      {v_new, "v_new"}};
  for (const auto& [t, name] : data)
    if (t) require_same_device(*t, name, q);
  require_streams(q, options);

  if (q.dtype() == DType::I32)
    fail(ErrorCode::DTypeMismatch, "q: dtype i32 is an index type; attention takes f16, bf16 or f32");
  for (const auto& [t, name] : data)
    if (t && t != lse) require_dtype(*t, name, q.dtype(), "q");
  if (lse && lse->dtype() != DType::F32)
    fail(ErrorCode::DTypeMismatch, "lse: dtype must be f32, got " + std::string(to_string(lse->dtype())));

  const Shape& qs = q.shape();
  const Shape& cs = cache.k_cache.shape();
  const std::int64_t B = qs[0], Sq = qs[1], Hq = qs[2], D = qs[3];
  const std::int64_t P = cs[0], page = cs[1], Hkv = cs[2];
  require_shape(out, "out", qs, "q");
  require_shape(cache.v_cache, "cache.v_cache", cs, "cache.k_cache");
  if (cs[3] != D)
    fail(ErrorCode::ShapeMismatch, "cache.k_cache: head_dim " + std::to_string(cs[3]) + " differs from q's head_dim " +
                                       std::to_string(D));
  if (Hq % Hkv != 0)
    fail(ErrorCode::ShapeMismatch, "cache.k_cache: heads " + std::to_string(Hkv) + " must divide q's heads " +
                                       std::to_string(Hq) + " (GQA/MQA)");
  if (page % kPageMultiple != 0)
    fail(ErrorCode::InvalidArgument, "cache.k_cache: page_size must be a multiple of " + std::to_string(kPageMultiple) +
                                         ", got " + std::to_string(page));
  if (D % kHeadDimMultiple != 0 || D > kMaxHeadDim)
    fail(ErrorCode::InvalidArgument, "head_dim: must be a multiple of " + std::to_string(kHeadDimMultiple) + " in [" +
                                         std::to_string(kHeadDimMultiple) + ", " + std::to_string(kMaxHeadDim) +
                                         "], got " + std::to_string(D));
  const Shape& bt = cache.block_table.shape();
  if (bt[0] != B)
    fail(ErrorCode::ShapeMismatch, "cache.block_table: batch " + std::to_string(bt[0]) + " differs from q's batch " +
                                       std::to_string(B));
  if (cache.seqlens.shape()[0] != B)
    fail(ErrorCode::ShapeMismatch, "cache.seqlens: batch " + std::to_string(cache.seqlens.shape()[0]) +
                                       " differs from q's batch " + std::to_string(B));
  const std::int64_t pages_per_seq = bt[1];
  const std::int64_t capacity = checked_mul(pages_per_seq, page, "cache.block_table: pages_per_seq x page_size");
  std::int64_t S_new = 0;
  if (k_new) {
    S_new = k_new->shape()[1];
    require_shape(*k_new, "k_new", Shape::of(B, S_new, Hkv, D), "[batch, seqlen_new, heads_kv, head_dim] =");
    require_shape(*v_new, "v_new", k_new->shape(), "k_new");
  }
  if (lse) require_shape(*lse, "lse", Shape::of(B, Hq, Sq), "[batch, heads, seqlen_q] =");
  for (const auto& [name, value] : {std::pair{"batch", B}, {"seqlen_q", Sq}, {"heads", Hq}, {"keys", capacity}})
    if (value > kMaxDim)
      fail(ErrorCode::Overflow, std::string(name) + ": " + std::to_string(value) + " exceeds the kernels' int32 range");

  for (const auto& [t, name] : {std::pair{&q, "q"}, {&out, "out"}, {&cache.k_cache, "cache.k_cache"},
                                {&cache.v_cache, "cache.v_cache"}, {k_new, "k_new"}, {v_new, "v_new"}})
    if (t) require_head_dim_contiguous(*t, name);
  if (self_overlapping(out, "out"))
    fail(ErrorCode::BadStride, "out: strides make elements overlap; an output needs distinct elements");
  if (k_new)
    for (const auto& [t, name] : {std::pair{&cache.k_cache, "cache.k_cache"}, {&cache.v_cache, "cache.v_cache"}})
      if (self_overlapping(*t, name))
        fail(ErrorCode::BadStride, std::string(name) + ": strides make elements overlap; k_new is written into it");
  if (lse && lse->strides().dims != Strides::contiguous(lse->shape()).dims)
    fail(ErrorCode::BadStride, "lse: must be contiguous [batch, heads, seqlen_q]");
  for (const auto& [t, name] : data)
    if (t) require_indexable(*t, name);
  require_indexable(q, "q");

  // Aliasing: outputs (out, lse, and the caches when k_new is written into them) overlap nothing else.
  const std::vector<std::pair<const Tensor*, const char*>> all = {
      {&q, "q"},     {&out, "out"},     {&cache.k_cache, "cache.k_cache"}, {&cache.v_cache, "cache.v_cache"},
      {lse, "lse"},  {k_new, "k_new"},  {v_new, "v_new"}, {&cache.block_table, "cache.block_table"},
      {&cache.seqlens, "cache.seqlens"}};
  std::vector<std::pair<const Tensor*, const char*>> outs = {{&out, "out"}};
  if (lse) outs.push_back({lse, "lse"});
  if (k_new) outs.push_back({&cache.k_cache, "cache.k_cache"}), outs.push_back({&cache.v_cache, "cache.v_cache"});
  require_apart(outs, all);

  // Table contents, where the host can read them.
  const std::vector<std::int32_t> lens = host_values(cache.seqlens), table = host_values(cache.block_table);
  std::set<std::pair<std::int64_t, std::int64_t>> written;  // (page, slot) pairs k_new lands in
  for (std::size_t b = 0; b < lens.size(); ++b) {
    const std::int64_t keys = std::int64_t(lens[b]) + S_new;
    if (lens[b] < 0 || keys > capacity)
      fail(ErrorCode::InvalidArgument, "cache.seqlens: sequence " + std::to_string(b) + " holds " +
                                           std::to_string(lens[b]) + " keys" +
                                           (S_new ? " (+" + std::to_string(S_new) + " new)" : std::string()) +
                                           "; its pages hold 0.." + std::to_string(capacity));
    for (std::int64_t p = 0; p < (keys + page - 1) / page; ++p) {
      const std::int32_t e = table[b * std::size_t(pages_per_seq) + std::size_t(p)];
      if (e < 0 || e >= P)
        fail(ErrorCode::InvalidArgument, "cache.block_table: entry [" + std::to_string(b) + ", " + std::to_string(p) +
                                             "] = " + std::to_string(e) + " is not a page (0.." +
                                             std::to_string(P - 1) + ")");
    }
    for (std::int64_t j = lens[b]; j < keys; ++j) {
      const std::int64_t pg = table[b * std::size_t(pages_per_seq) + std::size_t(j / page)];
      if (!written.insert({pg, j % page}).second)
        fail(ErrorCode::Aliasing, "k_new: sequence " + std::to_string(b) + " writes page " + std::to_string(pg) +
                                      ", slot " + std::to_string(j % page) + ", which another sequence also writes");
    }
  }

  AttnArgs a = call_args(q, cache.k_cache, cache.v_cache, out, lse, B, Sq, capacity, Hq, Hkv, D, options);
  apply_variants(a, options, q, B, Hq, outs);
  PagedLayout pl;
  pl.block_table = arg_of(cache.block_table);
  pl.seqlens = arg_of(cache.seqlens);
  if (k_new) pl.k_new = arg_of(*k_new), pl.v_new = arg_of(*v_new);
  pl.num_pages = P;
  pl.page_size = page;
  pl.pages_per_seq = pages_per_seq;
  pl.seqlen_new = S_new;
  a.paged = pl;
  return a;
}

AttnArgs validate_varlen(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out, const Tensor* lse,
                         const Varlen& lengths, const Options& options) {
  const char* layout = "[total, heads, head_dim]";
  for (const auto& [t, name] : {std::pair{&q, "q"}, {&k, "k"}, {&v, "v"}, {&out, "out"}}) {
    require_defined(*t, name);
    require_rank(*t, name, 3, layout);
  }
  if (lse) require_defined(*lse, "lse"), require_rank(*lse, "lse", 2, "[heads_q, total_q]");
  require_table(lengths.cu_seqlens_q, "lengths.cu_seqlens_q", 1, "[batch + 1]", q);
  require_table(lengths.cu_seqlens_k, "lengths.cu_seqlens_k", 1, "[batch + 1]", q);
  const std::int64_t n = lengths.cu_seqlens_q.shape()[0];
  if (lengths.cu_seqlens_k.shape()[0] != n)
    fail(ErrorCode::ShapeMismatch, "lengths.cu_seqlens_k: " + std::to_string(lengths.cu_seqlens_k.shape()[0]) +
                                       " entries differ from cu_seqlens_q's " + std::to_string(n));
  if (n < 2) fail(ErrorCode::ShapeMismatch, "lengths.cu_seqlens_q: needs batch + 1 >= 2 entries, got " + std::to_string(n));
  for (const auto& [name, value] : {std::pair{"lengths.max_seqlen_q", lengths.max_seqlen_q},
                                    {"lengths.max_seqlen_k", lengths.max_seqlen_k}})
    if (value < 0 || value > kMaxDim)
      fail(ErrorCode::InvalidArgument, std::string(name) + ": must be in [0, 2^31 - 1], got " + std::to_string(value));
  const Shape& qs = q.shape();
  const Shape& ks = k.shape();
  require_shape(out, "out", qs, "q");
  require_shape(v, "v", ks, "k");
  if (lse) require_shape(*lse, "lse", Shape{2, {qs[1], qs[0], 0, 0}}, "[heads_q, total_q] =");

  // The dense rules (dtypes, head dim, strides, devices, index ranges, aliasing) on [1, total, H, D] views.
  auto as4 = [](const Tensor& t) {
    const Shape& s = t.shape();
    const Strides& st = t.strides();
    return t.as_strided(Shape::of(1, s[0], s[1], s[2]), Strides{{s[0] * st[0], st[0], st[1], st[2]}});
  };
  const Tensor q4 = as4(q), k4 = as4(k), v4 = as4(v), o4 = as4(out);
  Tensor l3;
  if (lse && lse->strides().dims != Strides::contiguous(lse->shape()).dims)
    fail(ErrorCode::BadStride, "lse: must be contiguous [heads_q, total_q]");
  if (lse) {
    const Shape s3 = Shape::of(1, lse->shape()[0], lse->shape()[1]);
    l3 = lse->as_strided(s3, Strides::contiguous(s3));
  }
  // The views have one batch: per-sequence slopes are checked below against the number of sequences.
  Options dense = options;
  dense.alibi_slopes = nullptr;
  AttnArgs a = validate_attention(q4, k4, v4, o4, lse ? &l3 : nullptr, dense);
  std::vector<std::pair<const Tensor*, const char*>> outs = {{&out, "out"}};
  if (lse) outs.push_back({lse, "lse"});
  require_apart(outs, {{&lengths.cu_seqlens_q, "lengths.cu_seqlens_q"}, {&lengths.cu_seqlens_k, "lengths.cu_seqlens_k"}});

  const std::int64_t B = n - 1;
  for (const auto& [t, name, total, max] :
       {std::tuple{&lengths.cu_seqlens_q, "lengths.cu_seqlens_q", qs[0], lengths.max_seqlen_q},
        {&lengths.cu_seqlens_k, "lengths.cu_seqlens_k", ks[0], lengths.max_seqlen_k}}) {
    const std::vector<std::int32_t> cu = host_values(*t);
    if (cu.empty()) continue;
    if (cu[0] != 0) fail(ErrorCode::InvalidArgument, std::string(name) + ": must start at 0, got " + std::to_string(cu[0]));
    for (std::int64_t b = 0; b < B; ++b) {
      const std::int64_t len = std::int64_t(cu[std::size_t(b + 1)]) - cu[std::size_t(b)];
      if (len < 0)
        fail(ErrorCode::InvalidArgument, std::string(name) + ": must not decrease, but entry " + std::to_string(b + 1) +
                                             " = " + std::to_string(cu[std::size_t(b + 1)]) + " < entry " +
                                             std::to_string(b) + " = " + std::to_string(cu[std::size_t(b)]));
      if (len > max)
        fail(ErrorCode::InvalidArgument, std::string(name) + ": sequence " + std::to_string(b) + " has " +
                                             std::to_string(len) + " rows, more than the maximum given (" +
                                             std::to_string(max) + ")");
    }
    if (cu[std::size_t(B)] != total)
      fail(ErrorCode::ShapeMismatch, std::string(name) + ": ends at " + std::to_string(cu[std::size_t(B)]) +
                                         ", but the packed tensor has " + std::to_string(total) + " rows");
  }

  apply_variants(a, options, q, B, qs[1], outs);
  a.batch = B;
  a.seqlen_q = lengths.max_seqlen_q;
  a.seqlen_k = lengths.max_seqlen_k;
  VarlenLayout vl;
  vl.cu_seqlens_q = arg_of(lengths.cu_seqlens_q);
  vl.cu_seqlens_k = arg_of(lengths.cu_seqlens_k);
  vl.total_q = qs[0];
  vl.total_k = ks[0];
  a.varlen = vl;
  return a;
}

}  // namespace flashtile::detail
