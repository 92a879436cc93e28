// Generation parameters: the official defaults (ltx_pipelines/utils/constants.py PipelineParams, LTX_2_PARAMS,
// LTX_2_3_PARAMS, DEFAULT_NEGATIVE_PROMPT) and the request checks the pipelines make (helpers.py
// assert_resolution, the 8k+1 frame grid), failing with the nearest valid values.
#pragma once

#include <cstdint>
#include <string>

#include "pipeline/guidance.h"

namespace ltx {

struct AvGuidance {
  GuiderParams video, audio;
};

struct PipelineDefaults {
  int steps = 40;
  AvGuidance guidance;
  int64_t frames = 121;
  double fps = 24.0;
  int64_t height = 512, width = 768;  // stage 1 (the two-stage output is twice this)
};

// constants.py detect_params: LTX-2.3 defaults when the checkpoint's `model_version` metadata starts with "2.3",
// LTX-2 defaults otherwise. The STG block (29 / 28) is clamped to the model's depth so tiny models keep a valid
// block.
PipelineDefaults pipeline_defaults(const std::string& model_version, int64_t n_layers);

// constants.py LTX_2_3_HQ_PARAMS, what ti2vid_two_stages_hq.py (the res_2s pipeline) runs with on either model:
// 15 steps, no STG, video rescale 0.45 and audio rescale 1 (its 1088x1920 output size is the request's to give).
PipelineDefaults hq_pipeline_defaults();

const std::string& default_negative_prompt();

// Throws one ltx::Error naming every problem and the nearest valid values: frames must be 8k+1, height and width
// positive multiples of 32 (64 for two stages), fps positive.
void check_generation_request(int64_t frames, int64_t height, int64_t width, double fps, bool two_stage);

}  // namespace ltx
