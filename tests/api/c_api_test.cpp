// The C API as a C program sees it: this file includes only ltx/ltx.h from the library. Bad options and arguments
// come back as LTX_ERROR_INVALID_REQUEST with a message that names them; the embedded default model generates,
// rejects a bad request, cancels and saves all-or-nothing through it; and the built examples/generate.c runs, with
// and without cancelling.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "default_model_env.h"
#include "ltx/ltx.h"

namespace {

namespace fs = std::filesystem;
using ltx_api_test::DefaultModelCache;
using ltx_api_test::have_default_text_encoder;
using ltx_api_test::kSkipNoGguf;
using ltx_api_test::temp_dir;

bool has(const char* text, const std::string& part) { return std::string(text).find(part) != std::string::npos; }

// A pointer that is not NULL and is never dereferenced: what a failed call must overwrite with NULL.
template <class T>
T* not_null() {
  static char byte;
  return reinterpret_cast<T*>(&byte);
}

TEST(CApi, StatusNamesVersionAndClearedError) {
  EXPECT_STREQ(ltx_status_name(LTX_OK), "ok");
  EXPECT_STREQ(ltx_status_name(LTX_ERROR_INVALID_REQUEST), "invalid_request");
  EXPECT_STREQ(ltx_status_name(LTX_ERROR_INVALID_MODEL), "invalid_model");
  EXPECT_STREQ(ltx_status_name(LTX_ERROR_IO), "io");
  EXPECT_STREQ(ltx_status_name(LTX_ERROR_OUT_OF_MEMORY), "out_of_memory");
  EXPECT_STREQ(ltx_status_name(LTX_ERROR_CANCELLED), "cancelled");
  EXPECT_STREQ(ltx_status_name(LTX_ERROR_INTERNAL), "internal");
  EXPECT_STRNE(ltx_version(), "");

  ltx_request* q = ltx_request_new();
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(ltx_request_set_steps(nullptr, 2), LTX_ERROR_INVALID_REQUEST);
  EXPECT_STRNE(ltx_last_error(), "");
  EXPECT_EQ(ltx_request_set_steps(q, 2), LTX_OK);
  EXPECT_STREQ(ltx_last_error(), "");  // each call starts with a clean message
  ltx_request_free(q);
}

TEST(CApi, LastErrorIsPerThread) {
  ASSERT_EQ(ltx_request_add_prompt(nullptr, "fox"), LTX_ERROR_INVALID_REQUEST);
  std::string other_thread = "unset";
  std::thread([&] { other_thread = ltx_last_error(); }).join();
  EXPECT_EQ(other_thread, "");
  EXPECT_TRUE(has(ltx_last_error(), "request")) << ltx_last_error();
}

TEST(CApiOptions, UnknownKeyNamesTheKeyAndTheValidKeys) {
  ltx_engine_options* o = ltx_engine_options_new();
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(ltx_engine_options_set(o, "chekpoint", "model.safetensors"), LTX_ERROR_INVALID_REQUEST);
  EXPECT_TRUE(has(ltx_last_error(), "\"chekpoint\"")) << ltx_last_error();
  EXPECT_TRUE(has(ltx_last_error(), "checkpoint, dit")) << ltx_last_error();
  EXPECT_TRUE(has(ltx_last_error(), "memory_budget")) << ltx_last_error();
  EXPECT_EQ(ltx_engine_options_set(o, "checkpoint", "model.safetensors"), LTX_OK) << ltx_last_error();
  ltx_engine_options_free(o);
}

TEST(CApiOptions, MemoryBudgetTakesSizesAndRejectsTheRest) {
  ltx_engine_options* o = ltx_engine_options_new();
  ASSERT_NE(o, nullptr);
  for (const char* good : {"8G", "8GiB", "1.5g", "512M", "300MB", "65536K", "1073741824", "2t", "100b"})
    EXPECT_EQ(ltx_engine_options_set(o, "memory_budget", good), LTX_OK) << good << ": " << ltx_last_error();
  // Zero, a sign, junk, a unit we do not know, no number, two points, and 10^11 TiB (past 2^64 bytes).
  for (const char* bad : {"0", "0.0001K", "-1G", "+1G", "8X", "8 G", "", "G", "1.2.3G", "1e9", "100000000000T"}) {
    EXPECT_EQ(ltx_engine_options_set(o, "memory_budget", bad), LTX_ERROR_INVALID_REQUEST) << bad;
    EXPECT_TRUE(has(ltx_last_error(), "memory_budget")) << bad << ": " << ltx_last_error();
  }
  ltx_engine_options_free(o);
}

TEST(CApiOptions, ValuesAreChecked) {
  ltx_engine_options* o = ltx_engine_options_new();
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(ltx_engine_options_set(o, "precision", "validation"), LTX_OK);
  EXPECT_EQ(ltx_engine_options_set(o, "precision", "fast"), LTX_ERROR_INVALID_REQUEST);
  EXPECT_TRUE(has(ltx_last_error(), "production")) << ltx_last_error();
  EXPECT_EQ(ltx_engine_options_set(o, "threads", "0"), LTX_OK);
  EXPECT_EQ(ltx_engine_options_set(o, "threads", "4"), LTX_OK);
  for (const char* bad : {"-1", "two", "4 ", "", "99999999999"}) {
    EXPECT_EQ(ltx_engine_options_set(o, "threads", bad), LTX_ERROR_INVALID_REQUEST) << bad;
    EXPECT_TRUE(has(ltx_last_error(), "threads")) << ltx_last_error();
  }
  EXPECT_EQ(ltx_engine_options_set(o, "lora_allow_partial", "1"), LTX_OK);
  EXPECT_EQ(ltx_engine_options_set(o, "lora_allow_partial", "yes"), LTX_ERROR_INVALID_REQUEST);
  EXPECT_EQ(ltx_engine_options_set(o, "lora", "style.safetensors:0.8"), LTX_OK);
  EXPECT_EQ(ltx_engine_options_set(o, "lora", "dir:with:colons/style.safetensors"), LTX_OK);
  EXPECT_EQ(ltx_engine_options_set(o, "lora", ""), LTX_ERROR_INVALID_REQUEST);
  EXPECT_EQ(ltx_engine_options_set(o, "distilled_lora", ":0.5"), LTX_ERROR_INVALID_REQUEST);  // a strength, no file
  ltx_engine_options_free(o);
}

TEST(CApiRequest, BadNamesAndNaNAreRejectedAtOnce) {
  ltx_request* q = ltx_request_new();
  ASSERT_NE(q, nullptr);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(ltx_request_set_guidance(q, LTX_VIDEO, "cfg", 3.0), LTX_OK);
  EXPECT_EQ(ltx_request_set_guidance(q, LTX_AUDIO, "modality", 3.0), LTX_OK);
  EXPECT_EQ(ltx_request_set_guidance(q, LTX_VIDEO, "cgf", 3.0), LTX_ERROR_INVALID_REQUEST);
  EXPECT_TRUE(has(ltx_last_error(), "\"cgf\"")) << ltx_last_error();
  EXPECT_TRUE(has(ltx_last_error(), "cfg, stg, rescale, modality")) << ltx_last_error();
  EXPECT_EQ(ltx_request_set_guidance(q, static_cast<ltx_stream>(7), "cfg", 3.0), LTX_ERROR_INVALID_REQUEST);
  EXPECT_EQ(ltx_request_set_guidance(q, LTX_VIDEO, "stg", nan), LTX_ERROR_INVALID_REQUEST);
  EXPECT_TRUE(has(ltx_last_error(), "NaN")) << ltx_last_error();
  EXPECT_EQ(ltx_request_set_fps(q, nan), LTX_ERROR_INVALID_REQUEST);
  EXPECT_TRUE(has(ltx_last_error(), "fps")) << ltx_last_error();
  EXPECT_EQ(ltx_request_set_mode(q, static_cast<ltx_mode>(2)), LTX_ERROR_INVALID_REQUEST);
  EXPECT_EQ(ltx_request_set_mode(q, LTX_TWO_STAGE), LTX_OK);
  ltx_request_free(q);
}

TEST(CApi, NullArgumentsAreInvalidRequestsNamingTheArgument) {
  ltx_engine_options* o = ltx_engine_options_new();
  ltx_request* q = ltx_request_new();
  ASSERT_NE(o, nullptr);
  ASSERT_NE(q, nullptr);
  const auto expect_invalid = [](ltx_status status, const char* argument) {
    EXPECT_EQ(status, LTX_ERROR_INVALID_REQUEST) << argument;
    EXPECT_TRUE(has(ltx_last_error(), std::string(argument) + " is NULL")) << ltx_last_error();
  };
  expect_invalid(ltx_engine_options_default_model(nullptr), "out");
  expect_invalid(ltx_engine_options_set(nullptr, "threads", "1"), "options");
  expect_invalid(ltx_engine_options_set(o, nullptr, "1"), "key");
  expect_invalid(ltx_engine_options_set(o, "threads", nullptr), "value");
  expect_invalid(ltx_request_add_prompt(nullptr, "fox"), "request");
  expect_invalid(ltx_request_add_prompt(q, nullptr), "prompt");
  expect_invalid(ltx_request_set_negative_prompt(q, nullptr), "prompt");
  expect_invalid(ltx_request_add_image(q, nullptr, 0, 1.0, 33), "path");
  expect_invalid(ltx_request_add_reference_video(q, nullptr, 1.0), "path");
  expect_invalid(ltx_request_set_conditioning(nullptr, 1.0, nullptr), "request");

  // A failed call sets *out to NULL whatever it held.
  ltx_engine* engine = not_null<ltx_engine>();
  expect_invalid(ltx_engine_new(nullptr, nullptr, nullptr, &engine), "options");
  EXPECT_EQ(engine, nullptr);
  expect_invalid(ltx_engine_new(o, nullptr, nullptr, nullptr), "out");
  ltx_result* result = not_null<ltx_result>();
  expect_invalid(ltx_generate(nullptr, q, nullptr, nullptr, nullptr, &result), "engine");
  EXPECT_EQ(result, nullptr);
  expect_invalid(ltx_generate(nullptr, q, nullptr, nullptr, nullptr, nullptr), "out");

  ltx_video video;
  expect_invalid(ltx_result_video(nullptr, 0, &video), "result");
  expect_invalid(ltx_result_save(nullptr, "out.mp4", nullptr, nullptr, nullptr), "result");
  EXPECT_EQ(ltx_result_count(nullptr), 0u);
  ltx_cancel_request(nullptr);
  ltx_engine_free(nullptr);
  ltx_result_free(nullptr);
  ltx_cancel_free(nullptr);
  ltx_request_free(q);
  ltx_engine_options_free(o);
}

// What a progress callback heard; `cancel_at_denoise_step` > 0 makes it return nonzero there.
struct Heard {
  int64_t cancel_at_denoise_step = 0;
  int64_t denoise_steps = 0;
  std::vector<std::string> ended;
};

int record_progress(const ltx_progress_event* e, void* user) {
  Heard& heard = *static_cast<Heard*>(user);
  const std::string stage = e->stage;
  if (e->kind == LTX_PROGRESS_END) heard.ended.push_back(stage);
  if (e->kind != LTX_PROGRESS_STEP || stage != "denoise") return 0;
  ++heard.denoise_steps;
  return e->step == heard.cancel_at_denoise_step ? 1 : 0;
}

// An engine on the embedded default and its request (17 frames at 192x128) at 2 steps, to keep each test short.
class CApiDefaultModel : public DefaultModelCache {
 protected:
  void SetUp() override {
    if (!have_default_text_encoder()) GTEST_SKIP() << kSkipNoGguf;
    ASSERT_EQ(ltx_engine_options_default_model(&options_), LTX_OK) << ltx_last_error();
    ASSERT_EQ(ltx_engine_new(options_, nullptr, nullptr, &engine_), LTX_OK) << ltx_last_error();
    request_ = ltx_request_new_default_model();
    ASSERT_NE(request_, nullptr) << ltx_last_error();
    ASSERT_EQ(ltx_request_add_prompt(request_, "a red fox running through fresh snow"), LTX_OK);
    ASSERT_EQ(ltx_request_set_steps(request_, 2), LTX_OK);
  }
  void TearDown() override {
    ltx_request_free(request_);
    ltx_engine_free(engine_);
    ltx_engine_options_free(options_);
  }

