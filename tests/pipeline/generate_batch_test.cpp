// Batches (GenerateRequest::batch, several prompts) through the public API on the tiny one-stage golden checkpoint
// with its recorded text contexts: one output set per item named OUT_i (ltx::save), and what the reference's batch
// noise makes of item 0. The reference noiser draws each state's noise as one randn of the batch shape, video first
// then audio. torch's CPU randn fills 16 values at a time from one stream (and redraws the last 16 when the size is
// not a multiple of 16), so row 0 of a [2, N] draw equals the [1, N] draw when N is a multiple of 16: the video
// noise of item 0 equals the single run's. The audio draw follows the whole batch's video draw, so item 0's audio
// noise is not the single run's, and item 0 of a batch is not the single run with the same seed. What holds
// instead: item 0 equals a single run that replays row 0 of every batch draw. A batch that fails while committing
// leaves no file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "io/image_read.h"
#include "io/safetensors.h"
#include "ltx/ltx.hpp"
#include "stages/generate.h"
#include "tiny_generate.h"

namespace ltx {
namespace {

namespace fs = std::filesystem;

fs::path temp_dir(const std::string& name) { return test::fresh_temp_dir("batch_test", name); }

std::vector<std::string> entries(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

// The 16-bit samples of a WAV written by io::write_wav (44-byte header).
std::vector<int16_t> wav_samples(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  const std::string b{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
  std::vector<int16_t> out((b.size() - 44) / 2);
  std::memcpy(out.data(), b.data() + 44, out.size() * 2);
  return out;
}

int max_abs_diff(const std::vector<int16_t>& a, const std::vector<int16_t>& b) {
  EXPECT_EQ(a.size(), b.size());
  int d = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) d = std::max(d, std::abs(int{a[i]} - int{b[i]}));
  return d;
}

int max_pixel_diff(const std::string& a, const std::string& b) {
  const io::RgbImage x = io::read_image(a), y = io::read_image(b);
  EXPECT_EQ(x.rgb.size(), y.rgb.size());
  int d = 0;
  for (size_t i = 0; i < std::min(x.rgb.size(), y.rgb.size()); ++i)
    d = std::max(d, std::abs(int{x.rgb[i]} - int{y.rgb[i]}));
  return d;
}

Tensor row(const Tensor& t, int64_t i) { return t.slice(0, i, i + 1).contiguous(); }

// name.mp4 and name.wav in `dir`, and the frames and noise recording when named.
OutputFiles outputs(const fs::path& dir, const std::string& name, const std::string& frames = "",
                    const std::string& noise = "") {
  OutputFiles f;
  f.mp4 = (dir / (name + ".mp4")).string();
  f.wav = (dir / (name + ".wav")).string();
  if (!frames.empty()) f.frames_dir = (dir / frames).string();
  if (!noise.empty()) f.noise_recording = (dir / noise).string();
  return f;
}

TEST(GenerateBatch, ItemsNamedPerItemAndItemZeroFollowsTheBatchNoise) {
  const fs::path dir = temp_dir("items");
  Engine engine(test::tiny_engine_options());
  GenerateRequest batch = test::tiny_generate_request();
  batch.batch = 2;
  batch.record_noise = true;
  const OutputFiles batch_files = outputs(dir, "batch", "frames", "batch_noise.safetensors");
  const GenerateResult batch_result = engine.generate(batch);
  EXPECT_EQ(batch_result.videos.size(), 2u);
  const std::vector<std::string> written = save(batch_result, batch_files);
  EXPECT_EQ(entries(dir), (std::vector<std::string>{"batch_0.mp4", "batch_0.wav", "batch_1.mp4", "batch_1.wav",
                                                    "batch_noise.safetensors", "frames_0", "frames_1"}));
  EXPECT_EQ(written.front(), (dir / "batch_0.mp4").string());

  GenerateRequest single = test::tiny_generate_request();
  single.record_noise = true;
  const OutputFiles single_files = outputs(dir, "single", "", "single_noise.safetensors");
  save(engine.generate(single), single_files);

  const SafetensorsFile bn = SafetensorsFile::open(batch_files.noise_recording);
  const SafetensorsFile sn = SafetensorsFile::open(single_files.noise_recording);
  const Tensor video_b = bn.get("noise.0000"), video_s = sn.get("noise.0000");
  const Tensor audio_b = bn.get("noise.0001"), audio_s = sn.get("noise.0001");
  ASSERT_EQ(video_b.dim(0), 2);
  ASSERT_EQ(video_s.dim(0), 1);
  ASSERT_EQ(video_s.numel() % 16, 0);  // the case where torch's row 0 of the batch draw is the single draw
  EXPECT_EQ(row(video_b, 0).to_floats(), video_s.to_floats());
  EXPECT_NE(row(audio_b, 0).to_floats(), audio_s.to_floats());  // drawn after both items' video noise

  // Item 0 equals a single run replaying row 0 of every batch draw (the DiT batch equals single runs to ~1e-5, so
  // 8-bit pixels and 16-bit samples may move by one step).
  std::vector<std::pair<std::string, Tensor>> rows;
  for (const TensorInfo& t : bn.tensors()) rows.emplace_back(t.name, row(bn.get(t.name), 0));
  const std::string replay_path = (dir / "row0_noise.safetensors").string();
  write_safetensors(replay_path, rows);
  GenerateRequest replay = test::tiny_generate_request();
  replay.replay_noise = replay_path;
  const OutputFiles replay_files = outputs(dir, "replay", "replay_frames");
  save(engine.generate(replay), replay_files);
  const auto replay_wav = wav_samples(replay_files.wav);
  EXPECT_LE(max_abs_diff(wav_samples((dir / "batch_0.wav").string()), replay_wav), 1);
  EXPECT_GT(max_abs_diff(wav_samples((dir / "batch_1.wav").string()), replay_wav), 100);  // items differ
  for (const std::string frame : {"frame_00000.png", "frame_00008.png"}) {
    EXPECT_LE(max_pixel_diff((dir / "frames_0" / frame).string(), (dir / "replay_frames" / frame).string()), 1);
    EXPECT_GT(max_pixel_diff((dir / "frames_1" / frame).string(), (dir / "replay_frames" / frame).string()), 10);
  }
  fs::remove_all(dir);
}

TEST(GenerateBatch, FailureWhileCommittingLeavesNoItem) {
  const fs::path dir = temp_dir("fail");
  Engine engine(test::tiny_engine_options());
  GenerateRequest r = test::tiny_generate_request();
  r.batch = 2;
  OutputFiles files = outputs(dir, "out");
  files.sidecar = (dir / "out.json").string();
  const GenerateResult result = engine.generate(r);
  fs::create_directory(dir / "out_1.json");  // item 1's sidecar, renamed last, cannot replace a folder
  EXPECT_THROW(save(result, files), Error);
  EXPECT_EQ(entries(dir), (std::vector<std::string>{"out_1.json"}));  // no item's MP4, WAV, sidecar or temporary
  fs::remove_all(dir);
}

TEST(GenerateBatch, ItemPathsAndRequestChecks) {
  EXPECT_EQ(item_path("dir/out.mp4", 0, 1), "dir/out.mp4");
  EXPECT_EQ(item_path("dir/out.mp4", 1, 3), "dir/out_1.mp4");
  EXPECT_EQ(item_path("frames", 2, 3), "frames_2");
  EXPECT_EQ(item_path("", 2, 3), "");

  stages::GenerateRequest s;
  s.prompts = {"a", "b"};
  s.batch = 3;
  EXPECT_EQ(stages::request_items(s), 6);

  const fs::path dir = temp_dir("checks");
  GenerateRequest bad = test::tiny_generate_request();
  bad.prompts = {"a", ""};
  bad.batch = 0;
  try {
    check_request(bad);
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_EQ(e.category(), ErrorCategory::InvalidRequest);
    EXPECT_NE(m.find("several prompts need a text encoder"), std::string::npos) << m;
    EXPECT_NE(m.find("prompt 2 is empty"), std::string::npos) << m;
    EXPECT_NE(m.find("batch must be at least 1, got 0"), std::string::npos) << m;
  }
  EXPECT_TRUE(entries(dir).empty());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ltx
