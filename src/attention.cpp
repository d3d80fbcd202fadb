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
  return detail::result_of(dev->info(), plan, run && (args.cuda_stream || args.vk_command_buffer));
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

namespace {
Result plan_or_run_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out, const Tensor& lse,
                            const Tensor& dout, const Tensor& dq, const Tensor& dk, const Tensor& dv,
                            const Options& options, bool run) {
  const detail::BwdArgs args = detail::validate_backward(q, k, v, out, lse, dout, dq, dk, dv, options);
  const auto& dev = q.storage()->device;
  const detail::Plan plan = dev->plan_backward(args, options.path);
  if (args.has_workspace && args.workspace_capacity < plan.workspace_bytes)
    throw Error(ErrorCode::InvalidArgument,
                "options.workspace: holds " + std::to_string(args.workspace_capacity) + " bytes; " +
                    std::string(to_string(plan.path)) + " needs " + std::to_string(plan.workspace_bytes) +
                    " (plan_attention_backward's workspace_bytes)");
  if (run) dev->run_backward(plan, args);
  return detail::result_of(dev->info(), plan, run && args.fwd.cuda_stream);
}
}  // namespace

Result attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out, const Tensor& lse,
                          const Tensor& dout, Tensor& dq, Tensor& dk, Tensor& dv, const Options& options) {
  return plan_or_run_backward(q, k, v, out, lse, dout, dq, dk, dv, options, true);
}

Result plan_attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                               const Tensor& lse, const Tensor& dout, const Tensor& dq, const Tensor& dk,
                               const Tensor& dv, const Options& options) {
  return plan_or_run_backward(q, k, v, out, lse, dout, dq, dk, dv, options, false);
}

}  // namespace flashtile
