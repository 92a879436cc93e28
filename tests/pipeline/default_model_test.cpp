// The embedded default model (stages/default_model.*): the file the engine writes into the cache folder is the one
// linked into the binary, it is the model tools/world/train.py exports (its metadata and config), a damaged cache
// file is replaced, and a text encoder the model was not trained with is refused. That the model follows its prompt
// is tests/world/test_adherence.py.
#include "stages/default_model.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "../cli/scoped_env.h"
#include "core/error.h"
#include "nn/weight_source.h"
#include "pipeline/tiny_generate.h"

namespace ltx::stages {
namespace {

namespace fs = std::filesystem;

std::vector<char> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

bool same_bytes(const fs::path& path, std::span<const uint8_t> bytes) {
  const std::vector<char> content = read_file(path);
  return content.size() == bytes.size() && std::memcmp(content.data(), bytes.data(), bytes.size()) == 0;
}

TEST(DefaultModel, CacheFileIsTheEmbeddedFileAndADamagedOneIsReplaced) {
  const fs::path dir = test::fresh_temp_dir("default_model", "cache");
  const ScopedEnv cache("LTX_CACHE_DIR", dir.string());
  const DefaultModelFile first = ensure_default_model(kDefaultGemmaHidden, kDefaultGemmaStates);
  EXPECT_TRUE(first.made);
  EXPECT_EQ(fs::path(first.path).filename(),
            "ltx-world-default-v" + std::to_string(kDefaultModelVersion) + ".safetensors");
  EXPECT_GT(embedded_default_checkpoint().size(), 1u << 20);  // a trained model, not an empty placeholder
  EXPECT_TRUE(same_bytes(first.path, embedded_default_checkpoint()));
  EXPECT_FALSE(ensure_default_model(kDefaultGemmaHidden, kDefaultGemmaStates).made);  // found in the cache

  {  // one byte changed in the middle: rewritten
    std::fstream f(first.path, std::ios::binary | std::ios::in | std::ios::out);
    f.seekp(static_cast<std::streamoff>(embedded_default_checkpoint().size() / 2));
    f.put(static_cast<char>(embedded_default_checkpoint()[embedded_default_checkpoint().size() / 2] ^ 0x5a));
  }
  EXPECT_TRUE(ensure_default_model(kDefaultGemmaHidden, kDefaultGemmaStates).made);
  EXPECT_TRUE(same_bytes(first.path, embedded_default_checkpoint()));
  fs::remove_all(dir);
}

TEST(DefaultModel, IsTheWorldModelTrainedByToolsWorld) {
  const fs::path dir = test::fresh_temp_dir("default_model", "metadata");
  const ScopedEnv cache("LTX_CACHE_DIR", dir.string());
  const auto source = open_safetensors(ensure_default_model(kDefaultGemmaHidden, kDefaultGemmaStates).path);
  EXPECT_EQ(source->metadata().at("ltx_default_model"), "world");
  EXPECT_EQ(source->metadata().at("model_version"), "2.3.0");
  const std::vector<char> config_text = read_file(fs::path(LTX_SOURCE_DIR) / "tools/world/model_config.json");
  EXPECT_EQ(metadata_json(*source, "config"), Json::parse(config_text.begin(), config_text.end()));
  // Its text projection takes the 270M's 19 hidden states of width 640.
  const Shape projection = source->shape("text_embedding_projection.video_aggregate_embed.weight");
  EXPECT_EQ(projection[1], kDefaultGemmaHidden * kDefaultGemmaStates);
  fs::remove_all(dir);
}

TEST(DefaultModel, RefusesAnotherGemmaNamingBoth) {
  const fs::path dir = test::fresh_temp_dir("default_model", "gemma");
  const ScopedEnv cache("LTX_CACHE_DIR", dir.string());
  try {
    ensure_default_model(3840, 49);  // Gemma 3 12B
    FAIL() << "a 12B Gemma was accepted";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("640"), std::string::npos) << message;
    EXPECT_NE(message.find("3840"), std::string::npos) << message;
    EXPECT_NE(message.find("LTX_GEMMA_GGUF"), std::string::npos) << message;
  }
  EXPECT_TRUE(fs::is_empty(dir));  // nothing written
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ltx::stages
