// Generation end to end through the public API (ltx::Engine, ltx::save) on the tiny one-stage golden checkpoint
// (DiT, video VAE, audio VAE, BigVGAN+BWE vocoder in the official layout; its recorded text contexts stand in for a
// text encoder): the MP4 read back with libavformat has one H.264 stream of the requested frames and size and one
// AAC stream. Bad requests fail before any work and leave no file; recorded noise replays to the same latents.
#include "stages/generate.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include "io/mp4_writer.h"
#include "io/safetensors.h"
#include "ltx/ltx.hpp"
#include "nn/weight_source.h"
#include "pipeline/noise.h"
#include "stages/av_models.h"
#include "stages/pipelines.h"
#include "tiny_generate.h"

namespace ltx {
namespace {

namespace fs = std::filesystem;

const std::string kCase = test::kTinyGenerateCase;

fs::path temp_dir(const std::string& name) { return test::fresh_temp_dir("generate_test", name); }

bool has_temp_files(const fs::path& dir) {
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().find(".tmp-") != std::string::npos) return true;
  return false;
}

TEST(Generate, NonFiniteLatentsStopTheRunAtTheirStep) {
  // A CFG scale near FLT_MAX (without the rescale, which would normalise it away) overflows x0: the loop stops at
  // the step where the latents first hold a NaN or Inf and says so, rather than decoding garbage into an AAC encoder
  // error. Both samplers' loops check.
  Engine engine(test::tiny_engine_options());
  for (const Sampler sampler : {Sampler::Euler, Sampler::Res2s}) {
    GenerateRequest r = test::tiny_generate_request();
    r.sampler = sampler;
    r.video_guidance.cfg = 3.0e38f;
    r.video_guidance.rescale = 0.0f;
    try {
      engine.generate(r);
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      const std::string m = e.what();
      EXPECT_EQ(e.component(), "denoise") << m;
      EXPECT_NE(m.find("non-finite values (NaN or Inf)"), std::string::npos) << m;
      EXPECT_NE(m.find("latents hold"), std::string::npos) << m;
      EXPECT_NE(m.find("after step "), std::string::npos) << m;
      if (sampler == Sampler::Euler) EXPECT_NE(m.find(" of 2 of denoising"), std::string::npos) << m;
    }
  }
}

// The tiny checkpoint with one tensor's values replaced by NaN, in `dir`.
std::string poisoned_checkpoint(const fs::path& dir, const std::string& poisoned) {
  const SafetensorsFile file = SafetensorsFile::open(kCase + "weights.safetensors");
  std::vector<std::pair<std::string, Tensor>> tensors;
  for (const TensorInfo& info : file.tensors()) {
    Tensor t = file.get(info.name);
    if (info.name == poisoned)
      t = Tensor::from_floats(DType::F32, info.shape,
                              std::vector<float>(static_cast<size_t>(info.shape.numel()), std::nanf("")));
    tensors.emplace_back(info.name, t);
  }
  const std::string path = (dir / "poisoned.safetensors").string();
  write_safetensors(path, tensors, file.metadata());
  return path;
}

TEST(Generate, NonFiniteDecodedMediaStopTheRunAfterTheirDecoder) {
  // Latents that stay finite through corrupt decoder weights: the run stops after the decoder that made the NaN,
  // naming it, with nothing returned to save.
  const fs::path dir = temp_dir("poisoned");
  for (const auto& [tensor, what, where] :
       {std::tuple{"vae.decoder.conv_out.conv.bias", "the decoded video", "after the video VAE"},
        std::tuple{"vocoder.bwe_generator.conv_post.weight", "the decoded audio", "after the vocoder"}}) {
    EngineOptions o = test::tiny_engine_options();
    o.checkpoint = poisoned_checkpoint(dir, tensor);
    Engine engine(o);
    try {
      engine.generate(test::tiny_generate_request());
      ADD_FAILURE() << "no error with " << tensor << " poisoned";
    } catch (const Error& e) {
      const std::string m = e.what();
      EXPECT_EQ(e.component(), "decode") << m;
      EXPECT_NE(m.find(std::string(what) + " hold"), std::string::npos) << m;
      EXPECT_NE(m.find(where), std::string::npos) << m;
    }
  }
  fs::remove_all(dir);
}

TEST(Generate, TinyOneStageWritesH264AndAac) {
  const fs::path dir = temp_dir("mp4");
  const fs::path out = dir / "tiny.mp4";
  Engine engine(test::tiny_engine_options());
  const GenerateResult result = engine.generate(test::tiny_generate_request());
  ASSERT_EQ(result.videos.size(), 1u);
  OutputFiles files;
  files.mp4 = out.string();
  save(result, files);
  ASSERT_TRUE(fs::exists(out));
  EXPECT_FALSE(has_temp_files(dir));
  const io::Mp4Info info = io::probe_mp4(out.string());
  EXPECT_EQ(info.video_codec, "h264");
  EXPECT_EQ(info.frames, 9);
  EXPECT_EQ(info.width, 96);
  EXPECT_EQ(info.height, 64);
  EXPECT_EQ(info.audio_codec, "aac");
  EXPECT_EQ(info.sample_rate, 48000);
  EXPECT_EQ(info.channels, 2);
  EXPECT_EQ(result.videos[0].audio_samples(), 15840);  // 0.33 s at 48 kHz, as the golden waveform
  EXPECT_NEAR(info.audio_duration_s, 15840.0 / 48000.0, 0.05);
  fs::remove_all(dir);
}

TEST(Generate, BadRequestsFailBeforeWorkAndLeaveNothing) {
  const fs::path dir = temp_dir("bad");
  Engine engine(test::tiny_engine_options());
  int stages_begun = 0;
  const ProgressCallback count_stages = [&](const ProgressEvent& e) {
    stages_begun += e.kind == ProgressEvent::Kind::Begin;
  };
  auto expect_error = [&](const GenerateRequest& r, const std::string& needle) {
    try {
      engine.generate(r, count_stages);
      ADD_FAILURE() << "no error for " << needle;
    } catch (const Error& e) {
      EXPECT_EQ(e.category(), ErrorCategory::InvalidRequest) << e.what();
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
    EXPECT_EQ(stages_begun, 0) << "no stage may begin for a request that fails its checks";
  };
  GenerateRequest r = test::tiny_generate_request();
  r.frames = 10;
  expect_error(r, "8k+1 (nearest: 9 or 17)");
  r = test::tiny_generate_request();
  r.width = 100;
  expect_error(r, "width 100 is not a multiple of 32");
  r = test::tiny_generate_request();
  r.record_noise = true;
  r.replay_noise = kCase + "inputs.safetensors";
  expect_error(r, "exclude each other");
  r = test::tiny_generate_request();
  r.mode = Mode::TwoStage;
  expect_error(r, "--upsampler");

  EngineOptions missing = test::tiny_engine_options();
  missing.checkpoint = (dir / "missing.safetensors").string();
  try {
    Engine no_engine(missing);
    ADD_FAILURE() << "loaded a missing checkpoint";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::InvalidModel) << e.what();
    EXPECT_NE(std::string(e.what()).find("does not exist"), std::string::npos) << e.what();
  }

  r = test::tiny_generate_request();
  r.replay_noise = kCase + "inputs.safetensors";  // not a noise recording: fails after loading, before any output
  EXPECT_THROW(engine.generate(r), Error);
  EXPECT_TRUE(fs::is_empty(dir));
  fs::remove_all(dir);
}

// A Gemma 3 folder is checked for its config and tokenizer before anything loads: without tokenizer.json the
// tokenizer's thread would fail only after the 24 GB of shards were mapped and converted.
TEST(Generate, GemmaFolderWithoutTokenizerIsRefusedBeforeLoading) {
  const fs::path dir = temp_dir("gemma_folder");
  fs::create_directories(dir / "gemma");
  std::ofstream(dir / "gemma" / "config.json") << "{}";
  EngineOptions o = test::tiny_engine_options();
  o.text_encoder = (dir / "gemma").string();
  try {
    Engine engine(o);
    ADD_FAILURE() << "loaded a Gemma folder without a tokenizer";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::InvalidModel) << e.what();
    const std::string what = e.what();
    EXPECT_NE(what.find((dir / "gemma").string() + " has no tokenizer.json"), std::string::npos) << what;
    EXPECT_EQ(what.find("config.json ("), std::string::npos) << "config.json is there: " << what;
  }
  fs::remove_all(dir);
}

