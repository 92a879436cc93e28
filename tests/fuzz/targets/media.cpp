// Video and audio files (io/media_read.h, FFmpeg's demuxers and decoders) as retake, audio-to-video and IC-LoRA read
// them: the container probed, the first frames decoded to RGB, the first seconds of audio to float, then cut as an
// audio input is cut.
#include "core/error.h"
#include "fuzz_target.h"
#include "io/media_read.h"
#include "stages/audio_input.h"

LTX_FUZZ_TARGET(media) {
  static ltx::fuzz::InputFile file("media");
  const std::string& path = file.write(data, size);
  try {
    (void)ltx::io::probe_video(path);
  } catch (const ltx::Error&) {
  }
  try {
    (void)ltx::io::read_video(path, 4);
  } catch (const ltx::Error&) {
  }
  try {
    if (const auto audio = ltx::io::read_audio(path, 2.0)) (void)ltx::stages::cut_audio_clip(*audio, path, 0.5, 1.0);
  } catch (const ltx::Error&) {
  }
  return 0;
}
