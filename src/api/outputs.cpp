// Writing a GenerateResult (ltx/outputs.hpp): each file through the io writers, every file of a save() staged
// together (io/staged_outputs.h) so that a failure leaves none of them.
#include "ltx/outputs.hpp"

#include <cstdio>
#include <filesystem>
#include <span>

#include "api/error_phase.h"
#include "api/noise_recording.h"
#include "io/atomic_file.h"
#include "io/mp4_writer.h"
#include "io/png_write.h"
#include "io/staged_outputs.h"
#include "io/wav_write.h"

namespace ltx {
namespace {

namespace fs = std::filesystem;

std::string frame_name(int64_t i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "frame_%05lld.png", static_cast<long long>(i));
  return buf;
}

// A Video a program filled by hand must hold what its sizes say.
void check_video(const Video& v) {
  const int64_t rgb_bytes = v.frames * v.height * v.width * 3;
  if (v.frames < 1 || v.height < 1 || v.width < 1 || static_cast<int64_t>(v.rgb.size()) != rgb_bytes)
    throw Error("output",
                "the video holds " + std::to_string(v.rgb.size()) + " bytes of RGB for " + std::to_string(v.frames) +
                    " frames of " + std::to_string(v.width) + "x" + std::to_string(v.height) +
                    " (frames, height and width >= 1, frames x height x width x 3 bytes)",
                ErrorCategory::InvalidRequest);
  if (v.channels < 0 || (v.channels == 0 && !v.audio.empty()) ||
      (v.channels > 0 && v.audio.size() % static_cast<size_t>(v.channels) != 0))
    throw Error("output",
                "the audio holds " + std::to_string(v.audio.size()) + " samples for " + std::to_string(v.channels) +
                    " channels (a whole number of samples per channel)",
                ErrorCategory::InvalidRequest);
}

void mp4_to(const std::string& path, const Video& v) {
  std::optional<io::Mp4AudioTrack> audio;
  if (v.channels > 0 && !v.audio.empty()) audio = io::Mp4AudioTrack{v.sample_rate, v.channels, v.audio};
  io::write_mp4(path, {v.frames, v.height, v.width, v.fps, v.rgb}, audio);
}

void wav_to(const std::string& path, const Video& v) {
  if (v.channels < 1)
    throw Error("output", "the result holds no audio to write to " + path, ErrorCategory::InvalidRequest);
  io::write_wav(path, v.sample_rate, v.channels, v.audio);
}

// One PNG per frame at `paths` (DIR/frame_00000.png, ...).
void pngs_to(const std::vector<std::string>& paths, const Video& v) {
  const size_t frame_bytes = static_cast<size_t>(v.height * v.width * 3);
  for (size_t f = 0; f < paths.size(); ++f)
    io::write_png(paths[f], v.height, v.width, std::span<const uint8_t>(v.rgb).subspan(f * frame_bytes, frame_bytes));
}

std::vector<std::string> frame_names(const Video& v) {
  std::vector<std::string> names;
  for (int64_t f = 0; f < v.frames; ++f) names.push_back(frame_name(f));
  return names;
}

}  // namespace

void write_mp4(const std::string& path, const Video& video) {
  check_video(video);
  api::in_phase(
      ErrorCategory::Io, [&] { mp4_to(path, video); }, ErrorCategory::Io);
}

void write_wav(const std::string& path, const Video& video) {
  check_video(video);
  api::in_phase(
      ErrorCategory::Io, [&] { wav_to(path, video); }, ErrorCategory::Io);
}

void write_frames(const std::string& dir, const Video& video) {
  check_video(video);
  api::in_phase(
      ErrorCategory::Io,
      [&] {
        io::StagedOutputs out;
        pngs_to(out.files_in(dir, frame_names(video)), video);
        out.commit();
      },
      ErrorCategory::Io);
}

void write_png_frame(const std::string& path, const Video& video, int64_t frame) {
  check_video(video);
  if (frame < 0 || frame >= video.frames)
    throw Error(
        "output",
        "frame " + std::to_string(frame) + " is outside the video's frames 0.." + std::to_string(video.frames - 1),
        ErrorCategory::InvalidRequest);
  const size_t frame_bytes = static_cast<size_t>(video.height * video.width * 3);
  api::in_phase(
      ErrorCategory::Io,
      [&] {
        io::write_png(
            path, video.height, video.width,
            std::span<const uint8_t>(video.rgb).subspan(static_cast<size_t>(frame) * frame_bytes, frame_bytes));
      },
      ErrorCategory::Io);
}

std::string item_path(const std::string& path, size_t item, size_t items) {
  if (items == 1 || path.empty()) return path;
  const fs::path p(path);
  return (p.parent_path() / (p.stem().string() + "_" + std::to_string(item) + p.extension().string())).string();
}

void check_outputs(const OutputFiles& files) {
  std::vector<std::string> problems;
  for (const std::string* path : {&files.mp4, &files.wav, &files.frames_dir, &files.sidecar, &files.noise_recording}) {
    if (path->empty()) continue;
    const fs::path dir = fs::path(*path).parent_path();
    if (!dir.empty() && !fs::is_directory(dir)) problems.push_back("output folder " + dir.string() + " does not exist");
  }
  if (!files.frames_dir.empty() && fs::exists(files.frames_dir) && !fs::is_directory(files.frames_dir))
    problems.push_back("frames folder " + files.frames_dir + " exists and is not a folder");
  if (problems.empty()) return;
  std::string joined;
  for (size_t i = 0; i < problems.size(); ++i) joined += (i ? "; " : "") + problems[i];
  throw Error("output", joined, ErrorCategory::Io);
}

std::vector<std::string> save(const GenerateResult& result, const OutputFiles& files) {
  for (const Video& v : result.videos) check_video(v);
  if (!files.noise_recording.empty() && !result.noise_recording)
    throw Error("output",
                "the result holds no noise recording (GenerateRequest::record_noise) for " + files.noise_recording,
                ErrorCategory::InvalidRequest);
  return api::in_phase(
      ErrorCategory::Io,
      [&] {
        const size_t items = result.videos.size();
        std::vector<std::string> written;
        io::StagedOutputs out;  // nothing appears at the targets until every output of every item is complete
        for (size_t i = 0; i < items; ++i) {
          const Video& v = result.videos[i];
          const std::string mp4 = item_path(files.mp4, i, items), wav = item_path(files.wav, i, items);
          const std::string frames = item_path(files.frames_dir, i, items);
          const std::string sidecar = item_path(files.sidecar, i, items);
          if (!wav.empty()) wav_to(out.file(wav), v);
          if (!frames.empty()) pngs_to(out.files_in(frames, frame_names(v)), v);
          if (!mp4.empty()) mp4_to(out.file(mp4), v);
          for (const std::string& p : {mp4, wav, frames, sidecar})
            if (!p.empty()) written.push_back(p);
        }
        // One recording for the whole batch: each draw is [items, ...], as the batch drew it.
        if (!files.noise_recording.empty()) {
          result.noise_recording->save(out.file(files.noise_recording));
          written.push_back(files.noise_recording);
        }
        // The sidecars last: each records the files staged before it.
        for (size_t i = 0; i < items && !files.sidecar.empty(); ++i) {
          const std::string text = sidecar_json(result, i, files);
          io::AtomicFile f(out.file(item_path(files.sidecar, i, items)));
          f.write(text.data(), text.size());
          f.commit();
        }
        out.commit();
        return written;
      },
      ErrorCategory::Io);
}

}  // namespace ltx
