// attention_forward: validate, plan (pick the path), run. Nothing runs before every check has passed.
#include "validate.hpp"

namespace flashtile {

namespace {
enum class Stage { Plan, Prepare, Run };

Result plan_or_run(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out, const Tensor* lse,
                   const Options& options, Stage stage) {
  const detail::AttnArgs args = detail::validate_attention(q, k, v, out, lse, options);
  const auto& dev = q.storage()->device;
  const detail::Plan plan = dev->plan(args, options.path);
  const bool run = stage == Stage::Run;
  if (stage == Stage::Prepare) dev->prepare(plan, args);
  if (run) dev->run(plan, args);
  Result r;
  r.backend = dev->info().backend;
  r.path = plan.path;
  r.kernel = plan.kernel;
  r.note = plan.note;
  r.reduced_precision = plan.reduced_precision;
  r.asynchronous = run && (args.cuda_stream || args.vk_command_buffer);
  return r;
}
}  // namespace

Result attention_forward(const Tensor& q, const Tensor& k, const Tensor& v, Tensor& out, Tensor* lse,
                         const Options& options) {
  return plan_or_run(q, k, v, out, lse, options, Stage::Run);
}

Result plan_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out, const Tensor* lse,
                      const Options& options) {
  return plan_or_run(q, k, v, out, lse, options, Stage::Plan);
}

Result prepare_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out, const Tensor* lse,
                         const Options& options) {
  return plan_or_run(q, k, v, out, lse, options, Stage::Prepare);
}

}  // namespace flashtile
