// Stands in for the CUDA backend when the library is built without it (FLASHTILE_CUDA=OFF).
#include "backend.hpp"

namespace flashtile::detail {
std::vector<std::shared_ptr<DeviceImpl>> enumerate_cuda(std::string& why_none) {
  why_none = "flashtile was built without CUDA (FLASHTILE_CUDA=OFF)";
  return {};
}
}  // namespace flashtile::detail
