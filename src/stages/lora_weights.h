// The DiT weight sets of a generation: the user's LoRAs (--lora) for every stage, plus the distilled LoRA
// (--distilled-lora) for the stage-2 refine, as ltx_pipelines/ti2vid_two_stages.py builds its stage-2
// transformer from the stage-1 ledger with_additional_loras(distilled_lora). Instead of a second model, the one
// resident DiT is switched in place between the sets (lora_fuse.h): stage 1 runs on base + user LoRAs, stage 2 on
// base + user + distilled; switching recomputes only the touched matrices from the mapped checkpoint.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/ltx/dit/lora_fuse.h"

namespace ltx::stages {

struct LoraRequest {
  std::vector<ltxm::LoraSpec> loras;             // every stage
  std::optional<ltxm::LoraSpec> distilled_lora;  // stage 2, at its strength
  bool allow_partial = false;                    // skip keys that name no DiT layer instead of failing
  // Fused or unfused (lora_fuse.h); unset: fused when the copies of the touched matrices take at most a quarter of
  // the memory budget (0: MemAvailable now), else unfused. A 22B DiT with the distilled LoRA on every layer would
  // need ~40 GB of fused copies: it runs unfused.
  std::optional<ltxm::LoraApplication> application;
  size_t memory_budget_bytes = 0;
  // The distilled LoRA in stage 1 too, at this strength (ti2vid_two_stages_hq.py: 0.25, stage 2 at 0.5); unset: not.
  std::optional<float> distilled_stage1_strength;
};

// The application `request` asks for, or the one its budget allows for these adapters (request.application).
ltxm::LoraApplication choose_lora_application(const LoraRequest& request,
                                              const std::vector<ltxm::LoraAdapter>& adapters,
                                              const ltxm::LoraTargets& targets, DType compute);

// The DiT's Linears as its weight file lists them (every 2-D `<prefix>M.weight`), so LoRA files can be checked
// against a checkpoint before the DiT is loaded; the fuser checks again against the loaded layers.
ltxm::LoraTargets checkpoint_lora_targets(const WeightSource& dit_weights, const std::string& prefix);

// Reads every file of the request (the user's, then the distilled one), failing on keys that name no target
// unless allow_partial.
std::vector<ltxm::LoraAdapter> read_loras(const LoraRequest& request, const ltxm::LoraTargets& targets);

class LoraWeights {
 public:
  // Applies the user's LoRAs, fused or not (choose_lora_application). `adapters`: the request's files as read_loras
  // returned them, or empty to read them here against the DiT's layers. `checkpoint` holds the DiT's stored weights
  // under `prefix`. `report` receives one line per file and per fusion.
  LoraWeights(ltxm::Dit& dit, std::shared_ptr<const WeightSource> checkpoint, DType compute, const LoraRequest& request,
              const std::function<void(const std::string&)>& report = {},
              const std::string& prefix = "model.diffusion_model.", std::vector<ltxm::LoraAdapter> adapters = {});

  void use_stage1();  // base + --lora (+ --distilled-lora at its stage-1 strength when given)
  // base + --lora + --distilled-lora; without the --lora files for IC-LoRA runs (ic_lora.py's stage-2 ledger has
  // loras=[]: the IC-LoRAs, and any other LoRA given with them, shape stage 1 only).
  void use_stage2(bool with_user_loras = true);

  // The resident weight of a DiT layer by official name (for tests).
  const Tensor& weight(const std::string& module) const { return fuser_.weight(module); }
  // Layers carrying a LoRA update in the current set, and how.
  int64_t layers_fused() const { return layers_fused_; }
  ltxm::LoraApplication application() const { return fuser_.application(); }

 private:
  void use(bool with_distilled, bool with_user_loras);

  ltxm::DitLoraFuser fuser_;
  std::vector<ltxm::LoraAdapter> adapters_;  // the user's, then the distilled one
  std::vector<float> strengths_;
  bool has_distilled_ = false;
  std::optional<float> distilled_stage1_strength_;
  int64_t layers_fused_ = 0;
  std::function<void(const std::string&)> report_;
};

}  // namespace ltx::stages
