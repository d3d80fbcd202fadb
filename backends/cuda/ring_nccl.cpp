// Ring attention over NCCL (flashtile/ring_nccl.hpp): the NCCL transport of src/ring's algorithm and its driver, one
// rank per GPU. Built with the CUDA backend when nccl.h is found; libnccl is loaded at run time (dlopen), so the
// library still loads where NCCL is absent, and uses the application's NCCL when it already loaded one.
#include <flashtile/ring_nccl.hpp>

#include "ring/ring.hpp"
#include "validate_rules.hpp"

#include <cuda_runtime.h>
#include <dlfcn.h>
#include <nccl.h>

#include <cstring>
#include <memory>
#include <string>

static_assert(flashtile::kNcclUniqueIdBytes == NCCL_UNIQUE_ID_BYTES, "ring_nccl.hpp's id size must be NCCL's");

namespace flashtile {
namespace detail {
namespace {

// The NCCL functions the ring uses, resolved once from libnccl.
struct Nccl {
  decltype(&ncclGetUniqueId) get_unique_id = nullptr;
  decltype(&ncclCommInitRank) comm_init_rank = nullptr;
  decltype(&ncclCommDestroy) comm_destroy = nullptr;
  decltype(&ncclCommCount) comm_count = nullptr;
  decltype(&ncclCommUserRank) comm_user_rank = nullptr;
  decltype(&ncclCommCuDevice) comm_cu_device = nullptr;
  decltype(&ncclSend) send = nullptr;
  decltype(&ncclRecv) recv = nullptr;
  decltype(&ncclGroupStart) group_start = nullptr;
  decltype(&ncclGroupEnd) group_end = nullptr;
  decltype(&ncclGetErrorString) error_string = nullptr;
  std::string why_not;  // empty when every function resolved
};

constexpr const char* kLibraries[] = {"libnccl.so.2", "libnccl.so"};

Nccl load_nccl() {
  Nccl n;
  void* lib = nullptr;
  std::string tried;
  for (const char* name : kLibraries) {
    if ((lib = dlopen(name, RTLD_NOW | RTLD_LOCAL)) != nullptr) break;
    tried += std::string(tried.empty() ? "" : "; ") + dlerror();
  }
  if (!lib) {
    n.why_not = "libnccl not found (" + tried + ")";
    return n;
  }
  auto sym = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
    if (!fn && n.why_not.empty()) n.why_not = std::string("libnccl lacks ") + name;
  };
  sym(n.get_unique_id, "ncclGetUniqueId");
  sym(n.comm_init_rank, "ncclCommInitRank");
  sym(n.comm_destroy, "ncclCommDestroy");
  sym(n.comm_count, "ncclCommCount");
  sym(n.comm_user_rank, "ncclCommUserRank");
  sym(n.comm_cu_device, "ncclCommCuDevice");
  sym(n.send, "ncclSend");
  sym(n.recv, "ncclRecv");
  sym(n.group_start, "ncclGroupStart");
  sym(n.group_end, "ncclGroupEnd");
  sym(n.error_string, "ncclGetErrorString");
  return n;  // the library stays loaded for the process's lifetime
}

// Loaded on first use, then read-only.
const Nccl& nccl(const char* what) {
  static const Nccl n = load_nccl();
  if (!n.why_not.empty()) throw Error(ErrorCode::BackendUnavailable, std::string(what) + ": " + n.why_not);
  return n;
}

void check_nccl(const Nccl& n, ncclResult_t r, const char* what) {
  if (r != ncclSuccess) throw Error(ErrorCode::BackendFailure, std::string(what) + ": " + n.error_string(r));
}

void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw Error(ErrorCode::BackendFailure, std::string(what) + ": " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e));
}

// Makes the ring's device current for the call, restoring the caller's afterwards.
class CurrentDevice {
 public:
  explicit CurrentDevice(int ordinal) {
    check_cuda(cudaGetDevice(&prev_), "cudaGetDevice");
    if (prev_ != ordinal) check_cuda(cudaSetDevice(ordinal), "cudaSetDevice");
  }
  ~CurrentDevice() { cudaSetDevice(prev_); }
  CurrentDevice(const CurrentDevice&) = delete;
  CurrentDevice& operator=(const CurrentDevice&) = delete;

 private:
  int prev_ = 0;
};

void* device_ptr(const Tensor& t) { return reinterpret_cast<void*>(t.storage()->handle + t.storage()->offset); }

