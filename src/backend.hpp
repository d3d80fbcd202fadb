// The backend interface: what every backend (CPU, CUDA, Vulkan) implements. Internal; not installed.
//
// A backend is a small interface: alloc, free, copy, plan (which path fits), run, sync. Validation of shapes,
// dtypes, strides, aliasing and devices happens once in src/validate.cpp before a backend sees a call; a backend
// checks only what is specific to its kernels (head dims, index ranges) in plan().
#pragma once

#include <flashtile/attention.hpp>
#include <flashtile/device.hpp>
#include <flashtile/types.hpp>

#include "constants.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace flashtile::detail {

// Memory as a backend sees it. `handle` is backend-specific: a host pointer (CPU), a device pointer (CUDA), a
// VkBuffer (Vulkan). `offset` is in bytes from the start of that allocation or buffer.
struct BufferRef {
  std::uint64_t handle = 0;
  std::uint64_t offset = 0;
};

// Shared by tensors: an allocation (owned) or a view of application memory (not owned).
struct Storage {
  std::shared_ptr<DeviceImpl> device;
  std::uint64_t handle = 0;
  std::uint64_t offset = 0;  // bytes to element 0
  std::uint64_t bytes = 0;   // bytes addressable from element 0 (for wrapped Vulkan buffers: buffer size - offset)
  bool owned = false;
  std::shared_ptr<Storage> keep_alive;  // views keep the allocation they look into alive
  ~Storage();
};

// One tensor operand as kernels see it: memory plus shape and element strides.
struct TensorArg {
  BufferRef buf;
  DType dtype = DType::F32;
  Shape shape;
  Strides strides;
};

// Serving layouts (include/flashtile/serving.hpp). A backend whose plan() does not take them passes the call over with
// layout_why_not's reason.
struct PagedLayout {
  TensorArg block_table, seqlens;  // i32 [B, pages_per_seq], i32 [B]
  TensorArg k_new, v_new;          // [B, seqlen_new, Hkv, D] when seqlen_new > 0
  std::int64_t num_pages = 0, page_size = 0, pages_per_seq = 0, seqlen_new = 0;
};
struct VarlenLayout {
  TensorArg cu_seqlens_q, cu_seqlens_k;  // i32 [B + 1]
  std::int64_t total_q = 0, total_k = 0;
};

// A validated attention call. Sizes are plain integers; strides are in elements.
// Dense: q [B, Sq, Hq, D], k and v [B, Sk, Hkv, D], lse [B, Hq, Sq].
// Paged: k and v are the caches [num_pages, page_size, Hkv, D]; seqlen_k is the most keys a sequence can hold.
// Varlen: q, k, v and o are [1, total, H, D] views of the packed tensors, lse [1, Hq, total_q]; batch is the number
// of sequences, seqlen_q and seqlen_k the caller's maxima.
struct AttnArgs {
  TensorArg q, k, v, o, lse;
  bool has_lse = false;
  std::int64_t batch = 0, seqlen_q = 0, seqlen_k = 0, heads_q = 0, heads_kv = 0, head_dim = 0;
  DType dtype = DType::F16;  // of q, k, v and o
  float scale = 1.0f;
  bool causal = false;
  void* cuda_stream = nullptr;
  void* vk_command_buffer = nullptr;
  bool allow_reduced_precision = false;  // Options::allow_reduced_precision_accumulation
  std::optional<PagedLayout> paged;
  std::optional<VarlenLayout> varlen;
  // Variants (Options): window bounds (-1 unbounded), softcap (0 off), ALiBi slopes f32 [Hq] or [B, Hq], sinks f32 [Hq].
  std::int64_t window_left = -1, window_right = -1;
  float softcap = 0.0f;
  TensorArg alibi_slopes, sinks;
  bool has_alibi = false, alibi_per_batch = false, has_sinks = false;
  bool has_variant() const { return window_left >= 0 || window_right >= 0 || softcap > 0 || has_alibi || has_sinks; }
};

// "" for a dense call; for a serving layout, the reason a path without kernels for it passes the call over.
inline std::string layout_why_not(const AttnArgs& a) {
  if (a.paged) return "no paged-KV kernel on this path yet";
  if (a.varlen) return "no varlen kernel on this path yet";
  return "";
}

// A validated backward call: the forward's arguments (lse required) plus the gradients.
struct BwdArgs {
  AttnArgs fwd;                    // q, k, v, o (the forward's output), lse, sizes, scale, causal, stream
  TensorArg dout, dq, dk, dv;
  bool deterministic = false;
  TensorArg workspace;             // the caller's scratch (has_workspace), else the backend provides it
  bool has_workspace = false;
  std::uint64_t workspace_capacity = 0;  // bytes of the caller's workspace
  TensorArg dsinks;                // f32 [Hq] (has_dsinks; needs fwd.has_sinks): ∂loss/∂sinks, overwritten
  bool has_dsinks = false;
};

