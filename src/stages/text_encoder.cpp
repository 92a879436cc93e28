#include "stages/text_encoder.h"

#include "core/error.h"
#include "graph/compile.h"
#include "models/ltx/taps.h"

namespace ltx::stages {
namespace {

bool is_gguf(const std::string& path) { return path.size() > 5 && path.substr(path.size() - 5) == ".gguf"; }

}  // namespace

std::unique_ptr<PromptEncoder> PromptEncoder::load(const std::string& gemma_path,
                                                   const std::shared_ptr<const WeightSource>& checkpoint,
                                                   const Json& tc, DType compute, int64_t max_length) {
  gemma3::Tokenizer tok =
      is_gguf(gemma_path) ? gemma3::Tokenizer::from_gguf(gemma_path) : gemma3::Tokenizer::load(gemma_path);
  std::unique_ptr<PromptEncoder> e(new PromptEncoder(std::move(tok), gemma3::Model::load(gemma_path, compute)));
  e->max_length_ = max_length;
  const gemma3::Config& gc = e->model_.config();
  const WeightLoader fe_root(checkpoint, "text_embedding_projection.");
  e->features_ = ltxm::FeatureExtractor::load(fe_root, tc, gc.hidden_size, gc.n_hidden_states(), compute);
  fe_root.finish();
  const WeightLoader video(checkpoint, "model.diffusion_model.video_embeddings_connector.");
  e->video_ = std::make_unique<ltxm::EmbeddingsConnector>(
      ltxm::EmbeddingsConnector::load(video, ltxm::ConnectorConfig::from_metadata(tc, false), compute));
  video.finish();
  const WeightLoader audio(checkpoint, "model.diffusion_model.audio_embeddings_connector.");
  e->audio_ = std::make_unique<ltxm::EmbeddingsConnector>(
      ltxm::EmbeddingsConnector::load(audio, ltxm::ConnectorConfig::from_metadata(tc, true), compute));
  audio.finish();
  return e;
}

PromptContexts PromptEncoder::encode(const std::string& prompt, bool keep_hidden_states) {
  const gemma3::Tokenizer::Batch batch = tokenizer_.encode_batch({prompt}, max_length_);
  const gemma3::Output states = model_.forward_padded(batch.ids, batch.mask);
  Graph g;
  ltxm::Feed feed;
  ltxm::Taps taps;
  std::vector<Value> hidden;
  for (size_t i = 0; i < states.hidden_states.size(); ++i)
    hidden.push_back(feed.add(g, "hidden_states." + std::to_string(i), states.hidden_states[i].contiguous()));
  const Value mask = feed.add(g, "attention_mask", batch.mask.to(DType::F32));
  const ltxm::FeatureExtractor::Out f = features_(hidden, mask, taps);
  const int64_t t = batch.ids.dim(1);
  auto connect = [&](const ltxm::EmbeddingsConnector& c, Value x, const std::string& name) {
    const nn::RopeTables rope = c.rope_tables(1, t);
    const Value ids = feed.add(g, name + ".ids", c.register_ids(batch.mask));
    const Value cos = feed.add(g, name + ".cos", rope.cos);
    const Value sin = feed.add(g, name + ".sin", rope.sin);
    return c(x, ids, cos, sin, name, taps);
  };
  g.output(connect(*video_, f.video, "video_connector"), "video");
  g.output(connect(*audio_, f.audio, "audio_connector"), "audio");
  auto plan = compile(g);
  const auto out = plan->run(std::span<const Tensor>(feed.tensors));
  PromptContexts contexts{out[0].clone(), out[1].clone(), {}};
  if (keep_hidden_states)  // copies: the Gemma plan's outputs are rewritten by its next run
    for (const Tensor& h : states.hidden_states) contexts.hidden_states.push_back(h.clone());
  return contexts;
}

}  // namespace ltx::stages
