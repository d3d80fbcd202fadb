// The CUDA backend's DeviceImpl: one device per CUDA ordinal. Memory through cudaMalloc/cudaMemcpy, calls planned
// over the kernel families (sm90 first on Hopper, then sm80) and launched through each family's launch layer.
#include "attn/bwd_params.hpp"
#include "attn/ring_ops.hpp"
#include "tile/constants.hpp"
#include "backend.hpp"
#include "checked.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

#ifndef FLASHTILE_CUDA_SM90_BUILT
#define FLASHTILE_CUDA_SM90_BUILT 0
#endif
#ifndef FLASHTILE_CUDA_ARCHS
#define FLASHTILE_CUDA_ARCHS "?"
#endif

namespace flashtile::detail {
namespace {

constexpr bool kSm90Built = FLASHTILE_CUDA_SM90_BUILT != 0;
constexpr int kMinCc = 80;
constexpr std::int64_t kMaxInt32 = std::numeric_limits<std::int32_t>::max();
constexpr std::uint64_t kWorkspaceAlign = 256;  // what the backward families carve their scratch at

std::string cuda_error_text(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

void check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  if (e == cudaErrorMemoryAllocation) {
    cudaGetLastError();  // allocation failure is not sticky: clear it so the next launch check is clean
    throw Error(ErrorCode::OutOfMemory, std::string(what) + ": " + cuda_error_text(e));
  }
  throw Error(ErrorCode::BackendFailure, std::string(what) + ": " + cuda_error_text(e));
}

std::string fmt_bytes(std::size_t b) {
  char buf[64];
  if (b >= (std::size_t{1} << 30))
    std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(b) / (1 << 30));
  else
    std::snprintf(buf, sizeof buf, "%zu KiB", b >> 10);
  return buf;
}

std::string fmt_version(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }

// Makes `ordinal` current for one call and restores the caller's current device afterwards, so flashtile never
// changes which device the application's own CUDA code runs on.
class DeviceScope {
 public:
  explicit DeviceScope(int ordinal) {
    if (cudaGetDevice(&prev_) != cudaSuccess) prev_ = -1;
    if (prev_ != ordinal) check(cudaSetDevice(ordinal), "cudaSetDevice");
    else prev_ = -1;  // already current: nothing to restore
  }
  ~DeviceScope() {
    if (prev_ >= 0) cudaSetDevice(prev_);
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int prev_ = -1;
};

cuda::ElemType elem_type(DType d) { return d == DType::BF16 ? cuda::ElemType::BF16 : cuda::ElemType::F16; }

class CudaDevice final : public DeviceImpl {
 public:
  CudaDevice(int ordinal, const cudaDeviceProp& prop, int driver, int runtime) : ordinal_(ordinal) {
    cc_ = prop.major * 10 + prop.minor;
    sms_ = prop.multiProcessorCount;
    info_.backend = Backend::Cuda;
    info_.index = ordinal;
    info_.name = prop.name;
    info_.software = false;
    if (cc_ == 90 && kSm90Built) info_.paths.push_back(Path::CudaSm90);  // sm_90a code runs on cc 9.0 only
    if (cc_ >= kMinCc) info_.paths.push_back(Path::CudaSm80);
    std::string compiled = std::string("cuda_sm80") + (kSm90Built ? ", cuda_sm90" : "") +
                           " (archs " FLASHTILE_CUDA_ARCHS ")";
    info_.caps = {
        {"arch", "sm_" + std::to_string(cc_)},
        {"multiprocessors", std::to_string(sms_)},
        {"shared memory per block (opt-in)", fmt_bytes(prop.sharedMemPerBlockOptin)},
        {"memory", fmt_bytes(prop.totalGlobalMem)},
        {"driver", fmt_version(driver)},
        {"runtime", fmt_version(runtime)},
        {"compiled paths", compiled},
    };
    if (cc_ < kMinCc) info_.caps.emplace_back("unsupported", too_old());
  }

  ~CudaDevice() override {
    int prev = -1;
    cudaGetDevice(&prev);
    cudaSetDevice(ordinal_);
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
    // Outstanding stream-ordered frees complete first: the driver releases the pool once they have.
    if (pool_ != nullptr) cudaMemPoolDestroy(pool_);
    if (prev >= 0 && prev != ordinal_) cudaSetDevice(prev);
  }

