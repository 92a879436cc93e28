// PNG output of 8-bit RGB images through FFmpeg's PNG encoder (libavcodec, already linked for the MP4 writer).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace ltx::io {

// `rgb`: [height, width, 3]. The PNG file's bytes.
std::vector<uint8_t> encode_png(int64_t height, int64_t width, std::span<const uint8_t> rgb);

// Writes `rgb` to `path` all-or-nothing (a temporary file renamed into place); throws ltx::Error("png", ...).
void write_png(const std::string& path, int64_t height, int64_t width, std::span<const uint8_t> rgb);

}  // namespace ltx::io
