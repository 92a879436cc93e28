#include "stages/lora_weights.h"

#include <cstdio>

namespace ltx::stages {
namespace {

std::string describe(const ltxm::LoraAdapter& a, float strength) {
  char head[64];
  std::snprintf(head, sizeof head, " (strength %g): ", static_cast<double>(strength));
  std::string s = "LoRA " + a.path + head + std::to_string(a.layers.size()) + " layers, " + a.naming + " naming";
  if (!a.unmatched.empty()) s += "; " + std::to_string(a.unmatched.size()) + " keys matched no layer and were skipped";
  if (!a.not_applied.empty())
    s += "; " + std::to_string(a.not_applied.size()) +
         " text-connector modules not applied (ltx-core fuses LoRAs into the transformer only)";
  return s;
}

}  // namespace

LoraWeights::LoraWeights(ltxm::Dit& dit, std::shared_ptr<const WeightSource> checkpoint, DType compute,
                         const LoraRequest& request, const std::function<void(const std::string&)>& report)
    : fuser_(dit, std::move(checkpoint), compute), report_(report) {
  auto read = [&](const ltxm::LoraSpec& spec) {
    adapters_.push_back(ltxm::read_lora(spec.path, fuser_.targets(), request.allow_partial));
    strengths_.push_back(spec.strength);
    if (report_) report_(describe(adapters_.back(), spec.strength));
  };
  for (const auto& spec : request.loras) read(spec);
  if (request.distilled_lora) {
    read(*request.distilled_lora);
    has_distilled_ = true;
  }
  use_stage1();
}

void LoraWeights::use_stage1() { use(false); }
void LoraWeights::use_stage2() { use(true); }

void LoraWeights::use(bool with_distilled) {
  std::vector<ltxm::WeightedLora> set;
  const size_t n_user = adapters_.size() - (has_distilled_ ? 1 : 0);
  for (size_t i = 0; i < adapters_.size(); ++i)
    if (i < n_user || with_distilled) set.push_back({&adapters_[i], strengths_[i]});
  const ltxm::LoraFuseReport r = fuser_.apply(set);
  if (!report_ || (r.layers_fused == 0 && r.layers_restored == 0)) return;
  char line[256];
  std::snprintf(line, sizeof line, "%s weights: %lld layers fused, %lld restored in %.2f s%s",
                with_distilled ? "stage-2" : "stage-1", static_cast<long long>(r.layers_fused),
                static_cast<long long>(r.layers_restored), r.seconds,
                r.dequantized_bytes ? " (quantized matrices dequantized to fuse)" : "");
  report_(line);
}

}  // namespace ltx::stages
