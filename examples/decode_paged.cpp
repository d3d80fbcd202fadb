// A decode loop over a paged KV cache: each step appends one token's k and v to every sequence through
// attention_with_kvcache and advances seqlens. The last step is checked against a direct softmax over all of a
// sequence's keys. Usage: example_decode_paged [cpu|cuda|vulkan] (default cpu; GPU paths have no paged kernel yet).
#include <flashtile/flashtile.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  using namespace flashtile;
  try {
    constexpr std::int64_t B = 2, H = 4, Hkv = 2, D = 64, page = 16, pages_per_seq = 4, steps = 20;
    const std::vector<std::int32_t> prompt = {7, 30};  // keys each sequence holds before the first step
    Device dev = Device::open(parse_backend(argc > 1 ? argv[1] : "cpu"));

    // Sequence b owns pages b, b + B, b + 2B, ...: interleaved, as an allocator handing out free pages would.
    std::vector<std::int32_t> table(B * pages_per_seq);
    for (std::int64_t b = 0; b < B; ++b)
      for (std::int64_t p = 0; p < pages_per_seq; ++p) table[std::size_t(b * pages_per_seq + p)] = std::int32_t(p * B + b);
    const Shape cache_shape = Shape::of(B * pages_per_seq, page, Hkv, D);
    PagedKv cache{Tensor::empty(dev, DType::F32, cache_shape), Tensor::empty(dev, DType::F32, cache_shape),
                  Tensor::empty(dev, DType::I32, Shape{2, {B, pages_per_seq, 0, 0}}),
                  Tensor::empty(dev, DType::I32, Shape{1, {B, 0, 0, 0}})};
    cache.block_table.upload(table.data(), table.size() * sizeof(std::int32_t));

    // Every key and value a sequence gets, prompt and decoded ones, kept on the host for the check.
    std::mt19937 rng(1);
    std::normal_distribution<float> normal;
    const auto randoms = [&](std::size_t n) {
      std::vector<float> v(n);
      for (float& x : v) x = normal(rng);
      return v;
    };
    const std::int64_t row = Hkv * D;
    std::vector<std::vector<float>> keys(B), vals(B);
    std::vector<float> kc(std::size_t(cache_shape.numel()), 0.0f), vc(kc.size(), 0.0f);
    for (std::int64_t b = 0; b < B; ++b) {
      keys[std::size_t(b)] = randoms(std::size_t(prompt[std::size_t(b)] * row));
      vals[std::size_t(b)] = randoms(keys[std::size_t(b)].size());
      for (std::int64_t j = 0; j < prompt[std::size_t(b)]; ++j) {  // the prefill, written here directly
        const std::int64_t at = (table[std::size_t(b * pages_per_seq + j / page)] * page + j % page) * row;
        std::copy_n(&keys[std::size_t(b)][std::size_t(j * row)], row, &kc[std::size_t(at)]);
        std::copy_n(&vals[std::size_t(b)][std::size_t(j * row)], row, &vc[std::size_t(at)]);
      }
    }
    cache.k_cache.upload(kc.data(), kc.size() * 4);
    cache.v_cache.upload(vc.data(), vc.size() * 4);

    std::vector<std::int32_t> seqlens = prompt;
    Tensor q = Tensor::empty(dev, DType::F32, Shape::of(B, 1, H, D)), out = Tensor::empty(dev, DType::F32, q.shape());
    Tensor k_new = Tensor::empty(dev, DType::F32, Shape::of(B, 1, Hkv, D)), v_new = Tensor::empty(dev, DType::F32, k_new.shape());
    std::vector<float> qh, o(std::size_t(q.shape().numel()));
    Result r;
    for (std::int64_t step = 0; step < steps; ++step) {
      cache.seqlens.upload(seqlens.data(), seqlens.size() * sizeof(std::int32_t));
      qh = randoms(std::size_t(q.shape().numel()));
      std::vector<float> kn = randoms(std::size_t(B * row)), vn = randoms(kn.size());
      q.upload(qh.data(), qh.size() * 4);
      k_new.upload(kn.data(), kn.size() * 4);
      v_new.upload(vn.data(), vn.size() * 4);
      Options opt;
      opt.causal = true;  // one query row: it sees every key, the new one included
      r = attention_with_kvcache(q, cache, out, nullptr, &k_new, &v_new, opt);
      for (std::int64_t b = 0; b < B; ++b) {  // the call wrote k_new into the cache; the caller advances seqlens
        keys[std::size_t(b)].insert(keys[std::size_t(b)].end(), &kn[std::size_t(b * row)], &kn[std::size_t((b + 1) * row)]);
        vals[std::size_t(b)].insert(vals[std::size_t(b)].end(), &vn[std::size_t(b * row)], &vn[std::size_t((b + 1) * row)]);
        ++seqlens[std::size_t(b)];
      }
    }
    out.download(o.data(), o.size() * 4);

    // The last step, every sequence and head, against a direct softmax over the sequence's keys.
    double err = 0;
    for (std::int64_t b = 0; b < B; ++b)
      for (std::int64_t h = 0; h < H; ++h) {
        const std::int64_t n = seqlens[std::size_t(b)], hk = h / (H / Hkv);
        std::vector<double> w(static_cast<std::size_t>(n));
        double m = -INFINITY, l = 0;
        for (std::int64_t j = 0; j < n; ++j) {
          double dot = 0;
          for (std::int64_t d = 0; d < D; ++d)
            dot += double(qh[std::size_t((b * H + h) * D + d)]) * keys[std::size_t(b)][std::size_t(j * row + hk * D + d)];
          m = std::max(m, w[std::size_t(j)] = dot / std::sqrt(double(D)));
        }
        for (double& x : w) l += (x = std::exp(x - m));
        for (std::int64_t d = 0; d < D; ++d) {
          double want = 0;
          for (std::int64_t j = 0; j < n; ++j) want += w[std::size_t(j)] / l * vals[std::size_t(b)][std::size_t(j * row + hk * D + d)];
          err = std::max(err, std::abs(want - o[std::size_t((b * H + h) * D + d)]));
        }
      }
    std::printf("%s: %lld decode steps, path %s (%s), sequences now hold %d and %d keys, max error %.2e\n",
                dev.info().name.c_str(), (long long)steps, std::string(to_string(r.path)).c_str(), r.kernel.c_str(),
                seqlens[0], seqlens[1], err);
    return err < 1e-4 ? 0 : 1;
  } catch (const Error& e) {
    std::fprintf(stderr, "error (%s): %s\n", std::string(to_string(e.code())).c_str(), e.what());
    return e.code() == ErrorCode::Unsupported ? 77 : 1;
  }
}