// Messages on a communication stream of its own: a post waits (on the GPU) for the compute stream's work so far, so
// that no buffer is overwritten while a step still reads it; a wait makes the compute stream wait for the message.
class NcclTransport final : public RingTransport {
 public:
  NcclTransport(const Nccl& n, ncclComm* comm, int rank, int world, cudaStream_t compute)
      : n_(n), comm_(comm), next_((rank + 1) % world), prev_((rank + world - 1) % world), compute_(compute) {
    check_cuda(cudaStreamCreateWithFlags(&comm_stream_, cudaStreamNonBlocking), "ring: communication stream");
    check_cuda(cudaEventCreateWithFlags(&ready_, cudaEventDisableTiming), "ring: event");
    for (cudaEvent_t& e : done_) check_cuda(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "ring: event");
  }
  ~NcclTransport() override {
    cudaStreamSynchronize(comm_stream_);
    for (cudaEvent_t e : done_) cudaEventDestroy(e);
    cudaEventDestroy(ready_);
    cudaStreamDestroy(comm_stream_);
  }
  NcclTransport(const NcclTransport&) = delete;
  NcclTransport& operator=(const NcclTransport&) = delete;

  void post(Channel c, const std::vector<Tensor>& send, const std::vector<Tensor*>& recv) override {
    check_cuda(cudaEventRecord(ready_, compute_), "ring: cudaEventRecord");
    check_cuda(cudaStreamWaitEvent(comm_stream_, ready_, 0), "ring: cudaStreamWaitEvent");
    check_nccl(n_, n_.group_start(), "ring: ncclGroupStart");
    for (std::size_t i = 0; i < send.size(); ++i) {
      const std::size_t bytes = send[i].extent_bytes();
      check_nccl(n_, n_.send(device_ptr(send[i]), bytes, ncclUint8, next_, comm_, comm_stream_), "ring: ncclSend");
      check_nccl(n_, n_.recv(device_ptr(*recv[i]), bytes, ncclUint8, prev_, comm_, comm_stream_), "ring: ncclRecv");
    }
    check_nccl(n_, n_.group_end(), "ring: ncclGroupEnd");
    check_cuda(cudaEventRecord(done_[std::size_t(c)], comm_stream_), "ring: cudaEventRecord");
  }
  void wait(Channel c) override {
    check_cuda(cudaStreamWaitEvent(compute_, done_[std::size_t(c)], 0), "ring: cudaStreamWaitEvent");
  }

 private:
  const Nccl& n_;
  ncclComm* comm_;
  int next_, prev_;
  cudaStream_t compute_, comm_stream_ = nullptr;
  cudaEvent_t ready_ = nullptr;
  std::array<cudaEvent_t, kChannels> done_{};
};

// A compute stream for the call: the caller's, or one of its own.
class ComputeStream {
 public:
  explicit ComputeStream(void* caller) : stream_(static_cast<cudaStream_t>(caller)) {
    if (!stream_) {
      check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "ring: compute stream");
      own_ = true;
    }
  }
  ~ComputeStream() {
    if (own_) cudaStreamDestroy(stream_);
  }
  ComputeStream(const ComputeStream&) = delete;
  ComputeStream& operator=(const ComputeStream&) = delete;
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
  bool own_ = false;
};

// The ring's layout from the communicator, after checking it belongs to q's device.
RingLayout layout_of(const Nccl& n, const NcclRing& ring, const Tensor& q, const char* what) {
  if (!ring.comm) throw Error(ErrorCode::InvalidArgument, std::string("ring.comm: ") + what + " needs an NCCL communicator");
  rules::require_defined(q, "q");
  if (q.device().backend() != Backend::Cuda)
    throw Error(ErrorCode::DeviceMismatch, std::string("q: ") + what + " runs on CUDA devices; q is on " + rules::dev_name(q));
  RingLayout l;
  l.sharding = ring.sharding;
  int device = -1;
  check_nccl(n, n.comm_count(ring.comm, &l.world), "ncclCommCount");
  check_nccl(n, n.comm_user_rank(ring.comm, &l.rank), "ncclCommUserRank");
  check_nccl(n, n.comm_cu_device(ring.comm, &device), "ncclCommCuDevice");
  if (device != q.device().info().index)
    throw Error(ErrorCode::DeviceMismatch, "ring.comm: its rank runs on cuda:" + std::to_string(device) +
                                               " but q is on " + rules::dev_name(q));
  return l;
}

