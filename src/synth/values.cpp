#include "synth/values.h"

#include <algorithm>
#include <cmath>
#include <string_view>

namespace ltx::synth {
namespace {

// splitmix64's output function (Steele, Lea and Flood, "Fast splittable pseudorandom number generators", 2014):
// applied to seed + (i + 1)·gamma it gives the i-th number of the stream directly, which is what makes every chunk
// of a tensor computable on its own.
constexpr uint64_t kGamma = 0x9E3779B97F4A7C15ull;
uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t fnv1a64(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : s) {
    h ^= static_cast<uint8_t>(c);
    h *= 0x100000001b3ull;
  }
  return h;
}

bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

ValueRule uniform_with_variance(double variance) {
  // Uniform on [-a, a) has variance a²/3.
  return {0.0f, static_cast<float>(std::sqrt(3.0 * variance)), false};
}

}  // namespace

ValueRule value_rule(const TensorSpec& t) {
  const std::string_view n = t.name;
  const int rank = t.shape.rank();
  if (contains(n, "per_channel_statistics")) {
    // The latent normalization divides by the std-of-means: keep it positive and near 1.
    if (contains(n, "std")) return {1.0f, 0.1f, true};
    return {0.0f, 0.1f, false};
  }
  if (contains(n, "scale_shift_table")) return {0.0f, 0.1f, false};
  if (rank == 1 && n.ends_with(".weight") && contains(n, "norm")) {
    // transformers' Gemma3RMSNorm computes x̂ · (1 + w), so its stored weights are centred on 0 (modeling_gemma3.py);
    // SigLIP's LayerNorms and the LTX norms scale by w itself.
    const bool zero_centred = n.starts_with("language_model.") || n.starts_with("multi_modal_projector.");
    return {zero_centred ? 0.0f : 1.0f, 0.02f, false};
  }
  if (rank == 2 && n.ends_with("_projection_weight") && t.shape[0] > 0)  // Gemma3MultiModalProjector: x · W
    return uniform_with_variance(1.0 / static_cast<double>(t.shape[0]));
  if (rank >= 2 && n.ends_with(".weight") && t.shape[0] > 0 && t.shape.numel() > 0) {
    const int64_t fan_in = t.shape.numel() / t.shape[0];
    if (contains(n, ".lora_B.")) return uniform_with_variance(0.01 / static_cast<double>(fan_in));
    return uniform_with_variance(1.0 / static_cast<double>(fan_in));
  }
  return {0.0f, 0.02f, false};
}

ValueGenerator::ValueGenerator(uint64_t seed, bool zeros) : seed_(seed), zeros_(zeros) {}

void ValueGenerator::fill(const TensorSpec& t, int64_t first, int64_t count, float* out) const {
  if (zeros_) {
    std::fill_n(out, count, 0.0f);
    return;
  }
  const ValueRule rule = value_rule(t);
  const uint64_t key = mix64(fnv1a64(t.name) ^ mix64(seed_ + kGamma));
  constexpr float kTwoToMinus23 = 1.0f / 8388608.0f;
  for (int64_t i = 0; i < count; ++i) {
    const uint64_t z = mix64(key + static_cast<uint64_t>(first + i + 1) * kGamma);
    const float u = static_cast<float>(z >> 40) * kTwoToMinus23 - 1.0f;  // 24 bits: exact, in [-1, 1)
    out[i] = rule.center + rule.half_width * (rule.absolute ? std::fabs(u) : u);
  }
}

}  // namespace ltx::synth
