// The options that choose the models an ltx::Engine loads, shared by `ltx generate` and `ltx serve`: the
// checkpoint, another DiT file, the text encoder, the upsampler, LoRAs, precision and the memory budget.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "ltx/options.hpp"

namespace ltx::cli {

// Usage lines for the commands' --help.
extern const char* const kModelOptionsUsage;

bool is_model_option_with_value(const std::string& option);
// Sets what `option` (one of is_model_option_with_value's) says; errors name `command`.
void take_model_option(std::string_view command, EngineOptions& engine, const std::string& option,
                       const std::string& value);
// The model options without a value (--lora-allow-partial); false for any other flag.
bool take_model_flag(EngineOptions& engine, const std::string& option);

// Whether the options name no model file, so that the embedded default model runs.
bool names_no_model(const EngineOptions& engine);
// `engine` with the embedded default model's checkpoint and text encoder (made on first use); `note` hears what
// was made or found.
EngineOptions with_default_model(EngineOptions engine, const std::function<void(const std::string&)>& note);

}  // namespace ltx::cli
