// Retake's inputs (ltx_pipelines/retake.py RetakePipeline): the source video file read as get_videostream_metadata
// and load_video_conditioning read it (every frame at the file's own size and rate, scaled to [-1, 1]), its audio as
// decode_audio_from_file reads it, both encoded (_encode_video_for_retake, _encode_audio_for_retake: the audio latent
// cut or zero-padded to the video's length), and the TemporalRegionMask that regenerates [start, end) and keeps the
// rest: denoise mask 1 on the tokens whose time span meets the window, 0 elsewhere.
#pragma once

#include <optional>
#include <string>

#include "core/tensor.h"
#include "pipeline/latent_tools.h"
#include "stages/audio_input.h"

namespace ltx::stages {

struct RetakeSource {
  double fps = 0.0;  // the video stream's average rate
  int64_t frames = 0, height = 0, width = 0;
  Tensor pixels;                   // [1, 3, frames, height, width] f32 in [-1, 1] (media_io.py normalize_latent)
  std::optional<AudioClip> audio;  // the file's whole audio stream; none: the audio is generated throughout
  double seconds() const { return static_cast<double>(frames) / fps; }
};

// The file's size, frame count and rate from its container, nothing decoded: what a request must match (8k+1
// frames, sides multiples of 32). Throws ltx::Error naming the file and the problem (unreadable, no video stream, a
// frame count or size the pipeline cannot take, with the nearest valid values).
RetakeSource probe_retake_source(const std::string& path);

// probe_retake_source plus the pixels and the audio (mono doubled to stereo; more than two channels refused).
RetakeSource read_retake_source(const std::string& path);

// _encode_audio_for_retake's fit: `encoded` [1, z, T, M] cut to `frames` or padded with zeros (normalized latent
// space) at the end, repeated for `batch` items, f32.
Tensor fit_audio_latent(const Tensor& encoded, int64_t frames, int64_t batch);

// TemporalRegionMask.apply_to: [B, T, 1] f32, 1 where the token's [start, end) time span (axis 0 of `positions`
// [B, A, T, 2], in seconds: video_positions / audio_positions) meets [start, end), compared in f32 as torch does.
Tensor temporal_region_mask(const Tensor& positions, double start, double end);

}  // namespace ltx::stages
