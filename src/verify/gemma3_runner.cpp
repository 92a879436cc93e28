// Golden-case runners for Gemma 3:
// - gemma3_text: transformers' Gemma3TextModel called on a left-padded batch with positions 0..T-1
//   (params.position_ids), every row compared, pad rows included;
// - gemma3_image_preprocess: enhance_i2v's image chain (resize to the long side, then the processor's square);
// - gemma3_vision: the vision tower and projector on given pixels;
// - gemma3_image_generation: a prompt with an image block generated from, forced along the reference's tokens.
#include <algorithm>
#include <filesystem>

#include "io/safetensors.h"
#include "models/gemma3/generation.h"
#include "models/gemma3/image_preprocess.h"
#include "models/gemma3/model.h"
#include "models/gemma3/vision.h"
#include "verify/components.h"

namespace ltx {
namespace {

std::string hf_config(const GoldenCase& c) {
  return (std::filesystem::path(c.dir) / c.params().at("hf_config").get<std::string>()).string();
}

std::map<std::string, Tensor> run_gemma3_text(const GoldenCase& c, Precision precision) {
  gemma3::Model model =
      gemma3::Model::from_hf(hf_config(c), c.weights_path(), compute_dtype(precision), golden_backend());
  const SafetensorsFile inputs = SafetensorsFile::open(c.inputs_path());
  const gemma3::Output out = model.forward_padded(inputs.get("input_ids"), inputs.get("attention_mask"), true);
  std::map<std::string, Tensor> result = out.intermediates;
  for (size_t i = 0; i < out.hidden_states.size(); ++i)
    result["hidden_states." + std::to_string(i)] = out.hidden_states[i];
  return result;
}

std::map<std::string, Tensor> run_gemma3_image_preprocess(const GoldenCase& c, Precision) {
  const SafetensorsFile inputs = SafetensorsFile::open(c.inputs_path());
  const int64_t long_side = c.params().at("long_side").get<int64_t>(),
                size = c.params().at("image_size").get<int64_t>();
  std::map<std::string, Tensor> result;
  for (int i = 0; inputs.contains("image." + std::to_string(i)); ++i) {
    const Tensor hwc = inputs.get("image." + std::to_string(i)).contiguous();
    io::RgbImage image{hwc.dim(0), hwc.dim(1), {}};
    const auto* bytes = hwc.data<const uint8_t>();
    image.rgb.assign(bytes, bytes + hwc.numel());
    const io::RgbImage resized = gemma3::resize_long_side(image, long_side);
    Tensor r = Tensor::empty(DType::U8, {resized.height, resized.width, 3});
    std::copy(resized.rgb.begin(), resized.rgb.end(), r.data<uint8_t>());
    result["resized." + std::to_string(i)] = r;
    result["pixel_values." + std::to_string(i)] = gemma3::gemma_pixel_values(resized, size);
  }
  return result;
}

std::map<std::string, Tensor> run_gemma3_vision(const GoldenCase& c, Precision precision) {
  gemma3::VisionTower tower = gemma3::VisionTower::load(c.weights_path(), compute_dtype(precision), golden_backend());
  const SafetensorsFile inputs = SafetensorsFile::open(c.inputs_path());
  const gemma3::VisionOutput out = tower.run(inputs.get("pixel_values"));
  return {{"vision_hidden", out.hidden}, {"image_features", out.features}};
}

std::map<std::string, Tensor> run_gemma3_image_generation(const GoldenCase& c, Precision precision) {
  const DType compute = compute_dtype(precision);
  gemma3::VisionTower tower = gemma3::VisionTower::load(c.weights_path(), compute, golden_backend());
  gemma3::Model model = gemma3::Model::from_hf(hf_config(c), c.weights_path(), compute, golden_backend());
  const SafetensorsFile inputs = SafetensorsFile::open(c.inputs_path());
  const Tensor features = tower.run(inputs.get("pixel_values")).features;
  // generate()'s prompt: positions cumsum(mask) - 1, pads at 1; the soft tokens take the features.
  gemma3::PromptTokens prompt;
  prompt.ids = inputs.get("input_ids").to_ints();
  prompt.valid = inputs.get("attention_mask").to_ints();
  int64_t real = 0;
  for (int64_t v : prompt.valid) {
    prompt.positions.push_back(v ? real : 1);
    real += v != 0;
  }
  gemma3::attach_image_features(prompt, tower.config().image_token,
                                features.reshape({features.dim(1), features.dim(2)}));
  const std::vector<int64_t> forced = inputs.get("greedy_tokens").to_ints();
  gemma3::KvCache cache = model.new_cache(static_cast<int64_t>(prompt.ids.size() + forced.size()));
  std::vector<float> logits = model.extend(cache, prompt.ids, prompt.positions, prompt.valid, &prompt.images);
  std::vector<float> steps = logits;
  for (size_t j = 0; j + 1 < forced.size(); ++j) {
    logits = model.extend(cache, {forced[j]}, {real + static_cast<int64_t>(j)}, {1});
    steps.insert(steps.end(), logits.begin(), logits.end());
  }
  const auto n = static_cast<int64_t>(forced.size());
  return {{"step_logits", Tensor::from_floats(DType::F32, {n, static_cast<int64_t>(logits.size())}, steps)}};
}

}  // namespace

void register_gemma3_runners(ComponentRegistry& registry) {
  registry.add("gemma3_text", run_gemma3_text);
  registry.add("gemma3_image_preprocess", run_gemma3_image_preprocess);
  registry.add("gemma3_vision", run_gemma3_vision);
  registry.add("gemma3_image_generation", run_gemma3_image_generation);
}

}  // namespace ltx
