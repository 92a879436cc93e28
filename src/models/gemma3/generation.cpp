#include "models/gemma3/generation.h"

#include <algorithm>
#include <chrono>

#include "core/error.h"

namespace ltx::gemma3 {

PromptTokens right_padded_prompt(const std::vector<int32_t>& ids, int64_t align, int32_t pad_id) {
  LTX_CHECK(align >= 1, "gemma3", "alignment must be at least 1, got ", align);
  PromptTokens p;
  const auto n = static_cast<int64_t>(ids.size());
  for (int64_t i = 0; i < (n + align - 1) / align * align; ++i) {
    const bool real = i < n;
    p.ids.push_back(real ? ids[static_cast<size_t>(i)] : pad_id);
    p.positions.push_back(real ? i : 1);
    p.valid.push_back(real ? 1 : 0);
  }
  p.next_position = n;
  return p;
}

void attach_image_features(PromptTokens& prompt, int64_t soft_token, Tensor features) {
  prompt.images.image.assign(prompt.ids.size(), -1);
  int64_t image = -1, soft = 0;
  for (size_t i = 0; i < prompt.ids.size(); ++i)
    if (prompt.ids[i] == soft_token) {
      if (i == 0 || prompt.ids[i - 1] != soft_token) ++image;
      prompt.images.image[i] = image;
      ++soft;
    }
  LTX_CHECK(features.rank() == 2 && features.dim(0) == soft, "gemma3", "the prompt has ", soft,
            " image soft tokens and the image features are ", features.describe());
  prompt.images.features = std::move(features);
}

GenerationResult generate(Model& model, const PromptTokens& prompt, const GenerationOptions& options,
                          const std::function<void(int32_t)>& on_token) {
  LTX_CHECK(!prompt.ids.empty(), "gemma3", "generation needs a prompt");
  LTX_CHECK(options.max_new_tokens >= 1, "gemma3", "max_new_tokens must be at least 1, got ", options.max_new_tokens);
  using Clock = std::chrono::steady_clock;
  const auto seconds = [](Clock::time_point from) {
    return std::chrono::duration<double>(Clock::now() - from).count();
  };
  GenerationResult out;
  KvCache cache = model.new_cache(static_cast<int64_t>(prompt.ids.size()) + options.max_new_tokens);
  TokenSampler sampler(options.sampling, options.seed);
  auto t0 = Clock::now();
  std::vector<float> logits = model.extend(cache, prompt.ids, prompt.positions, prompt.valid,
                                           prompt.images.features.defined() ? &prompt.images : nullptr);
  out.prefill_seconds = seconds(t0);
  t0 = Clock::now();
  int64_t position = prompt.next_position - 1;
  while (true) {
    const int32_t token = sampler.next(logits);
    out.tokens.push_back(token);
    if (on_token) on_token(token);
    if (std::find(options.stop_ids.begin(), options.stop_ids.end(), token) != options.stop_ids.end()) {
      out.stopped = true;
      break;
    }
    if (static_cast<int64_t>(out.tokens.size()) >= options.max_new_tokens) break;
    logits = model.extend(cache, {token}, {++position}, {1});
  }
  out.decode_seconds = seconds(t0);
  return out;
}

}  // namespace ltx::gemma3
