// The C++ API as a program sees it (this file includes only ltx/ headers from the library): the embedded default
// model generates its default request; a request outside its ranges is an InvalidRequest naming the field, the value
// and the range, before any stage begins; a call cancelled at denoise step k stops there with Cancelled, saves
// nothing, gives back its memory and leaves the engine usable and unchanged; engine options are checked first.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "default_model_env.h"
#include "ltx/ltx.hpp"

namespace {

namespace fs = std::filesystem;
using ltx_api_test::have_default_text_encoder;
using ltx_api_test::kSkipNoGguf;

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The memory this process holds for its allocations now, in bytes: the resident set (/proc/self/statm: size,
// resident, ... in pages); under AddressSanitizer, whose quarantine keeps freed blocks resident on purpose, the
// bytes its allocator has handed out and not had back.
#if defined(__SANITIZE_ADDRESS__)
// libasan's (sanitizer/allocator_interface.h, which Debian's GCC does not ship).
extern "C" size_t __sanitizer_get_current_allocated_bytes();
#endif

int64_t held_bytes() {
#if defined(__SANITIZE_ADDRESS__)
  return static_cast<int64_t>(__sanitizer_get_current_allocated_bytes());
#else
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return -1;
  long long size = 0, resident = 0;
  const int n = std::fscanf(f, "%lld %lld", &size, &resident);
  std::fclose(f);
  return n == 2 ? resident * static_cast<int64_t>(::sysconf(_SC_PAGESIZE)) : -1;
#endif
}

// Runs `call`, which must throw an ltx::Error of `category` whose message holds every one of `words`.
template <class Call>
void expect_error(Call&& call, ltx::ErrorCategory category, const std::vector<std::string>& words) {
  try {
    call();
    ADD_FAILURE() << "no error; expected " << ltx::error_category_name(category);
  } catch (const ltx::Error& e) {
    EXPECT_EQ(e.category(), category) << ltx::error_category_name(e.category()) << ": " << e.what();
    for (const std::string& w : words) EXPECT_TRUE(has(e.what(), w)) << "'" << w << "' not in: " << e.what();
  }
}

// What a progress callback heard of one call.
struct Heard {
  std::vector<std::string> begun, ended;
  int64_t denoise_steps = 0;
};

TEST(Engine, CategoryNamesAndVersion) {
  EXPECT_STREQ(ltx::error_category_name(ltx::ErrorCategory::InvalidRequest), "invalid_request");
  EXPECT_STREQ(ltx::error_category_name(ltx::ErrorCategory::InvalidModel), "invalid_model");
  EXPECT_STREQ(ltx::error_category_name(ltx::ErrorCategory::Io), "io");
  EXPECT_STREQ(ltx::error_category_name(ltx::ErrorCategory::OutOfMemory), "out_of_memory");
  EXPECT_STREQ(ltx::error_category_name(ltx::ErrorCategory::Cancelled), "cancelled");
  EXPECT_STREQ(ltx::error_category_name(ltx::ErrorCategory::Internal), "internal");
  EXPECT_STRNE(ltx::version(), "");
  EXPECT_STRNE(ltx::version(), "unknown");  // CMake's project version reached the library
}

TEST(Engine, OptionsAreCheckedBeforeAnythingLoads) {
  const fs::path dir = ltx_api_test::temp_dir("engine_options");
  ltx::EngineOptions missing;
  missing.checkpoint = (dir / "absent.safetensors").string();
  expect_error([&] { ltx::Engine e(missing); }, ltx::ErrorCategory::InvalidModel,
               {"absent.safetensors", "does not exist"});

  ltx::EngineOptions none;
  expect_error([&] { ltx::Engine e(none); }, ltx::ErrorCategory::InvalidRequest, {"checkpoint is required"});

  ltx::EngineOptions config_alone = missing;
  config_alone.dit_config = (dir / "config.json").string();
  expect_error([&] { ltx::Engine e(config_alone); }, ltx::ErrorCategory::InvalidRequest, {"dit_config needs dit"});

  ltx::EngineOptions threads = missing;
  threads.threads = -2;
  expect_error([&] { ltx::Engine e(threads); }, ltx::ErrorCategory::InvalidRequest, {"threads", ">= 0", "-2"});

  // The backend is chosen per engine, by a name this build has; the xla backend's plugin must load.
  const std::vector<std::string> backends = ltx::available_backends();
  ASSERT_FALSE(backends.empty());
  EXPECT_EQ(backends[0], "cpu");
  ltx::EngineOptions backend = missing;
  backend.backend = "tpu";
  expect_error([&] { ltx::Engine e(backend); }, ltx::ErrorCategory::InvalidRequest,
               {"backend 'tpu' is not one of this build's (valid: cpu"});
  if (std::find(backends.begin(), backends.end(), "xla") != backends.end()) {
    backend.backend = "xla";
    backend.xla_plugin = (dir / "absent_plugin.so").string();
    expect_error([&] { ltx::Engine e(backend); }, ltx::ErrorCategory::InvalidRequest,
                 {"backend 'xla'", "absent_plugin.so", "could not be loaded"});
  }

  // The load stage is reported even when it fails; no other stage is.
  Heard heard;
  const ltx::ProgressCallback listen = [&](const ltx::ProgressEvent& e) {
    if (e.kind == ltx::ProgressEvent::Kind::Begin) heard.begun.emplace_back(e.stage);
  };
  expect_error([&] { ltx::Engine e(missing, listen); }, ltx::ErrorCategory::InvalidModel, {"does not exist"});
  EXPECT_EQ(heard.begun, std::vector<std::string>{"load models"});
  EXPECT_TRUE(fs::is_empty(dir));
  fs::remove_all(dir);
}

// One engine on the embedded default model for every test of the suite (loading is most of a test's time), with
// the default request at `steps` steps and one prompt.
class EngineDefaultModel : public ltx_api_test::DefaultModelCache {
 protected:
  static void SetUpTestSuite() {
    DefaultModelCache::SetUpTestSuite();
    if (!have_default_text_encoder()) return;
    engine_ = new ltx::Engine(ltx::embedded_default_model());
  }
  static void TearDownTestSuite() {
    delete engine_;
    engine_ = nullptr;
    DefaultModelCache::TearDownTestSuite();
  }
  void SetUp() override {
    if (!have_default_text_encoder()) GTEST_SKIP() << kSkipNoGguf;
    ASSERT_NE(engine_, nullptr);
  }

  static ltx::GenerateRequest request(int steps) {
    ltx::GenerateRequest r = ltx::embedded_default_request();
    r.prompts = {"a red fox running through fresh snow"};
    r.steps = steps;
    return r;
  }
  // A callback recording stages and denoise steps; it cancels `token` after denoise step `cancel_at` (> 0).
  static ltx::ProgressCallback listen(Heard& heard, const ltx::CancellationToken& token, int64_t cancel_at = 0) {
    return [&heard, token, cancel_at](const ltx::ProgressEvent& e) {
      if (e.kind == ltx::ProgressEvent::Kind::Begin) heard.begun.emplace_back(e.stage);
      if (e.kind == ltx::ProgressEvent::Kind::End) heard.ended.emplace_back(e.stage);
      if (e.kind != ltx::ProgressEvent::Kind::Step || e.stage != "denoise") return;
      ++heard.denoise_steps;
      if (cancel_at > 0 && e.step == cancel_at) token.cancel();
    };
  }

  static inline ltx::Engine* engine_ = nullptr;
};

TEST_F(EngineDefaultModel, GeneratesTheDefaultRequest) {
  ltx::GenerateRequest r = ltx::embedded_default_request();
  EXPECT_EQ(r.frames, 17);
  EXPECT_EQ(r.height, 128);
  EXPECT_EQ(r.width, 192);
  EXPECT_EQ(r.steps, 30);
  r.prompts = {"a red fox running through fresh snow"};
  Heard heard;
  const ltx::GenerateResult result = engine_->generate(r, listen(heard, {}));
  EXPECT_EQ(heard.denoise_steps, 30);
  EXPECT_EQ(heard.ended, (std::vector<std::string>{"encode prompt", "denoise", "decode"}));
  EXPECT_EQ(result.request.steps, 30);
  EXPECT_EQ(result.model_version, engine_->model_version());
  EXPECT_FALSE(result.negative_prompt.empty());  // the official one, as no negative prompt was given
  EXPECT_GT(engine_->load_seconds(), 0.0);
  EXPECT_GT(result.peak_rss_bytes, 0);
  EXPECT_GT(result.seconds, 0.0);
  for (const ltx::StageTime& s : result.stages) EXPECT_GE(s.seconds, 0.0) << s.stage;

  ASSERT_EQ(result.videos.size(), 1u);
  const ltx::Video& v = result.videos[0];
  EXPECT_EQ(v.prompt, r.prompts[0]);
  EXPECT_EQ(v.frames, 17);
  EXPECT_EQ(v.height, 128);
  EXPECT_EQ(v.width, 192);
  EXPECT_EQ(v.fps, 24.0);
  ASSERT_EQ(v.rgb.size(), static_cast<size_t>(17 * 128 * 192 * 3));
  EXPECT_NE(std::count(v.rgb.begin(), v.rgb.end(), v.rgb[0]), static_cast<std::ptrdiff_t>(v.rgb.size()))
      << "one flat colour";
  EXPECT_GT(v.sample_rate, 0);
  ASSERT_GE(v.channels, 1);
  ASSERT_GT(v.audio_samples(), 0);
  EXPECT_EQ(v.audio.size(), static_cast<size_t>(v.channels * v.audio_samples()));
  EXPECT_NEAR(static_cast<double>(v.audio_samples()) / v.sample_rate, v.frames / v.fps, 2.0 / v.fps);
  for (const float s : v.audio) ASSERT_TRUE(std::isfinite(s) && s >= -1.0f && s <= 1.0f) << s;
}

// Engine::enhance (the official --enhance-prompt, `ltx enhance`): a greedy rewrite repeats; bad requests are
// InvalidRequest naming the field: max_new_tokens out of range, an unreadable image, an image for the text-only
// 270M text encoder (which has no vision tower), and generate's enhance_prompt with an image likewise, before any
// stage begins.
TEST_F(EngineDefaultModel, EnhanceRewritesAndRefusesWhatItCannotSee) {
  ltx::EnhanceRequest e;
  e.greedy = true;
  e.max_new_tokens = 8;
  const std::string a = engine_->enhance("a red fox in fresh snow", e);
  EXPECT_FALSE(a.empty());
  EXPECT_EQ(engine_->enhance("a red fox in fresh snow", e), a);
  e.max_new_tokens = 0;
  expect_error([&] { engine_->enhance("a fox", e); }, ltx::ErrorCategory::InvalidRequest, {"max_new_tokens", "0"});
  e.max_new_tokens = 8;
  e.image = "/nonexistent/frame.png";
  expect_error([&] { engine_->enhance("a fox", e); }, ltx::ErrorCategory::InvalidRequest, {"/nonexistent/frame.png"});
  const std::filesystem::path dir = ltx_api_test::temp_dir("enhance_image");
  e.image = (dir / "frame.png").string();
  {
    // A 2x2 RGB PNG, stored uncompressed (zlib level 0).
    const unsigned char png[] = {0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48,
                                 0x44, 0x52, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x02, 0x08, 0x02, 0x00, 0x00,
                                 0x00, 0xfd, 0xd4, 0x9a, 0x73, 0x00, 0x00, 0x00, 0x19, 0x49, 0x44, 0x41, 0x54, 0x78,
                                 0x01, 0x01, 0x0e, 0x00, 0xf1, 0xff, 0x00, 0xff, 0x00, 0x00, 0x00, 0xff, 0x00, 0x00,
                                 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0x1f, 0xee, 0x05, 0xfb, 0xde, 0xdd, 0xec, 0x2b,
                                 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82};
    std::ofstream f(e.image, std::ios::binary);
    f.write(reinterpret_cast<const char*>(png), sizeof png);
  }
  expect_error([&] { engine_->enhance("a fox", e); }, ltx::ErrorCategory::InvalidRequest,
               {"no vision tower", "text_encoder_mmproj"});
  ltx::GenerateRequest r = request(2);
  r.enhance_prompt = true;
  r.images = {ltx::ImageCondition{e.image}};
  Heard heard;
  expect_error([&] { engine_->generate(r, listen(heard, {})); }, ltx::ErrorCategory::InvalidRequest,
               {"enhance_prompt", "no vision tower"});
  EXPECT_TRUE(heard.begun.empty());
  std::filesystem::remove_all(dir);
}

TEST_F(EngineDefaultModel, OutOfRangeRequestsNameFieldValueAndRange) {
  const auto rejected = [&](const ltx::GenerateRequest& r, const std::vector<std::string>& words) {
    Heard heard;
    expect_error([&] { engine_->check(r); }, ltx::ErrorCategory::InvalidRequest, words);
    expect_error([&] { engine_->generate(r, listen(heard, {})); }, ltx::ErrorCategory::InvalidRequest, words);
    EXPECT_TRUE(heard.begun.empty()) << "a stage began for a request that fails its checks: " << words[0];
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  ltx::GenerateRequest r = request(2);
  r.steps = -1;
  rejected(r, {"steps", "at least 1", "0", "-1"});
  r = request(2);
  r.frames = 10;
  rejected(r, {"frames 10", "8k+1", "9 or 17"});
  r = request(2);
  r.width = 100;
  rejected(r, {"width 100", "multiple of 32"});
  r = request(2);
  r.fps = 0;
  rejected(r, {"fps", "> 0", "0"});
  r.fps = nan;
  rejected(r, {"fps", "finite", "nan"});
  r = request(2);
  r.batch = 0;
  rejected(r, {"batch", "at least 1", "got 0"});
  r = request(2);
  r.video_guidance.cfg = static_cast<float>(nan);
  rejected(r, {"video_guidance.cfg", "finite", "nan"});
  r = request(2);
  r.mode = ltx::Mode::TwoStage;
  r.width = r.height = 128;
  rejected(r, {"TwoStage", "upsampler"});
  r = request(2);
  r.prompts = {"a", ""};
  rejected(r, {"prompt 2 is empty"});
  r = request(2);
  r.record_noise = true;
  r.replay_noise = "/nonexistent/noise.safetensors";
  rejected(r, {"replay_noise", "does not exist", "exclude each other"});
  r = request(2);
  r.video_guidance.stg_blocks = std::vector<int64_t>{1000};
  rejected(r, {"stg_blocks", "1000", "0.."});
  r = request(2);
  r.images = {ltx::ImageCondition{"/nonexistent/cat.png", 20, 2.0, 60}};
  rejected(r, {"frame 20", "0..16", "strength", "[0, 1]", "CRF 60", "0..51", "does not exist"});
  r = request(2);
  r.audio_guidance.stg = std::numeric_limits<float>::infinity();
  r.audio_guidance.rescale = static_cast<float>(nan);
  rejected(r, {"audio_guidance.stg must be a finite number, got inf", "audio_guidance.rescale", "nan"});
  r = request(2);
  r.video_guidance.stg_blocks = std::vector<int64_t>{-1};
  r.video_guidance.skip_step = -2;
  rejected(r, {"stg_blocks holds -1", ">= 0", "skip_step is -2", "0: never skip"});
  r = request(2);
  r.enhance_max_new_tokens = 0;
  rejected(r, {"enhance_max_new_tokens", "[1, 8192]", "got 0"});
  r = request(2);
  r.distilled = true;
  r.steps = 4;
  rejected(r, {"steps (4)", "distilled"});
  r = request(2);
  r.conditioning_strength = 1.5;
  rejected(r, {"conditioning_strength must be in [0, 1], got 1.5"});
  const std::string wav = std::string(LTX_SOURCE_DIR) + "/tests/golden/pipeline/a2v_two_stage/input.wav";
  r = request(2);
  r.audio = ltx::AudioInput{wav, -1.0, 0.0};
  rejected(r, {"audio start", ">= 0, got -1", "audio max_duration", "> 0, got 0"});
  r.audio = ltx::AudioInput{wav, 0.0, 0.1};
  rejected(r, {"audio max_duration 0.1 s is shorter than the video"});
  const std::string mov = std::string(LTX_SOURCE_DIR) + "/tests/golden/pipeline/retake/input.mov";
  r = request(2);
  r.retake = ltx::RetakeInput{mov, 2.0, 1.0};
  rejected(r, {"retake start and end", "0 <= start < end", "got 2 and 1"});
  r.retake = ltx::RetakeInput{mov, nan, 1.0};
  rejected(r, {"retake start and end", "finite", "got nan"});
}

TEST_F(EngineDefaultModel, SizesBeyondTheMemoryBudgetAreRefusedBeforeAnyStage) {
  // --width 100032 --height 100032 once started denoising and ran until killed: the memory plan refuses it first,
  // naming what fits.
  ltx::GenerateRequest r = request(2);
  r.width = r.height = 100032;
  Heard heard;
  expect_error([&] { engine_->generate(r, listen(heard, {})); }, ltx::ErrorCategory::OutOfMemory,
               {"100032", "memory budget", "the largest size that fits"});
  EXPECT_TRUE(heard.begun.empty()) << "a stage began for a size that cannot fit";
}

TEST_F(EngineDefaultModel, CancelledCallStopsFreesAndLeavesTheEngineUnchanged) {
  const fs::path dir = ltx_api_test::temp_dir("engine_cancel");
  const ltx::GenerateRequest r = request(3);
  // A full call of the same shape first: it compiles the plans and grows the heap the cancelled call reuses.
  Heard first_heard;
  const ltx::GenerateResult first = engine_->generate(r, listen(first_heard, {}));
  ASSERT_EQ(first_heard.denoise_steps, 3);
  const int64_t before = held_bytes();
  ASSERT_GT(before, 0);

  const ltx::CancellationToken token;
  Heard heard;
  const int64_t k = 2;
  bool returned = false;
  expect_error(
      [&] {
        const ltx::GenerateResult never = engine_->generate(r, listen(heard, token, k), token);
        returned = true;
        ltx::OutputFiles files;
        files.mp4 = (dir / "cancelled.mp4").string();
        ltx::save(never, files);
      },
      ltx::ErrorCategory::Cancelled, {"cancelled"});
  EXPECT_FALSE(returned) << "the cancelled call returned a result";
  EXPECT_EQ(heard.denoise_steps, k) << "the call went on past the step that cancelled it";
  EXPECT_EQ(std::count(heard.ended.begin(), heard.ended.end(), "decode"), 0);
  EXPECT_TRUE(fs::is_empty(dir)) << "the cancelled call left a file";
  const int64_t after = held_bytes();
  EXPECT_LE(std::llabs(after - before), int64_t{4} << 20)
      << "memory held " << before << " -> " << after << " bytes across the cancelled call";

  // A token cancelled before the call stops it before any stage.
  Heard heard_early;
  expect_error([&] { engine_->generate(r, listen(heard_early, token), token); }, ltx::ErrorCategory::Cancelled,
               {"cancelled"});
  EXPECT_TRUE(heard_early.begun.empty());

  // The engine goes on as before: the next call runs every step and makes the first call's bytes.
  token.reset();
  Heard again_heard;
  const ltx::GenerateResult again = engine_->generate(r, listen(again_heard, token), token);
  EXPECT_EQ(again_heard.denoise_steps, 3);
  ASSERT_EQ(again.videos.size(), 1u);
  EXPECT_TRUE(again.videos[0].rgb == first.videos[0].rgb) << "the same request after a cancel made other frames";
  EXPECT_TRUE(again.videos[0].audio == first.videos[0].audio) << "the same request after a cancel made other audio";
  fs::remove_all(dir);
}

TEST_F(EngineDefaultModel, MovedFromEngineRefusesCalls) {
  ltx::Engine moved = std::move(*engine_);
  expect_error([&] { engine_->generate(request(2)); }, ltx::ErrorCategory::InvalidRequest, {"moved from"});
  *engine_ = std::move(moved);  // back for the suite's other tests
  EXPECT_FALSE(engine_->model_version().empty());
}

}  // namespace
