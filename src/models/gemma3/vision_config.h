// Gemma 3's image path configuration: the SigLIP vision tower (transformers models/siglip/configuration_siglip.py
// SiglipVisionConfig) and the multimodal projector (models/gemma3/configuration_gemma3.py Gemma3Config), read from
// a Hugging Face config.json's `vision_config` and top level, or from a llama.cpp mmproj GGUF's `clip.vision.*`
// keys. Defaults are gemma-3-4b/12b/27b-it's (docs/gemma3_vision.md §0).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "io/json.h"

namespace ltx {

class GGUFFile;

namespace gemma3 {

struct VisionConfig {
  int64_t hidden_size = 1152;
  int64_t intermediate_size = 4304;
  int64_t n_layers = 27;
  int64_t n_heads = 16;
  int64_t image_size = 896;
  int64_t patch_size = 14;
  double layer_norm_eps = 1e-6;
  int64_t mm_tokens_per_image = 256;
  int64_t text_hidden_size = 3840;  // the projector's output width
  // The prompt's image block: <start_of_image>, <end_of_image> and the soft token each image feature replaces.
  int32_t boi_token = 255999, eoi_token = 256000, image_token = 262144;

  // None when the config has no vision_config (a text-only Gemma 3).
  static std::optional<VisionConfig> from_hf_json(const Json& j);
  static std::optional<VisionConfig> from_hf_file(const std::string& path);
  // A llama.cpp mmproj file (general.architecture "clip", projector "gemma3"); the token ids keep Gemma 3's.
  static VisionConfig from_mmproj(const GGUFFile& file);

  int64_t grid() const { return image_size / patch_size; }  // patches per side
  int64_t patches() const { return grid() * grid(); }
  int64_t tokens_per_side() const;                             // sqrt(mm_tokens_per_image)
  int64_t pool() const { return grid() / tokens_per_side(); }  // the projector's average-pool kernel
  int64_t head_dim() const { return hidden_size / n_heads; }
  std::string describe() const;
};

}  // namespace gemma3
}  // namespace ltx
