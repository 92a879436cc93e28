#include "stages/text_encoder.h"

#include <algorithm>
#include <filesystem>
#include <future>

#include "core/error.h"
#include "graph/compile.h"
#include "models/ltx/dit/taps.h"

namespace ltx::stages {
namespace {

bool is_gguf(const std::string& path) { return path.size() > 5 && path.substr(path.size() - 5) == ".gguf"; }

}  // namespace

std::future<gemma3::Tokenizer> PromptEncoder::start_tokenizer(const std::string& gemma_path) {
  return std::async(std::launch::async, [gemma_path] {
    return is_gguf(gemma_path) ? gemma3::Tokenizer::from_gguf(gemma_path) : gemma3::Tokenizer::load(gemma_path);
  });
}

std::unique_ptr<PromptEncoder> PromptEncoder::load(const std::string& gemma_path,
                                                   const std::shared_ptr<const WeightSource>& checkpoint,
                                                   const Json& tc, DType compute, const Backend& backend,
                                                   const std::string& cache_dir, int64_t max_length) {
  return load(gemma_path, start_tokenizer(gemma_path), checkpoint, tc, compute, backend, cache_dir, max_length);
}

std::unique_ptr<PromptEncoder> PromptEncoder::load(const std::string& gemma_path,
                                                   std::future<gemma3::Tokenizer> tokenizer,
                                                   const std::shared_ptr<const WeightSource>& checkpoint,
                                                   const Json& tc, DType compute, const Backend& backend,
                                                   const std::string& cache_dir, int64_t max_length) {
  // The model's load (mostly mapping and hashing on the pool) overlaps the tokenizer's thread.
  gemma3::Model model = gemma3::Model::load(gemma_path, compute, backend, cache_dir);
  std::unique_ptr<PromptEncoder> e(new PromptEncoder(tokenizer.get(), std::move(model)));
  e->max_length_ = max_length;
  e->load_conditioning(checkpoint, tc, compute);
  if (std::filesystem::is_directory(gemma_path) && gemma3::VisionTower::folder_has_vision(gemma_path))
    e->vision_file_ = gemma_path;
  return e;
}

gemma3::VisionTower* PromptEncoder::vision() {
  if (!vision_ && !vision_file_.empty())
    vision_ =
        std::make_unique<gemma3::VisionTower>(gemma3::VisionTower::load(vision_file_, compute_, plans_.backend()));
  return vision_.get();
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
  compute_ = compute;
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

void PromptEncoder::stack_states(const std::vector<Tensor>& states, const Tensor& stacked) {
  const int64_t b = states[0].dim(0), keep = states[0].dim(1), d = states[0].dim(2), c = stacked.dim(1);
  Tensor out = stacked;  // a view of the plan's input slot
  if (keep < c) {
    Tensor pads = out.slice(1, 0, c - keep);
    pads.copy_from(Tensor::empty(DType::F32, pads.shape()));  // zero-filled
  }
  for (size_t i = 0; i < states.size(); ++i) {
    const auto l = static_cast<int64_t>(i);
    out.slice(1, c - keep, c).slice(2, l, l + 1).copy_from(states[i].contiguous().reshape({b, keep, 1, d}));
  }
}

PromptContexts PromptEncoder::encode_ids(const Tensor& ids, const Tensor& mask, bool keep_hidden_states,
                                         bool real_tokens) {
  LTX_CHECK(ids.rank() == 2 && ids.dim(1) == max_length_ && mask.shape() == ids.shape(), "text encoder", "ids ",
            ids.describe(), " and mask ", mask.describe(), " must be [B, ", max_length_, "]");
  const gemma3::Output states = real_tokens ? model_.forward_real_tokens(ids, mask) : model_.forward_padded(ids, mask);
  const std::vector<Tensor>& hs = states.hidden_states;  // [B, T', D] each
  const int64_t b = ids.dim(0), t = ids.dim(1), keep = hs[0].dim(1), d = hs[0].dim(2);
  const auto n_states = static_cast<int64_t>(hs.size());
  LTX_CHECK(keep <= max_length_, "text encoder", "Gemma returned ", keep, " columns, more than max_length ",
            max_length_);
  const int64_t c = std::min(max_length_, (keep + kColumnBucket - 1) / kColumnBucket * kColumnBucket);
  const int64_t first = t - c;  // columns before `first`: pads only
  Graph g;
  ltxm::Feed feed;
  ltxm::Taps taps;
  const Value hidden = g.input("hidden_states", DType::F32, {b, c, n_states, d});  // input 0: stack_states writes it
  feed.tensors.emplace_back();
  const Value mask_v = feed.add(g, "attention_mask", mask.slice(1, first, t).to(DType::F32));
  const ltxm::FeatureExtractor::Out f = features_.stacked(hidden, mask_v, taps);
  auto connect = [&](const ltxm::EmbeddingsConnector& conn, Value x, const std::string& name) {
    const nn::RopeTables rope = conn.rope_tables(b, t);
    const Value reg = feed.add(g, name + ".ids", conn.register_ids(mask, first));
    const Value cos = feed.add(g, name + ".cos", rope.cos);
    const Value sin = feed.add(g, name + ".sin", rope.sin);
    return conn(x, reg, cos, sin, name, taps);
  };
  g.output(connect(*video_, f.video, "video_connector"), "video");
  g.output(connect(*audio_, f.audio, "audio_connector"), "audio");
  CompileOptions options = CompileOptions::from_env();
  options.inputs_in_arena = true;
  Plan& plan = plans_.get(g, options);  // one plan per column bucket C
  stack_states(hs, plan.input(0));
  for (size_t i = 1; i < feed.tensors.size(); ++i) {
    Tensor slot = plan.input(i);
    slot.copy_from(feed.tensors[i]);
  }
  const auto out = plan.run();
  PromptContexts contexts{out[0].clone(), out[1].clone(), {}};  // copies: the plan rewrites its outputs
  if (keep_hidden_states)                                       // [B, max_length, D], zeros before the real columns
    for (int64_t i = 0; i < n_states; ++i) {
      Tensor h = Tensor::empty(DType::F32, {b, t, d});  // zero-filled
      h.slice(1, t - keep, t).copy_from(hs[static_cast<size_t>(i)]);
      contexts.hidden_states.push_back(std::move(h));
    }
  return contexts;
}

}  // namespace ltx::stages