  ltx_engine_options* options_ = nullptr;
  ltx_engine* engine_ = nullptr;
  ltx_request* request_ = nullptr;
};

TEST_F(CApiDefaultModel, GeneratesTheRequestedVideoAndAudio) {
  Heard heard;
  ltx_result* result = nullptr;
  ASSERT_EQ(ltx_generate(engine_, request_, record_progress, &heard, nullptr, &result), LTX_OK) << ltx_last_error();
  ASSERT_NE(result, nullptr);
  EXPECT_EQ(heard.denoise_steps, 2);
  EXPECT_NE(std::find(heard.ended.begin(), heard.ended.end(), "decode"), heard.ended.end());

  ASSERT_EQ(ltx_result_count(result), 1u);
  ltx_video v;
  ASSERT_EQ(ltx_result_video(result, 0, &v), LTX_OK) << ltx_last_error();
  EXPECT_EQ(v.frames, 17);
  EXPECT_EQ(v.height, 128);
  EXPECT_EQ(v.width, 192);
  EXPECT_EQ(v.fps, 24.0);
  ASSERT_NE(v.rgb, nullptr);
  const size_t n_rgb = static_cast<size_t>(v.frames * v.height * v.width * 3);
  EXPECT_NE(std::count(v.rgb, v.rgb + n_rgb, v.rgb[0]), static_cast<std::ptrdiff_t>(n_rgb)) << "one flat colour";

  ASSERT_NE(v.audio, nullptr);
  EXPECT_GT(v.sample_rate, 0);
  EXPECT_GE(v.channels, 1);
  ASSERT_GT(v.samples, 0);
  // The audio latent is the video's duration rounded to whole latent frames and the vocoder trims its edges
  // (tests/pipeline/generate_test.cpp: 9 frames at 24 fps give 0.33 s against 0.375 s): within two video frames.
  EXPECT_NEAR(static_cast<double>(v.samples) / v.sample_rate, v.frames / v.fps, 2.0 / v.fps);
  const float* end = v.audio + v.channels * v.samples;
  EXPECT_TRUE(std::all_of(v.audio, end, [](float s) { return std::isfinite(s) && s >= -1.0f && s <= 1.0f; }));
  EXPECT_NE(std::count(v.audio, end, v.audio[0]), v.channels * v.samples) << "silence";

  ltx_video past_end;
  EXPECT_EQ(ltx_result_video(result, 1, &past_end), LTX_ERROR_INVALID_REQUEST);
  ltx_result_free(result);
}

// ltx_enhance returns a string the caller frees; a greedy rewrite repeats; an unreadable image is refused naming it.
// A request's enhance_prompt reaches the engine's checks (max_new_tokens in [1, 8192]).
TEST_F(CApiDefaultModel, EnhanceReturnsTheRewrittenPrompt) {
  char* a = nullptr;
  char* b = nullptr;
  ASSERT_EQ(ltx_enhance(engine_, "a red fox in fresh snow", nullptr, 10, 1, 8, &a), LTX_OK) << ltx_last_error();
  ASSERT_EQ(ltx_enhance(engine_, "a red fox in fresh snow", "", 10, 1, 8, &b), LTX_OK) << ltx_last_error();
  ASSERT_NE(a, nullptr);
  EXPECT_STREQ(a, b);
  EXPECT_GT(std::string(a).size(), 0u);
  ltx_string_free(a);
  ltx_string_free(b);
  char* c = nullptr;
  EXPECT_EQ(ltx_enhance(engine_, "a fox", "/nonexistent/frame.png", 10, 1, 8, &c), LTX_ERROR_INVALID_REQUEST);
  EXPECT_TRUE(has(ltx_last_error(), "/nonexistent/frame.png")) << ltx_last_error();
  EXPECT_EQ(c, nullptr);
  EXPECT_EQ(ltx_enhance(engine_, nullptr, nullptr, 10, 1, 8, &c), LTX_ERROR_INVALID_REQUEST);

  ASSERT_EQ(ltx_request_set_enhance_prompt(request_, 1, nullptr, 0), LTX_OK);
  ltx_result* result = nullptr;
  EXPECT_EQ(ltx_generate(engine_, request_, nullptr, nullptr, nullptr, &result), LTX_ERROR_INVALID_REQUEST);
  EXPECT_TRUE(has(ltx_last_error(), "enhance_max_new_tokens")) << ltx_last_error();
  EXPECT_EQ(result, nullptr);
}

TEST_F(CApiDefaultModel, OutOfRangeRequestIsInvalidRequestNamingTheField) {
  ltx_result* result = nullptr;
  // steps 0 is the model's default (ltx/request.hpp); a negative count is out of range.
  ASSERT_EQ(ltx_request_set_steps(request_, -1), LTX_OK);  // checked by the engine, at generate
  EXPECT_EQ(ltx_generate(engine_, request_, nullptr, nullptr, nullptr, &result), LTX_ERROR_INVALID_REQUEST);
  EXPECT_TRUE(has(ltx_last_error(), "steps")) << ltx_last_error();
  EXPECT_EQ(result, nullptr);

  ASSERT_EQ(ltx_request_set_steps(request_, 2), LTX_OK);
  ASSERT_EQ(ltx_request_set_size(request_, 192, 128, 10), LTX_OK);  // frames must be 8k + 1
  EXPECT_EQ(ltx_generate(engine_, request_, nullptr, nullptr, nullptr, &result), LTX_ERROR_INVALID_REQUEST);
  EXPECT_TRUE(has(ltx_last_error(), "frames")) << ltx_last_error();
  EXPECT_EQ(result, nullptr);
}

TEST_F(CApiDefaultModel, CancelledCallsFailAndLeaveTheEngineUsable) {
  // The callback's nonzero return stops the call at the next check: no second denoise step.
  Heard heard;
  heard.cancel_at_denoise_step = 1;
  ltx_result* result = not_null<ltx_result>();
  EXPECT_EQ(ltx_generate(engine_, request_, record_progress, &heard, nullptr, &result), LTX_ERROR_CANCELLED);
  EXPECT_EQ(result, nullptr);
  EXPECT_STRNE(ltx_last_error(), "");
  EXPECT_EQ(heard.denoise_steps, 1);

  // A token cancelled before the call stops it before any denoising.
  ltx_cancel* cancel = ltx_cancel_new();
  ASSERT_NE(cancel, nullptr);
  ltx_cancel_request(cancel);
  Heard heard_token;
  EXPECT_EQ(ltx_generate(engine_, request_, record_progress, &heard_token, cancel, &result), LTX_ERROR_CANCELLED);
  EXPECT_EQ(result, nullptr);
  EXPECT_EQ(heard_token.denoise_steps, 0);
  ltx_cancel_free(cancel);

  Heard heard_again;
  ASSERT_EQ(ltx_generate(engine_, request_, record_progress, &heard_again, nullptr, &result), LTX_OK)
      << ltx_last_error();
  EXPECT_EQ(heard_again.denoise_steps, 2);
  EXPECT_EQ(ltx_result_count(result), 1u);
  ltx_result_free(result);
}

TEST_F(CApiDefaultModel, SaveWritesAllOrNothing) {
  ltx_result* result = nullptr;
  ASSERT_EQ(ltx_generate(engine_, request_, nullptr, nullptr, nullptr, &result), LTX_OK) << ltx_last_error();
  const fs::path dir = temp_dir("save");
  const fs::path mp4 = dir / "fox.mp4";
  ASSERT_EQ(ltx_result_save(result, mp4.c_str(), nullptr, nullptr, nullptr), LTX_OK) << ltx_last_error();
  EXPECT_TRUE(fs::exists(mp4));
  EXPECT_GT(fs::file_size(mp4), 0u);

  const fs::path lost = dir / "missing" / "fox.mp4";
  EXPECT_NE(ltx_result_save(result, lost.c_str(), nullptr, nullptr, nullptr), LTX_OK);
  EXPECT_STRNE(ltx_last_error(), "");
  EXPECT_FALSE(fs::exists(lost));

  // The MP4 could be written but the WAV cannot: neither is.
  const fs::path mp4_too = dir / "fox_too.mp4";
  EXPECT_NE(ltx_result_save(result, mp4_too.c_str(), (dir / "missing" / "fox.wav").c_str(), nullptr, nullptr), LTX_OK);
  EXPECT_STRNE(ltx_last_error(), "");
  EXPECT_FALSE(fs::exists(mp4_too));
  ltx_result_free(result);
  fs::remove_all(dir);
}

using DefaultModelOptions = DefaultModelCache;

TEST_F(DefaultModelOptions, MissingLoraNamesItsPathWithoutTheStrength) {
  if (!have_default_text_encoder()) GTEST_SKIP() << kSkipNoGguf;
  // The engine fails to load a LoRA that is not there; its path keeps its colon, the strength after the last one
  // is split off.
  ltx_engine_options* o = nullptr;
  ASSERT_EQ(ltx_engine_options_default_model(&o), LTX_OK) << ltx_last_error();
  const std::string path = (fs::temp_directory_path() / "ltx_c_api_absent:lora.safetensors").string();
  ASSERT_EQ(ltx_engine_options_set(o, "lora", (path + ":0.5").c_str()), LTX_OK) << ltx_last_error();
  ltx_engine* engine = not_null<ltx_engine>();
  EXPECT_EQ(ltx_engine_new(o, nullptr, nullptr, &engine), LTX_ERROR_INVALID_MODEL);
  EXPECT_EQ(engine, nullptr);
  EXPECT_TRUE(has(ltx_last_error(), path)) << ltx_last_error();
  EXPECT_FALSE(has(ltx_last_error(), path + ":0.5")) << ltx_last_error();
  ltx_engine_options_free(o);
}

struct ProgramRun {
  int code;
  std::string output;  // stdout and stderr together
};

ProgramRun run_program(const std::string& command) {
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return {-1, "popen failed"};
  std::string out;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, n);
  const int status = ::pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

using ExampleProgram = DefaultModelCache;

TEST_F(ExampleProgram, GeneratesAndCancels) {
  if (!have_default_text_encoder()) GTEST_SKIP() << kSkipNoGguf;
  const fs::path dir = temp_dir("example");
  const fs::path mp4 = dir / "fox.mp4";
  const std::string command = "'" + std::string(LTX_EXAMPLE_GENERATE) + "' '" + mp4.string() + "' 'a red fox'";

  const ProgramRun plain = run_program(command);
  EXPECT_EQ(plain.code, 0) << plain.output;
  EXPECT_TRUE(plain.output.find("17 frames of 192x128") != std::string::npos) << plain.output;
  EXPECT_TRUE(fs::exists(mp4) && fs::file_size(mp4) > 0) << plain.output;

  fs::remove(mp4);
  const ProgramRun cancelled = run_program("LTX_EXAMPLE_CANCEL_AT_STEP=1 " + command);
  EXPECT_EQ(cancelled.code, 0) << cancelled.output;
  EXPECT_TRUE(cancelled.output.find("cancelled") != std::string::npos) << cancelled.output;
  EXPECT_TRUE(fs::exists(mp4) && fs::file_size(mp4) > 0) << cancelled.output;  // the second, uncancelled run's
  fs::remove_all(dir);
}

}  // namespace
