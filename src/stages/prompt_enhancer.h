// Prompt enhancement (ltx_core text_encoders/gemma/encoders/base_encoder.py _enhance / enhance_t2v, ltx_pipelines
// utils/helpers.py generate_enhanced_prompt and clean_response): the Gemma 3 that encodes prompts first rewrites
// the user's prompt into the long, detailed caption LTX-2 is trained on. The system prompt and the user's prompt
// are rendered with Gemma 3's chat template and right-padded to a multiple of 8 as _enhance pads them, Gemma
// generates the reply (seeded sampling at temperature 0.7 and top-k 50, or greedy; up to 512 new tokens; until
// <end_of_turn> or <eos>), and the reply is cleaned of curly quotes and leading non-letters.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "models/gemma3/model.h"
#include "models/gemma3/tokenizer.h"

namespace ltx::stages {

struct EnhanceOptions {
  uint64_t seed = 10;  // the pipelines pass the generation's seed
  bool greedy = false;
  int64_t max_new_tokens = 512;
  std::string system_prompt;  // empty: the built-in one (default_enhance_system_prompt)
};

struct EnhanceResult {
  std::string prompt;  // the cleaned reply
  std::string reply;   // as decoded
  int64_t prompt_tokens = 0, new_tokens = 0;
  double prefill_seconds = 0.0, decode_seconds = 0.0;
};

// The system prompt used when none is given: instructions for a detailed, single-paragraph caption of the video
// and its sound, in the spirit of the official one (ltx-core's gemma_t2v_system_prompt.txt, which a user may pass
// instead; it is not shipped here).
const std::string& default_enhance_system_prompt();

// The chat prompt's token ids for a system and a user message, with the generation prompt (Gemma 3's template).
std::vector<int32_t> chat_prompt_ids(const gemma3::Tokenizer& tokenizer, const std::string& system,
                                     const std::string& user);

// helpers.py clean_response: curly quotes, dashes, primes, the minus sign and no-break spaces replaced by ASCII,
// then the characters before the first letter removed (a text without letters is returned whole).
std::string clean_response(const std::string& text);

// What enhance_prompt refuses before any work (an empty prompt, a vocabulary without Gemma's turn tokens, a prompt
// that with max_new_tokens exceeds the context), as one ltx::Error.
void check_enhance_request(const gemma3::Model& model, const gemma3::Tokenizer& tokenizer, const std::string& prompt,
                           const EnhanceOptions& options);

// enhance_t2v: `prompt` rewritten. `on_token` (optional) hears the count of new tokens as they come.
EnhanceResult enhance_prompt(gemma3::Model& model, const gemma3::Tokenizer& tokenizer, const std::string& prompt,
                             const EnhanceOptions& options, const std::function<void(int64_t)>& on_token = {});

}  // namespace ltx::stages
