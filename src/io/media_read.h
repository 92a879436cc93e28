// Reading a whole video or audio file through FFmpeg's libraries (any container and codec they read, and image
// sequences such as dir/frame_%05d.png): every frame as 8-bit RGB, every sample as float, at the file's own size,
// rate and channel count. `ltx compare-media` compares two files with it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ltx::io {

struct DecodedVideo {
  double fps = 0.0;  // the stream's average frame rate; 0 when the file does not say
  int64_t frames = 0, height = 0, width = 0;
  std::vector<uint8_t> rgb;  // [frames, height, width, 3]
};

struct DecodedAudio {
  int64_t sample_rate = 0, channels = 0;
  std::vector<float> samples;  // [channels, n], each channel contiguous
  int64_t length() const { return channels > 0 ? static_cast<int64_t>(samples.size()) / channels : 0; }
};

// What the container says of its best video stream, without decoding: the average frame rate, the coded size and the
// frame count (the stream's nb_frames, else its packets counted), as PyAV's `stream.frames` / `average_rate` /
// `codec_context.width` give them. nullopt when it has no video stream; throws like read_video.
struct VideoInfo {
  double fps = 0.0;
  int64_t frames = 0, height = 0, width = 0;
};
std::optional<VideoInfo> probe_video(const std::string& path);

// The file's best video stream, decoded (its first `max_frames` frames when given, as ltx_pipelines/utils/media_io.py
// decode_video_from_file's frame_cap); nullopt when it has none. Throws ltx::Error("media", ...) naming the file when
// it cannot be opened or decoded, when its frames change size, or past 16 GiB of frames (a small file may decode to
// anything).
std::optional<DecodedVideo> read_video(const std::string& path, std::optional<int64_t> max_frames = std::nullopt);
// The file's best audio stream as planar float, its first `max_seconds` when given; nullopt when it has none.
// Throws like read_video, when its frames change sample format, rate or channels, and when a stream read to its end
// holds more than 2^28 samples (46 minutes of 48 kHz stereo).
std::optional<DecodedAudio> read_audio(const std::string& path, std::optional<double> max_seconds = std::nullopt);

}  // namespace ltx::io
