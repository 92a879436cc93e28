// The embedded published layouts (src/synth/layouts/, made by the reference): they parse to the counts the files
// state, and cut_layers keeps a self-consistent prefix of the transformer.
#include "synth/layout.h"

#include <gtest/gtest.h>

#include <set>

#include "io/json.h"
#include "io/test_files.h"

namespace ltx::synth {
namespace {

TEST(SynthLayout, EveryPublishedLayoutParsesToItsTotals) {
  const std::vector<std::string> names = published_layout_names();
  EXPECT_EQ(names,
            (std::vector<std::string>{"ltx-2.3-22b", "ltx-2-19b", "gemma-3-12b", "upsampler-x2", "distilled-lora"}));
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    const Json raw = parse_json(published_layout_json(name), name);
    const Layout l = published_layout(name);
    EXPECT_EQ(l.name, name);
    const Json& totals = raw["totals"]["with_extra_tensors"];
    EXPECT_EQ(l.tensors.size(), totals["tensors"].get<size_t>());
    uint64_t parameters = 0, bytes = 0;
    for (const TensorSpec& t : l.tensors) {
      parameters += static_cast<uint64_t>(t.shape.numel());
      bytes += tensor_bytes(t);
    }
    EXPECT_EQ(parameters, totals["parameters"].get<uint64_t>());
    EXPECT_EQ(bytes, totals["bytes"].get<uint64_t>());
    EXPECT_TRUE(std::is_sorted(l.tensors.begin(), l.tensors.end(),
                               [](const auto& a, const auto& b) { return a.name < b.name; }));
    EXPECT_FALSE(l.files.empty());
  }
}

// The published transformers keep their AdaLN tables (every DiT key naming a scale_shift_table: 2 global tables and
// 6 per block in 2.3, 4 per block in 2.0, 48 blocks) in F32 beside bf16 everything else (diffusers PR #13918; the
// files' sizes).
TEST(SynthLayout, TheDitTablesAreF32AsPublished) {
  for (const auto& [name, tables] :
       {std::pair<std::string, size_t>{"ltx-2.3-22b", 2 + 6 * 48}, {"ltx-2-19b", 2 + 4 * 48}}) {
    SCOPED_TRACE(name);
    size_t f32 = 0;
    for (const TensorSpec& t : published_layout(name).tensors) {
      const bool table =
          t.name.rfind("model.diffusion_model.", 0) == 0 && t.name.find("scale_shift_table") != std::string::npos;
      EXPECT_EQ(t.dtype, table ? DType::F32 : DType::BF16) << t.name;
      f32 += table ? 1 : 0;
    }
    EXPECT_EQ(f32, tables);
  }
  for (const std::string name : {"gemma-3-12b", "upsampler-x2", "distilled-lora"})
    for (const TensorSpec& t : published_layout(name).tensors) EXPECT_EQ(t.dtype, DType::BF16) << name << " " << t.name;
}

// The 19B video decoder is timestep-conditioned (the published file's size needs its 42 tensors); 2.3's is not.
TEST(SynthLayout, OnlyThe19bDecoderIsTimestepConditioned) {
  const auto conditioned = [](const std::string& name) {
    const Layout l = published_layout(name);
    size_t keys = 0;
    for (const TensorSpec& t : l.tensors) {
      const bool embedder = t.name.find("time_embedder") != std::string::npos;
      const bool table = t.name.rfind("vae.decoder.", 0) == 0 && t.name.find("scale_shift_table") != std::string::npos;
      keys += embedder || table ? 1 : 0;
    }
    return std::pair{l.metadata["config"]["vae"]["timestep_conditioning"].get<bool>(), keys};
  };
  EXPECT_EQ(conditioned("ltx-2-19b"), (std::pair<bool, size_t>{true, 41}));
  EXPECT_EQ(conditioned("ltx-2.3-22b"), (std::pair<bool, size_t>{false, 0}));
}

TEST(SynthLayout, ExtraTensorsAreIncluded) {
  const Layout l = published_layout("ltx-2.3-22b");
  const auto has = [&](const std::string& n) {
    return std::any_of(l.tensors.begin(), l.tensors.end(), [&](const TensorSpec& t) { return t.name == n; });
  };
  EXPECT_TRUE(has("vae.per_channel_statistics.channel"));
  EXPECT_TRUE(has("vae.per_channel_statistics.mean-of-stds"));
  EXPECT_TRUE(l.metadata["config"].is_object());
  EXPECT_EQ(l.metadata["config"]["transformer"]["num_layers"], 48);
}

TEST(SynthLayout, UnknownNameListsTheValidOnes) {
  test::expect_error([] { published_layout("ltx-3"); },
                     {"unknown model 'ltx-3'", "ltx-2.3-22b", "gemma-3-12b", "distilled-lora"});
}

TEST(SynthLayout, MalformedLayoutsAreErrors) {
  test::expect_error([] { parse_layout("{\"name\": \"x\"}"); }, {"no \"tensors\""});
  test::expect_error([] { parse_layout(R"({"name": "x", "tensors": [["a", [2], "Q9"]]})"); }, {"unknown dtype 'Q9'"});
  test::expect_error(
      [] { parse_layout(R"({"name": "x", "tensors": [["a", [2], "BF16"]], "extra_tensors": [["a", [2], "F32"]]})"); },
      {"'a' is listed twice"});
}

std::set<int64_t> block_indices(const Layout& l, const std::string& marker) {
  std::set<int64_t> found;
  for (const TensorSpec& t : l.tensors) {
    const size_t at = t.name.find(marker);
    if (at != std::string::npos) found.insert(std::stoll(t.name.substr(at + marker.size())));
  }
  return found;
}

TEST(SynthLayout, CutLayersKeepsTheFirstBlocksAndSaysSo) {
  const Layout full = published_layout("ltx-2.3-22b");
  EXPECT_EQ(layer_count(full), 48);
  const Layout cut = cut_layers(full, 2);
  EXPECT_EQ(block_indices(cut, ".transformer_blocks."), (std::set<int64_t>{0, 1}));
  EXPECT_EQ(cut.metadata["config"]["transformer"]["num_layers"], 2);
  // Everything outside the blocks stays, the connectors' transformer_1d_blocks included.
  size_t outside_full = 0, outside_cut = 0, block0_full = 0, block0_cut = 0;
  for (const TensorSpec& t : full.tensors) {
    outside_full += t.name.find(".transformer_blocks.") == std::string::npos;
    block0_full += t.name.find(".transformer_blocks.0.") != std::string::npos;
  }
  for (const TensorSpec& t : cut.tensors) {
    outside_cut += t.name.find(".transformer_blocks.") == std::string::npos;
    block0_cut += t.name.find(".transformer_blocks.0.") != std::string::npos;
  }
  EXPECT_EQ(outside_cut, outside_full);
  EXPECT_EQ(block0_cut, block0_full);
  EXPECT_EQ(cut.tensors.size(), outside_full + 2 * block0_full);

  test::expect_error([&] { cut_layers(full, 49); }, {"outside [1, 48]"});
  test::expect_error([&] { cut_layers(full, 0); }, {"outside [1, 48]"});
  test::expect_error([] { cut_layers(published_layout("upsampler-x2"), 2); }, {"no transformer layers"});
}

TEST(SynthLayout, CutLayersOnGemmaLeavesTheVisionTower) {
  const Layout full = published_layout("gemma-3-12b");
  EXPECT_EQ(layer_count(full), 48);
  const Layout cut = cut_layers(full, 3);
  EXPECT_EQ(block_indices(cut, "language_model.model.layers."), (std::set<int64_t>{0, 1, 2}));
  EXPECT_EQ(block_indices(cut, "vision_model.encoder.layers.").size(), 27u);
  EXPECT_EQ(cut.config_json["text_config"]["num_hidden_layers"], 3);
  EXPECT_EQ(cut.config_json["vision_config"]["num_hidden_layers"], 27);
}

TEST(SynthLayout, CutLayersOnTheLora) {
  const Layout cut = cut_layers(published_layout("distilled-lora"), 1);
  EXPECT_EQ(block_indices(cut, "diffusion_model.transformer_blocks."), (std::set<int64_t>{0}));
}

}  // namespace
}  // namespace ltx::synth
