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

#include "models/ltx/lora_fuse.h"

namespace ltx::stages {

struct LoraRequest {
  std::vector<ltxm::LoraSpec> loras;             // every stage
  std::optional<ltxm::LoraSpec> distilled_lora;  // stage 2 only
  bool allow_partial = false;                    // skip keys that name no DiT layer instead of failing
};

class LoraWeights {
 public:
  // Reads every file (failing on keys that name no DiT layer unless allow_partial) and fuses the user's LoRAs.
  // `report` receives one line per file and per fusion.
  LoraWeights(ltxm::Dit& dit, std::shared_ptr<const WeightSource> checkpoint, DType compute, const LoraRequest& request,
              const std::function<void(const std::string&)>& report = {});

  void use_stage1();  // base + --lora
  void use_stage2();  // base + --lora + --distilled-lora

 private:
  void use(bool with_distilled);

  ltxm::DitLoraFuser fuser_;
  std::vector<ltxm::LoraAdapter> adapters_;  // the user's, then the distilled one
  std::vector<float> strengths_;
  bool has_distilled_ = false;
  std::function<void(const std::string&)> report_;
};

}  // namespace ltx::stages
