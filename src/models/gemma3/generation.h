// Gemma 3 as a generator (transformers generation/utils.py GenerationMixin._sample over Gemma3ForCausalLM): one
// prefill of the prompt into a KV cache (Model::extend), then one token per step, each chosen by a TokenSampler
// (pipeline/token_sampling.h), until a stop token or max_new_tokens.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "models/gemma3/model.h"
#include "pipeline/token_sampling.h"

namespace ltx::gemma3 {

struct GenerationOptions {
  SamplingOptions sampling;
  uint64_t seed = 0;
  int64_t max_new_tokens = 512;
  std::vector<int32_t> stop_ids;  // generation ends after any of these (it is returned too)
};

// The prompt as the model sees it: tokens with their RoPE positions and whether each may be attended to (a pad the
// caller appends for alignment stays in the cache, masked), and the position of the first generated token.
struct PromptTokens {
  std::vector<int64_t> ids, positions, valid;
  int64_t next_position = 0;
  ImageEmbeddings images;  // the prompt's image features (none when `images.features` is undefined)
};

// transformers 4.57's generate on a right-padded prompt (the version ltx-core 1.0.0's lock pins;
// generation/utils.py prepare_inputs_for_generation): real tokens at 0, 1, ..., pads at position 1, generated tokens
// from the count of real tokens on. Right-pads `ids` with `pad_id` to a multiple of `align` (1: none).
PromptTokens right_padded_prompt(const std::vector<int32_t>& ids, int64_t align, int32_t pad_id);

// Image features into a prompt: the tokens with id `soft_token` take `features`' rows [soft tokens, hidden] in order,
// each run of consecutive soft tokens being one image (Gemma3Model.forward's masked_scatter, image_group_ids).
void attach_image_features(PromptTokens& prompt, int64_t soft_token, Tensor features);

struct GenerationResult {
  std::vector<int32_t> tokens;  // the new tokens, a final stop token included
  bool stopped = false;         // ended on a stop token (else on max_new_tokens)
  double prefill_seconds = 0.0, decode_seconds = 0.0;
};

// `on_token` (optional) hears each new token as it is chosen; whatever it throws ends the generation. The first new
// token comes from the logits of the prompt's last slot (a pad when padded, as transformers samples it), and the new
// tokens take the positions from prompt.next_position on.
GenerationResult generate(Model& model, const PromptTokens& prompt, const GenerationOptions& options,
                          const std::function<void(int32_t)>& on_token = {});

}  // namespace ltx::gemma3
