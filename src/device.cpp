// The device registry: each backend is enumerated once, lazily; Device::open picks from it.
#include "backend.hpp"

#include <algorithm>
#include <mutex>

namespace flashtile {
using detail::DeviceImpl;

namespace {

struct BackendDevices {
  bool done = false;
  std::vector<std::shared_ptr<DeviceImpl>> devices;
  std::string why_none;
};

struct Registry {
  std::mutex mutex;
  BackendDevices cpu, cuda, vulkan;
};

// Never destroyed: devices opened through the registry live until the process ends. Tearing Vulkan or CUDA
// contexts down from a static destructor runs after the drivers' own exit-time teardown on some drivers (NVIDIA's
// Vulkan driver crashed every process at exit that way); the OS reclaims everything at exit anyway.
Registry& registry() {
  static Registry* r = new Registry;
  return *r;
}

const BackendDevices& devices_of(Backend b) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  BackendDevices& d = b == Backend::Cpu ? r.cpu : b == Backend::Cuda ? r.cuda : r.vulkan;
  if (!d.done) {
    d.done = true;
    try {
      if (b == Backend::Cpu) d.devices = detail::enumerate_cpu();
      if (b == Backend::Cuda) d.devices = detail::enumerate_cuda(d.why_none);
      if (b == Backend::Vulkan) d.devices = detail::enumerate_vulkan(d.why_none);
    } catch (const std::exception& e) {  // a broken driver leaves the backend empty, with the reason kept
      d.devices.clear();
      d.why_none = e.what();
    }
    if (d.devices.empty() && d.why_none.empty()) d.why_none = "no device found";
  }
  return d;
}

// The order Backend::Auto considers devices in: CUDA, hardware Vulkan, software Vulkan, CPU.
std::vector<std::shared_ptr<DeviceImpl>> auto_order() {
  std::vector<std::shared_ptr<DeviceImpl>> out;
  for (const auto& d : devices_of(Backend::Cuda).devices) out.push_back(d);
  const auto& vk = devices_of(Backend::Vulkan).devices;
  for (const auto& d : vk)
    if (!d->info().software) out.push_back(d);
  for (const auto& d : vk)
    if (d->info().software) out.push_back(d);
  for (const auto& d : devices_of(Backend::Cpu).devices) out.push_back(d);
  return out;
}

}  // namespace

Device Device::open(Backend backend, int index) {
  if (index < 0) throw Error(ErrorCode::InvalidArgument, "device index: must be >= 0, got " + std::to_string(index));
  if (backend == Backend::Auto) {
    auto all = auto_order();
    if (static_cast<std::size_t>(index) >= all.size())
      throw Error(ErrorCode::InvalidArgument, "device index: " + std::to_string(index) + " out of range (" +
                                                  std::to_string(all.size()) + " devices in all)");
    return Device(all[static_cast<std::size_t>(index)]);
  }
  const BackendDevices& d = devices_of(backend);
  if (d.devices.empty())
    throw Error(ErrorCode::BackendUnavailable,
                "backend " + std::string(to_string(backend)) + ": unavailable (" + d.why_none + ")");
  if (static_cast<std::size_t>(index) >= d.devices.size())
    throw Error(ErrorCode::InvalidArgument, "device index: " + std::to_string(index) + " out of range (" +
                                                std::to_string(d.devices.size()) + " " +
                                                std::string(to_string(backend)) + " devices)");
  return Device(d.devices[static_cast<std::size_t>(index)]);
}

Device Device::wrap_vulkan(const VulkanHandles& handles) {
  if (!handles.instance || !handles.physical_device || !handles.device || !handles.queue ||
      !handles.get_instance_proc_addr)
    throw Error(ErrorCode::InvalidArgument,
                "handles: instance, physical_device, device, queue and get_instance_proc_addr must all be set");
  return Device(detail::wrap_vulkan_device(handles));
}

std::vector<DeviceInfo> Device::list() {
  std::vector<DeviceInfo> out;
  for (const auto& d : auto_order()) out.push_back(d->info());
  return out;
}

std::string Device::unavailable_reason(Backend backend) {
  if (backend == Backend::Auto) return {};
  const BackendDevices& d = devices_of(backend);
  return d.devices.empty() ? d.why_none : std::string();
}

const DeviceInfo& Device::info() const { return impl_->info(); }
VulkanHandles Device::vulkan_handles() const { return impl_->vulkan_handles(); }
void Device::sync() const { impl_->sync(); }

