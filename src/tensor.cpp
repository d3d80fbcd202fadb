// Tensors: owned allocations and views of application memory.
#include "backend.hpp"

#include <flashtile/tensor.hpp>

#include <limits>

namespace flashtile {
using detail::Storage;

detail::Storage::~Storage() {
  if (owned && device) device->free(handle);
}

namespace {

void check_shape(const Shape& shape, const char* what) {
  if (shape.rank < 1 || shape.rank > 4)
    throw Error(ErrorCode::InvalidArgument, std::string(what) + ": rank must be 1..4, got " + std::to_string(shape.rank));
  for (int i = 0; i < shape.rank; ++i)
    if (shape[i] < 1)
      throw Error(ErrorCode::InvalidArgument, std::string(what) + ": dimension " + std::to_string(i) +
                                                  " must be >= 1, got " + std::to_string(shape[i]));
}

// Elements from element 0 to one past the last addressed one; throws Overflow past int64.
std::uint64_t extent_elements(const Shape& shape, const Strides& strides, const char* what) {
  std::uint64_t last = 0;
  for (int i = 0; i < shape.rank; ++i) {
    if (strides[i] < 0)
      throw Error(ErrorCode::BadStride, std::string(what) + ": stride " + std::to_string(i) + " must be >= 0, got " +
                                            std::to_string(strides[i]));
    const auto n = static_cast<std::uint64_t>(shape[i] - 1);
    const auto s = static_cast<std::uint64_t>(strides[i]);
    if (s != 0 && n > (std::numeric_limits<std::int64_t>::max() - last) / s)
      throw Error(ErrorCode::Overflow, std::string(what) + ": shape and strides address more than 2^63 elements");
    last += n * s;
  }
  return last + 1;
}

Tensor make_view(const Device& device, std::uint64_t handle, std::uint64_t offset, std::uint64_t bytes, DType dtype,
                 const Shape& shape, const Strides& strides, bool owned);

}  // namespace

struct TensorFactory {
  static Tensor make(std::shared_ptr<Storage> s, DType dtype, const Shape& shape, const Strides& strides) {
    Tensor t;
    t.storage_ = std::move(s);
    t.dtype_ = dtype;
    t.shape_ = shape;
    t.strides_ = strides;
    return t;
  }
};

namespace {
Tensor make_view(const Device& device, std::uint64_t handle, std::uint64_t offset, std::uint64_t bytes, DType dtype,
                 const Shape& shape, const Strides& strides, bool owned) {
  auto s = std::make_shared<Storage>();
  s->device = device.impl();
  s->handle = handle;
  s->offset = offset;
  s->bytes = bytes;
  s->owned = owned;
  return TensorFactory::make(std::move(s), dtype, shape, strides);
}

void require_backend(const Device& device, Backend b, const char* fn) {
  if (device.backend() != b)
    throw Error(ErrorCode::DeviceMismatch, std::string(fn) + ": needs a " + std::string(to_string(b)) +
                                               " device, got " + std::string(to_string(device.backend())));
}
}  // namespace

Tensor Tensor::empty(const Device& device, DType dtype, const Shape& shape) {
  check_shape(shape, "shape");
  const Strides strides = Strides::contiguous(shape);
  const std::uint64_t n = extent_elements(shape, strides, "shape");
  if (n > std::numeric_limits<std::uint64_t>::max() / dtype_size(dtype))
    throw Error(ErrorCode::Overflow, "shape: too many elements");
  const std::uint64_t bytes = n * dtype_size(dtype);
  const std::uint64_t handle = device.impl()->alloc(bytes);
  return make_view(device, handle, 0, bytes, dtype, shape, strides, true);
}

Tensor Tensor::wrap_cuda(const Device& device, void* ptr, DType dtype, const Shape& shape, const Strides& strides) {
  require_backend(device, Backend::Cuda, "Tensor::wrap_cuda");
  if (!ptr) throw Error(ErrorCode::InvalidArgument, "ptr: must not be null");
  check_shape(shape, "shape");
  const std::uint64_t bytes = extent_elements(shape, strides, "strides") * dtype_size(dtype);
  return make_view(device, reinterpret_cast<std::uint64_t>(ptr), 0, bytes, dtype, shape, strides, false);
}

Tensor Tensor::wrap_host(const Device& device, void* ptr, DType dtype, const Shape& shape, const Strides& strides) {
  require_backend(device, Backend::Cpu, "Tensor::wrap_host");
  if (!ptr) throw Error(ErrorCode::InvalidArgument, "ptr: must not be null");
  check_shape(shape, "shape");
  const std::uint64_t bytes = extent_elements(shape, strides, "strides") * dtype_size(dtype);
  return make_view(device, reinterpret_cast<std::uint64_t>(ptr), 0, bytes, dtype, shape, strides, false);
}

Tensor Tensor::wrap_vulkan(const Device& device, std::uint64_t buffer, std::uint64_t offset,
                           std::uint64_t buffer_bytes, DType dtype, const Shape& shape, const Strides& strides) {
  require_backend(device, Backend::Vulkan, "Tensor::wrap_vulkan");
  if (!buffer) throw Error(ErrorCode::InvalidArgument, "buffer: must not be VK_NULL_HANDLE");
  check_shape(shape, "shape");
  if (offset % dtype_size(dtype) != 0)
    throw Error(ErrorCode::InvalidArgument, "offset: must be a multiple of the element size (" +
                                                std::to_string(dtype_size(dtype)) + " bytes)");
  const std::uint64_t need = extent_elements(shape, strides, "strides") * dtype_size(dtype);
  if (offset > buffer_bytes || need > buffer_bytes - offset)
    throw Error(ErrorCode::InvalidArgument, "buffer_bytes: the view needs " + std::to_string(need) + " bytes at offset " +
                                                std::to_string(offset) + " but the buffer has " +
                                                std::to_string(buffer_bytes));
  return make_view(device, buffer, offset, need, dtype, shape, strides, false);
}

Device Tensor::device() const {
  if (!storage_) throw Error(ErrorCode::InvalidArgument, "tensor: undefined (default-constructed)");
  return Device(storage_->device);
}

Tensor Tensor::as_strided(const Shape& shape, const Strides& strides, std::int64_t offset) const {
  if (!storage_) throw Error(ErrorCode::InvalidArgument, "tensor: undefined (default-constructed)");
  check_shape(shape, "shape");
  if (offset < 0) throw Error(ErrorCode::InvalidArgument, "offset: must be >= 0, got " + std::to_string(offset));
  const std::uint64_t esize = dtype_size(dtype_);
  const std::uint64_t need = (static_cast<std::uint64_t>(offset) + extent_elements(shape, strides, "strides")) * esize;
  if (need > storage_->bytes)
    throw Error(ErrorCode::InvalidArgument, "as_strided: the view needs " + std::to_string(need) +
                                                " bytes but the memory holds " + std::to_string(storage_->bytes));
  auto s = std::make_shared<Storage>();
  s->device = storage_->device;
  s->handle = storage_->handle;
  s->offset = storage_->offset + static_cast<std::uint64_t>(offset) * esize;
  s->bytes = storage_->bytes - static_cast<std::uint64_t>(offset) * esize;
  s->owned = false;
  s->keep_alive = storage_;
  return TensorFactory::make(std::move(s), dtype_, shape, strides);
}

std::size_t Tensor::extent_bytes() const {
  if (!storage_) return 0;
  return static_cast<std::size_t>(extent_elements(shape_, strides_, "tensor") * dtype_size(dtype_));
}

void Tensor::upload(const void* host, std::size_t bytes) {
  if (!storage_) throw Error(ErrorCode::InvalidArgument, "tensor: undefined (default-constructed)");
  if (bytes != extent_bytes())
    throw Error(ErrorCode::InvalidArgument, "bytes: upload needs exactly extent_bytes() = " +
                                                std::to_string(extent_bytes()) + ", got " + std::to_string(bytes));
  if (!host) throw Error(ErrorCode::InvalidArgument, "host: must not be null");
  storage_->device->upload({storage_->handle, storage_->offset}, host, bytes);
}

void Tensor::download(void* host, std::size_t bytes) const {
  if (!storage_) throw Error(ErrorCode::InvalidArgument, "tensor: undefined (default-constructed)");
  if (bytes != extent_bytes())
    throw Error(ErrorCode::InvalidArgument, "bytes: download needs exactly extent_bytes() = " +
                                                std::to_string(extent_bytes()) + ", got " + std::to_string(bytes));
  if (!host) throw Error(ErrorCode::InvalidArgument, "host: must not be null");
  storage_->device->download(host, {storage_->handle, storage_->offset}, bytes);
}

}  // namespace flashtile
