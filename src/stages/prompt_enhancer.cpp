#include "stages/prompt_enhancer.h"

#include <array>
#include <chrono>
#include <string_view>
#include <utility>

#include "core/error.h"
#include "core/unicode_letters.h"
#include "models/gemma3/generation.h"
#include "models/gemma3/image_preprocess.h"

namespace ltx::stages {
namespace {

// What ltx-core's _enhance samples with: temperature 0.7 and transformers' defaults for the rest, top-k 50 and no
// top-p (the model is built from a config, so no generation_config.json applies).
constexpr float kTemperature = 0.7f;
constexpr int64_t kTopK = 50;
// base_encoder.py _pad_inputs_for_attention_alignment: the prompt right-padded to a multiple of this.
constexpr int64_t kAlignment = 8;
// helpers.py generate_enhanced_prompt's image_long_side: the image is first resized to this long side.
constexpr int64_t kImageLongSide = 896;

}  // namespace

// Our own instructions, not the official files' (ltx-core's gemma_t2v_system_prompt.txt and
// gemma_i2v_system_prompt.txt, which a user may pass with --system-prompt): the same kind of caption asked for, with
// one worked example. The example is what makes a small base model answer in sentences: with the instructions alone,
// the 270M model setup installs answered every prompt greedily with a column of "." lines
// (tests/gemma3/generation_test.cpp holds this).
const std::string& default_enhance_system_prompt() {
  static const std::string prompt =
      "You are a prompt writer for a text-to-video model that also generates the soundtrack. Rewrite the user's "
      "prompt as one detailed paragraph of plain prose, in the present tense, that describes the video as it "
      "plays: the main subject and its appearance, what it does from start to end, the setting, the light and "
      "the colours, the camera's framing and movement, and the sounds heard (voices, ambience, music, effects), "
      "with any dialogue in quotation marks. Keep every element the user asked for and add only details that fit "
      "it. Reply with the paragraph alone: no title, no preamble, no lists.\n\n"
      "For example, for the user prompt \"a boat on a lake\", a good reply is:\n"
      "A small wooden rowing boat drifts slowly across a calm lake in the early morning. Mist hangs low over the "
      "dark water and pine trees line the far shore under a pale sky. The camera watches from the bank in a wide, "
      "steady shot as the boat turns gently with the current. Water laps softly against the hull, a bird calls "
      "once in the distance, and the oars creak in their locks.";
  return prompt;
}

const std::string& default_enhance_image_system_prompt() {
  static const std::string prompt =
      "You are a prompt writer for an image-to-video model that also generates the soundtrack. The image is the "
      "video's first frame. Rewrite the user's prompt as one detailed paragraph of plain prose, in the present "
      "tense, that describes the video as it plays from that frame: the subjects and setting as the image shows "
      "them (do not contradict what is visible), what moves and changes from start to end, the light and the "
      "colours, the camera's framing and movement, and the sounds heard (voices, ambience, music, effects), with "
      "any dialogue in quotation marks. Keep every element the user asked for and add only details that fit the "
      "image and the prompt. Reply with the paragraph alone: no title, no preamble, no lists.\n\n"
      "For example, for an image of a kitchen table with a cup on it and the user prompt \"steam rises\", a good "
      "reply is:\n"
      "A white ceramic cup of hot tea stands on a worn wooden kitchen table beside a window. Thin wisps of steam "
      "rise from the cup and curl slowly in the soft morning light that falls across the table. The camera holds "
      "a close, steady shot at the height of the table. A clock ticks quietly on the wall and a kettle hisses "
      "softly somewhere out of view.";
  return prompt;
}

std::vector<int32_t> chat_prompt_ids(const gemma3::Tokenizer& tokenizer, const std::string& system,
                                     const std::string& user, const ImageBlock* image) {
  // Gemma 3's chat template: no system turn, the system text (untrimmed) and a blank line open the first user turn,
  // the user's text trimmed (after the image's <start_of_image> when there is one), then the model's turn begins.
  // The rendered text starts with a literal <bos> and the tokenizer adds its own (add_bos_token), so the ids start
  // with two. Gemma3Processor then replaces <start_of_image> by "\n\n" <start_of_image> soft tokens <end_of_image>
  // "\n\n"; the tokenizer splits the text at special tokens first, so the text either side is encoded alone.
  const std::string text(gemma3::strip_unicode_whitespace(user));
  const std::string open = "<bos><start_of_turn>user\n" + system + "\n\n";
  const std::string close = "<end_of_turn>\n<start_of_turn>model\n";
  std::vector<int32_t> ids{tokenizer.bos_id()};
  const auto append = [&](const std::vector<int32_t>& more) { ids.insert(ids.end(), more.begin(), more.end()); };
  if (!image) {
    append(tokenizer.encode(open + text + close));
    return ids;
  }
  append(tokenizer.encode(open + "\n\n"));
  ids.push_back(image->begin);
  ids.insert(ids.end(), static_cast<size_t>(image->tokens), image->soft);
  ids.push_back(image->end);
  append(tokenizer.encode("\n\n" + text + close));
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

std::string no_vision_tower_message(const std::string& text_encoder) {
  return "an image was given and the text encoder " + text_encoder +
         " has no vision tower: give its mmproj file (--mmproj, EngineOptions::text_encoder_mmproj) or use a Hugging "
         "Face Gemma 3 folder with one (gemma-3-4b/12b/27b-it), or enhance without the image";
}

namespace {

// The image block of `vision`'s prompts: its token ids, checked against the vocabulary's where it has them.
ImageBlock image_block(const gemma3::Tokenizer& tokenizer, const gemma3::VisionConfig& c) {
  for (const auto& [name, id] : {std::pair<const char*, int32_t>{"<start_of_image>", c.boi_token},
                                 std::pair<const char*, int32_t>{"<end_of_image>", c.eoi_token}}) {
    const int32_t found = tokenizer.find(name);
    LTX_CHECK(found == id, "enhance", "the text encoder's vocabulary has ", name, " at ", found,
              " where its vision tower's config says ", id, ": they are not one model");
  }
  return {c.boi_token, c.image_token, c.eoi_token, c.mm_tokens_per_image};
}

// The chat prompt's tokens for `prompt`, padded as _enhance pads them; throws when they cannot be generated from.
gemma3::PromptTokens enhance_tokens(const gemma3::Model& model, const gemma3::Tokenizer& tokenizer,
                                    const std::string& prompt, const EnhanceOptions& options,
                                    const gemma3::VisionTower* vision) {
  LTX_CHECK(!gemma3::strip_unicode_whitespace(prompt).empty(), "enhance", "the prompt to enhance is empty");
  LTX_CHECK(options.max_new_tokens >= 1, "enhance", "max_new_tokens must be at least 1, got ", options.max_new_tokens);
  for (const char* token : {"<start_of_turn>", "<end_of_turn>"})
    LTX_CHECK(tokenizer.find(token) >= 0, "enhance", "the text encoder's vocabulary has no ", token,
              ": it is not a Gemma 3 chat model, whose turns prompt enhancement writes");
  std::vector<int32_t> ids;
  if (options.image) {
    LTX_CHECK(vision, "enhance", no_vision_tower_message("in use"));
    LTX_CHECK(vision->config().text_hidden_size == model.config().hidden_size, "enhance",
              "the vision tower projects to ", vision->config().text_hidden_size, " and the text model is ",
              model.config().hidden_size, " wide: they are not one model");
    const ImageBlock block = image_block(tokenizer, vision->config());
    const std::string& system =
        options.system_prompt.empty() ? default_enhance_image_system_prompt() : options.system_prompt;
    ids = chat_prompt_ids(tokenizer, system, "User Raw Input Prompt: " + prompt + ".", &block);
  } else {
    const std::string& system = options.system_prompt.empty() ? default_enhance_system_prompt() : options.system_prompt;
    ids = chat_prompt_ids(tokenizer, system, "user prompt: " + prompt);
  }
  gemma3::PromptTokens tokens = gemma3::right_padded_prompt(ids, kAlignment, tokenizer.pad_id());
  const int64_t context = model.config().context_length;
  LTX_CHECK(static_cast<int64_t>(tokens.ids.size()) + options.max_new_tokens <= context, "enhance", "the prompt is ",
            tokens.ids.size(), " tokens with the system prompt and alignment; with up to ", options.max_new_tokens,
            " new tokens that exceeds the text encoder's context of ", context, " tokens: shorten it");
  return tokens;
}

}  // namespace

void check_enhance_request(const gemma3::Model& model, const gemma3::Tokenizer& tokenizer, const std::string& prompt,
                           const EnhanceOptions& options, const gemma3::VisionTower* vision) {
  enhance_tokens(model, tokenizer, prompt, options, vision);
}

EnhanceResult enhance_prompt(gemma3::Model& model, const gemma3::Tokenizer& tokenizer, const std::string& prompt,
                             const EnhanceOptions& options, const std::function<void(int64_t)>& on_token,
                             gemma3::VisionTower* vision) {
  gemma3::PromptTokens tokens = enhance_tokens(model, tokenizer, prompt, options, vision);
  double image_seconds = 0.0;
  if (options.image) {
    const auto t0 = std::chrono::steady_clock::now();
    const gemma3::VisionConfig& c = vision->config();
    const Tensor features =
        vision->run(gemma3::enhance_image_pixels(*options.image, kImageLongSide, c.image_size)).features;
    vision->release_activations();
    gemma3::attach_image_features(tokens, c.image_token, features.reshape({c.mm_tokens_per_image, c.text_hidden_size}));
    image_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
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
  out.image_seconds = image_seconds;
  out.prefill_seconds = r.prefill_seconds;
  out.decode_seconds = r.decode_seconds;
  return out;
}

}  // namespace ltx::stages