namespace detail {

Plan choose_path(const std::vector<PathCheck>& order, const std::optional<Path>& forced, const std::string& device,
                 const std::vector<Path>* listed) {
  auto has = [&](Path p) { return !listed || std::find(listed->begin(), listed->end(), p) != listed->end(); };
  if (forced) {
    std::string known, why;
    for (const PathCheck& c : order)
      if (has(c.path)) known += (known.empty() ? "" : ", ") + std::string(to_string(c.path));
    for (const PathCheck& c : order) {
      if (c.path != *forced) continue;
      if (!has(c.path)) {
        why = ": " + c.why_not;  // e.g. the extension the device lacks
        break;
      }
      if (c.why_not.empty()) return Plan{true, c.path, c.kernel, {}, c.reduced_precision, c.workspace_bytes};
      throw Error(ErrorCode::Unsupported, "options.path: " + std::string(to_string(c.path)) + " cannot run this call on " +
                                              device + ": " + c.why_not);
    }
    throw Error(ErrorCode::Unsupported, "options.path: " + std::string(to_string(*forced)) +
                                            " is not a path of device " + device + " (its paths: " +
                                            (known.empty() ? "none" : known) + ")" + why);
  }
  std::string note;
  for (const PathCheck& c : order) {
    if (!has(c.path)) continue;  // a path the device does not have was never a candidate
    if (c.why_not.empty()) return Plan{true, c.path, c.kernel, note, c.reduced_precision, c.workspace_bytes};
    note += note.empty() ? "" : "\n";
    note += std::string(to_string(c.path)) + ": " + c.why_not;
  }
  std::string flat = note;
  for (char& ch : flat)
    if (ch == '\n') ch = ';';
  if (flat.empty()) flat = "it has no kernel path";
  throw Error(ErrorCode::Unsupported, "no kernel path of device " + device + " can run this call: " + flat);
}

// A backward row's `sinks` means the path also writes Options::dsinks when the call gives it.
VariantSupport variant_support(Path path, bool backward) {
  switch (path) {
    case Path::CpuReference: return {true, true, true, true};
    case Path::CudaSm90: return {true, true, true, true};  // sm90_mods.cuh; dsinks from bwd_common.cu's rows
    case Path::CudaSm80: return {true, true, true, true};  // sm80_mods.cuh; dsinks from bwd_common.cu's rows
    // The tiled portable shader (attn_portable.comp, attn_common.glsl's variant functions; its other forms refuse) and
    // the portable backward (attn_bwd_portable.comp).
    case Path::VulkanPortable: return {true, true, true, true};  // dsinks from attn_bwd_portable.comp's dsinks pass
    // attn_coopmat.comp's shared-memory softmax (the register-softmax entries refuse); attn_bwd_coopmat.comp.
    case Path::VulkanCoopmat: return {true, true, true, true};  // dsinks: the portable dsinks pass
    // attn_coopmat2.comp, every entry; this path has no backward.
    case Path::VulkanCoopmat2: return backward ? VariantSupport{} : VariantSupport{true, true, true, true};
    default: return {};
  }
}

std::string variants_why_not(Path path, const AttnArgs& a, bool backward) {
  if (!a.has_variant()) return "";
  const VariantSupport s = variant_support(path, backward);
  std::string missing;
  auto lacks = [&](bool used, bool has, const char* name) {
    if (used && !has) missing += (missing.empty() ? "" : ", ") + std::string(name);
  };
  lacks(a.window_left >= 0 || a.window_right >= 0, s.window, "window");
  lacks(a.softcap > 0, s.softcap, "softcap");
  lacks(a.has_alibi, s.alibi, "alibi_slopes");
  lacks(a.has_sinks, s.sinks, "sinks");
  if (missing.empty()) return "";
  return "options (" + missing + "): no " + (backward ? "backward" : "forward") +
         " kernel of this path implements these variants yet";
}

Result result_of(const DeviceInfo& device, const Plan& plan, bool asynchronous) {
  Result r;
  r.backend = device.backend;
  r.path = plan.path;
  r.kernel = plan.kernel;
  r.note = plan.note;
  r.reduced_precision = plan.reduced_precision;
  r.workspace_bytes = plan.workspace_bytes;
  r.asynchronous = asynchronous;
  return r;
}

std::string device_label(const DeviceInfo& i) {
  return i.name + " (" + std::string(to_string(i.backend)) + ":" + std::to_string(i.index) + ")";
}

Plan DeviceImpl::plan_backward(const BwdArgs&, const std::optional<Path>& forced) const {
  std::vector<PathCheck> order;
  for (Path p : info().paths)
    order.push_back({p, "no backward kernel on this path (cpu_reference and the cuda paths have one)", ""});
  return choose_path(order, forced, device_label(info()));
}

void DeviceImpl::run_backward(const Plan& plan, const BwdArgs&) {
  throw Error(ErrorCode::Unsupported, std::string(to_string(plan.path)) + ": no backward kernel on this path");
}

void DeviceImpl::run_ring_op(const RingOpArgs&) {
  throw Error(ErrorCode::Unsupported, device_label(info()) + ": " + ring_ops_why_not());
}

}  // namespace detail
}  // namespace flashtile
