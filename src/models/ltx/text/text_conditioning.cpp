#include "models/ltx/text/text_conditioning.h"

#include <cmath>

#include "core/error.h"
#include "nn/rope_ltx.h"

namespace ltx::ltxm {
namespace {

// Parameter-free RMS norm with eps 1e-6 (ltx_core/utils.py:rms_norm's default).
Value rms(Value x) { return ops::rms_norm(x, std::nullopt, 1e-6f, NormWeight::None); }

constexpr float kBig = 3.0e38f;  // stands in for ±inf in the masked min/max (inf·0 would be NaN)

std::vector<double> doubles(const nlohmann::json& j) {
  std::vector<double> v;
  for (const auto& x : j) v.push_back(x.get<double>());
  return v;
}

}  // namespace

FeatureExtractorVersion feature_extractor_version(const nlohmann::json& tc) {
  const char* keys[] = {"caption_proj_before_connector", "caption_projection_first_linear", "caption_proj_input_norm",
                        "caption_projection_second_linear"};
  int present = 0;
  for (const char* k : keys) present += tc.contains(k) ? 1 : 0;
  if (present == 0) return FeatureExtractorVersion::V1;
  const auto flag = [&](const char* k) { return tc.contains(k) && tc.at(k).is_boolean() && tc.at(k).get<bool>(); };
  const auto off = [&](const char* k) { return tc.contains(k) && tc.at(k).is_boolean() && !tc.at(k).get<bool>(); };
  LTX_CHECK(flag(keys[0]) && off(keys[1]) && off(keys[2]) && off(keys[3]), "ltx.text",
            "unsupported caption projection keys in the transformer config (V2 needs caption_proj_before_connector="
            "true and the three others false; V1 none of them)");
  return FeatureExtractorVersion::V2;
}

FeatureExtractor FeatureExtractor::load(const WeightLoader& root, const nlohmann::json& tc, int64_t hidden,
                                        int64_t n_states, DType compute) {
  FeatureExtractor f;
  f.version = feature_extractor_version(tc);
  f.hidden = hidden;
  f.n_states = n_states;
  const int64_t flat = hidden * n_states;
  if (f.version == FeatureExtractorVersion::V1) {
    // V1 projects to the caption width (Gemma's hidden size in LTX-2), shared by video and audio.
    const int64_t out = tc.value("caption_channels", hidden);
    f.aggregate = nn::Linear::load(root, "aggregate_embed", flat, out, false, compute);
  } else {
    const int64_t dv = tc.at("num_attention_heads").get<int64_t>() * tc.at("attention_head_dim").get<int64_t>();
    f.aggregate = nn::Linear::load(root, "video_aggregate_embed", flat, dv, true, compute);
    if (root.has("audio_aggregate_embed.weight")) {
      const int64_t da =
          tc.at("audio_num_attention_heads").get<int64_t>() * tc.at("audio_attention_head_dim").get<int64_t>();
      f.audio_aggregate = nn::Linear::load(root, "audio_aggregate_embed", flat, da, true, compute);
    }
  }
  return f;
}

FeatureExtractor::Out FeatureExtractor::operator()(std::span<const Value> states, Value mask, Taps& taps) const {
  LTX_CHECK(static_cast<int64_t>(states.size()) == n_states, "ltx.text", "feature extractor expects ", n_states,
            " hidden states, got ", states.size());
  const int64_t b = states[0].dim(0), t = states[0].dim(1), d = hidden;
  // E: [B, T, L, D], the layer axis before the hidden axis so the per-layer norms reduce the last axis.
  std::vector<Value> rows;
  for (const Value& s : states) rows.push_back(ops::reshape(s, {b, t, 1, d}));
  return stacked(ops::concat(rows, 2), mask, taps);
}

FeatureExtractor::Out FeatureExtractor::stacked(Value e, Value mask, Taps& taps) const {
  LTX_CHECK(e.rank() == 4 && e.dim(2) == n_states && e.dim(3) == hidden, "ltx.text",
            "feature extractor expects stacked hidden states [B, T, ", n_states, ", ", hidden, "]");
  const int64_t b = e.dim(0), t = e.dim(1), d = hidden, l = n_states;
  const Value m4 = ops::reshape(mask, {b, t, 1, 1});
  Value normed;  // [B, T, L, D]
  if (version == FeatureExtractorVersion::V1) {
    // feature_extractor.py:_norm_and_concat_padded_batch: per sample and layer, over valid tokens:
    // 8·(x − mean)/(max − min + 1e-6), mean = Σx/(n_valid·D + 1e-6).
    const int axes[] = {1, 3};
    const Value sum = ops::reduce_sum(ops::mul(e, m4), axes, true);  // [B, 1, L, 1]
    const int t_axis[] = {1};
    const Value n = ops::reshape(ops::reduce_sum(mask, t_axis, true), {b, 1, 1, 1});
    const Value mean = ops::div(sum, ops::scale(n, static_cast<float>(d), 1e-6f));
    const Value lo = ops::reduce_min(ops::add(ops::mul(e, m4), ops::scale(m4, -kBig, kBig)), axes, true);
    const Value hi = ops::reduce_max(ops::add(ops::mul(e, m4), ops::scale(m4, kBig, -kBig)), axes, true);
    normed = ops::div(ops::scale(ops::sub(e, mean), 8.0f), ops::scale(ops::sub(hi, lo), 1.0f, 1e-6f));
  } else {
    // feature_extractor.py:norm_and_concat_per_token_rms: x·rsqrt(mean_d(x²) + 1e-6) per token and layer.
    normed = ops::rms_norm(e, std::nullopt, 1e-6f, NormWeight::None);
  }
  // Flatten as index d·L + l (torch.stack(dim=-1).reshape), padded tokens zeroed.
  Value flat = ops::reshape(ops::permute(normed, {0, 1, 3, 2}), {b, t, d * l});
  flat = ops::mul(flat, ops::reshape(mask, {b, t, 1}));
  if (version == FeatureExtractorVersion::V1) {
    taps(flat, "aggregate_embed.in");
    const Value v = aggregate(flat);
    return {v, v};
  }
  // feature_extractor.py:_rescale_norm: x·sqrt(out_dim / hidden) before each projection.
  const auto rescale = [&](int64_t out) {
    return ops::scale(flat, static_cast<float>(std::sqrt(static_cast<double>(out) / static_cast<double>(d))));
  };
  const Value vin = taps(rescale(aggregate.weight.dim(0)), "video_aggregate_embed.in");
  Out o{aggregate(vin), {}};
  if (audio_aggregate) o.audio = (*audio_aggregate)(rescale(audio_aggregate->weight.dim(0)));
  return o;
}

ConnectorConfig ConnectorConfig::from_metadata(const nlohmann::json& tc, bool audio) {
  return read_json_fields("connector", "the checkpoint's transformer config", [&] {
    ConnectorConfig c;
    const auto get = [&](const char* audio_key, const char* key, int64_t fallback) {
      if (audio && tc.contains(audio_key)) return tc.at(audio_key).get<int64_t>();
      return tc.value(key, fallback);
    };
    c.n_heads = get("audio_connector_num_attention_heads", "connector_num_attention_heads", 30);
    c.head_dim = get("audio_connector_attention_head_dim", "connector_attention_head_dim", 128);
    c.n_layers = get("audio_connector_num_layers", "connector_num_layers", 2);
    if (tc.contains("connector_positional_embedding_max_pos"))
      c.max_pos = doubles(tc.at("connector_positional_embedding_max_pos"));
    const std::string rope = tc.value("rope_type", std::string("interleaved"));
    LTX_CHECK(rope == "split" || rope == "interleaved", "ltx.text", "unknown rope_type '", rope, "'");
    c.rope_mode = rope == "split" ? RopeMode::SplitHalf : RopeMode::Interleaved;
    c.float64_grid = tc.contains("frequencies_precision") && tc.at("frequencies_precision") == "float64";
    c.gated = tc.value("connector_apply_gated_attention", false);
    return c;
  });
}

EmbeddingsConnector EmbeddingsConnector::load(const WeightLoader& loader, const ConnectorConfig& config,
                                              DType compute) {
  EmbeddingsConnector c;
  c.config = config;
  const int64_t d = config.inner();
  // The register count is not in the config (ltx_core's default 128); it is the table's row count.
  const std::string reg_key = loader.prefix() + "learnable_registers";
  LTX_CHECK(loader.source().contains(reg_key), "ltx.text", "missing ", reg_key, " in ", loader.source().describe());
  const int64_t n_reg = loader.source().shape(reg_key).dim(0);
  c.registers = nn::prepare_vector(loader.get("learnable_registers", {n_reg, d}));
  const WeightLoader blocks = loader.scope("transformer_1d_blocks");
  for (int64_t i = 0; i < config.n_layers; ++i) {
    const WeightLoader blk = blocks.scope(i);
    c.blocks.push_back(
        {nn::AttentionBlock::load(blk, "attn1", d, d, config.n_heads, config.head_dim, config.gated, 1e-6f, compute),
         nn::FeedForward::load(blk, "ff", d, d, 4, compute)});
  }
  return c;
}

Tensor EmbeddingsConnector::register_ids(const Tensor& mask, int64_t first) const {
  LTX_CHECK(mask.rank() == 2, "ltx.text", "attention mask must be [B, T], got ", mask.shape().str());
  const int64_t b = mask.dim(0), t = mask.dim(1), n_reg = registers.dim(0), cols = t - first;
  LTX_CHECK(t % n_reg == 0, "ltx.text", "sequence length ", t, " is not a multiple of the ", n_reg,
            " learnable registers");
  LTX_CHECK(first >= 0 && first < t, "ltx.text", "feature columns from ", first, " of ", t);
  const std::vector<float> m = mask.to_floats();
  std::vector<int64_t> ids(static_cast<size_t>(b * t));
  for (int64_t bi = 0; bi < b; ++bi) {
    int64_t p = 0;
    for (int64_t ti = 0; ti < t; ++ti) {
      if (m[static_cast<size_t>(bi * t + ti)] == 0.0f) continue;
      LTX_CHECK(ti >= first, "ltx.text", "sample ", bi, " has a real token at column ", ti, ", before the features' ",
                first);
      ids[static_cast<size_t>(bi * t + p++)] = bi * cols + ti - first;
    }
    for (; p < t; ++p) ids[static_cast<size_t>(bi * t + p)] = b * cols + p % n_reg;
  }
  return Tensor::from_ints(DType::I64, Shape{b * t}, ids);
}

nn::RopeTables EmbeddingsConnector::rope_tables(int64_t b, int64_t t) const {
  // embeddings_connector.py: integer positions 0..T-1, no midpoint.
  std::vector<float> pos(static_cast<size_t>(b * t));
  for (int64_t i = 0; i < b * t; ++i) pos[static_cast<size_t>(i)] = static_cast<float>(i % t);
  nn::LtxRopeSpec spec;
  spec.dim = config.inner();
  spec.n_heads = config.n_heads;
  spec.theta = config.theta;
  spec.max_pos = config.max_pos;
  spec.use_middle = false;
  spec.mode = config.rope_mode;
  spec.float64_grid = config.float64_grid;
  return nn::ltx_rope_tables(spec, Tensor::from_floats(DType::F32, Shape{b, 1, t}, pos));
}

Value EmbeddingsConnector::operator()(Value features, Value ids, Value cos, Value sin, const std::string& name,
                                      Taps& taps) const {
  Graph& g = *features.graph;
  const int64_t b = features.dim(0), cols = features.dim(1), t = ids.dim(0) / b, d = config.inner();
  LTX_CHECK(features.dim(2) == d, "ltx.text", name, ": features ", features.shape().str(), " vs width ", d);
  const Value reg = g.constant(name + ".learnable_registers", registers);
  const Value rows[] = {ops::reshape(features, {b * cols, d}), reg};
  Value h = ops::reshape(ops::gather(ops::concat(rows, 0), ids), {b, t, d});
  const std::string pre = name + ".transformer_1d_blocks.";
  taps(h, pre + "0.in");
  // After register replacement the mask is all-visible: no attention mask (embeddings_connector.py).
  nn::AttentionCall call;
  call.pe_cos = cos;
  call.pe_sin = sin;
  call.rope_mode = config.rope_mode;
  for (size_t i = 0; i < blocks.size(); ++i) {
    const std::string bp = pre + std::to_string(i);
    const Value a = taps(blocks[i].attn1(rms(h), call), bp + ".attn1.out");
    h = ops::add(a, h);
    const Value f = taps(blocks[i].ff(rms(h)), bp + ".ff.out");
    h = taps(ops::add(f, h), bp + ".out");
  }
  return rms(h);
}

}  // namespace ltx::ltxm
