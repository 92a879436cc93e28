// Batches: B generations through the DiT together (every guidance pass holds B rows) equal B single runs given the
// corresponding noise. The batch draws one randn of shape [B, ...] per noise tensor, as the reference noiser does
// for a batched latent state; item i of it is replayed into a single run. Tiny one-stage golden model (f32), with
// the LTX-2.3 guidance including rescale, whose std is taken per item.
#include <gtest/gtest.h>

#include <cmath>

#include "io/safetensors.h"
#include "pipeline/noise.h"
#include "stages/av_models.h"
#include "stages/pipelines.h"

namespace ltx {
namespace {

using namespace stages;

const std::string kCase = std::string(LTX_SOURCE_DIR) + "/tests/golden/pipeline/t2v_audio_one_stage/";

Tensor repeat_rows(const Tensor& t, int64_t b) {
  Shape s = t.shape();
  s[0] = b;
  return t.broadcast_to(s).contiguous();
}

Tensor row(const Tensor& t, int64_t i) { return t.slice(0, i, i + 1).contiguous(); }

TEST(Batch, TwoItemsEqualTwoSingleRuns) {
  AvModels models = load_av_models(open_safetensors(kCase + "weights.safetensors"), DType::F32, cpu_backend(),
                                   {.video_decoder = false, .audio_decoder = false});
  const SafetensorsFile in = SafetensorsFile::open(kCase + "inputs.safetensors");
  const TextContexts one{in.get("context.video.positive"), in.get("context.audio.positive"),
                         in.get("context.video.negative"), in.get("context.audio.negative")};
  // Two prompts: the recorded positive, and the negative used as a second positive.
  const TextContexts two{
      Tensor::from_floats(DType::F32, {2, one.video_positive.dim(1), one.video_positive.dim(2)},
                          [&] {
                            auto a = one.video_positive.to_floats(), b = one.video_negative.to_floats();
                            a.insert(a.end(), b.begin(), b.end());
                            return a;
                          }()),
      Tensor::from_floats(DType::F32, {2, one.audio_positive.dim(1), one.audio_positive.dim(2)},
                          [&] {
                            auto a = one.audio_positive.to_floats(), b = one.audio_negative.to_floats();
                            a.insert(a.end(), b.begin(), b.end());
                            return a;
                          }()),
      repeat_rows(one.video_negative, 2), repeat_rows(one.audio_negative, 2)};
  GenerationSpec spec;
  spec.frames = 9;
  spec.height = 64;
  spec.width = 96;
  spec.steps = 2;
  spec.guidance = pipeline_defaults("2.3", models.dit->config().n_layers).guidance;
  ASSERT_NE(spec.guidance.video.rescale_scale, 0.0f);  // the per-item std is exercised
  spec.batch = 2;
  TorchGenerator gen(10);
  TorchNoise live(gen);
  NoiseRecorder recorder(live);
  const AvLatents batch = run_one_stage(*models.dit, spec, two, recorder);
  ASSERT_EQ(recorder.entries().size(), 2u);  // one [2, ...] draw per stream
  EXPECT_EQ(recorder.entries()[0].second.dim(0), 2);

  spec.batch = 1;
  for (int64_t i = 0; i < 2; ++i) {
    std::vector<std::pair<std::string, Tensor>> item;
    for (size_t k = 0; k < recorder.entries().size(); ++k)
      item.emplace_back(noise_tensor_name(k), row(recorder.entries()[k].second, i));
    NoiseReplayer replay(item);
    const TextContexts text{row(two.video_positive, i), row(two.audio_positive, i), one.video_negative,
                            one.audio_negative};
    const AvLatents single = run_one_stage(*models.dit, spec, text, replay);
    for (const auto& [got, want] :
         {std::pair{row(batch.video, i), single.video}, {row(batch.audio, i), single.audio}}) {
      const auto g = got.to_floats(), w = want.to_floats();
      ASSERT_EQ(g.size(), w.size());
      float max_diff = 0, max_abs = 0;
      for (size_t k = 0; k < g.size(); ++k) {
        max_diff = std::max(max_diff, std::abs(g[k] - w[k]));
        max_abs = std::max(max_abs, std::abs(w[k]));
      }
      EXPECT_LE(max_diff, 1e-5f * std::max(1.0f, max_abs)) << "item " << i;
    }
  }
  // The two items differ (different prompts and noise), so equality above is not trivial.
  const auto a = row(batch.video, 0).to_floats(), b = row(batch.video, 1).to_floats();
  float d = 0;
  for (size_t k = 0; k < a.size(); ++k) d = std::max(d, std::abs(a[k] - b[k]));
  EXPECT_GT(d, 1e-2f);
}

}  // namespace
}  // namespace ltx
