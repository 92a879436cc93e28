// `ltx encode PROMPT... [--prompts-file FILE] --text-encoder GEMMA --checkpoint FILE --out FILE [--hidden-states
//  [--unpadded]] [--precision validation|production]`: the DiT's video and audio text contexts for each prompt
// (Gemma-3, the checkpoint's feature extractor and embeddings connectors), written to one safetensors file as
// `prompt.<i>.video_context`, `prompt.<i>.audio_context` and, with --hidden-states, `prompt.<i>.hidden_states.<l>`:
// [1, max_length, D] left-padded (zeros at the pads, which the feature extractor zeroes anyway), or with --unpadded
// the prompt's own n tokens only, [1, n, D] (the last n columns; tools/world/train.py keeps thousands of them).
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "commands.h"
#include "core/error.h"
#include "io/safetensors.h"
#include "nn/weight_source.h"
#include "stages/text_encoder.h"

namespace ltx::cli {
namespace {

std::vector<std::string> read_prompt_lines(const std::string& path) {
  std::ifstream in(path);
  LTX_CHECK(in.good(), "encode", path, ": cannot read the prompts file");
  std::vector<std::string> prompts;
  for (std::string line; std::getline(in, line);)
    if (line.find_first_not_of(" \t\r") != std::string::npos) prompts.push_back(line);
  LTX_CHECK(!prompts.empty(), "encode", path, ": no prompts (one per line)");
  return prompts;
}

int64_t count_ones(const Tensor& mask) {
  int64_t n = 0;
  for (const float v : mask.to_floats()) n += v != 0.0f;
  return n;
}

}  // namespace

int encode(Args args) {
  std::string text_encoder, checkpoint, out;
  bool hidden = false, unpadded = false;
  DType compute = DType::F32;
  std::vector<std::string> prompts;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string a = args[i];
    const auto value = [&]() -> std::string {
      LTX_CHECK(i + 1 < args.size(), "encode", a, " needs a value");
      return args[++i];
    };
    if (a == "--text-encoder")
      text_encoder = value();
    else if (a == "--checkpoint")
      checkpoint = value();
    else if (a == "--out")
      out = value();
    else if (a == "--hidden-states")
      hidden = true;
    else if (a == "--unpadded")
      unpadded = true;
    else if (a == "--prompts-file")
      for (auto& p : read_prompt_lines(value())) prompts.push_back(p);
    else if (a == "--precision") {
      const std::string p = value();
      LTX_CHECK(p == "validation" || p == "production", "encode", "--precision is validation or production");
      compute = p == "validation" ? DType::F32 : DType::BF16;
    } else if (a.rfind("--", 0) == 0)
      fail("encode", "unknown option " + a);
    else
      prompts.push_back(a);
  }
  LTX_CHECK(!text_encoder.empty() && !checkpoint.empty() && !out.empty(), "encode",
            "usage: ltx encode PROMPT... [--prompts-file FILE] --text-encoder GEMMA(.gguf|folder) --checkpoint "
            "FILE --out FILE [--hidden-states [--unpadded]] [--precision validation|production]");
  LTX_CHECK(!prompts.empty(), "encode", "no prompt given");
  LTX_CHECK(!unpadded || hidden, "encode", "--unpadded applies to --hidden-states");

  const auto source = open_safetensors(checkpoint);
  const Json config = metadata_json(*source, "config");
  LTX_CHECK(config.contains("transformer"), "encode", checkpoint, ": `config` has no \"transformer\" section");
  auto encoder = stages::PromptEncoder::load(text_encoder, source, config.at("transformer"), compute, cpu_backend());

  std::vector<std::pair<std::string, Tensor>> tensors;
  Json prompt_list = Json::array();
  for (size_t i = 0; i < prompts.size(); ++i) {
    stages::PromptContexts c = encoder->encode(prompts[i], hidden);
    const std::string p = "prompt." + std::to_string(i) + ".";
    tensors.emplace_back(p + "video_context", c.video);
    tensors.emplace_back(p + "audio_context", c.audio);
    // The prompt's own tokens: the last n of the left-padded columns, n from the tokenizer's mask.
    const int64_t columns = encoder->max_length();
    const int64_t n = unpadded ? count_ones(encoder->tokenizer().encode_batch({prompts[i]}, columns).mask) : columns;
    for (size_t l = 0; l < c.hidden_states.size(); ++l)
      tensors.emplace_back(p + "hidden_states." + std::to_string(l),
                           c.hidden_states[l].slice(1, columns - n, columns).contiguous());
    prompt_list.push_back(prompts[i]);
  }
  write_safetensors(out, tensors, {{"prompts", prompt_list.dump()}, {"producer", "ltx encode"}});
  std::printf("encode: %zu prompt(s) -> %s\n", prompts.size(), out.c_str());
  return 0;
}

}  // namespace ltx::cli
