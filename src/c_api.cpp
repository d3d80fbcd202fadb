// The C API (include/flashtile/flashtile.h) on top of the C++ API. Every entry point catches everything: no
// exception crosses the C boundary; failures become an ft_status plus a thread-local message.
#include <flashtile/flashtile.h>
#include <flashtile/flashtile.hpp>
#include <flashtile/ring_nccl.hpp>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>
#include <utility>
#include <vector>

struct ft_device {
  flashtile::Device device;
};

struct ft_tensor {
  flashtile::Tensor tensor;
};

namespace {

using flashtile::Backend;
using flashtile::DType;
using flashtile::ErrorCode;
using flashtile::Path;

static_assert(static_cast<int>(Backend::Auto) == FT_BACKEND_AUTO && static_cast<int>(Backend::Cpu) == FT_BACKEND_CPU &&
              static_cast<int>(Backend::Cuda) == FT_BACKEND_CUDA && static_cast<int>(Backend::Vulkan) == FT_BACKEND_VULKAN);
static_assert(static_cast<int>(DType::F16) == FT_DTYPE_F16 && static_cast<int>(DType::BF16) == FT_DTYPE_BF16 &&
              static_cast<int>(DType::F32) == FT_DTYPE_F32 && static_cast<int>(DType::I32) == FT_DTYPE_I32);
static_assert(static_cast<int>(Path::CpuReference) == FT_PATH_CPU_REFERENCE &&
              static_cast<int>(Path::CudaSm80) == FT_PATH_CUDA_SM80 &&
              static_cast<int>(Path::CudaSm90) == FT_PATH_CUDA_SM90 &&
              static_cast<int>(Path::VulkanPortable) == FT_PATH_VULKAN_PORTABLE &&
              static_cast<int>(Path::VulkanCoopmat) == FT_PATH_VULKAN_COOPMAT &&
              static_cast<int>(Path::VulkanCoopmat2) == FT_PATH_VULKAN_COOPMAT2);
static_assert(static_cast<int>(ErrorCode::InvalidArgument) == FT_ERROR_INVALID_ARGUMENT &&
              static_cast<int>(ErrorCode::ShapeMismatch) == FT_ERROR_SHAPE_MISMATCH &&
              static_cast<int>(ErrorCode::DTypeMismatch) == FT_ERROR_DTYPE_MISMATCH &&
              static_cast<int>(ErrorCode::BadStride) == FT_ERROR_BAD_STRIDE &&
              static_cast<int>(ErrorCode::DeviceMismatch) == FT_ERROR_DEVICE_MISMATCH &&
              static_cast<int>(ErrorCode::Aliasing) == FT_ERROR_ALIASING &&
              static_cast<int>(ErrorCode::Overflow) == FT_ERROR_OVERFLOW &&
              static_cast<int>(ErrorCode::Unsupported) == FT_ERROR_UNSUPPORTED &&
              static_cast<int>(ErrorCode::BackendUnavailable) == FT_ERROR_BACKEND_UNAVAILABLE &&
              static_cast<int>(ErrorCode::BackendFailure) == FT_ERROR_BACKEND_FAILURE &&
              static_cast<int>(ErrorCode::OutOfMemory) == FT_ERROR_OUT_OF_MEMORY);

constexpr int kNumBackends = 4, kNumDTypes = 4, kNumPaths = 6, kLastErrorCode = FT_ERROR_OUT_OF_MEMORY;

thread_local std::string t_last_error;

ft_status fail(ft_status code, std::string message) {
  t_last_error = std::move(message);
  return code;
}

// Runs `body`, turning every exception into a status and a message.
template <class F>
ft_status guarded(F&& body) noexcept {
  try {
    body();
    t_last_error.clear();
    return FT_OK;
  } catch (const flashtile::Error& e) {
    return fail(static_cast<ft_status>(e.code()), e.what());
  } catch (const std::bad_alloc&) {
    return fail(FT_ERROR_OUT_OF_MEMORY, "host memory: allocation failed");
  } catch (const std::exception& e) {
    return fail(FT_ERROR_INTERNAL, std::string("internal error: ") + e.what());
  } catch (...) {
    return fail(FT_ERROR_INTERNAL, "internal error: unknown exception");
  }
}

void require(bool ok, const char* message) {
  if (!ok) throw flashtile::Error(ErrorCode::InvalidArgument, message);
}

void copy_string(char* dst, std::size_t cap, const std::string& src) {
  if (cap == 0) return;
  std::size_t n = src.size() < cap - 1 ? src.size() : cap - 1;
  std::memcpy(dst, src.data(), n);
  dst[n] = '\0';
}

Backend to_backend(int b) {
  if (b < 0 || b >= kNumBackends) throw flashtile::Error(ErrorCode::InvalidArgument, "backend: unknown value " + std::to_string(b));
  return static_cast<Backend>(b);
}

DType to_dtype(int d) {
  if (d < 0 || d >= kNumDTypes) throw flashtile::Error(ErrorCode::InvalidArgument, "dtype: unknown value " + std::to_string(d));
  return static_cast<DType>(d);
}

flashtile::Sharding to_sharding(int s) {
  static_assert(static_cast<int>(flashtile::Sharding::Contiguous) == FT_SHARDING_CONTIGUOUS &&
                static_cast<int>(flashtile::Sharding::Zigzag) == FT_SHARDING_ZIGZAG);
  if (s != FT_SHARDING_CONTIGUOUS && s != FT_SHARDING_ZIGZAG)
    throw flashtile::Error(ErrorCode::InvalidArgument, "sharding: unknown value " + std::to_string(s));
  return static_cast<flashtile::Sharding>(s);
}

flashtile::Shape to_shape(int rank, const int64_t* shape) {
  // 1 and 2: the serving layouts' tables (seqlens, cu_seqlens, block_table) and varlen's lse.
  if (rank < 1 || rank > 4)
    throw flashtile::Error(ErrorCode::InvalidArgument, "rank: must be 1 to 4, got " + std::to_string(rank));
  require(shape != nullptr, "shape: must not be NULL");
  flashtile::Shape s;
  s.rank = rank;
  for (int i = 0; i < rank; ++i) s.dims[static_cast<std::size_t>(i)] = shape[i];
  return s;
}

flashtile::Strides to_strides(const flashtile::Shape& shape, const int64_t* strides) {
  if (strides == nullptr) return flashtile::Strides::contiguous(shape);
  flashtile::Strides s;
  for (int i = 0; i < shape.rank; ++i) s.dims[static_cast<std::size_t>(i)] = strides[i];
  return s;
}

void fill_info(const flashtile::DeviceInfo& in, ft_device_info* out) {
  std::memset(out, 0, sizeof(*out));
  out->backend = static_cast<int>(in.backend);
  out->index = in.index;
  out->software = in.software ? 1 : 0;
  int n = 0;
  for (Path p : in.paths) {
    if (n == FT_MAX_PATHS) break;
    out->paths[n++] = static_cast<int>(p);
  }
  out->num_paths = n;
  copy_string(out->name, sizeof(out->name), in.name);
}

// The variants (since 0.5.0). A zeroed struct means none: the window needs has_window, so window bounds set without
// it are an error rather than ignored (as scale without has_scale is).
void set_variants(flashtile::Options& opt, const ft_options& o) {
  if (o.has_window == 1) {
    opt.window_left = o.window_left;  // validation names values below -1
    opt.window_right = o.window_right;
  } else if (o.has_window != 0) {
    throw flashtile::Error(ErrorCode::InvalidArgument,
                           "options.has_window: must be 0 or 1, got " + std::to_string(o.has_window));
  } else if (o.window_left != 0 || o.window_right != 0) {
    throw flashtile::Error(ErrorCode::InvalidArgument,
                           "options.window_left, options.window_right: set to " + std::to_string(o.window_left) +
                               ", " + std::to_string(o.window_right) +
                               " but options.has_window is 0 (set has_window = 1 to use them, or leave both 0)");
  }
  opt.softcap = o.softcap;  // validation rejects negative and non-finite values, naming options.softcap
  opt.alibi_slopes = o.alibi_slopes != nullptr ? &o.alibi_slopes->tensor : nullptr;
  opt.sinks = o.sinks != nullptr ? &o.sinks->tensor : nullptr;
  opt.dsinks = o.dsinks != nullptr ? &o.dsinks->tensor : nullptr;
}

flashtile::Options to_options(const ft_options* o) {
  flashtile::Options opt;
  if (o == nullptr) return opt;
  if (o->has_scale == 1) {
    opt.scale = o->scale;  // validation rejects NaN and +-Inf, naming options.scale
  } else if (o->has_scale != 0) {
    throw flashtile::Error(ErrorCode::InvalidArgument,
                           "options.has_scale: must be 0 or 1, got " + std::to_string(o->has_scale));
  } else if (o->scale != 0.0f) {
    // Before 0.3 a NaN scale meant "default"; a scale set without has_scale would otherwise be ignored silently.
    char value[32];
    std::snprintf(value, sizeof value, "%g", static_cast<double>(o->scale));
    throw flashtile::Error(ErrorCode::InvalidArgument, std::string("options.scale: set to ") + value +
                                                           " but options.has_scale is 0 (set has_scale = 1 to use "
                                                           "it, or leave scale 0 for 1/sqrt(head_dim))");
  }
  opt.causal = o->causal != 0;
  if (o->path != FT_PATH_DEFAULT) {
    if (o->path < 0 || o->path >= kNumPaths)
      throw flashtile::Error(ErrorCode::InvalidArgument, "options.path: unknown value " + std::to_string(o->path));
    opt.path = static_cast<Path>(o->path);
  }
  opt.cuda_stream = o->cuda_stream;
  opt.vk_command_buffer = o->vk_command_buffer;
  opt.allow_reduced_precision_accumulation = o->allow_reduced_precision_accumulation != 0;
  opt.deterministic = o->deterministic != 0;
  opt.workspace = o->workspace != nullptr ? &o->workspace->tensor : nullptr;
  set_variants(opt, *o);
  return opt;
}

void fill_result(const flashtile::Result& r, ft_result* out) {
  if (out == nullptr) return;
  std::memset(out, 0, sizeof(*out));
  out->backend = static_cast<int>(r.backend);
  out->path = static_cast<int>(r.path);
  out->asynchronous = r.asynchronous ? 1 : 0;
  out->reduced_precision = r.reduced_precision ? 1 : 0;
  copy_string(out->path_name, sizeof(out->path_name), std::string(flashtile::to_string(r.path)));
  copy_string(out->kernel, sizeof(out->kernel), r.kernel);
  copy_string(out->note, sizeof(out->note), r.note);
  out->workspace_bytes = r.workspace_bytes;
}

// Names with static storage: the C API promises NUL-ended strings that live for the program.
template <class E, int N>
const char* cached_name(int i) {
  static const auto table = [] {
    std::array<std::string, N> t;
    for (int j = 0; j < N; ++j) t[static_cast<std::size_t>(j)] = std::string(flashtile::to_string(static_cast<E>(j)));
    return t;
  }();
  return i >= 0 && i < N ? table[static_cast<std::size_t>(i)].c_str() : "?";
}

template <class Parse>
ft_status parse_name(const char* name, int* out, Parse parse) {
  return guarded([&] {
    require(name != nullptr && out != nullptr, "name, out: must not be NULL");
    *out = static_cast<int>(parse(std::string_view(name)));
  });
}

void make_tensor(ft_tensor** out, flashtile::Tensor t) { *out = new ft_tensor{std::move(t)}; }

using PlanFn = flashtile::Result (*)(const flashtile::Tensor&, const flashtile::Tensor&, const flashtile::Tensor&,
                                     const flashtile::Tensor&, const flashtile::Tensor*, const flashtile::Options&);
ft_status plan_with(PlanFn fn, const ft_tensor* q, const ft_tensor* k, const ft_tensor* v, const ft_tensor* out,
                    const ft_tensor* lse, const ft_options* options, ft_result* result) {
  return guarded([&] {
    require(q != nullptr && k != nullptr && v != nullptr && out != nullptr, "q, k, v, out: must not be NULL");
    flashtile::Options opt = to_options(options);
    flashtile::Result r =
        fn(q->tensor, k->tensor, v->tensor, out->tensor, lse != nullptr ? &lse->tensor : nullptr, opt);
    fill_result(r, result);
  });
}
const flashtile::Tensor* optional(const ft_tensor* t) { return t != nullptr ? &t->tensor : nullptr; }

// The run and the plan of ft_attention_with_kvcache share everything but the last call.
template <class Call>
ft_status kvcache_with(const ft_tensor* q, const ft_tensor* k_cache, const ft_tensor* v_cache,
                       const ft_tensor* block_table, const ft_tensor* seqlens, const ft_tensor* out,
                       const ft_options* options, ft_result* result, Call&& call) {
  return guarded([&] {
    require(q && k_cache && v_cache && block_table && seqlens && out,
            "q, k_cache, v_cache, block_table, seqlens, out: must not be NULL");
    const flashtile::Options opt = to_options(options);
    const flashtile::PagedKv cache{k_cache->tensor, v_cache->tensor, block_table->tensor, seqlens->tensor};
    fill_result(call(cache, opt), result);
  });
}

template <class Call>
ft_status varlen_with(const ft_tensor* q, const ft_tensor* k, const ft_tensor* v, const ft_tensor* out,
                      const ft_tensor* cu_seqlens_q, const ft_tensor* cu_seqlens_k, int64_t max_seqlen_q,
                      int64_t max_seqlen_k, const ft_options* options, ft_result* result, Call&& call) {
  return guarded([&] {
    require(q && k && v && out && cu_seqlens_q && cu_seqlens_k,
            "q, k, v, out, cu_seqlens_q, cu_seqlens_k: must not be NULL");
    const flashtile::Options opt = to_options(options);
    const flashtile::Varlen lengths{cu_seqlens_q->tensor, cu_seqlens_k->tensor, max_seqlen_q, max_seqlen_k};
    fill_result(call(lengths, opt), result);
  });
}
}  // namespace

