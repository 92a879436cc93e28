// Image-to-video conditioning inputs (ltx_pipelines/utils/helpers.py combined_image_conditionings,
// utils/media_io.py load_image_conditioning, utils/args.py ImageConditioningInput): `--image FILE[:FRAME[:STRENGTH
// [:CRF]]]` parsed and checked before any heavy work; each image read, put through the light H.264 round trip
// (CRF 33 by default, 0 skips it), resized to cover the stage's size (bilinear, align_corners=False, no
// antialias), center-cropped, scaled to [-1, 1] and encoded by the video VAE encoder into a VideoCondition.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "io/image_read.h"
#include "models/ltx/video_vae/video_vae.h"
#include "nn/weight_source.h"
#include "stages/conditioning.h"

namespace ltx {
class Backend;  // backend/backend.h: what a graph runs on
}  // namespace ltx

namespace ltx::stages {

inline constexpr int kDefaultImageCrf = 33;  // ltx_pipelines/utils/constants.py DEFAULT_IMAGE_CRF

struct ImageConditionInput {
  std::string path;
  int64_t frame = 0;      // pixel frame index in [0, frames)
  double strength = 1.0;  // in [0, 1]
  int crf = kDefaultImageCrf;
};

// "FILE", "FILE:FRAME", "FILE:FRAME:STRENGTH" or "FILE:FRAME:STRENGTH:CRF". Trailing fields are taken only when
// they are numbers, so a path may hold colons. Throws ltx::Error("generate", ...) on a malformed number.
ImageConditionInput parse_image_argument(const std::string& argument);

// Every problem with the inputs for a video of `frames` frames (unreadable or undecodable file, frame out of
// range, strength outside [0, 1], CRF outside [0, 51]), one string each. Decodes each
// image once (cheap next to a generation).
std::vector<std::string> image_condition_problems(const std::vector<ImageConditionInput>& inputs, int64_t frames);

// media_io.py resize_and_center_crop + normalize_latent: RGB [H, W, 3] -> [1, 3, 1, height, width] f32 in [-1, 1].
Tensor image_to_pixels(const io::RgbImage& image, int64_t height, int64_t width);

// media_io.py load_image_conditioning: read, H.264 round trip (crf != 0), image_to_pixels.
Tensor load_conditioning_pixels(const ImageConditionInput& input, int64_t height, int64_t width);

// The checkpoint's video VAE encoder (vae.encoder.*, vae.per_channel_statistics.*).
video_vae::VideoEncoder load_video_encoder(const std::shared_ptr<const WeightSource>& checkpoint, DType compute);

// [1, 3, 1, H, W] pixels -> [1, C, 1, H/32, W/32] normalised latent.
Tensor encode_pixels(const Backend& backend, const video_vae::VideoEncoder& encoder, const Tensor& pixels);

// helpers.py combined_image_conditionings: the pixels an input gives at a stage size, encoded, frame 0 by latent
// replacement, others as keyframes; with `all_keyframes`, image_conditionings_by_adding_guiding_latent (keyframe
// interpolation): every image, frame 0's too, as keyframe tokens. `pixels` supplies the preprocessed image
// (load_conditioning_pixels in generate; recorded tensors in the golden runner).
using PixelSource = std::function<Tensor(size_t index, int64_t height, int64_t width)>;
std::function<std::vector<VideoCondition>(int64_t, int64_t)> image_conditioner(
    const Backend& backend, std::vector<ImageConditionInput> inputs,
    std::shared_ptr<const video_vae::VideoEncoder> encoder, PixelSource pixels, bool all_keyframes = false);

}  // namespace ltx::stages
