// DiT behaviour beyond the golden cases (which `ltx verify` checks): key errors, the A<->V timestep semantics
// choice, and plan reuse.
#include "models/ltx/dit/dit.h"

#include <gtest/gtest.h>

#include <cmath>

#include "io/safetensors.h"
#include "verify/ltx_runner_util.h"

namespace ltx::ltxm {
namespace {

const std::string kGolden = std::string(LTX_SOURCE_DIR) + "/tests/golden/dit/";

DitStreamInput stream(const SafetensorsFile& in, const std::string& s) {
  return {in.get(s + ".latent"),    in.get(s + ".sigma"),   in.get(s + ".timesteps"),
          in.get(s + ".positions"), in.get(s + ".context"), {}};
}

Dit load(const std::string& c, DitModelType type, AvTimestepSemantics sem) {
  auto src = open_safetensors(kGolden + c + "/weights.safetensors");
  DitConfig cfg = DitConfig::from_metadata(checkpoint_transformer_config(*src), type);
  cfg.av_semantics = sem;
  return Dit::load(WeightLoader(src, "model.diffusion_model."), cfg, DType::F32, cpu_backend());
}

double max_diff(const Tensor& a, const Tensor& b) {
  const auto x = a.to_floats(), y = b.to_floats();
  double m = 0;
  for (size_t i = 0; i < x.size(); ++i) m = std::max(m, std::abs(static_cast<double>(x[i]) - y[i]));
  return m;
}

DitOutput run(const std::string& c, AvTimestepSemantics sem) {
  const SafetensorsFile in = SafetensorsFile::open(kGolden + c + "/inputs.safetensors");
  Dit dit = load(c, DitModelType::AudioVideo, sem);
  return dit.run({stream(in, "video"), stream(in, "audio"), {}});
}

TEST(LtxDit, VideoOnlyConfigOnAudioVideoWeightsListsEveryUnexpectedKey) {
  try {
    load("ltx23_av", DitModelType::VideoOnly, AvTimestepSemantics::OtherSigma);
    FAIL() << "loading audio-video weights as video-only must fail";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("audio_patchify_proj.weight"), std::string::npos) << msg;
    EXPECT_NE(msg.find("transformer_blocks.1.video_to_audio_attn.to_q.weight"), std::string::npos) << msg;
    EXPECT_NE(msg.find("av_ca_v2a_gate_adaln_single.linear.bias"), std::string::npos) << msg;
  }
}

// A call whose tokens share each item's sigma broadcasts one modulation row per item unless intermediates are
// collected (which taps the per-token table the goldens hold); both give the same bits, in f32 and bf16.
TEST(LtxDit, BroadcastModulationRowsEqualPerTokenRows) {
  const SafetensorsFile in = SafetensorsFile::open(kGolden + "ltx23_av_stg/inputs.safetensors");
  for (DType compute : {DType::F32, DType::BF16}) {
    auto src = open_safetensors(kGolden + "ltx23_av_stg/weights.safetensors");
    const DitConfig cfg = DitConfig::from_metadata(checkpoint_transformer_config(*src), DitModelType::AudioVideo);
    Dit dit = Dit::load(WeightLoader(src, "model.diffusion_model."), cfg, compute, cpu_backend());
    const DitOutput rows = dit.run({stream(in, "video"), stream(in, "audio"), {}}, false);
    const DitOutput tokens = dit.run({stream(in, "video"), stream(in, "audio"), {}}, true);
    EXPECT_EQ(max_diff(rows.video_velocity, tokens.video_velocity), 0.0) << dtype_name(compute);
    EXPECT_EQ(max_diff(rows.audio_velocity, tokens.audio_velocity), 0.0) << dtype_name(compute);
    EXPECT_EQ(max_diff(rows.video_denoised, tokens.video_denoised), 0.0) << dtype_name(compute);
  }
}

TEST(LtxDit, AvSemanticsAgreeWhenEveryTokenHasTheSharedSigma) {
  // ltx23_av_stg's inputs: video and audio sigma 0.6, every token noised (t = sigma): all three variants coincide.
  const DitOutput a = run("ltx23_av_stg", AvTimestepSemantics::OtherSigma);
  for (auto sem : {AvTimestepSemantics::OwnTokensOtherGate, AvTimestepSemantics::OwnTokens}) {
    const DitOutput b = run("ltx23_av_stg", sem);
    EXPECT_LT(max_diff(a.video_velocity, b.video_velocity), 1e-6);
    EXPECT_LT(max_diff(a.audio_velocity, b.audio_velocity), 1e-6);
  }
}

TEST(LtxDit, AvSemanticsDifferForConditionedTokens) {
  // First-frame conditioning: those tokens have t = 0, so per-token A<->V modulation changes the result.
  const DitOutput a = run("ltx23_av_first_frame", AvTimestepSemantics::OtherSigma);
  const DitOutput b = run("ltx23_av_first_frame", AvTimestepSemantics::OwnTokensOtherGate);
  const DitOutput c = run("ltx23_av_first_frame", AvTimestepSemantics::OwnTokens);
  EXPECT_GT(max_diff(a.video_velocity, b.video_velocity), 1e-4);
  EXPECT_GT(max_diff(b.video_velocity, c.video_velocity), 1e-4);
}

TEST(LtxDit, BatchedGuidancePassesMatchSeparateCalls) {
  // Sample 1 of a batch with STG in block 1 equals a batch-1 call with the same perturbation.
  const SafetensorsFile in = SafetensorsFile::open(kGolden + "ltx23_av/inputs.safetensors");
  Dit dit = load("ltx23_av", DitModelType::AudioVideo, AvTimestepSemantics::OtherSigma);
  const SamplePerturbations stg = {{Perturbation::SkipVideoSelfAttn, std::vector<int64_t>{1}},
                                   {Perturbation::SkipAudioSelfAttn, std::vector<int64_t>{1}}};
  const SamplePerturbations iso = {{Perturbation::SkipA2V, std::nullopt}, {Perturbation::SkipV2A, std::nullopt}};
  const auto twice = [](const Tensor& t) {
    std::vector<float> v = t.to_floats(), w = v;
    v.insert(v.end(), w.begin(), w.end());
    Shape s = t.shape();
    s[0] *= 2;
    return Tensor::from_floats(DType::F32, s, v);
  };
  DitStreamInput v2 = stream(in, "video"), a2 = stream(in, "audio");
  for (DitStreamInput* s : {&v2, &a2}) {
    s->latent = twice(s->latent);
    s->sigma = twice(s->sigma);
    s->timesteps = twice(s->timesteps);
    s->positions = twice(s->positions);
    s->context = twice(s->context);
  }
  const DitOutput batched = dit.run({v2, a2, {stg, iso}});
  const DitOutput one_stg = dit.run({stream(in, "video"), stream(in, "audio"), {stg}});
  const DitOutput one_iso = dit.run({stream(in, "video"), stream(in, "audio"), {iso}});
  const int64_t n = one_stg.video_velocity.numel();
  const auto vb = batched.video_velocity.to_floats(), vs = one_stg.video_velocity.to_floats(),
             vi = one_iso.video_velocity.to_floats();
  double d0 = 0, d1 = 0;
  for (int64_t i = 0; i < n; ++i) {
    d0 = std::max(d0, std::abs(static_cast<double>(vb[static_cast<size_t>(i)]) - vs[static_cast<size_t>(i)]));
    d1 = std::max(d1, std::abs(static_cast<double>(vb[static_cast<size_t>(n + i)]) - vi[static_cast<size_t>(i)]));
  }
  EXPECT_LT(d0, 1e-5);
  EXPECT_LT(d1, 1e-5);
  EXPECT_GT(max_diff(one_stg.video_velocity, one_iso.video_velocity), 1e-4);  // the passes really differ
}

}  // namespace
}  // namespace ltx::ltxm
