// Tensors: owned allocations and views of application memory.
#include "backend.hpp"
#include "checked.hpp"

#include <flashtile/tensor.hpp>

#include <array>
#include <string>

namespace flashtile {
using detail::check_shape;
using detail::checked_add;
using detail::checked_mul;
using detail::Storage;

detail::Storage::~Storage() {
  if (owned && device) device->free(handle);
}

namespace {

std::string dims_str(const std::array<std::int64_t, 4>& d, int rank) {
  std::string r = "[";
  for (int i = 0; i < rank; ++i) r += (i ? ", " : "") + std::to_string(d[static_cast<std::size_t>(i)]);
  return r + "]";
}

// Bytes from element 0 to one past the last addressed element. Strides must be >= 0; the extent must fit in
// kMaxBytes. `shape` must have passed check_shape.
std::uint64_t extent_bytes_of(const Shape& shape, const Strides& strides, DType dtype, const char* what) {
  for (int i = 0; i < shape.rank; ++i)
    if (strides[i] < 0)
      throw Error(ErrorCode::BadStride, std::string(what) + ": stride " + std::to_string(i) + " must be >= 0, got " +
                                            std::to_string(strides[i]));
  const auto rule = [&] {
    return std::string(what) + ": a tensor of shape " + dims_str(shape.dims, shape.rank) + " with strides " +
           dims_str(strides.dims, shape.rank) + " of " + std::string(to_string(dtype)) + " spans more than 2^63 - 1 bytes";
  };
  std::int64_t last = 0;
  for (int i = 0; i < shape.rank; ++i) last = checked_add(last, checked_mul(shape[i] - 1, strides[i], rule), rule);
  const std::int64_t esize = static_cast<std::int64_t>(dtype_size(dtype));
  return static_cast<std::uint64_t>(checked_mul(checked_add(last, std::int64_t{1}, rule), esize, rule));
}

// Host and CUDA views: the byte range [ptr, ptr + bytes) must not wrap the address space (aliasing checks compare
// such ranges).
void check_address_range(const void* ptr, std::uint64_t bytes) {
  (void)checked_add(reinterpret_cast<std::uint64_t>(ptr), bytes, [&] {
    return "ptr: the view's " + std::to_string(bytes) + " bytes wrap past the end of the address space";
  });
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
  const std::uint64_t bytes = extent_bytes_of(shape, strides, dtype, "shape");
  const std::uint64_t handle = device.impl()->alloc(detail::checked_bytes(bytes, "shape"));
  return make_view(device, handle, 0, bytes, dtype, shape, strides, true);
}

Tensor Tensor::wrap_cuda(const Device& device, void* ptr, DType dtype, const Shape& shape, const Strides& strides) {
  require_backend(device, Backend::Cuda, "Tensor::wrap_cuda");
  if (!ptr) throw Error(ErrorCode::InvalidArgument, "ptr: must not be null");
  check_shape(shape, "shape");
  const std::uint64_t bytes = extent_bytes_of(shape, strides, dtype, "strides");
  check_address_range(ptr, bytes);
  return make_view(device, reinterpret_cast<std::uint64_t>(ptr), 0, bytes, dtype, shape, strides, false);
}

Tensor Tensor::wrap_host(const Device& device, void* ptr, DType dtype, const Shape& shape, const Strides& strides) {
  require_backend(device, Backend::Cpu, "Tensor::wrap_host");
  if (!ptr) throw Error(ErrorCode::InvalidArgument, "ptr: must not be null");
  check_shape(shape, "shape");
  const std::uint64_t bytes = extent_bytes_of(shape, strides, dtype, "strides");
  check_address_range(ptr, bytes);
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
  if (offset > detail::kMaxBytes)
    throw Error(ErrorCode::Overflow, "offset: " + std::to_string(offset) + " exceeds 2^63 - 1 bytes");
  const std::uint64_t need = extent_bytes_of(shape, strides, dtype, "strides");
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
  const std::uint64_t extent = extent_bytes_of(shape, strides, dtype_, "strides");
  const auto rule = [&] {
    return "offset: " + std::to_string(offset) + " elements plus the view's " + std::to_string(extent) +
           " bytes exceed 2^63 - 1 bytes";
  };
  // In int64, like the extent: offset and extent together must stay within kMaxBytes.
  const std::int64_t off = checked_mul(offset, static_cast<std::int64_t>(dtype_size(dtype_)), rule);
  const auto off_bytes = static_cast<std::uint64_t>(off);
  const auto need = static_cast<std::uint64_t>(checked_add(off, static_cast<std::int64_t>(extent), rule));
  if (need > storage_->bytes)
    throw Error(ErrorCode::InvalidArgument, "as_strided: the view needs " + std::to_string(need) +
                                                " bytes but the memory holds " + std::to_string(storage_->bytes));
  auto s = std::make_shared<Storage>();
  s->device = storage_->device;
  s->handle = storage_->handle;
  s->offset = checked_add(storage_->offset, off_bytes, rule);
  s->bytes = storage_->bytes - off_bytes;
  s->owned = false;
  s->keep_alive = storage_;
  return TensorFactory::make(std::move(s), dtype_, shape, strides);
}

std::size_t Tensor::extent_bytes() const {
  if (!storage_) return 0;
  return detail::checked_bytes(extent_bytes_of(shape_, strides_, dtype_, "tensor"), "tensor");
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
