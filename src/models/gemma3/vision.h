// Gemma 3's vision path: the SigLIP vision tower (transformers models/siglip/modeling_siglip.py
// SiglipVisionTransformer, no pooling head) and the multimodal projector (models/gemma3/modeling_gemma3.py
// Gemma3MultiModalProjector), pixels in, one text-width embedding per image soft token out
// (Gemma3Model.get_image_features). docs/gemma3_vision.md §2-§3 has the formulas with citations.
//
// Weights from a Hugging Face Gemma3ForConditionalGeneration checkpoint (`vision_tower.vision_model.*` and
// `multi_modal_projector.*`, with or without the `model.` prefix newer conversions add) or from a llama.cpp mmproj
// GGUF (`v.*`, `mm.*`), whose soft-embedding norm is stored as 1 + w.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "graph/compile.h"
#include "models/gemma3/vision_config.h"
#include "nn/layers.h"

namespace ltx::gemma3 {

struct VisionLayerWeights {
  nn::LayerNorm layer_norm1, layer_norm2;
  nn::Linear q_proj, k_proj, v_proj, out_proj;  // [D, D] with biases
  nn::Linear fc1, fc2;                          // [F, D], [D, F] with biases
};

struct VisionWeights {
  nn::Linear patch_embedding;  // the [D, 3, P, P] convolution as a [D, 3·P·P] matrix over (channel, row, column)
  Tensor position_embedding;   // [patches, D] f32
  std::vector<VisionLayerWeights> layers;
  nn::LayerNorm post_layernorm;
  nn::RmsNorm soft_emb_norm;    // over D: (1 + w) from HF files, w from mmproj files
  nn::Linear input_projection;  // [text, D]: the stored [D, text] matrix (applied as x·W) transposed at load

  // `tower` and `projector` are the prefixes above `embeddings.` and `mm_input_projection_weight`.
  static VisionWeights load(const VisionConfig& config, std::shared_ptr<const WeightSource> source,
                            const std::string& tower, const std::string& projector, NormWeight soft_norm,
                            DType compute);
};

struct VisionOutput {
  Tensor hidden;    // f32 [1, patches, D]: the tower's last hidden state (after post_layernorm)
  Tensor features;  // f32 [1, mm_tokens_per_image, text_hidden]: the projector's output
};

class VisionTower {
 public:
  // The weights' compute dtype (VisionWeights::load) sets the precision: f32 (validation) or bf16 (production:
  // matmuls read bf16 activations, as the reference's bf16 tower).
  VisionTower(VisionConfig config, VisionWeights weights, const Backend& backend);

  // A HF folder or safetensors file with a vision tower (its config.json beside it), or an mmproj .gguf file.
  static VisionTower load(const std::string& path, DType compute, const Backend& backend);
  // Whether a HF folder's config.json describes a vision tower (a text-only Gemma 3 or a GGUF has none).
  static bool folder_has_vision(const std::string& folder);

  // pixel_values f32 [1, 3, image_size, image_size], normalized to [-1, 1] (image_preprocess.h).
  VisionOutput run(const Tensor& pixel_values);

  const VisionConfig& config() const { return config_; }
  void release_activations() const { plans_.release_arena_pages(); }

 private:
  VisionConfig config_;
  VisionWeights weights_;
  PlanCache plans_;
};

}  // namespace ltx::gemma3
