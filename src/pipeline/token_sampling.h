// The next token from a language model's logits, as transformers' generate chooses it with do_sample
// (generation/utils.py _sample, logits_process.py): the logits divided by the temperature
// (TemperatureLogitsWarper), all but the top_k set to -inf (TopKLogitsWarper), then all but the smallest set whose
// probability reaches top_p (TopPLogitsWarper, at least one kept), softmax, one draw. The draw is our own, from a
// seeded TorchGenerator (the exponential race: argmax p_i / E_i with E_i ~ Exp(1), which picks i with probability
// p_i): reproducible across runs and thread counts, but not torch.multinomial's stream (MKL's exponential
// generator). Greedy takes the first largest logit, as argmax.
#pragma once

#include <cstdint>
#include <span>

#include "pipeline/noise.h"

namespace ltx {

struct SamplingOptions {
  bool greedy = false;
  float temperature = 1.0f;  // > 0
  int64_t top_k = 0;         // 0: off
  float top_p = 1.0f;        // 1: off
};

class TokenSampler {
 public:
  TokenSampler(const SamplingOptions& options, uint64_t seed) : options_(options), generator_(seed) {}
  int32_t next(std::span<const float> logits);

 private:
  SamplingOptions options_;
  TorchGenerator generator_;
};

}  // namespace ltx
