// The README's example: attention on the best device available, checked on one row against a direct computation.
#include <flashtile/flashtile.hpp>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

int main() {
  using namespace flashtile;
  try {
    const std::int64_t B = 1, S = 128, H = 4, D = 64;
    Device dev = Device::open();  // auto: CUDA, then a Vulkan GPU, then lavapipe, then the CPU
    const Shape shape = Shape::of(B, S, H, D);
    std::vector<std::uint16_t> host(static_cast<std::size_t>(shape.numel()));
    std::mt19937 rng(1);
    std::normal_distribution<float> n;
    Tensor q = Tensor::empty(dev, DType::F16, shape), k = Tensor::empty(dev, DType::F16, shape),
           v = Tensor::empty(dev, DType::F16, shape), out = Tensor::empty(dev, DType::F16, shape);
    std::vector<std::vector<std::uint16_t>> qkv;
    for (Tensor* t : {&q, &k, &v}) {
      for (auto& x : host) x = float_to_f16(n(rng));
      t->upload(host.data(), host.size() * 2);
      qkv.push_back(host);
    }
    Options opt;
    opt.causal = true;
    const Result r = attention_forward(q, k, v, out, nullptr, opt);
    out.download(host.data(), host.size() * 2);

    // Row S-1, head 0 sees every key: compare with a direct softmax.
    const auto at = [&](int which, std::int64_t s, std::int64_t d) {
      return double(f16_to_float(qkv[std::size_t(which)][std::size_t((s * H) * D + d)]));
    };
    std::vector<double> w(S);
    double m = -INFINITY, l = 0, err = 0;
    for (std::int64_t j = 0; j < S; ++j) {
      double dot = 0;
      for (std::int64_t d = 0; d < D; ++d) dot += at(0, S - 1, d) * at(1, j, d);
      w[std::size_t(j)] = dot / std::sqrt(double(D));
      m = std::max(m, w[std::size_t(j)]);
    }
    for (auto& x : w) l += (x = std::exp(x - m));
    for (std::int64_t d = 0; d < D; ++d) {
      double o = 0;
      for (std::int64_t j = 0; j < S; ++j) o += w[std::size_t(j)] / l * at(2, j, d);
      err = std::max(err, std::abs(o - double(f16_to_float(host[std::size_t(((S - 1) * H) * D + d)]))));
    }
    std::printf("%s: path %s (%s), max error on the last row %.2e\n", dev.info().name.c_str(),
                std::string(to_string(r.path)).c_str(), r.kernel.c_str(), err);
    return err < 1e-2 ? 0 : 1;
  } catch (const Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
