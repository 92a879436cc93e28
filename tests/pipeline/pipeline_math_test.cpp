// The model-free pipeline arithmetic against values worked out by hand from the reference formulas
// (ltx_core guiders.py, diffusion_steps.py, noisers.py, patchifiers.py); the golden cases check the same code
// end to end against the reference itself.
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"
#include "pipeline/diffusion_step.h"
#include "pipeline/guidance.h"
#include "pipeline/latent_tools.h"
#include "pipeline/params.h"

namespace ltx {
namespace {

Tensor t3(std::initializer_list<float> v) {
  return Tensor::from_floats(DType::F32, {1, static_cast<int64_t>(v.size()), 1}, v);
}

TEST(Guidance, CombinesPassesOnX0) {
  GuiderParams p{3.0f, 1.0f, {0}, 0.0f, 3.0f, 0};
  const Tensor c = t3({1, 2}), u = t3({0, 1}), pe = t3({1, 1}), m = t3({2, 2});
  // c + 2(c-u) + 1(c-p) + 2(c-m) = [1+2+0-2, 2+2+1+0]
  const std::vector<float> r = guide(p, {c, u, pe, m}).to_floats();
  EXPECT_FLOAT_EQ(r[0], 1.0f);
  EXPECT_FLOAT_EQ(r[1], 5.0f);
}

TEST(Guidance, RescaleMatchesStdRatio) {
  GuiderParams p{2.0f, 0.0f, {}, 0.5f, 1.0f, 0};
  const Tensor c = t3({1, 3}), u = t3({0, 0});
  // pred = 2c = [2, 6]; std(c)/std(pred) = 0.5; factor 0.5·0.5 + 0.5 = 0.75
  const std::vector<float> r = guide(p, {c, u, {}, {}}).to_floats();
  EXPECT_FLOAT_EQ(r[0], 1.5f);
  EXPECT_FLOAT_EQ(r[1], 4.5f);
}

TEST(Guidance, MissingPassIsAnError) {
  GuiderParams p{3.0f, 0.0f, {}, 0.0f, 1.0f, 0};
  EXPECT_THROW(guide(p, {t3({1, 2}), {}, {}, {}}), Error);
  EXPECT_TRUE(p.needs_uncond());
  EXPECT_FALSE(p.needs_perturbed());
  EXPECT_FALSE(p.needs_isolated());
}

TEST(Guidance, SkipStep) {
  GuiderParams p;
  p.skip_step = 1;
  EXPECT_FALSE(p.skip(0));
  EXPECT_TRUE(p.skip(1));
  EXPECT_FALSE(p.skip(2));
}

TEST(DiffusionStep, EulerNoiseAndPostProcess) {
  // x = 1, x0 = 0.5, σ 0.8 -> 0.6: v = 0.625, x' = 1 - 0.125
  EXPECT_FLOAT_EQ(euler_step(t3({1.0f}), t3({0.5f}), 0.8f, 0.6f).to_floats()[0], 0.875f);
  EXPECT_THROW(euler_step(t3({1.0f}), t3({0.5f}), 0.0f, 0.0f), Error);
  const Tensor mask = t3({1.0f, 0.0f});
  const std::vector<float> n = add_noise(t3({2, 2}), t3({10, 10}), mask, 0.5f).to_floats();
  EXPECT_FLOAT_EQ(n[0], 6.0f);  // 10·0.5 + 2·0.5
  EXPECT_FLOAT_EQ(n[1], 2.0f);  // mask 0 keeps the latent
  const std::vector<float> d = post_process_x0(t3({1, 1}), mask, t3({7, 7})).to_floats();
  EXPECT_FLOAT_EQ(d[0], 1.0f);
  EXPECT_FLOAT_EQ(d[1], 7.0f);
}

TEST(LatentTools, TokensRoundTripInFhwOrder) {
  const VideoLatentShape s{1, 2, 2, 2, 3};
  std::vector<float> v(24);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  const Tensor latent = Tensor::from_floats(DType::F32, s.shape(), v);
  const Tensor tok = video_to_tokens(latent);
  ASSERT_EQ(tok.shape(), (Shape{1, 12, 2}));
  // token 1 = (f 0, h 0, w 1): channel 0 at latent index 1, channel 1 at 12 + 1
  EXPECT_EQ(tok.to_floats()[2], 1.0f);
  EXPECT_EQ(tok.to_floats()[3], 13.0f);
  EXPECT_EQ(video_from_tokens(tok, s).to_floats(), v);
  const AudioLatentShape a{1, 2, 3, 4};
  const Tensor al = Tensor::from_floats(DType::F32, a.shape(), v);
  EXPECT_EQ(audio_from_tokens(audio_to_tokens(al), a).to_floats(), v);
  EXPECT_THROW(video_from_tokens(tok, VideoLatentShape{1, 2, 1, 2, 3}), Error);
}

TEST(LatentTools, PositionsAndShapes) {
  const VideoLatentShape s = VideoLatentShape::from_pixels(1, 8, 17, 64, 96);
  EXPECT_EQ(s.shape(), (Shape{1, 8, 3, 2, 3}));
  const std::vector<float> p = video_positions(s, 24.0).to_floats();  // [1, 3, 18, 2]
  EXPECT_FLOAT_EQ(p[0], 0.0f);                                        // frame 0 starts at 0 (causal fix)
  EXPECT_FLOAT_EQ(p[1], 1.0f / 24.0f);                                // and ends at pixel frame 1
  EXPECT_FLOAT_EQ(p[6 * 2 + 0], 1.0f / 24.0f);                        // token 6 = frame 1: [1, 9) / fps
  EXPECT_FLOAT_EQ(p[6 * 2 + 1], 9.0f / 24.0f);
  EXPECT_FLOAT_EQ(p[(18 + 2) * 2 + 1], 32.0f);  // height axis of token 2 (h 0): [0, 32); token 3 is h 1
  EXPECT_FLOAT_EQ(p[(18 + 3) * 2 + 1], 64.0f);
  // 121 frames at 24 fps: round(5.0417 · 25) = 126 latent frames; 9 at 24: round(9.375) = 9
  EXPECT_EQ(AudioLatentShape::from_video(1, 8, 16, 121, 24.0).frames, 126);
  EXPECT_EQ(AudioLatentShape::from_video(1, 8, 16, 9, 24.0).frames, 9);
  const std::vector<float> ap = audio_positions({1, 8, 3, 16}).to_floats();
  EXPECT_FLOAT_EQ(ap[0], 0.0f);
  EXPECT_FLOAT_EQ(ap[1], 0.01f);  // mel frame 1 · 160 / 16000
  EXPECT_FLOAT_EQ(ap[2], 0.01f);
  EXPECT_FLOAT_EQ(ap[3], 0.05f);
}

TEST(Params, RequestChecksNameNearestValues) {
  EXPECT_NO_THROW(check_generation_request(121, 512, 768, 24.0, false));
  try {
    check_generation_request(120, 500, 768, 24.0, false);
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("113 or 121"), std::string::npos) << m;
    EXPECT_NE(m.find("480 or 512"), std::string::npos) << m;
  }
  EXPECT_THROW(check_generation_request(121, 544, 768, 24.0, true), Error);  // 544 is not a multiple of 64
  const PipelineDefaults d23 = pipeline_defaults("2.3.0", 48), d20 = pipeline_defaults("", 48);
  EXPECT_EQ(d23.steps, 30);
  EXPECT_EQ(d20.steps, 40);
  EXPECT_EQ(d23.guidance.video.stg_blocks, std::vector<int64_t>{28});
  EXPECT_EQ(d20.guidance.audio.stg_blocks, std::vector<int64_t>{29});
  EXPECT_FLOAT_EQ(d23.guidance.audio.cfg_scale, 7.0f);
}

}  // namespace
}  // namespace ltx
