// The engine's config readers on the published full-size configs (src/synth/layouts/, made by the reference on
// torch's meta device): each `config` the official files carry parses, and the shapes it implies for anchor tensors
// (the DiT's widths and depth, the connectors, the upsampler's first conv) are the shapes the published files hold.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "models/ltx/audio_vae/audio_vae.h"
#include "models/ltx/dit/dit_config.h"
#include "models/ltx/text/text_conditioning.h"
#include "models/ltx/upsampler/upsampler.h"
#include "models/ltx/video_vae/video_vae.h"
#include "nlohmann/json.hpp"

namespace ltx {
namespace {

using Shapes = std::map<std::string, std::vector<int64_t>>;

struct Layout {
  nlohmann::json metadata;
  Shapes shapes;  // every tensor the published file holds
};

Layout load_layout(const std::string& name) {
  std::ifstream in(std::string(LTX_SOURCE_DIR) + "/src/synth/layouts/" + name + ".json");
  EXPECT_TRUE(in.good()) << name;
  const nlohmann::json j = nlohmann::json::parse(in);
  Layout l{j.at("metadata"), {}};
  for (const auto& t : j.at("tensors")) l.shapes[t.at(0).get<std::string>()] = t.at(1).get<std::vector<int64_t>>();
  return l;
}

std::vector<int64_t> shape_of(const Layout& l, const std::string& key) {
  const auto it = l.shapes.find(key);
  return it == l.shapes.end() ? std::vector<int64_t>{} : it->second;
}

void expect_ltx_layout(const std::string& name, int64_t connector_width) {
  SCOPED_TRACE(name);
  const Layout l = load_layout(name);
  const nlohmann::json& config = l.metadata.at("config");
  const ltxm::DitConfig dit = ltxm::DitConfig::from_metadata(config.at("transformer"), ltxm::DitModelType::AudioVideo);
  const std::string root = "model.diffusion_model.";
  const std::string last = root + "transformer_blocks." + std::to_string(dit.n_layers - 1) + ".";
  EXPECT_EQ(dit.n_layers, 48);
  EXPECT_EQ(shape_of(l, root + "patchify_proj.weight"), (std::vector<int64_t>{dit.inner(), dit.in_channels}));
  EXPECT_EQ(shape_of(l, root + "audio_patchify_proj.weight"),
            (std::vector<int64_t>{dit.audio_inner(), dit.audio_in_channels}));
  EXPECT_EQ(shape_of(l, last + "attn1.to_q.weight"), (std::vector<int64_t>{dit.inner(), dit.inner()}));
  EXPECT_EQ(shape_of(l, last + "audio_attn1.to_q.weight"),
            (std::vector<int64_t>{dit.audio_inner(), dit.audio_inner()}));
  EXPECT_EQ(shape_of(l, last + "attn2.to_k.weight"), (std::vector<int64_t>{dit.inner(), dit.cross_attention_dim}));
  EXPECT_EQ(shape_of(l, last + "audio_attn2.to_k.weight"),
            (std::vector<int64_t>{dit.audio_inner(), dit.audio_cross_attention_dim}));
  EXPECT_EQ(shape_of(l, root + "transformer_blocks.0.scale_shift_table"),
            (std::vector<int64_t>{dit.adaln_coef(), dit.inner()}));
  EXPECT_TRUE(shape_of(l, root + "transformer_blocks." + std::to_string(dit.n_layers) + ".attn1.to_q.weight").empty());

  const ltxm::ConnectorConfig video = ltxm::ConnectorConfig::from_metadata(config.at("transformer"), false);
  const ltxm::ConnectorConfig audio = ltxm::ConnectorConfig::from_metadata(config.at("transformer"), true);
  EXPECT_EQ(video.inner(), connector_width);
  const std::string vc = root + "video_embeddings_connector.transformer_1d_blocks.";
  const std::string ac = root + "audio_embeddings_connector.transformer_1d_blocks.";
  EXPECT_EQ(shape_of(l, vc + "0.attn1.to_q.weight"), (std::vector<int64_t>{video.inner(), video.inner()}));
  EXPECT_EQ(shape_of(l, ac + "0.attn1.to_q.weight"), (std::vector<int64_t>{audio.inner(), audio.inner()}));
  EXPECT_FALSE(shape_of(l, vc + std::to_string(video.n_layers - 1) + ".attn1.to_q.weight").empty());
  EXPECT_TRUE(shape_of(l, vc + std::to_string(video.n_layers) + ".attn1.to_q.weight").empty());

  const video_vae::VideoVaeConfig vae = video_vae::VideoVaeConfig::from_metadata(config);
  EXPECT_EQ(shape_of(l, "vae.decoder.conv_in.conv.weight").at(1), vae.latent_channels);
  EXPECT_EQ(vae.latent_channels, dit.in_channels);
  const audio_vae::AudioVaeConfig audio_vae = audio_vae::AudioVaeConfig::from_metadata(config);
  EXPECT_EQ(shape_of(l, "audio_vae.decoder.conv_in.conv.weight").at(1), audio_vae.z_channels);
}

TEST(PublishedLayouts, Ltx23ConfigsParseAndImplyThePublishedShapes) { expect_ltx_layout("ltx-2.3-22b", 4096); }

TEST(PublishedLayouts, Ltx2ConfigsParseAndImplyThePublishedShapes) { expect_ltx_layout("ltx-2-19b", 3840); }

TEST(PublishedLayouts, UpsamplerConfigParsesAndImpliesThePublishedShapes) {
  const Layout l = load_layout("upsampler-x2");
  const upsampler::UpsamplerConfig c = upsampler::UpsamplerConfig::from_metadata(l.metadata.at("config"));
  EXPECT_EQ(shape_of(l, "initial_conv.weight"), (std::vector<int64_t>{c.mid_channels, c.in_channels, 3, 3, 3}));
  EXPECT_EQ(c.num, 2);
  EXPECT_EQ(c.den, 1);
}

}  // namespace
}  // namespace ltx