// Runs this rank's phases in order: the transport overlaps each post with the step's compute on the GPU.
template <class Make>
Result run_ring(const Nccl& n, const NcclRing& ring, const RingLayout& layout, const Tensor& q, Options opt,
                Make&& make) {
  const CurrentDevice current(q.device().info().index);
  const ComputeStream stream(opt.cuda_stream);
  opt.cuda_stream = stream.get();
  Result r;
  {
    NcclTransport tr(n, ring.comm, layout.rank, layout.world, stream.get());
    std::unique_ptr<RingRank> rank = make(tr, opt);
    for (int t = 0; t < rank->steps(); ++t) {
      rank->post(t);
      rank->compute(t);
      rank->finish(t);
    }
    r = rank->finalize();
    // Before the scratch goes: every step's work and message done.
    check_cuda(cudaStreamSynchronize(stream.get()), "ring: cudaStreamSynchronize");
  }
  r.asynchronous = false;
  return r;
}

}  // namespace
}  // namespace detail

std::string nccl_unavailable_reason() {
  try {
    (void)detail::nccl("nccl");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

Result ring_attention_forward(const NcclRing& ring, const Tensor& q, const Tensor& k, const Tensor& v, Tensor& out,
                              Tensor* lse, const Options& options) {
  constexpr const char* kWhat = "ring_attention_forward";
  const detail::Nccl& n = detail::nccl(kWhat);
  const RingLayout layout = detail::layout_of(n, ring, q, kWhat);
  (void)plan_attention(q, k, v, out, lse, options);
  detail::check_ring_call(layout, q, k, options, kWhat);
  return detail::run_ring(n, ring, layout, q, options, [&](detail::RingTransport& tr, const Options& opt) {
    return std::make_unique<detail::RingForward>(tr, layout, q, k, v, out, lse, opt);
  });
}

Result ring_attention_backward(const NcclRing& ring, const Tensor& q, const Tensor& k, const Tensor& v,
                               const Tensor& out, const Tensor& lse, const Tensor& dout, Tensor& dq, Tensor& dk,
                               Tensor& dv, const Options& options) {
  constexpr const char* kWhat = "ring_attention_backward";
  const detail::Nccl& n = detail::nccl(kWhat);
  const RingLayout layout = detail::layout_of(n, ring, q, kWhat);
  (void)plan_attention_backward(q, k, v, out, lse, dout, dq, dk, dv, options);
  detail::check_ring_call(layout, q, k, options, kWhat);
  return detail::run_ring(n, ring, layout, q, options, [&](detail::RingTransport& tr, const Options& opt) {
    return std::make_unique<detail::RingBackward>(tr, layout, q, k, v, out, lse, dout, dq, dk, dv, opt);
  });
}

NcclUniqueId nccl_unique_id() {
  const detail::Nccl& n = detail::nccl("nccl_unique_id");
  ncclUniqueId id;
  detail::check_nccl(n, n.get_unique_id(&id), "ncclGetUniqueId");
  NcclUniqueId out;
  std::memcpy(out.data(), id.internal, out.size());
  return out;
}

ncclComm* nccl_comm_init(int world, int rank, const NcclUniqueId& id, const Device& device) {
  const detail::Nccl& n = detail::nccl("nccl_comm_init");
  if (world < 1 || rank < 0 || rank >= world)
    throw Error(ErrorCode::InvalidArgument, "rank: " + std::to_string(rank) + " must be in [0, world), world = " +
                                                std::to_string(world));
  if (device.backend() != Backend::Cuda)
    throw Error(ErrorCode::DeviceMismatch, "device: an NCCL communicator needs a CUDA device");
  const detail::CurrentDevice current(device.info().index);
  ncclUniqueId raw;
  std::memcpy(raw.internal, id.data(), id.size());
  ncclComm_t comm = nullptr;
  detail::check_nccl(n, n.comm_init_rank(&comm, world, raw, rank), "ncclCommInitRank");
  return comm;
}

void nccl_comm_destroy(ncclComm* comm) {
  if (!comm) return;
  const detail::Nccl& n = detail::nccl("nccl_comm_destroy");
  detail::check_nccl(n, n.comm_destroy(comm), "ncclCommDestroy");
}

}  // namespace flashtile
