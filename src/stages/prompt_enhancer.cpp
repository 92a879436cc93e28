#include "stages/prompt_enhancer.h"

#include <array>
#include <string_view>
#include <utility>

#include "core/error.h"
#include "core/unicode_letters.h"
#include "models/gemma3/generation.h"

namespace ltx::stages {
namespace {

// What ltx-core's _enhance samples with: temperature 0.7 and transformers' defaults for the rest, top-k 50 and no
// top-p (the model is built from a config, so no generation_config.json applies).
constexpr float kTemperature = 0.7f;
constexpr int64_t kTopK = 50;
// base_encoder.py _pad_inputs_for_attention_alignment: the prompt right-padded to a multiple of this.
constexpr int64_t kAlignment = 8;

}  // namespace

const std::string& default_enhance_system_prompt() {
  static const std::string prompt =
      "You are a prompt writer for a text-to-video model that also generates the soundtrack. Rewrite the user's "
      "prompt as one detailed paragraph of plain prose, in the present tense, that describes the video as it "
      "plays: the main subject and its appearance, what it does from start to end, the setting, the light and "
      "the colours, the camera's framing and movement, and the sounds heard (voices, ambience, music, effects), "
      "with any dialogue in quotation marks. Keep every element the user asked for and do not contradict it; "
      "add only details that fit it. Write about 150 to 200 words. Reply with the paragraph alone: no title, no "
      "preamble, no lists, no notes.";
  return prompt;
}

std::vector<int32_t> chat_prompt_ids(const gemma3::Tokenizer& tokenizer, const std::string& system,
                                     const std::string& user) {
  // Gemma 3's chat template: no system turn, the system text (untrimmed) and a blank line open the first user turn,
  // the user's text trimmed, then the model's turn begins. The rendered text starts with a literal <bos> and the
  // tokenizer adds its own (add_bos_token), so the ids start with two.
  const std::string_view text = gemma3::strip_unicode_whitespace(user);
  const std::string chat =
      "<bos><start_of_turn>user\n" + system + "\n\n" + std::string(text) + "<end_of_turn>\n<start_of_turn>model\n";
  std::vector<int32_t> ids{tokenizer.bos_id()};
  const std::vector<int32_t> rest = tokenizer.encode(chat);
  ids.insert(ids.end(), rest.begin(), rest.end());
  return ids;
}

std::string clean_response(const std::string& text) {
  // helpers.py _UNICODE_REPLACEMENTS, then everything before the first letter dropped (unless there is none).
  static const std::array<std::pair<std::string_view, std::string_view>, 9> kReplacements = {{
      {"\u2018", "'"},
      {"\u2019", "'"},
      {"\u201C", "\""},
      {"\u201D", "\""},
      {"\u2014", "-"},
      {"\u2013", "-"},
      {"\u00A0", " "},
      {"\u2032", "'"},
      {"\u2212", "-"},
  }};
  std::string out;
  for (size_t i = 0; i < text.size();) {
    bool replaced = false;
    for (const auto& [from, to] : kReplacements)
      if (text.compare(i, from.size(), from) == 0) {
        out += to;
        i += from.size();
        replaced = true;
        break;
      }
    if (!replaced) out.push_back(text[i++]);
  }
  for (size_t i = 0; i < out.size();) {
    const auto [c, n] = utf8_code_point(out, i);
    if (is_unicode_letter(c)) return out.substr(i);
    i += n;
  }
  return out;
}

namespace {

// The chat prompt's tokens for `prompt`, padded as _enhance pads them; throws when they cannot be generated from.
gemma3::PromptTokens enhance_tokens(const gemma3::Model& model, const gemma3::Tokenizer& tokenizer,
                                    const std::string& prompt, const EnhanceOptions& options) {
  LTX_CHECK(!gemma3::strip_unicode_whitespace(prompt).empty(), "enhance", "the prompt to enhance is empty");
  LTX_CHECK(options.max_new_tokens >= 1, "enhance", "max_new_tokens must be at least 1, got ", options.max_new_tokens);
  for (const char* token : {"<start_of_turn>", "<end_of_turn>"})
    LTX_CHECK(tokenizer.find(token) >= 0, "enhance", "the text encoder's vocabulary has no ", token,
              ": it is not a Gemma 3 chat model, whose turns prompt enhancement writes");
  const std::string& system = options.system_prompt.empty() ? default_enhance_system_prompt() : options.system_prompt;
  const std::vector<int32_t> ids = chat_prompt_ids(tokenizer, system, "user prompt: " + prompt);
  gemma3::PromptTokens tokens = gemma3::right_padded_prompt(ids, kAlignment, tokenizer.pad_id());
  const int64_t context = model.config().context_length;
  LTX_CHECK(static_cast<int64_t>(tokens.ids.size()) + options.max_new_tokens <= context, "enhance", "the prompt is ",
            tokens.ids.size(), " tokens with the system prompt and alignment; with up to ", options.max_new_tokens,
            " new tokens that exceeds the text encoder's context of ", context, " tokens: shorten it");
  return tokens;
}

}  // namespace

void check_enhance_request(const gemma3::Model& model, const gemma3::Tokenizer& tokenizer, const std::string& prompt,
                           const EnhanceOptions& options) {
  enhance_tokens(model, tokenizer, prompt, options);
}

EnhanceResult enhance_prompt(gemma3::Model& model, const gemma3::Tokenizer& tokenizer, const std::string& prompt,
                             const EnhanceOptions& options, const std::function<void(int64_t)>& on_token) {
  const gemma3::PromptTokens tokens = enhance_tokens(model, tokenizer, prompt, options);
  gemma3::GenerationOptions g;
  g.sampling = {.greedy = options.greedy, .temperature = kTemperature, .top_k = kTopK};
  g.seed = options.seed;
  g.max_new_tokens = options.max_new_tokens;
  g.stop_ids = {tokenizer.eos_id()};  // Gemma 3's generation eos: <eos> and <end_of_turn>
  if (const int32_t end_of_turn = tokenizer.find("<end_of_turn>"); end_of_turn >= 0) g.stop_ids.push_back(end_of_turn);
  int64_t count = 0;
  const gemma3::GenerationResult r = gemma3::generate(model, tokens, g, [&](int32_t) {
    if (on_token) on_token(++count);
  });
  EnhanceResult out;
  out.reply = tokenizer.decode(r.tokens, true);
  out.prompt = clean_response(out.reply);
  out.prompt_tokens = static_cast<int64_t>(tokens.ids.size());
  out.new_tokens = static_cast<int64_t>(r.tokens.size());
  out.prefill_seconds = r.prefill_seconds;
  out.decode_seconds = r.decode_seconds;
  return out;
}

}  // namespace ltx::stages
