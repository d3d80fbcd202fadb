// Ring attention (context parallelism), simulated on one device: every rank count 1-4, contiguous and zigzag
// sharding, causal and not, forward and backward, against the un-sharded CPU reference. Lengths: S divisible by N
// (contiguous) or 2N (zigzag), with odd chunks (S = N·17, 2N·9). Devices without the ring's merge kernels (Vulkan for
// now) are skipped with the reason. The multi-GPU test over NCCL is tests/cuda/ring_nccl_check.cu.
#include <doctest/doctest.h>

#include "reference.hpp"
#include "ring_check.hpp"
#include "test_config.hpp"

#include <flashtile/flashtile.hpp>

#include <random>
#include <string>
#include <vector>

using namespace flashtile;

namespace {

std::vector<cases::RingCase> ring_cases() {
  std::vector<cases::RingCase> all;
  const DType dtypes[] = {DType::F16, DType::BF16, DType::F32};
  int i = 0;
  for (int world = 1; world <= 4; ++world)
    for (Sharding sh : {Sharding::Contiguous, Sharding::Zigzag})
      for (bool causal : {false, true}) {
        cases::RingCase rc;
        rc.world = world;
        rc.sharding = sh;
        rc.backward = true;
        rc.c.batch = 2;
        rc.c.heads_q = 4;
        rc.c.heads_kv = (i % 3 == 0) ? 4 : (i % 3 == 1 ? 2 : 1);  // MHA, GQA, MQA in turn
        rc.c.head_dim = i % 4 == 3 ? 128 : 64;
        rc.c.dtype = dtypes[i % 3];
        rc.c.causal = causal;
        rc.c.seqlen_q = rc.c.seqlen_k = sh == Sharding::Zigzag ? 2 * world * 9 : world * 17;
        all.push_back(rc);
        ++i;
      }
  return all;
}

std::string name_of(const cases::RingCase& rc) {
  return "N=" + std::to_string(rc.world) + " " + std::string(to_string(rc.sharding)) + (rc.c.causal ? " causal" : "") +
         " S=" + std::to_string(rc.c.seqlen_q) + " " + std::string(to_string(rc.c.dtype)) + " Hq/Hkv=" +
         std::to_string(rc.c.heads_q) + "/" + std::to_string(rc.c.heads_kv) + " d=" + std::to_string(rc.c.head_dim);
}

}  // namespace

TEST_CASE("ring simulated: forward and backward against full attention") {
  const auto devices = testing::selected_devices();
  REQUIRE_MESSAGE(!devices.empty(), "no device of the selected backend");
  for (const Device& dev : devices) {
    int ran = 0;
    std::uint64_t seed = testing::config().seed + 4600;
    for (const cases::RingCase& rc : ring_cases()) {
      if (rc.c.dtype == DType::F32 && dev.info().backend == Backend::Cuda) {  // CUDA paths run f16 and bf16 only
        ++seed;
        continue;
      }
      INFO("device ", dev.info().name, ", ", name_of(rc), ", seed ", seed);
      cases::RingCheck r;
      try {
        r = cases::check_ring(dev, rc, seed++);
      } catch (const Error& e) {
        const std::string what = e.what();
        if (e.code() == ErrorCode::Unsupported && what.find("ring merge kernels") != std::string::npos) {
          MESSAGE("skipped: ", dev.info().name, ": ", what);
          break;
        }
        FAIL_CHECK("error: ", what);
        continue;
      }
      CHECK_MESSAGE(r.out_error <= r.out_tol, "out error ", r.out_error);
      CHECK_MESSAGE(r.lse_error <= r.lse_tol, "lse error ", r.lse_error);
      for (int g = 0; g < 3; ++g)
        CHECK_MESSAGE(r.grad_error[std::size_t(g)] <= r.grad_tol, "gradient ", "qkv"[g], " error ", r.grad_error[std::size_t(g)]);
      CHECK(r.forward.note.rfind("ring: ", 0) == 0);
      ++ran;
    }
    if (ran) std::printf("ring simulated: %s: %d cases ran\n", dev.info().name.c_str(), ran);
  }
}

TEST_CASE("ring: positions of contiguous and zigzag shards") {
  CHECK(ring_positions({2, 1, Sharding::Contiguous}, 3) == std::vector<std::int64_t>{3, 4, 5});
  // N = 3, S = 12: six chunks of 2; rank 1 holds chunks 1 and 4.
  CHECK(ring_positions({3, 1, Sharding::Zigzag}, 4) == std::vector<std::int64_t>{2, 3, 8, 9});
  CHECK(ring_positions({3, 0, Sharding::Zigzag}, 4) == std::vector<std::int64_t>{0, 1, 10, 11});
  CHECK_THROWS_WITH_AS(ring_positions({3, 0, Sharding::Zigzag}, 5), doctest::Contains("even local length"), Error);
  CHECK_THROWS_WITH_AS(ring_positions({2, 2, Sharding::Contiguous}, 4), doctest::Contains("rank 2"), Error);
  CHECK(parse_sharding("zigzag") == Sharding::Zigzag);
  CHECK_THROWS_AS(parse_sharding("zig"), Error);
}