// `ltx encode POSITIVE NEGATIVE` output feeds --text-embeddings: the same contexts as the generate naming.
TEST(Generate, TextContextsReadBothNamings) {
  const fs::path dir = temp_dir("contexts");
  const SafetensorsFile in = SafetensorsFile::open(kCase + "inputs.safetensors");
  const std::vector<std::pair<std::string, Tensor>> encoded = {
      {"prompt.0.video_context", in.get("context.video.positive")},
      {"prompt.0.audio_context", in.get("context.audio.positive")},
      {"prompt.1.video_context", in.get("context.video.negative")},
      {"prompt.1.audio_context", in.get("context.audio.negative")}};
  write_safetensors((dir / "encoded.safetensors").string(), encoded);
  const stages::TextContexts a = stages::load_text_contexts(kCase + "inputs.safetensors");
  const stages::TextContexts b = stages::load_text_contexts((dir / "encoded.safetensors").string());
  EXPECT_EQ(a.video_positive.to_floats(), b.video_positive.to_floats());
  EXPECT_EQ(a.audio_positive.to_floats(), b.audio_positive.to_floats());
  EXPECT_EQ(a.video_negative.to_floats(), b.video_negative.to_floats());
  EXPECT_EQ(a.audio_negative.to_floats(), b.audio_negative.to_floats());
  EXPECT_FALSE(a.video_negative.to_floats().empty());
  fs::remove_all(dir);
}

