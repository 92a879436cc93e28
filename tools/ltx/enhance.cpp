// `ltx enhance --prompt TEXT [--image FILE] [--seed S] [--greedy] [--max-new-tokens N] [--system-prompt FILE]
// [--int8-activations] [--text-encoder PATH [--mmproj FILE]]`: the prompt rewritten by Gemma 3 as the official
// pipelines' --enhance-prompt does (stages/prompt_enhancer.h), with an image as enhance_i2v sees it; printed on
// stdout, timings on stderr. Without --text-encoder: the Gemma 3 270M GGUF scripts/setup installs.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "commands.h"
#include "core/cache_dir.h"
#include "core/error.h"
#include "core/int8_activations.h"
#include "models/gemma3/model.h"
#include "models/gemma3/tokenizer.h"
#include "option_values.h"
#include "stages/default_model.h"
#include "stages/prompt_enhancer.h"

namespace ltx::cli {

int enhance(Args args) {
  static const char* const kUsage =
      "usage: ltx enhance --prompt TEXT [--image FILE] [--seed S] [--greedy] [--max-new-tokens N] "
      "[--system-prompt FILE] [--text-encoder GGUF|FOLDER [--mmproj FILE]] [--precision validation|production] "
      "[--int8-activations]";
  std::string prompt, text_encoder, system_file, image, mmproj;
  stages::EnhanceOptions o;
  DType compute = DType::BF16;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string a = args[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= args.size()) usage_error("enhance", a + " needs a value\n" + kUsage);
      return args[++i];
    };
    if (a == "--prompt") {
      prompt = value();
    } else if (a == "--text-encoder") {
      text_encoder = value();
    } else if (a == "--mmproj") {
      mmproj = value();
    } else if (a == "--image") {
      image = value();
    } else if (a == "--system-prompt") {
      system_file = value();
    } else if (a == "--seed") {
      o.seed = unsigned_number("enhance", a, value());
    } else if (a == "--max-new-tokens") {
      o.max_new_tokens = whole_number("enhance", a, value(), 1, 8192);
    } else if (a == "--greedy") {
      o.greedy = true;
    } else if (a == "--int8-activations") {
      set_int8_activations(true);
    } else if (a == "--precision") {
      const std::string p = value();
      if (p != "validation" && p != "production") usage_error("enhance", "--precision is validation or production");
      compute = p == "validation" ? DType::F32 : DType::BF16;
    } else if (a == "--help" || a == "-h") {
      std::printf("%s\n", kUsage);
      return 0;
    } else {
      usage_error("enhance", "unknown option " + a + "\n" + kUsage);
    }
  }
  if (prompt.empty()) usage_error("enhance", std::string("--prompt is required\n") + kUsage);
  if (text_encoder.empty()) text_encoder = stages::find_default_text_encoder();
  if (text_encoder.empty()) throw Error("enhance", stages::default_text_encoder_missing_message());
  if (!system_file.empty()) {
    std::ifstream f(system_file, std::ios::binary);
    if (!f) throw Error("enhance", "--system-prompt " + system_file + " cannot be read", ErrorCategory::Io);
    std::ostringstream text;
    text << f.rdbuf();
    o.system_prompt = text.str();
  }
  if (!mmproj.empty() && !std::filesystem::is_regular_file(mmproj))
    throw Error("enhance", "--mmproj " + mmproj + " does not exist", ErrorCategory::Io);
  // Before any model is read: the image, and the vision tower that will see it (the mmproj file given, else a
  // Hugging Face folder's own).
  std::optional<gemma3::VisionTower> vision;
  if (!image.empty()) {
    o.image = io::read_image(image);
    const std::string tower = !mmproj.empty()                                        ? mmproj
                              : gemma3::VisionTower::folder_has_vision(text_encoder) ? text_encoder
                                                                                     : "";
    if (tower.empty()) throw Error("enhance", stages::no_vision_tower_message(text_encoder));
    vision = gemma3::VisionTower::load(tower, compute, cpu_backend());
  }
  gemma3::VisionTower* tower = vision ? &*vision : nullptr;
  const gemma3::Tokenizer tokenizer = gemma3::Tokenizer::load(text_encoder);
  gemma3::Model model = gemma3::Model::load(text_encoder, compute, cpu_backend(), prepared_cache_dir());
  stages::check_enhance_request(model, tokenizer, prompt, o, tower);
  const stages::EnhanceResult r = stages::enhance_prompt(model, tokenizer, prompt, o, {}, tower);
  std::printf("%s\n", r.prompt.c_str());
  if (o.image) std::fprintf(stderr, "image seen in %.2f s\n", r.image_seconds);
  std::fprintf(stderr, "prompt %lld tokens in %.2f s (%.1f tokens/s), %lld new tokens in %.2f s (%.1f tokens/s)\n",
               static_cast<long long>(r.prompt_tokens), r.prefill_seconds, r.prompt_tokens / r.prefill_seconds,
               static_cast<long long>(r.new_tokens), r.decode_seconds, r.new_tokens / r.decode_seconds);
  return 0;
}

}  // namespace ltx::cli
