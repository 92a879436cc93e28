// LTX text conditioning after Gemma: the feature extractor (V1 for LTX-2, V2 for LTX-2.3) and the embeddings
// connectors (1-D transformers with learnable registers). References: ltx_core/text_encoders/gemma/
// feature_extractor.py, embeddings_connector.py, embeddings_processor.py. Configured from the checkpoint's
// `config` metadata (its "transformer" dict); keys text_embedding_projection.* and
// model.diffusion_model.{video_,audio_,}embeddings_connector.*.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "io/json.h"
#include "models/ltx/dit/taps.h"
#include "nn/attention_block.h"
#include "nn/feed_forward.h"
#include "nn/rope_ltx.h"

namespace ltx::ltxm {

enum class FeatureExtractorVersion { V1, V2 };

// V2 iff caption_proj_before_connector=true and caption_projection_first_linear, caption_proj_input_norm,
// caption_projection_second_linear are all false; V1 iff none of them is set (encoder_configurator.py:
// _create_feature_extractor). Anything else is an error.
FeatureExtractorVersion feature_extractor_version(const nlohmann::json& transformer_config);

struct FeatureExtractor {
  FeatureExtractorVersion version = FeatureExtractorVersion::V1;
  int64_t hidden = 0, n_states = 0;           // Gemma hidden size and number of hidden states (L)
  nn::Linear aggregate;                       // V1: aggregate_embed (no bias); V2: video_aggregate_embed
  std::optional<nn::Linear> audio_aggregate;  // V2 audio_aggregate_embed, when present

  // `root` is "text_embedding_projection."; widths from the transformer config.
  static FeatureExtractor load(const WeightLoader& root, const nlohmann::json& transformer_config, int64_t hidden,
                               int64_t n_states, DType compute);
  struct Out {
    Value video, audio;  // [B, T, Dv], [B, T, Da] (V1: the same value twice)
  };
  // states: L values [B, T, hidden]; mask: [B, T] f32 (1 real, 0 pad).
  Out operator()(std::span<const Value> states, Value mask, Taps& taps) const;
  // The same from the states already stacked as E [B, T, L, hidden] (E[:, :, l] = states[l]): no concat.
  Out stacked(Value e, Value mask, Taps& taps) const;
};

struct ConnectorConfig {
  int64_t n_heads = 30, head_dim = 128, n_layers = 2;
  double theta = 10000.0;
  std::vector<double> max_pos{1.0};
  RopeMode rope_mode = RopeMode::Interleaved;
  bool float64_grid = false;
  bool gated = false;
  int64_t inner() const { return n_heads * head_dim; }
  // embeddings_connector.py: Embeddings1DConnectorConfigurator / AudioEmbeddings1DConnectorConfigurator
  // (audio falls back to the connector_* keys).
  static ConnectorConfig from_metadata(const nlohmann::json& transformer_config, bool audio);
};

struct EmbeddingsConnector {
  ConnectorConfig config;
  Tensor registers;  // [R, D] f32
  struct Block {
    nn::AttentionBlock attn1;
    nn::FeedForward ff;
  };
  std::vector<Block> blocks;

  static EmbeddingsConnector load(const WeightLoader& loader, const ConnectorConfig& config, DType compute);

  // Host side of register replacement: per sample, the valid tokens first in order, then
  // registers[p mod R] (embeddings_connector.py:_replace_padded_with_learnable_registers). Returns ids [B·T] into
  // the table concat(features.reshape(B·T', D), registers) whose feature rows are the columns [T − T', T) of each
  // sample (T' = T − first): pad columns are never gathered, so the features need only cover the columns from
  // `first` on, and every column before it must be a pad.
  Tensor register_ids(const Tensor& mask, int64_t first = 0) const;
  // features [B, T', D] (the columns register_ids was told about); ids from register_ids; cos/sin from
  // rope_tables(T). Returns [B, T, D], T = ids' length / B.
  Value operator()(Value features, Value ids, Value cos, Value sin, const std::string& name, Taps& taps) const;
  nn::RopeTables rope_tables(int64_t b, int64_t t) const;
};

}  // namespace ltx::ltxm