  const DeviceInfo& info() const override { return info_; }

  // Kernels index with int64 element offsets (row * stride + head * stride ...); only the per-tensor row counts
  // (batch, seqlen, heads) are int32, which plan() checks.
  std::uint64_t max_index_elements() const override {
    return static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  }

  std::uint64_t alloc(std::size_t bytes) override {
    // Sizes past 2^63 - 1 would wrap in cudaMalloc's own rounding or in the kernels' int64 byte offsets.
    const std::size_t n = checked_bytes(std::max<std::size_t>(bytes, 1), "bytes: cuda alloc");
    const DeviceScope scope(ordinal_);
    void* p = nullptr;
    // A zero-byte request still gets a distinct, valid handle.
    check(cudaMalloc(&p, n), "cuda alloc");
    return reinterpret_cast<std::uint64_t>(p);
  }

  void free(std::uint64_t handle) noexcept override {
    if (handle == 0) return;
    int prev = -1;
    cudaGetDevice(&prev);
    cudaSetDevice(ordinal_);
    cudaFree(reinterpret_cast<void*>(handle));
    if (prev >= 0 && prev != ordinal_) cudaSetDevice(prev);
  }

  void upload(BufferRef dst, const void* src, std::size_t bytes) override {
    const DeviceScope scope(ordinal_);
    check(cudaMemcpy(ptr(dst), src, bytes, cudaMemcpyHostToDevice), "cuda upload");
    // A pageable host-to-device copy may return before the DMA lands; callers' non-blocking streams must see it.
    check(cudaDeviceSynchronize(), "cuda upload");
  }

  void download(void* dst, BufferRef src, std::size_t bytes) override {
    const DeviceScope scope(ordinal_);
    check(cudaMemcpy(dst, ptr(src), bytes, cudaMemcpyDeviceToHost), "cuda download");
  }

  Plan plan(const AttnArgs& args, const std::optional<Path>& forced) const override {
    if (cc_ < kMinCc) throw Error(ErrorCode::Unsupported, too_old());
    const DeviceScope scope(ordinal_);
    const cuda::FwdParams p = params(args);
    const std::string common = common_why_not(args);
    const bool has_sm80 = std::find(info_.paths.begin(), info_.paths.end(), Path::CudaSm80) != info_.paths.end();
    std::vector<PathCheck> order;
    for (Path path : info_.paths) {
      PathCheck c{path, common, ""};
      if (c.why_not.empty()) c.why_not = variants_why_not(path, args, false);
      if (path == Path::CudaSm90) {  // sm90_fwd_supports answers for the serving layouts itself
        if (c.why_not.empty()) c.why_not = cuda::sm90_fwd_supports(p);
        // A decode shape that sm90's decode kernel does not take (d256, unaligned rows) would run its prefill kernel,
        // one useful row in 128: sm80's split-KV decode ran 2.5-4x faster there
        // (bench/results/2026-12-03_h200_backward_dq_box_serving).
        // Only where sm80 can take the call (its variants too), and not where the caller forced this path. The shape
        // tests come first: other calls never pay for sm80's device queries and kernel probes.
        if (c.why_not.empty() && !forced && has_sm80 && cuda::sm80_fwd_is_decode(p) && !cuda::sm90_fwd_is_decode(p) &&
            variants_why_not(Path::CudaSm80, args, false).empty() && cuda::sm80_fwd_supports(p).empty())
          c.why_not = "decode shape (seqlen_q <= 16) that sm90's decode kernel does not take: cuda_sm80's is faster";
        if (c.why_not.empty()) c.kernel = cuda::sm90_fwd_name(p);
      } else {
        if (c.why_not.empty()) c.why_not = cuda::sm80_fwd_supports(p);
        if (c.why_not.empty()) c.kernel = cuda::sm80_fwd_name(p);
      }
      const bool chosen = !forced && c.why_not.empty();
      order.push_back(std::move(c));
      if (chosen) break;  // the paths after the one that runs are never reported: spare their device queries
    }
    return choose(std::move(order), forced);
  }

