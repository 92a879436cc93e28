#include "model_options.h"

#include <functional>
#include <set>

#include "option_values.h"

namespace ltx::cli {

const char* const kModelOptionsUsage =
    "[--checkpoint FILE] [--text-encoder PATH [--mmproj FILE]] [--dit FILE|DIR [--dit-config FILE]] [--upsampler "
    "FILE]\n"
    "[--lora FILE[:STRENGTH]]... [--lora-allow-partial] [--distilled-lora FILE[:STRENGTH]]\n"
    "[--distilled-lora-stage1 STRENGTH (stage 1 too, as the HQ pipeline: 0.25)]\n"
    "[--precision validation|production] [--memory-budget SIZE (default: MemAvailable)]\n"
    "[--int8-activations (GGUF-quantized weights multiply int8 activations: faster, less exact)]\n"
    "[--backend cpu|xla (what the plans run on)] [--xla-plugin FILE (the PJRT plugin of --backend xla)]";

bool is_model_option_with_value(const std::string& option) {
  static const std::set<std::string> options = {
      "--checkpoint", "--dit",       "--dit-config",    "--lora",      "--distilled-lora",        "--text-encoder",
      "--mmproj",     "--upsampler", "--memory-budget", "--precision", "--distilled-lora-stage1", "--backend",
      "--xla-plugin"};
  return options.count(option) != 0;
}

void take_model_option(std::string_view command, EngineOptions& e, const std::string& a, const std::string& v) {
  if (a == "--checkpoint")
    e.checkpoint = v;
  else if (a == "--dit")
    e.dit = v;
  else if (a == "--dit-config")
    e.dit_config = v;
  else if (a == "--lora")
    e.loras.push_back(parse_lora_file(v, "--lora"));
  else if (a == "--distilled-lora") {
    if (e.distilled_lora) usage_error(command, "--distilled-lora is given once");
    e.distilled_lora = parse_lora_file(v, "--distilled-lora");
  } else if (a == "--distilled-lora-stage1") {
    if (e.distilled_lora_stage1_strength) usage_error(command, "--distilled-lora-stage1 is given once");
    e.distilled_lora_stage1_strength = static_cast<float>(finite_number(command, a, v));
  } else if (a == "--text-encoder")
    e.text_encoder = v;
  else if (a == "--mmproj")
    e.text_encoder_mmproj = v;
  else if (a == "--upsampler")
    e.upsampler = v;
  else if (a == "--memory-budget")
    e.memory_budget_bytes = parse_size(v, "--memory-budget");
  else if (a == "--backend")
    e.backend = v;
  else if (a == "--xla-plugin")
    e.xla_plugin = v;
  else if (a == "--precision") {
    if (v != "validation" && v != "production")
      usage_error(command, "--precision is validation or production, got " + v);
    e.precision = v == "validation" ? Precision::Validation : Precision::Production;
  }
}

bool take_model_flag(EngineOptions& e, const std::string& option) {
  if (option == "--lora-allow-partial")
    e.lora_allow_partial = true;
  else if (option == "--int8-activations")
    e.int8_activations = true;
  else
    return false;
  return true;
}

bool names_no_model(const EngineOptions& e) { return e.checkpoint.empty() && e.dit.empty() && e.text_encoder.empty(); }

EngineOptions with_default_model(EngineOptions engine, const std::function<void(const std::string&)>& note) {
  bool made = false;
  const EngineOptions model = embedded_default_model(&made);
  engine.checkpoint = model.checkpoint;
  engine.text_encoder = model.text_encoder;
  if (note) {
    note(made ? "made the embedded default model " + model.checkpoint : "embedded default model " + model.checkpoint);
    note("(tiny, trained on a small world of colored shapes that move with a tone: see the README)");
  }
  return engine;
}

}  // namespace ltx::cli
