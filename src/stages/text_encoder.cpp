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
                                                   const Json& tc, DType compute, const std::string& cache_dir,
                                                   int64_t max_length) {
  gemma3::Tokenizer tok =
      is_gguf(gemma_path) ? gemma3::Tokenizer::from_gguf(gemma_path) : gemma3::Tokenizer::load(gemma_path);
  std::unique_ptr<PromptEncoder> e(
      new PromptEncoder(std::move(tok), gemma3::Model::load(gemma_path, compute, cache_dir)));
  e->max_length_ = max_length;
  e->load_conditioning(checkpoint, tc, compute);
  return e;
}

std::unique_ptr<PromptEncoder> PromptEncoder::from_model(gemma3::Model model,
                                                         const std::shared_ptr<const WeightSource>& checkpoint,
                                                         const Json& tc, DType compute, int64_t max_length) {
  std::unique_ptr<PromptEncoder> e(new PromptEncoder(std::nullopt, std::move(model)));
  e->max_length_ = max_length;
  e->load_conditioning(checkpoint, tc, compute);
  return e;
}

void PromptEncoder::load_conditioning(const std::shared_ptr<const WeightSource>& checkpoint, const Json& tc,
                                      DType compute) {
  const gemma3::Config& gc = model_.config();
  const WeightLoader fe_root(checkpoint, "text_embedding_projection.");
  features_ = ltxm::FeatureExtractor::load(fe_root, tc, gc.hidden_size, gc.n_hidden_states(), compute);
  fe_root.finish();
  const WeightLoader video(checkpoint, "model.diffusion_model.video_embeddings_connector.");
  video_ = std::make_unique<ltxm::EmbeddingsConnector>(
      ltxm::EmbeddingsConnector::load(video, ltxm::ConnectorConfig::from_metadata(tc, false), compute));
  video.finish();
  const WeightLoader audio(checkpoint, "model.diffusion_model.audio_embeddings_connector.");
  audio_ = std::make_unique<ltxm::EmbeddingsConnector>(
      ltxm::EmbeddingsConnector::load(audio, ltxm::ConnectorConfig::from_metadata(tc, true), compute));
  audio.finish();
}

PromptContexts PromptEncoder::encode(const std::string& prompt, bool keep_hidden_states) {
  return encode(std::vector<std::string>{prompt}, keep_hidden_states);
}

PromptContexts PromptEncoder::encode(const std::vector<std::string>& prompts, bool keep_hidden_states) {
  LTX_CHECK(tokenizer_.has_value(), "text encoder", "this PromptEncoder has no tokenizer: use encode_ids");
  LTX_CHECK(!prompts.empty(), "text encoder", "no prompt to encode");
  const gemma3::Tokenizer::Batch batch = tokenizer_->encode_batch(prompts, max_length_);
  return encode_ids(batch.ids, batch.mask, keep_hidden_states);
}

const std::vector<Tensor>& PromptEncoder::pad_states(const std::vector<Tensor>& real) {
  const int64_t b = real[0].dim(0), keep = real[0].dim(1), d = real[0].dim(2), t = max_length_;
  LTX_CHECK(keep <= t, "text encoder", "Gemma returned ", keep, " columns, more than max_length ", t);
  const Shape shape{b, t, d};
  if (padded_.size() != real.size() || padded_[0].shape() != shape) {
    padded_.clear();
    for (size_t i = 0; i < real.size(); ++i) padded_.push_back(Tensor::empty(DType::F32, shape));  // zero-filled
    padded_tail_ = 0;
  }
  for (size_t i = 0; i < real.size(); ++i) {
    Tensor& p = padded_[i];
    if (padded_tail_ > keep) {  // columns the last call wrote that are pads now
      Tensor stale = p.slice(1, t - padded_tail_, t - keep);
      stale.copy_from(Tensor::empty(DType::F32, stale.shape()));
    }
    p.slice(1, t - keep, t).copy_from(real[i]);
  }
  padded_tail_ = keep;
  return padded_;
}

PromptContexts PromptEncoder::encode_ids(const Tensor& ids, const Tensor& mask, bool keep_hidden_states,
                                         bool real_tokens) {
  LTX_CHECK(ids.rank() == 2 && ids.dim(1) == max_length_ && mask.shape() == ids.shape(), "text encoder", "ids ",
            ids.describe(), " and mask ", mask.describe(), " must be [B, ", max_length_, "]");
  gemma3::Output states;
  std::vector<Tensor> hidden_in;  // [B, max_length, D] each
  if (real_tokens) {
    states = model_.forward_real_tokens(ids, mask);
    hidden_in = pad_states(states.hidden_states);
  } else {
    states = model_.forward_padded(ids, mask);
    for (const Tensor& h : states.hidden_states) hidden_in.push_back(h.contiguous());
  }
  Graph g;
  ltxm::Feed feed;
  ltxm::Taps taps;
  std::vector<Value> hidden;
  for (size_t i = 0; i < hidden_in.size(); ++i)
    hidden.push_back(feed.add(g, "hidden_states." + std::to_string(i), hidden_in[i]));
  const Value mask_v = feed.add(g, "attention_mask", mask.to(DType::F32));
  const ltxm::FeatureExtractor::Out f = features_(hidden, mask_v, taps);
  const int64_t b = ids.dim(0), t = ids.dim(1);
  auto connect = [&](const ltxm::EmbeddingsConnector& c, Value x, const std::string& name) {
    const nn::RopeTables rope = c.rope_tables(b, t);
    const Value reg = feed.add(g, name + ".ids", c.register_ids(mask));
    const Value cos = feed.add(g, name + ".cos", rope.cos);
    const Value sin = feed.add(g, name + ".sin", rope.sin);
    return c(x, reg, cos, sin, name, taps);
  };
  g.output(connect(*video_, f.video, "video_connector"), "video");
  g.output(connect(*audio_, f.audio, "audio_connector"), "audio");
  Plan& plan = plans_.get(g);  // one shape, [B, max_length]: compiled on the first prompt only
  const auto out = plan.run(std::span<const Tensor>(feed.tensors));
  PromptContexts contexts{out[0].clone(), out[1].clone(), {}};  // copies: the plan rewrites its outputs
  if (keep_hidden_states)  // copies: the padded buffers are rewritten by the next call
    for (const Tensor& h : hidden_in) contexts.hidden_states.push_back(h.clone());
  return contexts;
}

}  // namespace ltx::stages