  Plan plan_backward(const BwdArgs& g, const std::optional<Path>& forced) const override {
    if (cc_ < kMinCc) throw Error(ErrorCode::Unsupported, too_old());
    const DeviceScope scope(ordinal_);
    const cuda::BwdParams p = bwd_params(g);
    if (g.has_workspace && (g.workspace.buf.handle + g.workspace.buf.offset) % kWorkspaceAlign != 0)
      throw Error(ErrorCode::InvalidArgument,
                  "options.workspace: must start at a " + std::to_string(kWorkspaceAlign) + "-byte aligned address");
    const std::string common = g.fwd.paged || g.fwd.varlen ? layout_why_not(g.fwd) : common_why_not(g.fwd);
    std::vector<PathCheck> order;
    for (Path path : info_.paths) {
      PathCheck c{path, common, ""};
      if (c.why_not.empty()) c.why_not = variants_why_not(path, g.fwd, true);
      const bool sm90 = path == Path::CudaSm90;
      if (c.why_not.empty()) c.why_not = sm90 ? cuda::sm90_bwd_supports(p) : cuda::sm80_bwd_supports(p);
      if (c.why_not.empty()) {
        c.kernel = sm90 ? cuda::sm90_bwd_name(p) : cuda::sm80_bwd_name(p);
        c.workspace_bytes = sm90 ? cuda::sm90_bwd_workspace(p) : cuda::sm80_bwd_workspace(p);
      }
      const bool chosen = !forced && c.why_not.empty();
      order.push_back(std::move(c));
      if (chosen) break;
    }
    return choose(std::move(order), forced);
  }

  void run_backward(const Plan& plan, const BwdArgs& g) override {
    const DeviceScope scope(ordinal_);
    cuda::BwdParams p = bwd_params(g);
    const bool own = g.fwd.cuda_stream == nullptr;
    auto stream = static_cast<cudaStream_t>(own ? own_stream() : g.fwd.cuda_stream);
    p.f.stream = stream;
    cudaGetLastError();
    // Scratch: the caller's, or stream-ordered from the device's pool (capturable in a CUDA graph, no host sync).
    const std::size_t pool_bytes = g.has_workspace ? 0 : plan.workspace_bytes;
    if (g.has_workspace) p.workspace = ptr(g.workspace.buf);
    with_scratch(stream, pool_bytes, "cuda backward workspace", [&](void* scratch) {
      if (scratch) p.workspace = scratch;
      if (plan.path == Path::CudaSm90)
        cuda::sm90_bwd_launch(p);
      else if (plan.path == Path::CudaSm80)
        cuda::sm80_bwd_launch(p);
      else
        throw Error(ErrorCode::Unsupported, "cuda: path " + std::string(to_string(plan.path)) + " is not a CUDA path");
    });
    check(cudaGetLastError(), ("cuda launch " + plan.kernel).c_str());
    if (own) check(cudaStreamSynchronize(stream), ("cuda run " + plan.kernel).c_str());
  }

  void run(const Plan& plan, const AttnArgs& args) override {
    const DeviceScope scope(ordinal_);
    cuda::FwdParams p = params(args);
    const bool own = args.cuda_stream == nullptr;
    p.stream = own ? own_stream() : args.cuda_stream;
    cudaGetLastError();  // clear any earlier non-sticky error so the check below names ours
    auto stream = static_cast<cudaStream_t>(p.stream);
    p.mem_pool = pool();
    // The split-KV decode kernels' scratch, stream-ordered from the device's pool as the backward's (no host sync).
    const std::size_t ws = plan.path == Path::CudaSm80   ? cuda::sm80_fwd_workspace(p)
                           : plan.path == Path::CudaSm90 ? cuda::sm90_fwd_workspace(p)
                                                         : 0;
    with_scratch(stream, ws, "cuda forward workspace", [&](void* scratch) {
      p.workspace = scratch;
      if (plan.path == Path::CudaSm90)
        cuda::sm90_fwd_launch(p);
      else if (plan.path == Path::CudaSm80)
        cuda::sm80_fwd_launch(p);
      else
        throw Error(ErrorCode::Unsupported, "cuda: path " + std::string(to_string(plan.path)) + " is not a CUDA path");
    });
    check(cudaGetLastError(), ("cuda launch " + plan.kernel).c_str());
    if (own) check(cudaStreamSynchronize(static_cast<cudaStream_t>(p.stream)), ("cuda run " + plan.kernel).c_str());
  }

