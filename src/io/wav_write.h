// WAV output: 16-bit PCM, little-endian RIFF, interleaved channels, the samples clamped to [-1, 1] and rounded
// (x·32767). 16-bit PCM because every player and tool reads it; the MP4's AAC track is lossy anyway.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace ltx::io {

// `planar`: [channels, n] in [-1, 1]. Written all-or-nothing (a temporary file renamed into place); throws
// ltx::Error("wav", ...) on a problem, leaving nothing at `path`.
void write_wav(const std::string& path, int64_t sample_rate, int64_t channels, std::span<const float> planar);

}  // namespace ltx::io
