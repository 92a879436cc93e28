// Golden-case runners for the sigma schedules (components "ltx2_scheduler" and "distilled_sigmas").
#include "pipeline/schedule.h"
#include "verify/components.h"

namespace ltx {
namespace {

Tensor to_tensor(std::span<const float> v) {
  return Tensor::from_floats(DType::F32, Shape{static_cast<int64_t>(v.size())}, v);
}

// params.calls: {name: {steps, tokens, max_shift, base_shift, stretch, terminal}} -> "sigmas.<name>".
std::map<std::string, Tensor> run_ltx2_scheduler(const GoldenCase& c, Precision) {
  std::map<std::string, Tensor> out;
  for (const auto& [name, call] : c.params().at("calls").items()) {
    Ltx2ScheduleParams p;
    p.steps = call.at("steps").get<int>();
    p.tokens = call.at("tokens").get<int64_t>();
    p.max_shift = call.at("max_shift").get<double>();
    p.base_shift = call.at("base_shift").get<double>();
    p.stretch = call.at("stretch").get<bool>();
    p.terminal = call.at("terminal").get<double>();
    out["sigmas." + name] = to_tensor(ltx2_sigmas(p));
  }
  return out;
}

std::map<std::string, Tensor> run_distilled_sigmas(const GoldenCase&, Precision) {
  return {{"sigmas.stage_1", to_tensor(distilled_sigmas_stage1())},
          {"sigmas.stage_2", to_tensor(distilled_sigmas_stage2())}};
}

}  // namespace

void register_schedule_runners(ComponentRegistry& registry) {
  registry.add("ltx2_scheduler", run_ltx2_scheduler);
  registry.add("distilled_sigmas", run_distilled_sigmas);
}

}  // namespace ltx
