// attention_with_kvcache and attention_varlen: validate, plan, run, as attention_forward does.
#include "validate.hpp"

#include <flashtile/serving.hpp>

namespace flashtile {

namespace {
Result plan_or_run(const Tensor& q, const detail::AttnArgs& args, const std::optional<Path>& path, bool run) {
  const auto& dev = q.storage()->device;
  const detail::Plan plan = dev->plan(args, path);
  if (run) dev->run(plan, args);
  return detail::result_of(dev->info(), plan, run && (args.cuda_stream || args.vk_command_buffer));
}
}  // namespace

Result attention_with_kvcache(const Tensor& q, const PagedKv& cache, Tensor& out, Tensor* lse, const Tensor* k_new,
                              const Tensor* v_new, const Options& options) {
  return plan_or_run(q, detail::validate_kvcache(q, cache, out, lse, k_new, v_new, options), options.path, true);
}

Result plan_attention_with_kvcache(const Tensor& q, const PagedKv& cache, const Tensor& out, const Tensor* lse,
                                   const Tensor* k_new, const Tensor* v_new, const Options& options) {
  return plan_or_run(q, detail::validate_kvcache(q, cache, out, lse, k_new, v_new, options), options.path, false);
}

Result attention_varlen(const Tensor& q, const Tensor& k, const Tensor& v, Tensor& out, Tensor* lse,
                        const Varlen& lengths, const Options& options) {
  return plan_or_run(q, detail::validate_varlen(q, k, v, out, lse, lengths, options), options.path, true);
}

Result plan_attention_varlen(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out, const Tensor* lse,
                             const Varlen& lengths, const Options& options) {
  return plan_or_run(q, detail::validate_varlen(q, k, v, out, lse, lengths, options), options.path, false);
}

}  // namespace flashtile
