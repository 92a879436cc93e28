// `ltx generate --audio` (audio-to-video) on the embedded default model: the MP4 carries the given clip (from
// --audio-start, as long as the video unless --audio-max-duration names more) beside the generated frames, the WAV
// equals it, the sidecar records it; and every bad audio input is one clear error with nothing written. The pipeline
// itself: tests/golden/pipeline/a2v_two_stage and a2v_default_duration.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli_files.h"
#include "io/json.h"
#include "io/wav_write.h"
#include "run_ltx.h"
#include "scoped_env.h"
#include "stages/default_model.h"

namespace ltx {
namespace {

namespace fs = std::filesystem;

fs::path temp_dir(const std::string& name) { return fresh_temp_dir("ltx_generate_audio_", name); }

// `seconds` of a stereo tone at 44.1 kHz from sample `from`, as 16-bit PCM.
void write_tone(const fs::path& path, double seconds, int64_t from = 0) {
  const auto n = static_cast<int64_t>(seconds * 44100);
  std::vector<float> planar(static_cast<size_t>(2 * n));
  for (int64_t c = 0; c < 2; ++c)
    for (int64_t i = 0; i < n; ++i)
      planar[static_cast<size_t>(c * n + i)] =
          0.3f * std::sin(0.0627f * static_cast<float>(i + from) * static_cast<float>(c + 1));
  io::write_wav(path.string(), 44100, 2, planar);
}

const std::string kSmall = "--prompt \"a drum\" --frames 9 --width 64 --height 64 --steps 2 --quiet ";

TEST(GenerateAudioCli, TheClipIsTheOutputsAudio) {
  if (stages::find_default_text_encoder().empty()) GTEST_SKIP() << stages::default_text_encoder_missing_message();
  if (std::system("ffprobe -version >/dev/null 2>&1") != 0) GTEST_SKIP() << "ffprobe is absent (scripts/setup)";
  const fs::path dir = temp_dir("clip");
  write_tone(dir / "in.wav", 1.0);
  write_tone(dir / "expected.wav", 0.9, 4410);  // the same tone from 0.1 s
  const CliRun run = run_ltx("generate " + kSmall + "--audio " + (dir / "in.wav").string() +
                             " --audio-start 0.1 --audio-max-duration 0.9 --json --wav " + (dir / "out.wav").string() +
                             " -o " + (dir / "out.mp4").string());
  ASSERT_EQ(run.code, 0) << run.output;
  const CliRun same = run_ltx("compare-media " + (dir / "out.wav").string() + " " + (dir / "expected.wav").string());
  EXPECT_TRUE(has(same.output, "audio  39690 samples x 2 channels at 44100 Hz: rel L2 0,")) << same.output;
  std::ifstream sidecar(dir / "out.json");
  const Json input = Json::parse(sidecar).at("parameters").at("audio_input");
  EXPECT_EQ(input.at("file").at("path"), (dir / "in.wav").string());
  EXPECT_EQ(input.at("start"), 0.1);
  EXPECT_EQ(input.at("max_duration"), 0.9);
  const CliRun probe = run_ltx("compare-media " + (dir / "out.mp4").string() + " " + (dir / "out.mp4").string());
  EXPECT_TRUE(has(probe.output, "video  9 frames 64x64")) << probe.output;
  EXPECT_TRUE(has(probe.output, "at 44100 Hz")) << probe.output;  // the clip's rate, not the vocoder's
  fs::remove_all(dir);
}

// ltx-pipelines' a2vid_two_stage command line reads --audio-max-duration as num_frames / frame_rate when it is not
// given: a longer file gives an MP4 whose audio is as long as its video (9 frames at 24 fps: 0.375 s).
TEST(GenerateAudioCli, ByDefaultTheAudioIsAsLongAsTheVideo) {
  if (stages::find_default_text_encoder().empty()) GTEST_SKIP() << stages::default_text_encoder_missing_message();
  if (std::system("ffprobe -version >/dev/null 2>&1") != 0) GTEST_SKIP() << "ffprobe is absent (scripts/setup)";
  const fs::path dir = temp_dir("default_length");
  write_tone(dir / "in.wav", 1.0);
  const CliRun run = run_ltx("generate " + kSmall + "--audio " + (dir / "in.wav").string() + " --json --wav " +
                             (dir / "out.wav").string() + " -o " + (dir / "out.mp4").string());
  ASSERT_EQ(run.code, 0) << run.output;
  const CliRun wav = run_ltx("compare-media " + (dir / "out.wav").string() + " " + (dir / "out.wav").string());
  EXPECT_TRUE(has(wav.output, "audio  16538 samples x 2 channels")) << wav.output;  // round(0.375 * 44100)
  std::ifstream sidecar(dir / "out.json");
  EXPECT_EQ(Json::parse(sidecar).at("parameters").at("audio_input").at("max_duration"), 0.375);
  const double video = stream_seconds(dir / "out.mp4", "v"), audio = stream_seconds(dir / "out.mp4", "a");
  ASSERT_GT(video, 0);
  ASSERT_GT(audio, 0);
  EXPECT_LE(std::abs(audio - video), 1.0 / 24) << "audio " << audio << " s, video " << video << " s";
  fs::remove_all(dir);
}

TEST(GenerateAudioCli, BadAudioIsOneClearErrorAndNothingIsWritten) {
  if (stages::find_default_text_encoder().empty()) GTEST_SKIP() << stages::default_text_encoder_missing_message();
  const fs::path dir = temp_dir("bad");
  write_tone(dir / "short.wav", 0.3);
  write_tone(dir / "ok.wav", 1.0);
  std::ofstream(dir / "empty.wav").close();
  const std::string ok = (dir / "ok.wav").string();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--audio " + (dir / "none.wav").string(), "does not exist"},
      {"--audio " + (dir / "empty.wav").string(), "cannot read the audio of"},
      {"--audio " + (dir / "short.wav").string(), "is shorter than the video"},
      {"--audio " + ok + " --audio-start 3", "nothing is left after the start at 3 s"},
      {"--audio " + ok + " --audio-start -1", "audio start must be a finite number of seconds >= 0"},
      {"--audio " + ok + " --audio-max-duration 0.2", "is shorter than the video"},
      {"--audio " + ok + " --audio-cfg 2", "audio_guidance does not apply with an audio input"},
      {"--audio-start 1", "need --audio FILE"},
  };
  for (const auto& [option, words] : cases) {
    const CliRun run = run_ltx("generate " + kSmall + option + " -o " + (dir / "out.mp4").string());
    EXPECT_NE(run.code, 0) << option;
    EXPECT_TRUE(has(run.output, words)) << option << ": " << run.output;
    EXPECT_FALSE(fs::exists(dir / "out.mp4")) << option;
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ltx
