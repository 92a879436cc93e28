// Audio given as input (audio-to-video, ltx_pipelines/a2vid_two_stage.py): the clip read as
// utils/media_io.py:decode_audio_from_file reads it, and encoded as ltx_core/model/audio_vae/audio_vae.py:encode_audio
// encodes it (AudioProcessor.waveform_to_mel, then the audio VAE encoder). The generation holds that latent fixed
// (denoise mask 0) and the output carries the clip itself.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "io/media_read.h"
#include "nn/weight_source.h"
#include "pipeline/latent_tools.h"

namespace ltx {
class Backend;  // backend/backend.h: what a graph runs on
}  // namespace ltx

namespace ltx::stages {

struct AudioClip {
  int64_t sample_rate = 0, channels = 0;
  std::vector<float> samples;  // [channels, n], each channel contiguous, in [-1, 1]
  int64_t length() const { return channels > 0 ? static_cast<int64_t>(samples.size()) / channels : 0; }
  double seconds() const { return sample_rate > 0 ? static_cast<double>(length()) / sample_rate : 0.0; }
};

// The file's first audio stream (any format FFmpeg reads; a video file's audio too), from `start` seconds, at most
// `max_duration` seconds: samples [round(start·sr), round(start·sr) + round(max_duration·sr)) of the decoded stream
// (decode_audio_from_file's trims). Mono is duplicated to stereo (the audio VAE takes two channels; the official
// encoder would fail on one). Throws ltx::Error naming the file when it cannot be read, has no audio, has more than
// two channels, or has nothing left after `start`.
AudioClip read_audio_clip(const std::string& path, double start, std::optional<double> max_duration);
// The same cut of an already decoded stream (`path` names it in errors).
AudioClip cut_audio_clip(const io::DecodedAudio& decoded, const std::string& path, double start,
                         std::optional<double> max_duration);

// How many seconds of the file an audio-to-video run reads: `requested`, or when the request names none, the
// video's duration frames / fps, as ltx-pipelines' command line defaults --audio-max-duration
// (a2vid_two_stage.py main(); the pipeline class's own default, None, is what that command line overrides). The
// output then carries audio as long as its video.
double a2v_audio_max_duration(std::optional<double> requested, int64_t frames, double fps);

// The audio VAE encoder's latent [1, z, T', M'] of the clip (resampled to the encoder's rate, log-mel, encoded),
// with the encoder loaded from the checkpoint for this call.
Tensor encode_audio_clip(const Backend& backend, const std::shared_ptr<const WeightSource>& checkpoint, DType compute,
                         const AudioClip& clip);

// The latent a generation holds: `encoded` cut to want.frames (a2vid_two_stage.py) and repeated for want.batch
// items, f32. Throws an InvalidRequest-worthy error when the clip is too short to cover `video_seconds` (the
// reference fails on the shape) or its channels or mel bins are not the DiT's.
Tensor held_audio_latent(const Tensor& encoded, const AudioLatentShape& want, const AudioClip& clip,
                         double video_seconds);

}  // namespace ltx::stages