  std::string ring_ops_why_not() const override { return ""; }

  void run_ring_op(const RingOpArgs& op) override {
    const DeviceScope scope(ordinal_);
    cuda::RingOpParams p = ring_params(op);
    const bool own = op.cuda_stream == nullptr;
    p.stream = own ? own_stream() : op.cuda_stream;
    cudaGetLastError();
    cuda::ring_op_launch(p);
    check(cudaGetLastError(), "cuda launch ring_op");
    if (own) check(cudaStreamSynchronize(static_cast<cudaStream_t>(p.stream)), "cuda run ring_op");
  }

  void sync() override {
    const DeviceScope scope(ordinal_);
    check(cudaDeviceSynchronize(), "cuda sync");
  }

 private:
  static void* ptr(BufferRef b) { return reinterpret_cast<void*>(b.handle + b.offset); }

  // RingOpArgs as the kernel takes them: shapes and strides right-aligned to 4 (rank 3: LSE rows), dtypes.
  static cuda::RingOpParams ring_params(const RingOpArgs& op) {
    const auto dtype = [](DType d) {
      return d == DType::F16 ? cuda::RingDType::F16 : d == DType::BF16 ? cuda::RingDType::BF16 : cuda::RingDType::F32;
    };
    cuda::RingOpParams p;
    p.op = op.kind == RingOpKind::Copy ? cuda::RingOp::Copy : op.kind == RingOpKind::Add ? cuda::RingOp::Add
                                                                                          : cuda::RingOp::Merge;
    p.dst = ptr(op.dst.buf);
    p.src = ptr(op.src.buf);
    p.dst_dtype = dtype(op.dst.dtype);
    p.src_dtype = dtype(op.src.dtype);
    const int rank = op.dst.shape.rank;
    for (int i = 0; i < rank; ++i) {
      const auto at = static_cast<std::size_t>(4 - rank + i);
      p.n[at] = op.dst.shape[i];
      p.dst_stride[at] = op.dst.strides[i];
      p.src_stride[at] = op.src.strides[i];
    }
    if (op.kind == RingOpKind::Merge) {
      p.dst_lse = static_cast<float*>(ptr(op.dst_lse.buf));
      p.src_lse = static_cast<const float*>(ptr(op.src_lse.buf));
      for (std::size_t i = 0; i < 3; ++i) {
        p.dst_lse_stride[i] = op.dst_lse.strides[int(i)];
        p.src_lse_stride[i] = op.src_lse.strides[int(i)];
      }
    }
    return p;
  }

  // choose_path over this device's paths; a forced path it never lists (sm90 on an sm_86, or not compiled) still
  // gets a reason.
  Plan choose(std::vector<PathCheck> order, const std::optional<Path>& forced) const {
    if (forced && std::none_of(order.begin(), order.end(), [&](const PathCheck& c) { return c.path == *forced; })) {
      std::string why;
      if (*forced == Path::CudaSm90)
        why = !kSm90Built ? "sm90 kernel not built (needs 90a in CMAKE_CUDA_ARCHITECTURES)"
                          : "device is sm_" + std::to_string(cc_) + ", needs sm_90";
      else
        why = "not a CUDA path";
      order.push_back({*forced, why, ""});
    }
    return choose_path(order, forced, device_label(info_), &info_.paths);
  }

  std::string too_old() const {
    return "device sm_" + std::to_string(cc_) + ": flashtile needs sm_80 or newer";
  }

  // A blocking stream (ordered after the legacy default stream), made on first use so enumeration creates no context.
  void* own_stream() {
    std::call_once(stream_once_, [this] { check(cudaStreamCreate(&stream_), "cudaStreamCreate"); });
    return stream_;
  }

