// The distilled flow (GenerationSpec::distilled, ltx_pipelines/distilled.py) and the stage-2 hook
// (TwoStageModels::before_stage2) on the tiny two-stage golden model: stage 1 runs the distilled stage-1 sigma list
// with one positive pass per step (no negative contexts needed), stage 2 the stage-2 list; the hook runs once,
// after every stage-1 step and the upsample, before the first stage-2 tensor.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "io/test_files.h"
#include "nn/weight_source.h"
#include "pipeline/noise.h"
#include "pipeline/schedule.h"
#include "stages/av_models.h"
#include "stages/generate.h"
#include "stages/pipelines.h"

namespace ltx::stages {
namespace {

const std::string kCase = std::string(LTX_SOURCE_DIR) + "/tests/golden/pipeline/two_stage/";

bool starts(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }

// A two-stage run under a plan that does not keep every phase resident ends the upsampler's phase before stage 2:
// the pages of its mapped convolution weights (kept as stored, not copied) leave the process.
TEST(DistilledFlow, UpsamplerWeightPagesAreDroppedAfterItsPhase) {
  const auto source = open_safetensors(kCase + "weights.safetensors");
  const auto up = load_upsampler(source, DType::F32, "spatial_upsampler.", "upsampler_config");
  const Tensor& w = up.res_blocks.at(0).conv1.weight;
  ASSERT_EQ(w.dtype(), DType::F32);  // as stored: a view of the mapped file
  const size_t page = 4096;
  size_t bytes = 0;
  volatile uint8_t sink = 0;
  const auto touch = [&](const upsampler::ResBlock& b) {
    for (const Tensor* t : {&b.conv1.weight, &b.conv2.weight}) {
      for (size_t i = 0; i < t->nbytes(); i += page) sink = sink + static_cast<uint8_t>(t->raw()[i]);
      bytes += t->nbytes();
    }
  };
  for (const auto& b : up.res_blocks) touch(b);
  for (const auto& b : up.post_upsample_res_blocks) touch(b);
  const size_t before = test::mapping_rss(w.raw());
  up.drop_weight_pages();
  const size_t after = test::mapping_rss(w.raw());
  EXPECT_GE(before - std::min(before, after), bytes / 2) << before << " -> " << after << " of " << bytes;
}

TEST(DistilledFlow, FixedSigmasNoGuidanceAndTheStage2Hook) {
  const auto source = open_safetensors(kCase + "weights.safetensors");
  AvModels models = load_av_models(source, DType::F32, cpu_backend(), {.video_decoder = false, .audio_decoder = false});
  const auto up = load_upsampler(source, DType::F32, "spatial_upsampler.", "upsampler_config");
  TextContexts text = load_text_contexts(kCase + "inputs.safetensors");
  text.video_negative = Tensor();  // the distilled flow makes no unconditional pass
  text.audio_negative = Tensor();

  GenerationSpec spec;
  spec.frames = 9;
  spec.height = 128;
  spec.width = 192;
  spec.distilled = true;
  TorchGenerator generator(10);
  TorchNoise noise(generator);
  std::vector<std::string> names;
  std::vector<float> sigmas1, sigmas2;
  size_t hook_at = 0;
  int hook_calls = 0;
  const Observer observe = [&](const std::string& name, const Tensor& t) {
    names.push_back(name);
    if (name == "stage1.sigmas") sigmas1 = t.to_floats();
    if (name == "stage2.sigmas") sigmas2 = t.to_floats();
  };
  const TwoStageModels m{*models.dit, *models.dit, up, models.video_stats, [&] {
                           ++hook_calls;
                           hook_at = names.size();
                         }};
  run_two_stage(m, spec, text, noise, observe);

  const auto d1 = distilled_sigmas_stage1(), d2 = distilled_sigmas_stage2();
  EXPECT_EQ(sigmas1, std::vector<float>(d1.begin(), d1.end()));
  EXPECT_EQ(sigmas2, std::vector<float>(d2.begin(), d2.end()));
  ASSERT_EQ(hook_calls, 1);
  int stage1_steps = 0;
  for (size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(names[i].find("uncond"), std::string::npos) << names[i];
    EXPECT_EQ(names[i].find("perturbed"), std::string::npos) << names[i];
    if (starts(names[i], "stage1.")) EXPECT_LT(i, hook_at) << names[i];
    if (names[i] == "upsampled.video") EXPECT_LT(i, hook_at);
    if (starts(names[i], "stage2.")) EXPECT_GE(i, hook_at) << names[i];
    const std::string& n = names[i];
    if (starts(n, "stage1.x0.video.step") && n.size() > 5 && n.compare(n.size() - 5, 5, ".cond") == 0) ++stage1_steps;
  }
  EXPECT_EQ(stage1_steps, static_cast<int>(d1.size()) - 1);  // one pass per step
}

}  // namespace
}  // namespace ltx::stages
