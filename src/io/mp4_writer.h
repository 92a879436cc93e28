// MP4 output through FFmpeg's libraries: H.264 video (libx264, yuv420p, BT.709 limited range, CRF) and AAC audio,
// as ltx_pipelines/utils/media_io.py encode_video muxes them with PyAV. Written all-or-nothing: the file is built
// under a temporary name beside the target and renamed into place only when complete.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace ltx::io {

struct Mp4VideoTrack {
  int64_t frames = 0, height = 0, width = 0;  // even height and width (yuv420p)
  double fps = 24.0;
  std::span<const uint8_t> rgb;  // [frames, height, width, 3]
  int crf = 19;
};

struct Mp4AudioTrack {
  int64_t sample_rate = 48000;
  int64_t channels = 2;
  std::span<const float> samples;  // planar [channels, n] in [-1, 1]
};

// Throws ltx::Error("mp4", ...) on any problem; then nothing is left at `path`.
void write_mp4(const std::string& path, const Mp4VideoTrack& video, const std::optional<Mp4AudioTrack>& audio);

// What a written file holds, read back with libavformat/libavcodec (tests, `ltx generate` summary).
struct Mp4Info {
  std::string video_codec, audio_codec;       // empty when the stream is absent
  int64_t frames = 0, height = 0, width = 0;  // video frames decoded
  int64_t sample_rate = 0, channels = 0;
  double duration_s = 0, audio_duration_s = 0;
};
Mp4Info probe_mp4(const std::string& path);

}  // namespace ltx::io