TEST_CASE("ring: bad input is refused before anything is written") {
  const Device cpu = Device::open(Backend::Cpu);
  auto t = [&](std::int64_t s, std::int64_t h = 2) { return Tensor::empty(cpu, DType::F16, Shape::of(1, s, h, 64)); };
  // Sharding: S divisible by 2N for zigzag.
  Tensor local = t(5);
  CHECK_THROWS_WITH_AS(shard_sequence(local, t(10), {2, 0, Sharding::Zigzag}), doctest::Contains("even local length"),
                       Error);
  Tensor local3 = t(3);
  CHECK_THROWS_WITH_AS(shard_sequence(local3, t(7), {2, 0, Sharding::Contiguous}), doctest::Contains("divisible by 2"),
                       Error);
  Tensor local4 = t(4, 3);
  CHECK_THROWS_WITH_AS(shard_sequence(local4, t(8), {2, 0, Sharding::Contiguous}), doctest::Contains("local: shape"),
                       Error);
  // The ring: equal shards, self-attention, no variants, one tensor per rank.
  std::vector<Tensor> q{t(4), t(4)}, k{t(4), t(4)}, v{t(4), t(4)}, out{t(4), t(4)};
  Options opt;
  opt.softcap = 30.0f;
  CHECK_THROWS_WITH_AS(ring_attention_forward_simulated(Sharding::Contiguous, q, k, v, out, nullptr, opt),
                       doctest::Contains("variants"), Error);
  std::vector<Tensor> k6{t(6), t(6)}, v6{t(6), t(6)};
  CHECK_THROWS_WITH_AS(ring_attention_forward_simulated(Sharding::Contiguous, q, k6, v6, out),
                       doctest::Contains("self-attention"), Error);
  std::vector<Tensor> q_uneven{t(4), t(5)};
  CHECK_THROWS_WITH_AS(ring_attention_forward_simulated(Sharding::Contiguous, q_uneven, k, v, out),
                       doctest::Contains("rank 1's shape"), Error);
  std::vector<Tensor> out1{t(4)};
  CHECK_THROWS_WITH_AS(ring_attention_forward_simulated(Sharding::Contiguous, q, k, v, out1),
                       doctest::Contains("one per rank"), Error);
  std::vector<Tensor> q5{t(5), t(5)}, k5{t(5), t(5)}, v5{t(5), t(5)}, out5{t(5), t(5)};
  CHECK_THROWS_WITH_AS(ring_attention_forward_simulated(Sharding::Zigzag, q5, k5, v5, out5),
                       doctest::Contains("even local length"), Error);
}

TEST_CASE("ring simulated: the forward without lse writes the same out, and a strided k is copied, not misread") {
  const Device cpu = Device::open(Backend::Cpu);
  constexpr int kWorld = 2;
  const Shape local = Shape::of(1, 6, 2, 8);
  std::mt19937_64 rng(testing::config().seed + 46);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  auto random = [&](const Shape& s) {
    std::vector<float> v(std::size_t(s.numel()));
    for (float& x : v) x = normal(rng);
    Tensor t = Tensor::empty(cpu, DType::F32, s);
    t.upload(v.data(), v.size() * sizeof(float));
    return t;
  };
  std::vector<Tensor> q, k, v, k_strided, out_a, out_b, lse;
  for (int r = 0; r < kWorld; ++r) {
    q.push_back(random(local));
    v.push_back(random(local));
    // k as a view with a padded head row: [1, 6, 2, 8] inside [1, 6, 2, 12].
    const Shape padded = Shape::of(1, 6, 2, 12);
    Tensor base = random(padded);
    k_strided.push_back(base.as_strided(local, Strides::contiguous(padded)));
    Tensor dense = Tensor::empty(cpu, DType::F32, local);
    std::vector<float> img(std::size_t(padded.numel())), vals;
    base.download(img.data(), img.size() * sizeof(float));
    for (std::size_t i = 0; i < img.size(); ++i)
      if (i % 12 < 8) vals.push_back(img[i]);
    dense.upload(vals.data(), vals.size() * sizeof(float));
    k.push_back(dense);
    out_a.push_back(Tensor::empty(cpu, DType::F32, local));
    out_b.push_back(Tensor::empty(cpu, DType::F32, local));
    lse.push_back(Tensor::empty(cpu, DType::F32, Shape::of(1, 2, 6)));
  }
  Options opt;
  opt.causal = true;
  ring_attention_forward_simulated(Sharding::Zigzag, q, k, v, out_a, &lse, opt);
  ring_attention_forward_simulated(Sharding::Zigzag, q, k_strided, v, out_b, nullptr, opt);
  for (int r = 0; r < kWorld; ++r)
    CHECK(cases::download_floats(out_a[std::size_t(r)]) == cases::download_floats(out_b[std::size_t(r)]));
}
