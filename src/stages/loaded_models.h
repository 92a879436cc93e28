// The models a generation runs on, loaded once from the model files and kept resident between generate() calls
// (an ltx::Engine holds one set): the checkpoint's VAEs and vocoder, its DiT or --dit's, the LoRA weight sets, the
// prompt encoder and the upsampler, their compiled plans included.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "models/ltx/dit/lora.h"
#include "models/ltx/upsampler/upsampler.h"
#include "stages/av_models.h"
#include "stages/ic_lora_input.h"
#include "stages/lora_weights.h"
#include "stages/memory_plan.h"
#include "stages/progress.h"
#include "stages/text_encoder.h"

namespace ltx::stages {

struct ModelFiles {
  std::string checkpoint;    // official single-file safetensors: VAEs, vocoder, text projection (and the DiT)
  std::string dit;           // the DiT from here instead: official file, Diffusers folder or GGUF (dit_checkpoint.h)
  std::string dit_config;    // configuration for a GGUF DiT that carries none (default: the checkpoint's)
  std::string text_encoder;  // Gemma 3: GGUF file or Hugging Face folder; empty: requests bring text contexts
  std::string text_encoder_mmproj;    // a GGUF text encoder's vision tower (llama.cpp mmproj file); empty: none
  std::string upsampler;              // x2 spatial upsampler file, for two-stage requests; empty: none
  std::vector<ltxm::LoraSpec> loras;  // every stage
  std::optional<ltxm::LoraSpec> distilled_lora;           // the stage-2 refine
  std::optional<float> distilled_lora_stage1_strength;    // and stage 1 at this strength (the HQ pipeline)
  bool lora_allow_partial = false;                        // skip LoRA keys that name no DiT layer
  std::optional<ltxm::LoraApplication> lora_application;  // unset: chosen by the budget (LoraRequest)
  size_t memory_budget_bytes = 0;                         // 0: MemAvailable at load
  DType compute = DType::BF16;
  std::string backend = "cpu";  // what every plan runs on (backend_names())
  std::string xla_plugin;       // the "xla" backend's PJRT plugin ("": the default, backend/backend.h)
};

// Every problem with the files before anything is read (a file that does not exist, a DiT-only file as the
// checkpoint, dit_config without dit), one string each.
std::vector<std::string> model_file_problems(const ModelFiles& files);

struct LoadedModels {
  LoadedModels() = default;
  LoadedModels(const LoadedModels&) = delete;  // the LoRA set reports through a pointer to this
  LoadedModels& operator=(const LoadedModels&) = delete;

  ModelFiles files;
  std::shared_ptr<const WeightSource> checkpoint;
  AvModels models;
  std::optional<upsampler::LatentUpsampler> upsampler;
  std::unique_ptr<PromptEncoder> encoder;  // null without a text encoder
  std::unique_ptr<LoraWeights> lora;       // after `models`: it refers to their DiT; null without LoRAs
  IcLoraMetadata ic_lora;                  // the --lora files' reference_downscale_factor (IC-LoRAs)
  PhaseWeights weight_bytes;               // what each phase of a run reads from the files (memory_plan.h)
  ProgressReporter* progress = nullptr;    // the current call's, for the LoRA fusion lines
};

// Checks the files (one error naming every problem), then loads every model. `progress` (optional) hears the
// notes of the load (LoRA files read and fused); timing the load as a stage is the caller's.
std::unique_ptr<LoadedModels> load_models(const ModelFiles& files, ProgressReporter* progress = nullptr);

}  // namespace ltx::stages
