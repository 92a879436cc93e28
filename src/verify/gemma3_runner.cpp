// Golden-case runner for the Gemma-3 text model (component "gemma3_text"): transformers' Gemma3TextModel called
// on a left-padded batch with positions 0..T-1 (params.position_ids), every row compared, pad rows included.
#include <filesystem>

#include "io/safetensors.h"
#include "models/gemma3/model.h"
#include "verify/components.h"

namespace ltx {
namespace {

std::map<std::string, Tensor> run_gemma3_text(const GoldenCase& c, Precision precision) {
  namespace fs = std::filesystem;
  const std::string config = (fs::path(c.dir) / c.params().at("hf_config").get<std::string>()).string();
  const DType compute = precision == Precision::Validation ? DType::F32 : DType::BF16;
  gemma3::Model model = gemma3::Model::from_hf(config, c.weights_path(), compute);
  const SafetensorsFile inputs = SafetensorsFile::open(c.inputs_path());
  const gemma3::Output out = model.forward_padded(inputs.get("input_ids"), inputs.get("attention_mask"), true);
  std::map<std::string, Tensor> result = out.intermediates;
  for (size_t i = 0; i < out.hidden_states.size(); ++i)
    result["hidden_states." + std::to_string(i)] = out.hidden_states[i];
  return result;
}

}  // namespace

void register_gemma3_runners(ComponentRegistry& registry) { registry.add("gemma3_text", run_gemma3_text); }

}  // namespace ltx