TEST(Generate, RecordedNoiseReplaysToTheSameLatents) {
  stages::AvModels m = stages::load_av_models(open_safetensors(kCase + "weights.safetensors"), DType::F32,
                                              cpu_backend(), {.video_decoder = false, .audio_decoder = false});
  const SafetensorsFile in = SafetensorsFile::open(kCase + "inputs.safetensors");
  const stages::TextContexts text{in.get("context.video.positive"), in.get("context.audio.positive"),
                                  in.get("context.video.negative"), in.get("context.audio.negative")};
  stages::GenerationSpec spec;
  spec.frames = 9;
  spec.height = 64;
  spec.width = 96;
  spec.steps = 2;
  spec.guidance = pipeline_defaults("2.3", m.dit->config().n_layers).guidance;
  spec.noise_dtype = DType::BF16;
  TorchGenerator gen(42);
  TorchNoise live(gen);
  NoiseRecorder rec(live);
  const stages::AvLatents a = stages::run_one_stage(*m.dit, spec, text, rec);
  ASSERT_EQ(rec.entries().size(), 2u);  // video, then audio initial noise
  NoiseReplayer replay(rec.entries());
  const stages::AvLatents b = stages::run_one_stage(*m.dit, spec, text, replay);
  EXPECT_EQ(a.video.to_floats(), b.video.to_floats());
  EXPECT_EQ(a.audio.to_floats(), b.audio.to_floats());
  // The live generator's first draw is what a fresh TorchGenerator(42) gives for the video noise.
  TorchGenerator again(42);
  EXPECT_EQ(again.randn(rec.entries()[0].second.shape(), DType::BF16).to_floats(), rec.entries()[0].second.to_floats());
}

}  // namespace
}  // namespace ltx
