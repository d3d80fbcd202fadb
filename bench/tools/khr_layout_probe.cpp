// Device probe (not built by CMake): prints the element layout of attn_coopmat.comp's 16 x 16 f32 accumulators on the
// first Vulkan GPU that runs vulkan_coopmat, through the shader's probe mode (FLASHTILE_VKCM_REGSM=15: workgroup 0's
// first subgroup writes, for lane l and element i, the r * 16 + c it holds into O element 8 l + i).
// Build: g++ -std=c++20 -Iinclude bench/tools/khr_layout_probe.cpp -Lbuild -lflashtile -o khr_layout_probe
#include <flashtile/flashtile.hpp>

#include <cstdio>
#include <cstdlib>
#include <vector>

int main() {
  using namespace flashtile;
  setenv("FLASHTILE_VKCM_REGSM", "15", 1);
  for (const DeviceInfo& info : Device::list()) {
    if (info.backend != Backend::Vulkan || info.software) continue;
    Device dev = Device::open(info.backend, info.index);
    const Shape shape = Shape::of(1, 64, 1, 64);
    std::vector<std::uint16_t> host(static_cast<std::size_t>(shape.numel()), float_to_f16(0.5f));
    Tensor q = Tensor::empty(dev, DType::F16, shape), k = Tensor::empty(dev, DType::F16, shape),
           v = Tensor::empty(dev, DType::F16, shape), out = Tensor::empty(dev, DType::F16, shape);
    for (Tensor* t : {&q, &k, &v}) t->upload(host.data(), host.size() * 2);
    std::vector<std::uint16_t> poison(host.size(), 0xFFFF);
    out.upload(poison.data(), poison.size() * 2);
    Options opt;
    opt.path = Path::VulkanCoopmat;
    try {
      const Result r = attention_forward(q, k, v, out, nullptr, opt);
      out.download(host.data(), host.size() * 2);
      std::printf("%s: %s\n", info.name.c_str(), r.kernel.c_str());
      for (int lane = 0; lane < 32; ++lane) {
        std::printf("lane %2d:", lane);
        for (int i = 0; i < 8; ++i) {
          const float x = f16_to_float(host[std::size_t(8 * lane + i)]);
          std::printf(" (%2d,%2d)", int(x) / 16, int(x) % 16);
        }
        std::printf("\n");
      }
    } catch (const Error& e) {
      std::printf("%s: %s\n", info.name.c_str(), e.what());
    }
  }
  return 0;
}
