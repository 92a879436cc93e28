// Gemma 3's image path beside its goldens (tests/golden/text/gemma3_vision and _image_generation compare the values
// with transformers): an mmproj GGUF of the golden's weights, in the modern and the early converter's naming, gives
// the Hugging Face checkpoint's features; text-only configs are refused by name; the chat prompt holds the image
// block as Gemma3Processor expands it; enhancement with an image runs through a vision tower on the real 270M text
// model, reproducibly, and is refused without one.
#include "models/gemma3/vision.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "gemma_paths.h"
#include "io/safetensors.h"
#include "mmproj_file.h"
#include "models/gemma3/generation.h"
#include "models/gemma3/image_preprocess.h"
#include "models/gemma3/tokenizer.h"
#include "stages/prompt_enhancer.h"

namespace ltx::gemma3 {
namespace {

namespace fs = std::filesystem;

const std::string kGolden = std::string(LTX_SOURCE_DIR) + "/tests/golden/text/";

fs::path temp_file(const std::string& name) {
  return fs::temp_directory_path() / ("ltx_vision_" + std::to_string(::getpid()) + "_" + name);
}

float max_abs_diff(const Tensor& a, const Tensor& b) {
  const std::vector<float> x = a.to_floats(), y = b.to_floats();
  EXPECT_EQ(x.size(), y.size());
  float worst = 0.0f;
  for (size_t i = 0; i < std::min(x.size(), y.size()); ++i) worst = std::max(worst, std::abs(x[i] - y[i]));
  return worst;
}

TEST(Gemma3Vision, MmprojFilesGiveTheCheckpointsFeatures) {
  const std::string dir = kGolden + "gemma3_vision/";
  VisionTower hf = VisionTower::load(dir + "weights.safetensors", DType::F32, cpu_backend());
  const SafetensorsFile weights = SafetensorsFile::open(dir + "weights.safetensors");
  const Tensor pixels = SafetensorsFile::open(dir + "inputs.safetensors").get("pixel_values");
  const VisionOutput want = hf.run(pixels);
  for (const bool legacy : {false, true}) {
    const fs::path path = temp_file(legacy ? "legacy.gguf" : "modern.gguf");
    testing::write_mmproj(
        path.string(), {}, [&](const std::string& name, const Shape&) { return weights.get(name).to_floats(); },
        legacy);
    VisionTower gguf = VisionTower::load(path.string(), DType::F32, cpu_backend());
    EXPECT_EQ(gguf.config().mm_tokens_per_image, 9);
    const VisionOutput got = gguf.run(pixels);
    EXPECT_LT(max_abs_diff(got.hidden, want.hidden), 1e-5f) << (legacy ? "legacy" : "modern");
    EXPECT_LT(max_abs_diff(got.features, want.features), 1e-5f) << (legacy ? "legacy" : "modern");
    fs::remove(path);
  }
}

TEST(Gemma3Vision, TextOnlyConfigsAreRefused) {
  EXPECT_TRUE(VisionTower::folder_has_vision(kGolden + "gemma3_vision"));
  EXPECT_FALSE(VisionTower::folder_has_vision(kGolden + "gemma3_text"));
  EXPECT_FALSE(VisionConfig::from_hf_file(kGolden + "gemma3_text/config.json").has_value());
  try {
    VisionTower::load(kGolden + "gemma3_text/weights.safetensors", DType::F32, cpu_backend());
    FAIL() << "a text-only checkpoint loaded a vision tower";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no vision_config"), std::string::npos) << e.what();
  }
}

TEST(Gemma3Vision, PixelsOfTheWrongSizeAreRefused) {
  VisionTower tower = VisionTower::load(kGolden + "gemma3_vision/weights.safetensors", DType::F32, cpu_backend());
  EXPECT_THROW(tower.run(Tensor::empty(DType::F32, {1, 3, 56, 56})), Error);
}

TEST(Gemma3Vision, ResizeMathsTruncateAsPython) {
  // 720x1280 to a long side of 896: int(720 * 0.7) = 503 (504 in exact arithmetic), media_io.py's quirk.
  io::RgbImage image{720, 1280, std::vector<uint8_t>(720 * 1280 * 3, 100)};
  const io::RgbImage r = resize_long_side(image, 896);
  EXPECT_EQ(r.height, 503);
  EXPECT_EQ(r.width, 896);
  EXPECT_TRUE(std::all_of(r.rgb.begin(), r.rgb.end(), [](uint8_t v) { return v == 100; }));
}

stages::ImageBlock block_of(int64_t tokens) { return {255999, 262144, 256000, tokens}; }

TEST(Gemma3Vision, ChatPromptHoldsTheImageBlock) {
  if (testing::real_gguf_path().empty()) GTEST_SKIP() << testing::kSkipNoGguf;
  const Tokenizer tok = Tokenizer::from_gguf(testing::real_gguf_path());
  EXPECT_EQ(tok.find("<start_of_image>"), 255999);
  EXPECT_EQ(tok.find("<end_of_image>"), 256000);
  const stages::ImageBlock block = block_of(256);
  const std::vector<int32_t> ids = stages::chat_prompt_ids(tok, "System.", "User Raw Input Prompt: a fox.", &block);
  const auto begin = std::find(ids.begin(), ids.end(), 255999) - ids.begin();
  ASSERT_LT(begin + 257, static_cast<std::ptrdiff_t>(ids.size()));
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 262144), 256);
  EXPECT_EQ(ids[static_cast<size_t>(begin + 257)], 256000);
  // The system text's blank line and the block's own "\n\n" are one run of four newlines, one token; "\n\n" after.
  EXPECT_EQ(ids[static_cast<size_t>(begin - 1)], tok.encode("\n\n\n\n").at(0));
  EXPECT_EQ(tok.encode("\n\n\n\n").size(), 1u);
  EXPECT_EQ(ids[static_cast<size_t>(begin + 258)], tok.encode("\n\n").at(0));
  // Everything before the block is the text-only prompt's start: <bos> twice, the turn, the system text.
  const std::vector<int32_t> text = stages::chat_prompt_ids(tok, "System.", "x");
  EXPECT_EQ(std::vector<int32_t>(ids.begin(), ids.begin() + 4), std::vector<int32_t>(text.begin(), text.begin() + 4));
  EXPECT_EQ(ids[0], 2);
  EXPECT_EQ(ids[1], 2);
}

