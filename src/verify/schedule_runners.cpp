// Golden-case runners for the sigma schedules (components "ltx2_scheduler" and "distilled_sigmas") and the sampling
// arithmetic between model calls ("sampling_steps").
#include "io/safetensors.h"
#include "pipeline/diffusion_step.h"
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

// The engine's states are f32 in both precisions; where the reference's state is bf16 its f32 result is rounded
// to bf16 here, as the reference rounds its f32 arithmetic once (make_sampling_goldens.py).
std::map<std::string, Tensor> run_sampling_steps(const GoldenCase& c, Precision) {
  const SafetensorsFile in = SafetensorsFile::open(c.inputs_path());
  const Tensor mask = in.get("denoise_mask");
  const std::vector<float> sigmas = in.get("sigmas").to_floats();
  const auto noise_scale = c.params().at("noise_scale").get<float>();
  std::map<std::string, Tensor> out;
  for (const std::string dtype : c.params().at("dtypes")) {
    const auto as_state = [&](const Tensor& t) { return dtype == "bf16" ? t.to(DType::BF16).to(DType::F32) : t; };
    const Tensor latent = in.get("latent." + dtype), denoised = in.get("denoised." + dtype);
    out["noised." + dtype] = as_state(add_noise(latent, in.get("noise." + dtype), mask, noise_scale));
    out["post_processed." + dtype] = as_state(post_process_x0(denoised, mask, in.get("clean." + dtype)));
    if (dtype != "f32") continue;  // the reference rounds a bf16 step's velocity first; the engine's is f32
    std::vector<float> steps;
    for (size_t i = 0; i + 1 < sigmas.size(); ++i) {
      const std::vector<float> x = euler_step(latent, denoised, sigmas[i], sigmas[i + 1]).to_floats();
      steps.insert(steps.end(), x.begin(), x.end());
    }
    Shape shape = latent.shape();
    shape = Shape{static_cast<int64_t>(sigmas.size()) - 1, shape.dim(0), shape.dim(1), shape.dim(2)};
    out["euler." + dtype] = Tensor::from_floats(DType::F32, shape, steps);
  }
  return out;
}

}  // namespace

void register_schedule_runners(ComponentRegistry& registry) {
  registry.add("sampling_steps", run_sampling_steps);
  registry.add("ltx2_scheduler", run_ltx2_scheduler);
  registry.add("distilled_sigmas", run_distilled_sigmas);
}

}  // namespace ltx
