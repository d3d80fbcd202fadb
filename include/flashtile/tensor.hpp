// Tensors in device memory: owned allocations, or views of memory the application already owns.
#pragma once

#include <flashtile/device.hpp>
#include <flashtile/types.hpp>

#include <cstddef>
#include <memory>

namespace flashtile {

namespace detail {
struct Storage;
}
struct TensorFactory;

class Tensor {
 public:
  // A new contiguous tensor on `device`, uninitialized.
  static Tensor empty(const Device& device, DType dtype, const Shape& shape);
  // A view of CUDA device memory the application owns (no copy). `ptr` is a device pointer to element 0.
  static Tensor wrap_cuda(const Device& device, void* ptr, DType dtype, const Shape& shape, const Strides& strides);
  // A view of an application VkBuffer (no copy); element 0 lives at `offset` bytes. `buffer` is the VkBuffer
  // handle; `buffer_bytes` its size, so views can be bounds-checked. The buffer needs STORAGE_BUFFER usage.
  static Tensor wrap_vulkan(const Device& device, std::uint64_t buffer, std::uint64_t offset,
                            std::uint64_t buffer_bytes, DType dtype, const Shape& shape, const Strides& strides);
  // A view of host memory on the CPU device (no copy).
  static Tensor wrap_host(const Device& device, void* ptr, DType dtype, const Shape& shape, const Strides& strides);

  Tensor() = default;

  // A view of the same memory with another shape and strides, starting `offset` elements past this tensor's
  // element 0 (e.g. q, k and v inside one packed QKV buffer). The view must stay inside the memory.
  Tensor as_strided(const Shape& shape, const Strides& strides, std::int64_t offset = 0) const;

  Device device() const;
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  const Strides& strides() const { return strides_; }
  bool defined() const { return storage_ != nullptr; }
  // Bytes from element 0 to one past the last element addressed by shape and strides.
  std::size_t extent_bytes() const;

  // Copy extent_bytes() bytes between the host and the tensor's memory, synchronously.
  void upload(const void* host, std::size_t bytes);
  void download(void* host, std::size_t bytes) const;

  const std::shared_ptr<detail::Storage>& storage() const { return storage_; }

 private:
  friend struct TensorFactory;
  std::shared_ptr<detail::Storage> storage_;
  DType dtype_ = DType::F32;
  Shape shape_;
  Strides strides_;
};

}  // namespace flashtile