  // The pool of the calls' scratch: this device's own, so that its memory stays reserved across the application's
  // synchronizations (the default pool returns unused memory to the driver at each, and the next call's workspace
  // would be mapped again), made on first use.
  cudaMemPool_t pool() {
    std::call_once(pool_once_, [this] {
      cudaMemPoolProps props{};
      props.allocType = cudaMemAllocationTypePinned;
      props.location.type = cudaMemLocationTypeDevice;
      props.location.id = ordinal_;
      check(cudaMemPoolCreate(&pool_, &props), "cudaMemPoolCreate");
      std::uint64_t keep = std::numeric_limits<std::uint64_t>::max();
      check(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &keep), "cudaMemPoolSetAttribute");
    });
    return pool_;
  }

  // Runs launch(scratch) with `bytes` of stream-ordered scratch from the device's pool (null when 0), freed on the
  // stream after it, also when the launch throws: no synchronous allocation, no host wait (graph-capturable).
  template <class Launch>
  void with_scratch(cudaStream_t stream, std::size_t bytes, const char* what, Launch launch) {
    void* pooled = nullptr;
    if (bytes > 0) check(cudaMallocFromPoolAsync(&pooled, bytes, pool(), stream), what);
    try {
      launch(pooled);
    } catch (...) {
      if (pooled) cudaFreeAsync(pooled, stream);
      throw;
    }
    if (pooled) check(cudaFreeAsync(pooled, stream), what);
  }

  // The serving layouts are each family's own question (sm80 runs them; sm90 runs paged decode calls).
  static std::string common_why_not(const AttnArgs& a) {
    if (a.dtype == DType::F32) return "dtype f32 not supported on CUDA paths (f16 and bf16 only)";
    const std::pair<const char*, std::int64_t> sizes[] = {{"batch", a.batch},     {"seqlen_q", a.seqlen_q},
                                                          {"seqlen_k", a.seqlen_k}, {"heads_q", a.heads_q},
                                                          {"heads_kv", a.heads_kv}, {"head_dim", a.head_dim}};
    for (const auto& [name, v] : sizes)
      if (v > kMaxInt32) return std::string(name) + " " + std::to_string(v) + " exceeds int32 (kernel row index)";
    if (a.paged && a.paged->num_pages > kMaxInt32)
      return "num_pages " + std::to_string(a.paged->num_pages) + " exceeds int32 (kernel page index)";
    return "";
  }

  cuda::FwdParams params(const AttnArgs& a) const {
    cuda::FwdParams p;
    p.q = ptr(a.q.buf);
    p.k = ptr(a.k.buf);
    p.v = ptr(a.v.buf);
    p.o = ptr(a.o.buf);
    p.lse = a.has_lse ? static_cast<float*>(ptr(a.lse.buf)) : nullptr;
    p.q_sb = a.q.strides[0], p.q_ss = a.q.strides[1], p.q_sh = a.q.strides[2];
    p.k_sb = a.k.strides[0], p.k_ss = a.k.strides[1], p.k_sh = a.k.strides[2];
    p.v_sb = a.v.strides[0], p.v_ss = a.v.strides[1], p.v_sh = a.v.strides[2];
    p.o_sb = a.o.strides[0], p.o_ss = a.o.strides[1], p.o_sh = a.o.strides[2];
    auto i32 = [](std::int64_t v) { return static_cast<int>(std::min<std::int64_t>(v, kMaxInt32)); };
    p.batch = i32(a.batch), p.seqlen_q = i32(a.seqlen_q), p.seqlen_k = i32(a.seqlen_k);
    p.heads_q = i32(a.heads_q), p.heads_kv = i32(a.heads_kv), p.head_dim = i32(a.head_dim);
    p.dtype = elem_type(a.dtype);
    p.scale = a.scale;
    p.scale_log2 = a.scale * tile::kLog2e;  // the kernels use exp2
    p.causal = a.causal;
    p.stream = a.cuda_stream;
    p.num_sms = sms_;
    p.device_cc = cc_;
    p.window_left = a.window_left < 0 ? -1 : i32(a.window_left);
    p.window_right = a.window_right < 0 ? -1 : i32(a.window_right);
    p.softcap = a.softcap;
    if (a.has_alibi) {
      p.alibi_slopes = static_cast<const float*>(ptr(a.alibi_slopes.buf));
      p.alibi_sb = a.alibi_per_batch ? i32(a.alibi_slopes.strides[0]) : 0;
    }
    if (a.has_sinks) p.sinks = static_cast<const float*>(ptr(a.sinks.buf));
    if (a.paged) {
      const PagedLayout& pg = *a.paged;
      p.layout = cuda::Layout::Paged;
      p.block_table = static_cast<const std::int32_t*>(ptr(pg.block_table.buf));
      p.block_table_sb = pg.block_table.strides[0];
      p.seqlens = static_cast<const std::int32_t*>(ptr(pg.seqlens.buf));
      p.page_size = i32(pg.page_size), p.num_pages = i32(pg.num_pages), p.pages_per_seq = i32(pg.pages_per_seq);
      p.seqlen_new = i32(pg.seqlen_new);
      if (pg.seqlen_new > 0) {
        p.k_new = ptr(pg.k_new.buf);
        p.v_new = ptr(pg.v_new.buf);
        p.kn_sb = pg.k_new.strides[0], p.kn_ss = pg.k_new.strides[1], p.kn_sh = pg.k_new.strides[2];
        p.vn_sb = pg.v_new.strides[0], p.vn_ss = pg.v_new.strides[1], p.vn_sh = pg.v_new.strides[2];
      }
    } else if (a.varlen) {
      const VarlenLayout& vl = *a.varlen;
      p.layout = cuda::Layout::Varlen;
      p.cu_seqlens_q = static_cast<const std::int32_t*>(ptr(vl.cu_seqlens_q.buf));
      p.cu_seqlens_k = static_cast<const std::int32_t*>(ptr(vl.cu_seqlens_k.buf));
      p.total_q = i32(vl.total_q), p.total_k = i32(vl.total_k);
    }
    return p;
  }

