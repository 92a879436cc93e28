#include "stages/retake_input.h"

#include <cmath>
#include <vector>

#include "core/error.h"
#include "io/media_read.h"

namespace ltx::stages {
// get_videostream_metadata: the container's rate, size and frame count, nothing decoded.
RetakeSource probe_retake_source(const std::string& path) {
  const std::optional<io::VideoInfo> v = io::probe_video(path);
  LTX_CHECK(v.has_value(), "retake", path, " has no video stream");
  LTX_CHECK(v->frames > 0 && v->fps > 0, "retake", path, " holds no frames or no frame rate");
  // retake.py main(): the frame count must be 8k+1 and the sides multiples of 32 (the source is not resized).
  LTX_CHECK((v->frames - 1) % 8 == 0, "retake", path, " has ", v->frames, " frames; retake needs 8k+1 (",
            (v->frames - 1) / 8 * 8 + 1, " or ", (v->frames - 1) / 8 * 8 + 9, "): cut the clip to such a length");
  LTX_CHECK(v->width % 32 == 0 && v->height % 32 == 0, "retake", path, " is ", v->width, "x", v->height,
            "; retake needs width and height multiples of 32 (the clip is not resized)");
  RetakeSource s;
  s.fps = v->fps;
  s.frames = v->frames;
  s.height = v->height;
  s.width = v->width;
  return s;
}

RetakeSource read_retake_source(const std::string& path) {
  RetakeSource s = probe_retake_source(path);
  // load_video_conditioning: the decoded frames up to the stream's count (frame_cap).
  std::optional<io::DecodedVideo> v = io::read_video(path, s.frames);
  LTX_CHECK(v.has_value(), "retake", path, " has no video stream");
  LTX_CHECK(v->frames >= s.frames && v->height == s.height && v->width == s.width, "retake", path, " decodes to ",
            v->frames, " frames of ", v->width, "x", v->height, " but its stream says ", s.frames, " of ", s.width, "x",
            s.height);
  // media_io.py load_video_conditioning at the file's own size: resize_and_center_crop is the identity, then
  // normalize_latent: x / 127.5 - 1 per channel, frames along dim 2.
  const int64_t plane = s.height * s.width;
  std::vector<float> px(static_cast<size_t>(3 * s.frames * plane));
  for (int64_t f = 0; f < s.frames; ++f)
    for (int64_t i = 0; i < plane; ++i)
      for (int64_t c = 0; c < 3; ++c)
        px[static_cast<size_t>((c * s.frames + f) * plane + i)] =
            static_cast<float>(v->rgb[static_cast<size_t>((f * plane + i) * 3 + c)]) / 127.5f - 1.0f;
  s.pixels = Tensor::from_floats(DType::F32, {1, 3, s.frames, s.height, s.width}, px);
  if (const std::optional<io::DecodedAudio> audio = io::read_audio(path))
    s.audio = cut_audio_clip(*audio, path, 0.0, std::nullopt);  // decode_audio_from_file from 0, to the end
  return s;
}

Tensor fit_audio_latent(const Tensor& encoded, int64_t frames, int64_t batch) {
  LTX_CHECK(encoded.rank() == 4 && encoded.dim(0) == 1, "retake", "an encoded audio latent is [1, z, T, M], got ",
            encoded.shape().str());
  const int64_t z = encoded.dim(1), have = encoded.dim(2), mel = encoded.dim(3);
  const std::vector<float> e = encoded.to_floats();
  std::vector<float> out(static_cast<size_t>(batch * z * frames * mel), 0.0f);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t c = 0; c < z; ++c)
      for (int64_t t = 0; t < std::min(have, frames); ++t)
        for (int64_t m = 0; m < mel; ++m)
          out[static_cast<size_t>(((b * z + c) * frames + t) * mel + m)] =
              e[static_cast<size_t>((c * have + t) * mel + m)];
  return Tensor::from_floats(DType::F32, {batch, z, frames, mel}, out);
}

Tensor temporal_region_mask(const Tensor& positions, double start, double end) {
  LTX_CHECK(positions.rank() == 4 && positions.dim(3) == 2, "retake", "positions must be [B, A, T, 2], got ",
            positions.shape().str());
  const int64_t batch = positions.dim(0), axes = positions.dim(1), tokens = positions.dim(2);
  const std::vector<float> p = positions.to_floats();
  const auto s = static_cast<float>(start), e = static_cast<float>(end);
  std::vector<float> mask(static_cast<size_t>(batch * tokens));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t t = 0; t < tokens; ++t) {
      const size_t at = static_cast<size_t>(((b * axes) * tokens + t) * 2);  // axis 0: time
      mask[static_cast<size_t>(b * tokens + t)] = (p[at + 1] > s && p[at] < e) ? 1.0f : 0.0f;
    }
  return Tensor::from_floats(DType::F32, {batch, tokens, 1}, mask);
}

}  // namespace ltx::stages