extern "C" {

const char* ft_version(void) { return flashtile::version_string(); }

const char* ft_last_error(void) { return t_last_error.c_str(); }

const char* ft_backend_name(int b) { return cached_name<Backend, kNumBackends>(b); }
const char* ft_dtype_name(int d) { return cached_name<DType, kNumDTypes>(d); }
const char* ft_path_name(int p) { return p == FT_PATH_DEFAULT ? "default" : cached_name<Path, kNumPaths>(p); }
const char* ft_status_name(int s) {
  if (s == FT_OK) return "ok";
  if (s == FT_ERROR_INTERNAL) return "internal";
  // ErrorCode starts at 1: shift so the table index is code - 1.
  static const auto table = [] {
    std::array<std::string, kLastErrorCode> t;
    for (int j = 0; j < kLastErrorCode; ++j)
      t[static_cast<std::size_t>(j)] = std::string(flashtile::to_string(static_cast<ErrorCode>(j + 1)));
    return t;
  }();
  return s >= 1 && s <= kLastErrorCode ? table[static_cast<std::size_t>(s - 1)].c_str() : "?";
}

ft_status ft_parse_backend(const char* name, int* out) { return parse_name(name, out, flashtile::parse_backend); }
ft_status ft_parse_dtype(const char* name, int* out) { return parse_name(name, out, flashtile::parse_dtype); }
ft_status ft_parse_path(const char* name, int* out) { return parse_name(name, out, flashtile::parse_path); }

size_t ft_dtype_size(int d) { return d >= 0 && d < kNumDTypes ? flashtile::dtype_size(static_cast<DType>(d)) : 0; }

ft_options ft_options_default(void) {
  ft_options o;
  std::memset(&o, 0, sizeof(o));
  o.path = FT_PATH_DEFAULT;
  return o;
}

ft_status ft_device_count(int* count) {
  return guarded([&] {
    require(count != nullptr, "count: must not be NULL");
    *count = static_cast<int>(flashtile::Device::list().size());
  });
}

ft_status ft_device_list_info(int i, ft_device_info* info) {
  return guarded([&] {
    require(info != nullptr, "info: must not be NULL");
    auto all = flashtile::Device::list();
    if (i < 0 || static_cast<std::size_t>(i) >= all.size())
      throw flashtile::Error(ErrorCode::InvalidArgument, "i: device " + std::to_string(i) + " out of range [0, " +
                                                             std::to_string(all.size()) + ")");
    fill_info(all[static_cast<std::size_t>(i)], info);
  });
}

ft_status ft_backend_unavailable_reason(int backend, char* buf, size_t buf_size) {
  return guarded([&] {
    require(buf != nullptr && buf_size > 0, "buf: must be a non-empty buffer");
    copy_string(buf, buf_size, flashtile::Device::unavailable_reason(to_backend(backend)));
  });
}

ft_status ft_device_open(int backend, int index, ft_device** out) {
  return guarded([&] {
    require(out != nullptr, "out: must not be NULL");
    *out = nullptr;
    flashtile::Device d = flashtile::Device::open(to_backend(backend), index);
    *out = new ft_device{std::move(d)};
  });
}

void ft_device_destroy(ft_device* device) { delete device; }

ft_status ft_device_info_get(const ft_device* device, ft_device_info* info) {
  return guarded([&] {
    require(device != nullptr && info != nullptr, "device, info: must not be NULL");
    fill_info(device->device.info(), info);
  });
}

ft_status ft_device_sync(ft_device* device) {
  return guarded([&] {
    require(device != nullptr, "device: must not be NULL");
    device->device.sync();
  });
}

ft_status ft_tensor_create(ft_device* device, int dtype, int rank, const int64_t* shape, ft_tensor** out) {
  return guarded([&] {
    require(device != nullptr && out != nullptr, "device, out: must not be NULL");
    *out = nullptr;
    make_tensor(out, flashtile::Tensor::empty(device->device, to_dtype(dtype), to_shape(rank, shape)));
  });
}

ft_status ft_tensor_wrap_cuda(ft_device* device, void* ptr, int dtype, int rank, const int64_t* shape,
                              const int64_t* strides, ft_tensor** out) {
  return guarded([&] {
    require(device != nullptr && out != nullptr, "device, out: must not be NULL");
    *out = nullptr;
    flashtile::Shape s = to_shape(rank, shape);
    make_tensor(out, flashtile::Tensor::wrap_cuda(device->device, ptr, to_dtype(dtype), s, to_strides(s, strides)));
  });
}

ft_status ft_tensor_wrap_vulkan(ft_device* device, uint64_t buffer, uint64_t offset, uint64_t buffer_bytes, int dtype,
                                int rank, const int64_t* shape, const int64_t* strides, ft_tensor** out) {
  return guarded([&] {
    require(device != nullptr && out != nullptr, "device, out: must not be NULL");
    *out = nullptr;
    flashtile::Shape s = to_shape(rank, shape);
    make_tensor(out, flashtile::Tensor::wrap_vulkan(device->device, buffer, offset, buffer_bytes, to_dtype(dtype), s,
                                                    to_strides(s, strides)));
  });
}

ft_status ft_tensor_wrap_host(ft_device* device, void* ptr, int dtype, int rank, const int64_t* shape,
                              const int64_t* strides, ft_tensor** out) {
  return guarded([&] {
    require(device != nullptr && out != nullptr, "device, out: must not be NULL");
    *out = nullptr;
    flashtile::Shape s = to_shape(rank, shape);
    make_tensor(out, flashtile::Tensor::wrap_host(device->device, ptr, to_dtype(dtype), s, to_strides(s, strides)));
  });
}

ft_status ft_tensor_view(const ft_tensor* base, int rank, const int64_t* shape, const int64_t* strides, int64_t offset,
                         ft_tensor** out) {
  return guarded([&] {
    require(base != nullptr && out != nullptr, "base, out: must not be NULL");
    *out = nullptr;
    flashtile::Shape s = to_shape(rank, shape);
    make_tensor(out, base->tensor.as_strided(s, to_strides(s, strides), offset));
  });
}

void ft_tensor_destroy(ft_tensor* tensor) { delete tensor; }

ft_status ft_tensor_extent_bytes(const ft_tensor* tensor, size_t* bytes) {
  return guarded([&] {
    require(tensor != nullptr && bytes != nullptr, "tensor, bytes: must not be NULL");
    *bytes = tensor->tensor.extent_bytes();
  });
}

ft_status ft_tensor_upload(ft_tensor* tensor, const void* host, size_t bytes) {
  return guarded([&] {
    require(tensor != nullptr, "tensor: must not be NULL");
    require(host != nullptr || bytes == 0, "host: must not be NULL");
    tensor->tensor.upload(host, bytes);
  });
}

ft_status ft_tensor_download(const ft_tensor* tensor, void* host, size_t bytes) {
  return guarded([&] {
    require(tensor != nullptr, "tensor: must not be NULL");
    require(host != nullptr || bytes == 0, "host: must not be NULL");
    tensor->tensor.download(host, bytes);
  });
}

ft_status ft_attention_forward(const ft_tensor* q, const ft_tensor* k, const ft_tensor* v, ft_tensor* out,
                               ft_tensor* lse, const ft_options* options, ft_result* result) {
  return guarded([&] {
    require(q != nullptr && k != nullptr && v != nullptr && out != nullptr, "q, k, v, out: must not be NULL");
    flashtile::Options opt = to_options(options);
    flashtile::Result r = flashtile::attention_forward(q->tensor, k->tensor, v->tensor, out->tensor,
                                                       lse != nullptr ? &lse->tensor : nullptr, opt);
    fill_result(r, result);
  });
}

ft_status ft_attention_plan(const ft_tensor* q, const ft_tensor* k, const ft_tensor* v, const ft_tensor* out,
                            const ft_tensor* lse, const ft_options* options, ft_result* result) {
  return plan_with(&flashtile::plan_attention, q, k, v, out, lse, options, result);
}

ft_status ft_attention_prepare(const ft_tensor* q, const ft_tensor* k, const ft_tensor* v, const ft_tensor* out,
                               const ft_tensor* lse, const ft_options* options, ft_result* result) {
  return plan_with(&flashtile::prepare_attention, q, k, v, out, lse, options, result);
}

ft_status ft_attention_backward(const ft_tensor* q, const ft_tensor* k, const ft_tensor* v, const ft_tensor* out,
                                const ft_tensor* lse, const ft_tensor* dout, ft_tensor* dq, ft_tensor* dk,
                                ft_tensor* dv, const ft_options* options, ft_result* result) {
  return guarded([&] {
    require(q && k && v && out && lse && dout && dq && dk && dv,
            "q, k, v, out, lse, dout, dq, dk, dv: must not be NULL");
    const flashtile::Options opt = to_options(options);
    fill_result(flashtile::attention_backward(q->tensor, k->tensor, v->tensor, out->tensor, lse->tensor,
                                              dout->tensor, dq->tensor, dk->tensor, dv->tensor, opt),
                result);
  });
}

ft_status ft_attention_backward_plan(const ft_tensor* q, const ft_tensor* k, const ft_tensor* v,
                                     const ft_tensor* out, const ft_tensor* lse, const ft_tensor* dout,
                                     const ft_tensor* dq, const ft_tensor* dk, const ft_tensor* dv,
                                     const ft_options* options, ft_result* result) {
  return guarded([&] {
    require(q && k && v && out && lse && dout && dq && dk && dv,
            "q, k, v, out, lse, dout, dq, dk, dv: must not be NULL");
    const flashtile::Options opt = to_options(options);
    fill_result(flashtile::plan_attention_backward(q->tensor, k->tensor, v->tensor, out->tensor, lse->tensor,
                                                   dout->tensor, dq->tensor, dk->tensor, dv->tensor, opt),
                result);
  });
}

ft_status ft_attention_with_kvcache(const ft_tensor* q, ft_tensor* k_cache, ft_tensor* v_cache,
                                    const ft_tensor* block_table, const ft_tensor* seqlens, ft_tensor* out,
                                    ft_tensor* lse, const ft_tensor* k_new, const ft_tensor* v_new,
                                    const ft_options* options, ft_result* result) {
  // The PagedKv holds handles to the caches' memory: with k_new the call writes through them.
  return kvcache_with(q, k_cache, v_cache, block_table, seqlens, out, options, result,
                      [&](const flashtile::PagedKv& cache, const flashtile::Options& opt) {
                        return flashtile::attention_with_kvcache(q->tensor, cache, out->tensor,
                                                                 lse ? &lse->tensor : nullptr, optional(k_new),
                                                                 optional(v_new), opt);
                      });
}

ft_status ft_attention_with_kvcache_plan(const ft_tensor* q, const ft_tensor* k_cache, const ft_tensor* v_cache,
                                         const ft_tensor* block_table, const ft_tensor* seqlens, const ft_tensor* out,
                                         const ft_tensor* lse, const ft_tensor* k_new, const ft_tensor* v_new,
                                         const ft_options* options, ft_result* result) {
  return kvcache_with(q, k_cache, v_cache, block_table, seqlens, out, options, result,
                      [&](const flashtile::PagedKv& cache, const flashtile::Options& opt) {
                        return flashtile::plan_attention_with_kvcache(q->tensor, cache, out->tensor, optional(lse),
                                                                      optional(k_new), optional(v_new), opt);
                      });
}

ft_status ft_attention_varlen(const ft_tensor* q, const ft_tensor* k, const ft_tensor* v, ft_tensor* out,
                              ft_tensor* lse, const ft_tensor* cu_seqlens_q, const ft_tensor* cu_seqlens_k,
                              int64_t max_seqlen_q, int64_t max_seqlen_k, const ft_options* options,
                              ft_result* result) {
  return varlen_with(q, k, v, out, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, options, result,
                     [&](const flashtile::Varlen& lengths, const flashtile::Options& opt) {
                       return flashtile::attention_varlen(q->tensor, k->tensor, v->tensor, out->tensor,
                                                          lse ? &lse->tensor : nullptr, lengths, opt);
                     });
}

ft_status ft_attention_varlen_plan(const ft_tensor* q, const ft_tensor* k, const ft_tensor* v, const ft_tensor* out,
                                   const ft_tensor* lse, const ft_tensor* cu_seqlens_q, const ft_tensor* cu_seqlens_k,
                                   int64_t max_seqlen_q, int64_t max_seqlen_k, const ft_options* options,
                                   ft_result* result) {
  return varlen_with(q, k, v, out, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, options, result,
                     [&](const flashtile::Varlen& lengths, const flashtile::Options& opt) {
                       return flashtile::plan_attention_varlen(q->tensor, k->tensor, v->tensor, out->tensor,
                                                               optional(lse), lengths, opt);
                     });
}

}  // extern "C"

