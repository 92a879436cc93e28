// The public API's options and requests as the stages take them, and the stages' report as a GenerateResult.
#pragma once

#include <cstddef>
#include <vector>

#include "ltx/options.hpp"
#include "ltx/request.hpp"
#include "ltx/result.hpp"
#include "stages/generate.h"
#include "stages/image_conditioning.h"
#include "stages/loaded_models.h"

namespace ltx::api {

stages::ModelFiles to_stages(const EngineOptions& options);
std::vector<stages::ImageConditionInput> to_stages(const std::vector<ImageCondition>& images);
stages::GenerateRequest to_stages(const GenerateRequest& request, size_t memory_budget_bytes);

// The report's items and settings; the caller fills the timing of the call (stages, seconds, peak_rss_bytes).
GenerateResult to_result(stages::GenerateReport report, const GenerateRequest& request, const EngineOptions& options);

}  // namespace ltx::api
