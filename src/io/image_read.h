// Still images through FFmpeg's libraries (already linked for the MP4 writer, so no other image library): reading
// a PNG/JPEG/... into 8-bit RGB, and the light H.264 round trip the official image conditioning applies to a still
// (ltx_pipelines/utils/media_io.py preprocess: encode_single_frame + decode_single_frame with PyAV and libx264).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ltx::io {

struct RgbImage {
  int64_t height = 0, width = 0;
  std::vector<uint8_t> rgb;  // [height, width, 3]
};

// The first frame of an image file as RGB, alpha dropped (media_io.py decode_image keeps [..., :3] of PIL's
// array). Throws ltx::Error("image", ...) naming the file when it cannot be opened or decoded.
RgbImage read_image(const std::string& path);

// The still encoded as one H.264 frame (libx264, yuv420p, the given CRF, preset veryfast, dimensions rounded down
// to even) and decoded back to RGB, as media_io.py preprocess does with crf != 0. RGB <-> YUV as PyAV's reformat
// converts (swscale, bilinear, BT.601 limited range). libx264 builds differ, so the pixels equal PyAV's only
// within a bound (tests/io measures it against a PyAV golden).
RgbImage h264_roundtrip(const RgbImage& image, int crf);

}  // namespace ltx::io