// The elementwise work of ring attention (src/ring): dst and src are views of one shape (rank 3 or 4), any strides.
//  Copy:  dst = src, converting dtypes (shards, accumulator set-up, the final rounding to the caller's dtype);
//  Add:   dst (f32) += src;
//  Merge: (dst, dst_lse) = the exact combination of two partial softmaxes over disjoint key sets: dst and src
//         [B, L, H, D], dst_lse and src_lse f32 [B, H, L]; lse = logaddexp(lse_a, lse_b),
//         o = o_a·exp(lse_a - lse) + o_b·exp(lse_b - lse); a side with lse = -inf contributes nothing.
enum class RingOpKind { Copy, Add, Merge };
struct RingOpArgs {
  RingOpKind kind = RingOpKind::Copy;
  TensorArg dst, src, dst_lse, src_lse;
  void* cuda_stream = nullptr;  // null: the device's own stream, synchronously
};

// The outcome of plan(): the path that will run (or none), and why faster paths were passed over.
struct Plan {
  bool ok = false;
  Path path = Path::CpuReference;
  std::string kernel;  // variant name, for Result::kernel
  std::string note;    // one line per path passed over: "cuda_sm90: device is sm_86, needs sm_90"
  bool reduced_precision = false;  // the kernel accumulates O in f16 (only where the call allowed it)
  std::size_t workspace_bytes = 0; // backward: scratch the path needs
};

class DeviceImpl {
 public:
  virtual ~DeviceImpl() = default;

  virtual const DeviceInfo& info() const = 0;
  // Largest element index (from element 0 of a tensor, exclusive) the kernels can address.
  virtual std::uint64_t max_index_elements() const = 0;

  virtual std::uint64_t alloc(std::size_t bytes) = 0;           // throws Error(OutOfMemory)
  virtual void free(std::uint64_t handle) noexcept = 0;
  virtual void upload(BufferRef dst, const void* src, std::size_t bytes) = 0;   // synchronous
  virtual void download(void* dst, BufferRef src, std::size_t bytes) = 0;       // synchronous

  // Choose the path for a validated call. `forced` set: that path or an Error(Unsupported) naming why not.
  virtual Plan plan(const AttnArgs& args, const std::optional<Path>& forced) const = 0;
  // Build what a planned call needs (Vulkan: its pipelines) without running it. Nothing to build by default.
  virtual void prepare(const Plan&, const AttnArgs&) {}
  // Run (or record) a planned call. Synchronous unless args.cuda_stream / args.vk_command_buffer is set.
  virtual void run(const Plan& plan, const AttnArgs& args) = 0;
  virtual void sync() = 0;

  // The backward, as plan()/run(). A backend without one passes every path over with the reason.
  virtual Plan plan_backward(const BwdArgs&, const std::optional<Path>& forced) const;
  virtual void run_backward(const Plan& plan, const BwdArgs& args);
  // "" when run_ring_op works on this device, else the one-line reason (ring attention refuses the call with it).
  virtual std::string ring_ops_why_not() const { return "no ring merge kernels on this backend yet"; }
  virtual void run_ring_op(const RingOpArgs& op);

  virtual VulkanHandles vulkan_handles() const {
    throw Error(ErrorCode::InvalidArgument, "device: vulkan_handles() needs a Vulkan device");
  }
};

// Each backend's enumeration. Backends not built are replaced by stubs (src/stub_cuda.cpp, src/stub_vulkan.cpp)
// that return no devices and a reason. Called once; the registry (src/device.cpp) caches the result.
std::vector<std::shared_ptr<DeviceImpl>> enumerate_cpu();
std::vector<std::shared_ptr<DeviceImpl>> enumerate_cuda(std::string& why_none);
std::vector<std::shared_ptr<DeviceImpl>> enumerate_vulkan(std::string& why_none);
std::shared_ptr<DeviceImpl> wrap_vulkan_device(const VulkanHandles& handles);

// Helpers shared by backends' plan(): pick the first path in `order` whose check returns an empty string.
struct PathCheck {
  Path path;
  std::string why_not;  // empty: usable
  std::string kernel;
  bool reduced_precision = false;
  std::size_t workspace_bytes = 0;
};
// `listed`: the device's own paths (DeviceInfo::paths), when `order` also checks paths it does not have (Vulkan checks
// every path, CUDA a forced one it lacks): messages and notes then name only listed paths. Null: all of `order`.
Plan choose_path(const std::vector<PathCheck>& order, const std::optional<Path>& forced, const std::string& device,
                 const std::vector<Path>* listed = nullptr);
// The variants (Options: window, softcap, alibi_slopes, sinks) each path implements, forward and backward: one row a
// path in device.cpp, the single place a kernel family's support is declared.
struct VariantSupport {
  bool window = false, softcap = false, alibi = false, sinks = false;
};
VariantSupport variant_support(Path path, bool backward);
// "" when `path` implements every variant `a` uses; else the reason naming those it lacks. Each backend's plan adds it
// to every path's check, so a call with variants runs on the first path that has them.
std::string variants_why_not(Path path, const AttnArgs& a, bool backward);

// What a call reports: the device's backend and the plan's path, kernel, note, precision and workspace.
Result result_of(const DeviceInfo& device, const Plan& plan, bool asynchronous);
// "NVIDIA H200 (cuda:0)": how plan notes and errors name a device.
std::string device_label(const DeviceInfo& info);

}  // namespace flashtile::detail
