// Golden-case runners for LTX text conditioning: "feature_extractor_v1", "feature_extractor_v2" and
// "embeddings_connector" (tests/golden/text/, made by tools/reference/make_text_goldens.py).
#include "core/error.h"
#include "graph/compile.h"
#include "io/safetensors.h"
#include "models/ltx/text/text_conditioning.h"
#include "verify/components.h"
#include "verify/ltx_runner_util.h"

namespace ltx {
namespace {

using ltxm::Feed;
using ltxm::Taps;

std::map<std::string, Tensor> run_feature_extractor(const GoldenCase& c, Precision p) {
  auto source = open_safetensors(c.weights_path());
  const nlohmann::json tc = checkpoint_transformer_config(*source);
  const SafetensorsFile inputs = SafetensorsFile::open(c.inputs_path());
  const int64_t hidden = c.params().at("gemma_hidden_size").get<int64_t>();
  const int64_t n_states = c.params().at("num_hidden_states").get<int64_t>();

  WeightLoader root(source, "text_embedding_projection.");
  const ltxm::FeatureExtractor fe = ltxm::FeatureExtractor::load(root, tc, hidden, n_states, compute_dtype(p));
  root.finish();

  Graph g;
  Feed feed;
  Taps taps{.collect = true};
  std::vector<Value> states;
  for (int64_t i = 0; i < n_states; ++i) {
    const std::string name = "hidden_states." + std::to_string(i);
    states.push_back(feed.add(g, name, inputs.get(name).contiguous()));
  }
  const Value mask = feed.add(g, "attention_mask", inputs.get("attention_mask").to(DType::F32));
  const auto out = fe(states, mask, taps);
  g.output(out.video, "video_features");
  if (fe.version == ltxm::FeatureExtractorVersion::V2 && out.audio.valid()) g.output(out.audio, "audio_features");
  taps.declare_outputs(g);
  return run_graph(g, feed);
}

std::map<std::string, Tensor> run_embeddings_connector(const GoldenCase& c, Precision p) {
  auto source = open_safetensors(c.weights_path());
  const nlohmann::json tc = checkpoint_transformer_config(*source);
  const SafetensorsFile inputs = SafetensorsFile::open(c.inputs_path());
  const Tensor mask = inputs.get("attention_mask");

  Graph g;
  Feed feed;
  Taps taps{.collect = true};
  std::map<std::string, Tensor> host;
  const struct {
    const char* name;
    const char* prefix;
    const char* input;
    const char* output;
    bool audio;
  } streams[] = {{"video_connector", "model.diffusion_model.video_embeddings_connector.", "video_features",
                  "video_encoding", false},
                 {"audio_connector", "model.diffusion_model.audio_embeddings_connector.", "audio_features",
                  "audio_encoding", true}};
  std::vector<ltxm::EmbeddingsConnector> connectors;
  for (const auto& s : streams) {
    WeightLoader loader(source, s.prefix);
    connectors.push_back(
        ltxm::EmbeddingsConnector::load(loader, ltxm::ConnectorConfig::from_metadata(tc, s.audio), compute_dtype(p)));
    loader.finish();
  }
  for (size_t i = 0; i < 2; ++i) {
    const auto& s = streams[i];
    const ltxm::EmbeddingsConnector& conn = connectors[i];
    const Tensor feats = inputs.get(s.input).contiguous();
    const nn::RopeTables rope = conn.rope_tables(1, feats.dim(1));
    host[std::string(s.name) + ".rope.cos"] = rope.cos;
    host[std::string(s.name) + ".rope.sin"] = rope.sin;
    const Value x = feed.add(g, s.input, feats);
    const Value ids = feed.add(g, std::string(s.name) + ".ids", conn.register_ids(mask));
    const Value cos = feed.add(g, std::string(s.name) + ".cos", rope.cos);
    const Value sin = feed.add(g, std::string(s.name) + ".sin", rope.sin);
    g.output(conn(x, ids, cos, sin, s.name, taps), s.output);
  }
  taps.declare_outputs(g);
  std::map<std::string, Tensor> out = run_graph(g, feed);
  // After register replacement every position is valid (embeddings_processor.py:_to_binary_mask).
  std::vector<float> ones(static_cast<size_t>(mask.numel()), 1.0f);
  out["binary_mask"] = Tensor::from_floats(DType::F32, mask.shape(), ones);
  for (auto& [k, v] : host) out[k] = v;
  return out;
}

}  // namespace

void register_ltx_text_runners(ComponentRegistry& registry) {
  registry.add("feature_extractor_v1", run_feature_extractor);
  registry.add("feature_extractor_v2", run_feature_extractor);
  registry.add("embeddings_connector", run_embeddings_connector);
}

}  // namespace ltx
