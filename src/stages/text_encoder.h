// Prompt -> DiT text contexts (ltx_core/text_encoders/gemma: tokenizer.py, encoder, feature_extractor.py,
// embeddings_connector.py, embeddings_processor.py): Gemma-3 tokens (stripped, one <bos>, left-padded to 1024),
// all hidden states, the feature extractor from `text_embedding_projection.*` and the video / audio embeddings
// connectors from the checkpoint, whose registers fill the padded positions.
//
// Gemma runs on the real tokens only, at their padded positions (gemma3::Model::forward_real_tokens); the feature
// extractor runs on the last C columns only (C: the longest prompt's real length rounded up to 32): it masks pads
// out of its statistics and output, and the connectors replace every pad column by a register, so the columns
// before C are never read. The connectors then see the full max_length sequence, and the contexts equal the
// reference's all-1024-token computation (tests/pipeline/prompt_encoder_test.cpp). One plan per C, reused.
#pragma once

#include <future>
#include <memory>
#include <optional>
#include <string>

#include "io/json.h"
#include "models/gemma3/model.h"
#include "models/gemma3/tokenizer.h"
#include "models/gemma3/vision.h"
#include "models/ltx/text/text_conditioning.h"
#include "nn/weight_source.h"

namespace ltx::stages {

struct PromptContexts {
  Tensor video, audio;                // [1, max_length, Dv], [1, max_length, Da]
  std::vector<Tensor> hidden_states;  // Gemma's, [1, max_length, D] each, zeros at pad positions; when asked for
};

class PromptEncoder {
 public:
  // gemma_path: a Gemma-3 GGUF file or Hugging Face folder; checkpoint: the LTX single file whose `config`
  // ("transformer" dict) configures the feature extractor and connectors.
  // `cache_dir` (empty: none): where a GGUF's decoded layer matrices are kept between processes
  // (gemma3/decoded_cache.h). Every plan runs on `backend`.
  static std::unique_ptr<PromptEncoder> load(const std::string& gemma_path,
                                             const std::shared_ptr<const WeightSource>& checkpoint,
                                             const Json& transformer_config, DType compute, const Backend& backend,
                                             const std::string& cache_dir = "", int64_t max_length = 1024);
  // The same with the tokenizer already being built (start_tokenizer(gemma_path)): a caller with other loads to
  // do starts it first, so that they overlap it.
  static std::unique_ptr<PromptEncoder> load(const std::string& gemma_path, std::future<gemma3::Tokenizer> tokenizer,
                                             const std::shared_ptr<const WeightSource>& checkpoint,
                                             const Json& transformer_config, DType compute, const Backend& backend,
                                             const std::string& cache_dir = "", int64_t max_length = 1024);
  // Builds gemma_path's tokenizer on a thread of its own (~0.03 s for a 262k GGUF vocabulary, the longest part of
  // a first load); an error is thrown by the future's get().
  static std::future<gemma3::Tokenizer> start_tokenizer(const std::string& gemma_path);
  // Without a tokenizer: for callers holding token ids (tests); encode() then throws. Runs on the model's backend.
  static std::unique_ptr<PromptEncoder> from_model(gemma3::Model model,
                                                   const std::shared_ptr<const WeightSource>& checkpoint,
                                                   const Json& transformer_config, DType compute,
                                                   int64_t max_length = 1024);

  PromptContexts encode(const std::string& prompt, bool keep_hidden_states = false);
  // Several prompts as one batch (one tokenizer batch, one Gemma pass over all real tokens): row i of each
  // context is prompt i's.
  PromptContexts encode(const std::vector<std::string>& prompts, bool keep_hidden_states = false);
  // ids, mask: [B, max_length], left-padded (the tokenizer's batch). real_tokens = false runs Gemma over every
  // position as the reference does (pad rows then hold Gemma's outputs instead of zeros); tests compare the two.
  PromptContexts encode_ids(const Tensor& ids, const Tensor& mask, bool keep_hidden_states = false,
                            bool real_tokens = true);

  int64_t max_length() const { return max_length_; }
  const gemma3::Model& model() const { return model_; }
  gemma3::Model& model() { return model_; }  // the generator's too (stages/prompt_enhancer.h)
  // The tokenizer; throws for an encoder made from_model.
  const gemma3::Tokenizer& tokenizer() const {
    LTX_CHECK(tokenizer_.has_value(), "text encoder", "this text encoder was made without a tokenizer");
    return *tokenizer_;
  }
  // How Gemma's calls hold its mapped weights (graph/weight_streaming.h); nullopt leaves them to the OS.
  void set_weight_streaming(const std::optional<StreamingPolicy>& policy) { model_.set_weight_streaming(policy); }
  // Gemma's and the connectors' activation memory back to the OS until the next encode.
  void release_activations() const {
    model_.release_activations();
    plans_.release_arena_pages();
  }
  const PlanCache& plans() const { return plans_; }  // the feature extractor + connectors plans

  // Gemma's vision tower (prompt enhancement with an image): a Hugging Face folder's own, found at load, or an
  // mmproj GGUF given for a GGUF text encoder (set_vision_file). Loaded on first use and kept; null when there is
  // none.
  gemma3::VisionTower* vision();
  const std::string& vision_file() const { return vision_file_; }  // empty: none
  void set_vision_file(const std::string& path) { vision_file_ = path; }

 private:
  PromptEncoder(std::optional<gemma3::Tokenizer> tokenizer, gemma3::Model model)
      : tokenizer_(std::move(tokenizer)), model_(std::move(model)), plans_(model_.plans().backend()) {}
  void load_conditioning(const std::shared_ptr<const WeightSource>& checkpoint, const Json& tc, DType compute);
  // The hidden states [B, T', D] (L of them) written into the last T' columns of `stacked` [B, C, L, D], the
  // feature extractor plan's input slot (so its plan concatenates nothing, and no buffer outside the plan holds
  // them), zeros before: C = T' rounded up to kColumnBucket (at most max_length): the connectors replace every pad
  // column by a register, so features are computed for the columns that can hold real tokens only, and nearby
  // lengths share one plan.
  static void stack_states(const std::vector<Tensor>& states, const Tensor& stacked);
  static constexpr int64_t kColumnBucket = 32;

  std::optional<gemma3::Tokenizer> tokenizer_;
  gemma3::Model model_;
  DType compute_ = DType::BF16;
  std::string vision_file_;
  std::unique_ptr<gemma3::VisionTower> vision_;
  ltxm::FeatureExtractor features_;
  std::unique_ptr<ltxm::EmbeddingsConnector> video_, audio_;
  int64_t max_length_ = 1024;
  PlanCache plans_;
};

}  // namespace ltx::stages
