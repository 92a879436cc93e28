// Prompt enhancement (ltx_core text_encoders/gemma/encoders/base_encoder.py _enhance / enhance_t2v, ltx_pipelines
// utils/helpers.py generate_enhanced_prompt and clean_response): the Gemma 3 that encodes prompts first rewrites
// the user's prompt into the long, detailed caption LTX-2 is trained on. The system prompt and the user's prompt
// are rendered with Gemma 3's chat template and right-padded to a multiple of 8 as _enhance pads them, Gemma
// generates the reply (seeded sampling at temperature 0.7 and top-k 50, or greedy; up to 512 new tokens; until
// <end_of_turn> or <eos>), and the reply is cleaned of curly quotes and leading non-letters. With an image
// (enhance_i2v), Gemma first sees it through its vision tower: the image resized as generate_enhanced_prompt and
// Gemma3Processor resize it (gemma3/image_preprocess.h), its features in the user's turn.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "io/image_read.h"
#include "models/gemma3/model.h"
#include "models/gemma3/tokenizer.h"
#include "models/gemma3/vision.h"

namespace ltx::stages {

struct EnhanceOptions {
  uint64_t seed = 10;  // the pipelines pass the generation's seed
  bool greedy = false;
  int64_t max_new_tokens = 512;
  std::string system_prompt;  // empty: the built-in one (default_enhance_system_prompt or its image form)
  // enhance_i2v: the first conditioning image, shown to Gemma through its vision tower (decoded RGB, any size).
  std::optional<io::RgbImage> image;
};

struct EnhanceResult {
  std::string prompt;  // the cleaned reply
  std::string reply;   // as decoded
  int64_t prompt_tokens = 0, new_tokens = 0;
  double image_seconds = 0.0, prefill_seconds = 0.0, decode_seconds = 0.0;
};

// The system prompt used when none is given: instructions for a detailed, single-paragraph caption of the video
// and its sound, in the spirit of the official one (ltx-core's gemma_t2v_system_prompt.txt, which a user may pass
// instead; it is not shipped here).
const std::string& default_enhance_system_prompt();
// The same for a prompt that comes with its first frame (ltx-core's gemma_i2v_system_prompt.txt plays this part).
const std::string& default_enhance_image_system_prompt();

// An image in a chat prompt: Gemma3Processor's block "\n\n" <start_of_image> soft tokens <end_of_image> "\n\n".
struct ImageBlock {
  int32_t begin = 0, soft = 0, end = 0;  // <start_of_image>, <image_soft_token>, <end_of_image>
  int64_t tokens = 0;                    // soft tokens per image
};

// The chat prompt's token ids for a system and a user message, with the generation prompt (Gemma 3's template);
// with `image`, the user's turn opens with the image's block (enhance_i2v's content [image, text]).
std::vector<int32_t> chat_prompt_ids(const gemma3::Tokenizer& tokenizer, const std::string& system,
                                     const std::string& user, const ImageBlock* image = nullptr);

// helpers.py clean_response: curly quotes, dashes, primes, the minus sign and no-break spaces replaced by ASCII,
// then the characters before the first letter removed (a text without letters is returned whole).
std::string clean_response(const std::string& text);

// What enhance_prompt refuses before any work (an empty prompt, a vocabulary without Gemma's turn tokens, a prompt
// that with max_new_tokens exceeds the context), as one ltx::Error.
// The refusal of an image for a text encoder without a vision tower (`text_encoder`: its path), naming the remedies.
std::string no_vision_tower_message(const std::string& text_encoder);

// An image needs `vision` (the text encoder's vision tower; null: it has none).
void check_enhance_request(const gemma3::Model& model, const gemma3::Tokenizer& tokenizer, const std::string& prompt,
                           const EnhanceOptions& options, const gemma3::VisionTower* vision = nullptr);

// enhance_t2v, or enhance_i2v with options.image (seen through `vision`): `prompt` rewritten. `on_token` (optional)
// hears the count of new tokens as they come.
EnhanceResult enhance_prompt(gemma3::Model& model, const gemma3::Tokenizer& tokenizer, const std::string& prompt,
                             const EnhanceOptions& options, const std::function<void(int64_t)>& on_token = {},
                             gemma3::VisionTower* vision = nullptr);

}  // namespace ltx::stages