  cuda::BwdParams bwd_params(const BwdArgs& g) const {
    cuda::BwdParams p;
    p.f = params(g.fwd);
    p.dout = ptr(g.dout.buf);
    p.dq = ptr(g.dq.buf);
    p.dk = ptr(g.dk.buf);
    p.dv = ptr(g.dv.buf);
    p.do_sb = g.dout.strides[0], p.do_ss = g.dout.strides[1], p.do_sh = g.dout.strides[2];
    p.dq_sb = g.dq.strides[0], p.dq_ss = g.dq.strides[1], p.dq_sh = g.dq.strides[2];
    p.dk_sb = g.dk.strides[0], p.dk_ss = g.dk.strides[1], p.dk_sh = g.dk.strides[2];
    p.dv_sb = g.dv.strides[0], p.dv_ss = g.dv.strides[1], p.dv_sh = g.dv.strides[2];
    p.deterministic = g.deterministic;
    // Sinks change the gradients only through the forward's lse: the main kernels run as for a call without them,
    // and the preprocess's rows give dsinks.
    p.sinks = p.f.sinks;
    p.f.sinks = nullptr;
    if (g.has_dsinks) p.dsinks = static_cast<float*>(ptr(g.dsinks.buf));
    return p;
  }

  int ordinal_ = 0;
  int cc_ = 0;
  int sms_ = 0;
  DeviceInfo info_;
  std::once_flag stream_once_;
  cudaStream_t stream_ = nullptr;
  std::once_flag pool_once_;
  cudaMemPool_t pool_ = nullptr;
};

}  // namespace

std::vector<std::shared_ptr<DeviceImpl>> enumerate_cuda(std::string& why_none) {
  std::vector<std::shared_ptr<DeviceImpl>> out;
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    cudaGetLastError();
    why_none = "no CUDA driver / device found (" +
               std::string(e != cudaSuccess ? cudaGetErrorName(e) : "cudaGetDeviceCount returned 0") + ")";
    return out;
  }
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  std::string skipped;
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    if (cudaError_t pe = cudaGetDeviceProperties(&prop, i); pe != cudaSuccess) {
      cudaGetLastError();
      skipped += (skipped.empty() ? "" : "; ") + std::string("cuda:") + std::to_string(i) + ": " + cudaGetErrorName(pe);
      continue;
    }
    // Devices below sm_80 are listed (with no paths and the reason in caps) so the user sees why they are unusable.
    out.push_back(std::make_shared<CudaDevice>(i, prop, driver, runtime));
  }
  if (out.empty()) why_none = "no usable CUDA device (" + skipped + ")";
  return out;
}

}  // namespace flashtile::detail
