// The bad-input suites' shared checks (bad_input.cpp, bad_input_serving.cpp): a call must throw the right Error
// with a message naming the argument and leave its outputs as they were.
#pragma once

#include <doctest/doctest.h>

#include "backend.hpp"
#include "common.hpp"

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace flashtile::testing {

// t with every byte set to `byte`, so that a rejected call that wrote anything shows.
inline Tensor filled_with(Tensor t, int byte) {
  std::vector<std::byte> img(t.extent_bytes(), std::byte(byte));
  t.upload(img.data(), img.size());
  return t;
}

inline std::vector<std::byte> bytes_of(const Tensor& t) {
  std::vector<std::byte> img(t.extent_bytes());
  t.download(img.data(), img.size());
  return img;
}

// Runs `call`, which must throw Error(code) whose message contains every one of `needles`; `watched` must be
// unchanged.
inline void expect_error(const std::function<void()>& call, ErrorCode code, const std::vector<std::string>& needles,
                         std::vector<const Tensor*> watched = {}) {
  std::vector<std::vector<std::byte>> before;
  for (const Tensor* t : watched) before.push_back(bytes_of(*t));
  bool threw = false;
  try {
    call();
  } catch (const Error& e) {
    threw = true;
    INFO("message: ", std::string(e.what()));
    CHECK(e.code() == code);
    for (const std::string& needle : needles) CHECK(std::string(e.what()).find(needle) != std::string::npos);
  }
  CHECK_MESSAGE(threw, "expected Error(", to_string(code), ") mentioning '", needles.front(), "'");
  for (std::size_t i = 0; i < watched.size(); ++i) CHECK(bytes_of(*watched[i]) == before[i]);
}
inline void expect_error(const std::function<void()>& call, ErrorCode code, const std::string& needle,
                         std::vector<const Tensor*> watched = {}) {
  expect_error(call, code, std::vector<std::string>{needle}, std::move(watched));
}

// A second device, for the rules a machine with only the CPU device cannot otherwise reach: it forwards everything to
// the CPU device but is another device, can cap the elements its kernels index, and can ask for a backward workspace.
class ProxyDevice final : public detail::DeviceImpl {
 public:
  ProxyDevice(std::uint64_t max_index, std::size_t workspace)
      : cpu_(Device::open(Backend::Cpu).impl()), max_index_(max_index), workspace_(workspace) {
    info_ = cpu_->info();
    info_.index = 1;
    info_.name = "CPU proxy";
  }
  const DeviceInfo& info() const override { return info_; }
  std::uint64_t max_index_elements() const override { return max_index_; }
  std::uint64_t alloc(std::size_t bytes) override { return cpu_->alloc(bytes); }
  void free(std::uint64_t handle) noexcept override { cpu_->free(handle); }
  void upload(detail::BufferRef dst, const void* src, std::size_t n) override { cpu_->upload(dst, src, n); }
  void download(void* dst, detail::BufferRef src, std::size_t n) override { cpu_->download(dst, src, n); }
  detail::Plan plan(const detail::AttnArgs& a, const std::optional<Path>& forced) const override {
    return cpu_->plan(a, forced);
  }
  void run(const detail::Plan& p, const detail::AttnArgs& a) override { cpu_->run(p, a); }
  detail::Plan plan_backward(const detail::BwdArgs& g, const std::optional<Path>& forced) const override {
    detail::Plan p = cpu_->plan_backward(g, forced);
    p.workspace_bytes = workspace_;
    return p;
  }
  void run_backward(const detail::Plan& p, const detail::BwdArgs& g) override { cpu_->run_backward(p, g); }
  void sync() override {}

 private:
  std::shared_ptr<detail::DeviceImpl> cpu_;
  DeviceInfo info_;
  std::uint64_t max_index_;
  std::size_t workspace_;
};

inline Device proxy_device(std::uint64_t max_index = std::uint64_t{1} << 62, std::size_t workspace = 0) {
  return Device(std::make_shared<ProxyDevice>(max_index, workspace));
}

}  // namespace flashtile::testing
