#include "stages/lora_weights.h"

#include <cstdio>
#include <map>
#include <set>

#include "core/error.h"
#include "core/system_memory.h"

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

ltxm::LoraTargets checkpoint_lora_targets(const WeightSource& dit_weights, const std::string& prefix) {
  auto shapes = std::make_shared<std::map<std::string, std::pair<int64_t, int64_t>>>();
  ltxm::LoraTargets t;
  const std::string suffix = ".weight";
  for (const std::string& name : dit_weights.names()) {
    if (name.rfind(prefix, 0) != 0 || name.size() < prefix.size() + suffix.size() ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    const Shape shape = dit_weights.shape(name);
    if (shape.rank() != 2) continue;
    const std::string module = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
    t.modules.push_back(module);
    (*shapes)[module] = {shape[0], shape[1]};
  }
  t.shape = [shapes](const std::string& module) { return shapes->at(module); };
  return t;
}

std::vector<ltxm::LoraAdapter> read_loras(const LoraRequest& request, const ltxm::LoraTargets& targets) {
  std::vector<ltxm::LoraAdapter> out;
  for (const auto& spec : request.loras) out.push_back(ltxm::read_lora(spec.path, targets, request.allow_partial));
  if (request.distilled_lora)
    out.push_back(ltxm::read_lora(request.distilled_lora->path, targets, request.allow_partial));
  return out;
}

ltxm::LoraApplication choose_lora_application(const LoraRequest& request,
                                              const std::vector<ltxm::LoraAdapter>& adapters,
                                              const ltxm::LoraTargets& targets, DType compute) {
  if (request.application) return *request.application;
  std::set<std::string> touched;
  for (const auto& a : adapters)
    for (const auto& layer : a.layers) touched.insert(layer.target);
  size_t copies = 0;
  for (const std::string& module : touched) {
    const auto [n_out, n_in] = targets.shape(module);
    copies += dtype_bytes_for(compute, n_out * n_in);
  }
  const size_t budget = request.memory_budget_bytes ? request.memory_budget_bytes : available_memory_bytes();
  return copies <= budget / 4 ? ltxm::LoraApplication::Fused : ltxm::LoraApplication::Unfused;
}

LoraWeights::LoraWeights(ltxm::Dit& dit, std::shared_ptr<const WeightSource> checkpoint, DType compute,
                         const LoraRequest& request, const std::function<void(const std::string&)>& report,
                         const std::string& prefix, std::vector<ltxm::LoraAdapter> adapters)
    : fuser_(dit, std::move(checkpoint), compute, prefix), adapters_(std::move(adapters)), report_(report) {
  if (adapters_.empty()) adapters_ = read_loras(request, fuser_.targets());
  fuser_.set_application(choose_lora_application(request, adapters_, fuser_.targets(), compute));
  for (const auto& spec : request.loras) strengths_.push_back(spec.strength);
  if (request.distilled_lora) {
    strengths_.push_back(request.distilled_lora->strength);
    has_distilled_ = true;
    distilled_stage1_strength_ = request.distilled_stage1_strength;
  }
  LTX_CHECK(adapters_.size() == strengths_.size(), "lora", "expected ", strengths_.size(), " LoRA files, got ",
            adapters_.size());
  if (report_)
    for (size_t i = 0; i < adapters_.size(); ++i) report_(describe(adapters_[i], strengths_[i]));
  use_stage1();
}

void LoraWeights::use_stage1() { use(false, true); }
void LoraWeights::use_stage2(bool with_user_loras) { use(true, with_user_loras); }

void LoraWeights::use(bool with_distilled, bool with_user_loras) {
  std::vector<ltxm::WeightedLora> set;
  const size_t n_user = with_user_loras ? adapters_.size() - (has_distilled_ ? 1 : 0) : 0;
  for (size_t i = 0; i < n_user; ++i) set.push_back({&adapters_[i], strengths_[i]});
  if (has_distilled_ && (with_distilled || distilled_stage1_strength_))
    set.push_back({&adapters_.back(), with_distilled ? strengths_.back() : *distilled_stage1_strength_});
  const ltxm::LoraFuseReport r = fuser_.apply(set);
  if (r.layers_fused || r.layers_restored) layers_fused_ = r.layers_fused;
  if (!report_ || (r.layers_fused == 0 && r.layers_restored == 0)) return;
  char line[256];
  const bool fused = fuser_.application() == ltxm::LoraApplication::Fused;
  std::snprintf(line, sizeof line, "%s weights: %lld layers %s, %lld restored in %.2f s%s",
                with_distilled ? "stage-2" : "stage-1", static_cast<long long>(r.layers_fused),
                fused ? "fused" : "with an unfused LoRA update (fused copies would not fit a quarter of the budget)",
                static_cast<long long>(r.layers_restored), r.seconds,
                r.dequantized_bytes ? " (quantized matrices dequantized to fuse)" : "");
  report_(line);
}

}  // namespace ltx::stages