// The real 270M text model with a random vision tower projecting to its width (640), 2x2 image tokens (the tower's
// mmproj file is written, loaded and removed).
struct Real270mWithTower {
  static VisionTower tiny_tower() {
    const fs::path path = temp_file("270m.gguf");
    testing::write_mmproj(path.string(), {.image = 56, .text = 640}, testing::seeded_values);
    VisionTower tower = VisionTower::load(path.string(), DType::BF16, cpu_backend());
    fs::remove(path);
    return tower;
  }
  const Tokenizer tok = Tokenizer::from_gguf(testing::real_gguf_path());
  Model model = Model::from_gguf(testing::real_gguf_path(), DType::BF16, cpu_backend());
  VisionTower tower = tiny_tower();
};

io::RgbImage gradient(int64_t h, int64_t w, int shift) {
  io::RgbImage image{h, w, std::vector<uint8_t>(static_cast<size_t>(h * w * 3))};
  for (int64_t i = 0; i < h * w * 3; ++i)
    image.rgb[static_cast<size_t>(i)] = static_cast<uint8_t>((i * 7 + shift) % 256);
  return image;
}

TEST(Gemma3Vision, EnhancesWithAnImageThroughAVisionTower) {
  if (testing::real_gguf_path().empty()) GTEST_SKIP() << testing::kSkipNoGguf;
  Real270mWithTower real;
  const Tokenizer& tok = real.tok;
  Model& model = real.model;
  VisionTower& tower = real.tower;
  stages::EnhanceOptions o;
  o.greedy = true;
  o.max_new_tokens = 6;
  o.image = gradient(40, 60, 0);
  // Without a tower the image is refused, naming the remedies.
  try {
    stages::check_enhance_request(model, tok, "a fox", o, nullptr);
    FAIL() << "an image was accepted without a vision tower";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no vision tower"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--mmproj"), std::string::npos) << e.what();
  }
  const stages::EnhanceResult a = stages::enhance_prompt(model, tok, "a fox", o, {}, &tower);
  const stages::EnhanceResult b = stages::enhance_prompt(model, tok, "a fox", o, {}, &tower);
  EXPECT_EQ(a.reply, b.reply);
  EXPECT_GE(a.new_tokens, 1);
  const std::vector<int32_t> text_only =
      stages::chat_prompt_ids(tok, stages::default_enhance_image_system_prompt(), "User Raw Input Prompt: a fox.");
  // The image adds its block: "\n\n" <boi> 4 soft tokens <eoi> "\n\n" (the newlines merge with their neighbours).
  EXPECT_GE(a.prompt_tokens, static_cast<int64_t>(text_only.size()) + 6);
  EXPECT_EQ(a.prompt_tokens % 8, 0);
}

TEST(Gemma3Vision, TheImageReachesTheLogits) {
  if (testing::real_gguf_path().empty()) GTEST_SKIP() << testing::kSkipNoGguf;
  Real270mWithTower real;
  const Tokenizer& tok = real.tok;
  Model& model = real.model;
  VisionTower& tower = real.tower;
  const stages::ImageBlock block = block_of(4);
  const std::vector<int32_t> ids = stages::chat_prompt_ids(tok, "Describe.", "User Raw Input Prompt: a fox.", &block);
  std::vector<std::vector<float>> logits;
  for (const int shift : {0, 90}) {
    PromptTokens p = right_padded_prompt(ids, 8, 0);
    const Tensor f = tower.run(enhance_image_pixels(gradient(40, 60, shift), 896, 56)).features;
    attach_image_features(p, 262144, f.reshape({4, 640}));
    KvCache cache = model.new_cache(static_cast<int64_t>(p.ids.size()) + 1);
    logits.push_back(model.extend(cache, p.ids, p.positions, p.valid, &p.images));
  }
  EXPECT_NE(logits[0], logits[1]);
}

}  // namespace
}  // namespace ltx::gemma3
