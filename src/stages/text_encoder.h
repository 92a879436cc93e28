// Prompt -> DiT text contexts (ltx_core/text_encoders/gemma: tokenizer.py, encoder, feature_extractor.py,
// embeddings_connector.py, embeddings_processor.py): Gemma-3 tokens (stripped, one <bos>, left-padded to 1024),
// all hidden states, the feature extractor from `text_embedding_projection.*` and the video / audio embeddings
// connectors from the checkpoint, whose registers fill the padded positions.
#pragma once

#include <memory>
#include <string>

#include "io/json.h"
#include "models/gemma3/model.h"
#include "models/gemma3/tokenizer.h"
#include "models/ltx/text_conditioning.h"
#include "nn/weight_source.h"

namespace ltx::stages {

struct PromptContexts {
  Tensor video, audio;                // [1, max_length, Dv], [1, max_length, Da]
  std::vector<Tensor> hidden_states;  // Gemma's, [1, max_length, D] each; only when asked for
};

class PromptEncoder {
 public:
  // gemma_path: a Gemma-3 GGUF file or Hugging Face folder; checkpoint: the LTX single file whose `config`
  // ("transformer" dict) configures the feature extractor and connectors.
  static std::unique_ptr<PromptEncoder> load(const std::string& gemma_path,
                                             const std::shared_ptr<const WeightSource>& checkpoint,
                                             const Json& transformer_config, DType compute, int64_t max_length = 1024);
  PromptContexts encode(const std::string& prompt, bool keep_hidden_states = false);

 private:
  PromptEncoder(gemma3::Tokenizer tokenizer, gemma3::Model model)
      : tokenizer_(std::move(tokenizer)), model_(std::move(model)) {}
  gemma3::Tokenizer tokenizer_;
  gemma3::Model model_;
  ltxm::FeatureExtractor features_;
  std::unique_ptr<ltxm::EmbeddingsConnector> video_, audio_;
  int64_t max_length_ = 1024;
};

}  // namespace ltx::stages