// ---- Ring attention. ----------------------------------------------------------------------------------------

namespace {

static_assert(FT_NCCL_UNIQUE_ID_BYTES == flashtile::kNcclUniqueIdBytes);

flashtile::RingLayout to_layout(int world, int rank, int sharding) {
  return flashtile::RingLayout{world, rank, to_sharding(sharding)};
}

// The tensors of `world` ranks from a C array (NULL array: none).
template <class T>
std::vector<flashtile::Tensor> rank_tensors(T* const* arr, int world, const char* name) {
  std::vector<flashtile::Tensor> out;
  if (!arr) return out;
  for (int r = 0; r < world; ++r) {
    if (!arr[r]) throw flashtile::Error(ErrorCode::InvalidArgument, std::string(name) + "[" + std::to_string(r) + "]: must not be NULL");
    out.push_back(arr[r]->tensor);
  }
  return out;
}

}  // namespace

extern "C" {

ft_status ft_shard_sequence(ft_tensor* local, const ft_tensor* global, int world, int rank, int sharding) {
  return guarded([&] {
    require(local && global, "local, global: must not be NULL");
    flashtile::shard_sequence(local->tensor, global->tensor, to_layout(world, rank, sharding));
  });
}

ft_status ft_unshard_sequence(ft_tensor* global, const ft_tensor* local, int world, int rank, int sharding) {
  return guarded([&] {
    require(local && global, "local, global: must not be NULL");
    flashtile::unshard_sequence(global->tensor, local->tensor, to_layout(world, rank, sharding));
  });
}

ft_status ft_ring_positions(int world, int rank, int sharding, int64_t local_len, int64_t* positions) {
  return guarded([&] {
    require(positions != nullptr, "positions: must not be NULL");
    const std::vector<std::int64_t> p = flashtile::ring_positions(to_layout(world, rank, sharding), local_len);
    std::copy(p.begin(), p.end(), positions);
  });
}

ft_status ft_ring_attention_forward_simulated(int world, int sharding, const ft_tensor* const* q,
                                              const ft_tensor* const* k, const ft_tensor* const* v,
                                              ft_tensor* const* out, ft_tensor* const* lse, const ft_options* options,
                                              ft_result* result) {
  return guarded([&] {
    require(world >= 1, "world: must be >= 1");
    require(q && k && v && out, "q, k, v, out: must not be NULL");
    std::vector<flashtile::Tensor> o = rank_tensors(out, world, "out"), l = rank_tensors(lse, world, "lse");
    fill_result(flashtile::ring_attention_forward_simulated(to_sharding(sharding), rank_tensors(q, world, "q"),
                                                            rank_tensors(k, world, "k"), rank_tensors(v, world, "v"), o,
                                                            lse ? &l : nullptr, to_options(options)),
                result);
  });
}

ft_status ft_ring_attention_backward_simulated(int world, int sharding, const ft_tensor* const* q,
                                               const ft_tensor* const* k, const ft_tensor* const* v,
                                               const ft_tensor* const* out, const ft_tensor* const* lse,
                                               const ft_tensor* const* dout, ft_tensor* const* dq,
                                               ft_tensor* const* dk, ft_tensor* const* dv, const ft_options* options,
                                               ft_result* result) {
  return guarded([&] {
    require(world >= 1, "world: must be >= 1");
    require(q && k && v && out && lse && dout && dq && dk && dv,
            "q, k, v, out, lse, dout, dq, dk, dv: must not be NULL");
    std::vector<flashtile::Tensor> gq = rank_tensors(dq, world, "dq"), gk = rank_tensors(dk, world, "dk"),
                                   gv = rank_tensors(dv, world, "dv");
    fill_result(flashtile::ring_attention_backward_simulated(
                    to_sharding(sharding), rank_tensors(q, world, "q"), rank_tensors(k, world, "k"),
                    rank_tensors(v, world, "v"), rank_tensors(out, world, "out"), rank_tensors(lse, world, "lse"),
                    rank_tensors(dout, world, "dout"), gq, gk, gv, to_options(options)),
                result);
  });
}

const char* ft_nccl_unavailable_reason(void) {
  thread_local std::string why;
  why = flashtile::nccl_unavailable_reason();
  return why.c_str();
}

ft_status ft_nccl_unique_id(char* id) {
  return guarded([&] {
    require(id != nullptr, "id: must not be NULL");
    const flashtile::NcclUniqueId u = flashtile::nccl_unique_id();
    std::memcpy(id, u.data(), u.size());
  });
}

ft_status ft_nccl_comm_init(int world, int rank, const char* id, const ft_device* device, void** comm) {
  return guarded([&] {
    require(id && device && comm, "id, device, comm: must not be NULL");
    flashtile::NcclUniqueId u;
    std::memcpy(u.data(), id, u.size());
    *comm = flashtile::nccl_comm_init(world, rank, u, device->device);
  });
}

ft_status ft_nccl_comm_destroy(void* comm) {
  return guarded([&] { flashtile::nccl_comm_destroy(static_cast<ncclComm*>(comm)); });
}

ft_status ft_ring_attention_forward(void* nccl_comm, int sharding, const ft_tensor* q, const ft_tensor* k,
                                    const ft_tensor* v, ft_tensor* out, ft_tensor* lse, const ft_options* options,
                                    ft_result* result) {
  return guarded([&] {
    require(q && k && v && out, "q, k, v, out: must not be NULL");
    const flashtile::NcclRing ring{static_cast<ncclComm*>(nccl_comm), to_sharding(sharding)};
    fill_result(flashtile::ring_attention_forward(ring, q->tensor, k->tensor, v->tensor, out->tensor,
                                                  lse ? &lse->tensor : nullptr, to_options(options)),
                result);
  });
}

ft_status ft_ring_attention_backward(void* nccl_comm, int sharding, const ft_tensor* q, const ft_tensor* k,
                                     const ft_tensor* v, const ft_tensor* out, const ft_tensor* lse,
                                     const ft_tensor* dout, ft_tensor* dq, ft_tensor* dk, ft_tensor* dv,
                                     const ft_options* options, ft_result* result) {
  return guarded([&] {
    require(q && k && v && out && lse && dout && dq && dk && dv,
            "q, k, v, out, lse, dout, dq, dk, dv: must not be NULL");
    const flashtile::NcclRing ring{static_cast<ncclComm*>(nccl_comm), to_sharding(sharding)};
    fill_result(flashtile::ring_attention_backward(ring, q->tensor, k->tensor, v->tensor, out->tensor, lse->tensor,
                                                   dout->tensor, dq->tensor, dk->tensor, dv->tensor,
                                                   to_options(options)),
                result);
  });
}

}  // extern "C"
