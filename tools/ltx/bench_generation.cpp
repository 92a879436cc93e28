// `ltx bench --generation GGUF [--prompt-tokens N] [--new-tokens N] [--reps N] [--precision validation|production]
// [--int8-activations]`:
// our side of bench/generation.sh. Gemma 3 from a GGUF: a prompt of N tokens (a fixed text, repeated and cut)
// prefilled into the KV cache, then N new tokens greedily, every one generated (no stop token); prompt processing
// and generation speed in tokens/s (median of the repetitions after a warm-up) as key=value lines.
// bench/generation.sh prints them beside llama.cpp's and transformers' on the same file. --precision is validation
// or production (the default).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "commands.h"
#include "core/cache_dir.h"
#include "core/error.h"
#include "core/int8_activations.h"
#include "models/gemma3/generation.h"
#include "models/gemma3/tokenizer.h"
#include "option_values.h"
#include "stages/default_model.h"

namespace ltx::cli {

int bench_generation(Args args) {
  if (args.empty()) fail("bench", "--generation needs a GGUF");
  const std::string gguf = args[0];
  int64_t prompt_tokens = 200, new_tokens = 128, reps = 3;
  DType compute = DType::BF16;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string a = args[i];
    if (a == "--int8-activations") {
      set_int8_activations(true);
      continue;
    }
    if (i + 1 >= args.size()) fail("bench", a + " needs a value");
    const std::string v = args[++i];
    if (a == "--prompt-tokens")
      prompt_tokens = whole_number("bench", a, v, 1, 8192);
    else if (a == "--new-tokens")
      new_tokens = whole_number("bench", a, v, 1, 8192);
    else if (a == "--reps")
      reps = whole_number("bench", a, v, 1, 100);
    else if (a == "--precision" && (v == "validation" || v == "production"))
      compute = v == "validation" ? DType::F32 : DType::BF16;
    else
      fail("bench", "unknown option " + a);
  }
  const gemma3::Tokenizer tokenizer = gemma3::Tokenizer::load(gguf);
  gemma3::Model model = gemma3::Model::load(gguf, compute, cpu_backend(), prepared_cache_dir());
  // The prompt: <bos> and a fixed text repeated until long enough, cut to prompt_tokens.
  const std::string text =
      "A red fox runs through a snowy forest at dawn, its breath clouding in the cold air while the low sun turns the "
      "frost on the branches gold and a raven calls from the pines. ";
  std::vector<int32_t> ids{tokenizer.bos_id()};
  while (static_cast<int64_t>(ids.size()) < prompt_tokens) {
    const std::vector<int32_t> more = tokenizer.encode(text);
    ids.insert(ids.end(), more.begin(), more.end());
  }
  ids.resize(static_cast<size_t>(prompt_tokens));
  const gemma3::PromptTokens prompt = gemma3::right_padded_prompt(ids, 1, tokenizer.pad_id());
  gemma3::GenerationOptions o;
  o.sampling.greedy = true;
  o.max_new_tokens = new_tokens;
  std::vector<double> prefill, decode;
  for (int64_t r = 0; r <= reps; ++r) {  // the first run warms up (plans compiled, pages faulted in)
    const gemma3::GenerationResult g = gemma3::generate(model, prompt, o);
    if (r == 0) continue;
    prefill.push_back(static_cast<double>(prompt_tokens) / g.prefill_seconds);
    // The first new token comes from the prefill's logits: new_tokens - 1 decode steps.
    decode.push_back(static_cast<double>(new_tokens - 1) / g.decode_seconds);
  }
  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  std::printf("prompt_tokens=%lld\nnew_tokens=%lld\nprompt_tokens_per_s=%.1f\ngeneration_tokens_per_s=%.1f\n",
              static_cast<long long>(prompt_tokens), static_cast<long long>(new_tokens), median(prefill),
              median(decode));
  return 0;
}

}  // namespace ltx::cli
