// The image prompt enhancement shows Gemma 3 (enhance_i2v), prepared bit for bit as the official chain prepares it:
// ltx_pipelines utils/media_io.py resize_aspect_ratio_preserving (torch's uint8 bilinear interpolate to the long
// side, then a centre crop), then transformers' Gemma3ImageProcessor as Gemma3Processor calls it (PIL's bilinear
// resize to the vision tower's square, pan-and-scan off, 1/255, mean = std = 0.5). docs/gemma3_vision.md §1 has
// the derivation; tests/golden/text/gemma3_image_preprocess holds the reference's outputs.
#pragma once

#include <cstdint>

#include "core/tensor.h"
#include "io/image_read.h"

namespace ltx::gemma3 {

// torch.nn.functional.interpolate(mode="bilinear", align_corners=False, antialias=False) on uint8 [1, 3, H, W]
// (ATen UpSampleKernel.cpp, the separable int16 fixed-point path): width pass first, then height, through a uint8
// intermediate; no antialiasing when shrinking.
io::RgbImage torch_bilinear_resize(const io::RgbImage& image, int64_t height, int64_t width);

// PIL Image.resize(BILINEAR) on 8-bit RGB (Pillow libImaging/Resample.c): a triangle filter widened by the scale
// when shrinking, 22-bit fixed-point coefficients; horizontal pass first, then vertical, each only if its size
// changes.
io::RgbImage pil_bilinear_resize(const io::RgbImage& image, int64_t height, int64_t width);

// media_io.py resize_aspect_ratio_preserving: scaled so that the long side is `long_side` (sizes truncated as
// Python's int() truncates; 8% of sides come out one short), resized a pixel larger where ceil needs it, then
// centre-cropped.
io::RgbImage resize_long_side(const io::RgbImage& image, int64_t long_side);

// Gemma3ImageProcessor.preprocess without pan-and-scan: squashed to size x size (PIL bilinear), then
// (u8 / 255 - 0.5) / 0.5 in float32; f32 [1, 3, size, size] in RGB order.
Tensor gemma_pixel_values(const io::RgbImage& image, int64_t size);

// The whole chain generate_enhanced_prompt applies to the first conditioning image (long side 896, then the
// processor's square).
Tensor enhance_image_pixels(const io::RgbImage& image, int64_t long_side, int64_t size);

}  // namespace ltx::gemma3
