// The request checks of the public API (ltx/request.hpp check_request, Engine::check): every problem of a request
// collected into one ltx::Error (InvalidRequest), each naming the field, its value and the valid range.
#pragma once

#include <string>
#include <vector>

#include "ltx/options.hpp"
#include "ltx/request.hpp"
#include "stages/loaded_models.h"

namespace ltx::api {

// The request with a retake's frames, size and rate taken from its file; any other request, or one whose file does
// not read (request_problems then names the problem), as it is.
GenerateRequest with_retake_source(const GenerateRequest& request);

// What check_request reports, one string each (empty: none).
std::vector<std::string> request_problems(const GenerateRequest& request);

// What the request asks of the loaded models and options: an upsampler for two stages, a text encoder for prompts,
// the DiT's blocks for STG, no distilled checkpoint beside a distilled LoRA.
std::vector<std::string> engine_problems(const GenerateRequest& request, const EngineOptions& options,
                                         const stages::LoadedModels& models);

// Throws one ltx::Error("generate", ..., InvalidRequest) listing `problems` when there are any.
void throw_if_any(const std::vector<std::string>& problems);

}  // namespace ltx::api
