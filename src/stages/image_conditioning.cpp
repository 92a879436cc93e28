#include "stages/image_conditioning.h"

#include <cmath>
#include <filesystem>

#include "core/error.h"
#include "core/path_fields.h"
#include "graph/compile.h"
#include "nn/weight_loader.h"

namespace ltx::stages {
namespace {

// torch upsample_bilinear2d (align_corners=False, no antialias) source index and weight for output index i:
// src = (i + 0.5)·in/out - 0.5 in f32, clamped at 0 (UpSample.h area_pixel_compute_source_index).
struct Tap {
  int64_t i0, i1;
  float w1;
};
std::vector<Tap> bilinear_taps(int64_t in, int64_t out) {
  const float scale = static_cast<float>(in) / static_cast<float>(out);
  std::vector<Tap> taps(static_cast<size_t>(out));
  for (int64_t i = 0; i < out; ++i) {
    float src = scale * (static_cast<float>(i) + 0.5f) - 0.5f;
    if (src < 0) src = 0;
    const int64_t i0 = std::min(static_cast<int64_t>(std::floor(src)), in - 1);
    const float lambda = std::clamp(src - static_cast<float>(i0), 0.0f, 1.0f);
    taps[static_cast<size_t>(i)] = {i0, std::min(i0 + 1, in - 1), lambda};
  }
  return taps;
}

}  // namespace

ImageConditionInput parse_image_argument(const std::string& argument) {
  ImageConditionInput in;
  const PathFields f = split_path_fields(argument, 3);  // FRAME, STRENGTH, CRF
  in.path = f.path;
  LTX_CHECK(!in.path.empty(), "generate", "--image '", argument, "' names no file");
  if (!f.values.empty()) {
    LTX_CHECK(f.values[0] == std::floor(f.values[0]), "generate", "--image '", argument, "': frame ", f.fields[0],
              " is not an integer");
    in.frame = static_cast<int64_t>(f.values[0]);
  }
  if (f.values.size() > 1) in.strength = f.values[1];
  if (f.values.size() > 2) {
    LTX_CHECK(f.values[2] == std::floor(f.values[2]), "generate", "--image '", argument, "': CRF ", f.fields[2],
              " is not an integer");
    in.crf = static_cast<int>(f.values[2]);
  }
  return in;
}

std::vector<std::string> image_condition_problems(const std::vector<ImageConditionInput>& inputs, int64_t frames) {
  std::vector<std::string> problems;
  for (const ImageConditionInput& in : inputs) {
    const std::string name = "image " + in.path;
    if (in.frame < 0 || in.frame >= frames)
      problems.push_back(name + ": frame " + std::to_string(in.frame) + " is outside the video's frames 0.." +
                         std::to_string(frames - 1));
    if (!(in.strength >= 0.0 && in.strength <= 1.0))
      problems.push_back(name + ": strength " + std::to_string(in.strength) + " is outside [0, 1]");
    if (in.crf < 0 || in.crf > 51) problems.push_back(name + ": CRF " + std::to_string(in.crf) + " is outside 0..51");
    if (!std::filesystem::is_regular_file(in.path)) {
      problems.push_back(name + " does not exist");
      continue;
    }
    try {
      const io::RgbImage img = io::read_image(in.path);
      if (img.height < 2 || img.width < 2) problems.push_back(name + " is smaller than 2x2 pixels");
    } catch (const Error& e) {
      problems.push_back(e.what());
    }
  }
  return problems;
}

Tensor image_to_pixels(const io::RgbImage& image, int64_t height, int64_t width) {
  LTX_CHECK(height > 0 && width > 0 && image.height > 0 && image.width > 0, "conditioning", "cannot resize a ",
            image.width, "x", image.height, " image to ", width, "x", height);
  // media_io.py resize_and_center_crop: cover the target, ceil against rounding, then crop the middle.
  const double scale = std::max(static_cast<double>(height) / static_cast<double>(image.height),
                                static_cast<double>(width) / static_cast<double>(image.width));
  const auto new_h = static_cast<int64_t>(std::ceil(static_cast<double>(image.height) * scale));
  const auto new_w = static_cast<int64_t>(std::ceil(static_cast<double>(image.width) * scale));
  const int64_t top = (new_h - height) / 2, left = (new_w - width) / 2;
  const std::vector<Tap> ty = bilinear_taps(image.height, new_h), tx = bilinear_taps(image.width, new_w);
  std::vector<float> out(static_cast<size_t>(3 * height * width));
  auto px = [&](int64_t y, int64_t x, int c) {
    return static_cast<float>(image.rgb[static_cast<size_t>((y * image.width + x) * 3 + c)]);
  };
  for (int64_t y = 0; y < height; ++y) {
    const Tap& a = ty[static_cast<size_t>(y + top)];
    for (int64_t x = 0; x < width; ++x) {
      const Tap& b = tx[static_cast<size_t>(x + left)];
      for (int c = 0; c < 3; ++c) {
        const float r0 = px(a.i0, b.i0, c) * (1 - b.w1) + px(a.i0, b.i1, c) * b.w1;
        const float r1 = px(a.i1, b.i0, c) * (1 - b.w1) + px(a.i1, b.i1, c) * b.w1;
        const float v = r0 * (1 - a.w1) + r1 * a.w1;
        out[static_cast<size_t>((c * height + y) * width + x)] = v / 127.5f - 1.0f;  // normalize_latent
      }
    }
  }
  return Tensor::from_floats(DType::F32, {1, 3, 1, height, width}, out);
}

Tensor load_conditioning_pixels(const ImageConditionInput& input, int64_t height, int64_t width) {
  io::RgbImage image = io::read_image(input.path);
  if (input.crf != 0) image = io::h264_roundtrip(image, input.crf);
  return image_to_pixels(image, height, width);
}

video_vae::VideoEncoder load_video_encoder(const std::shared_ptr<const WeightSource>& checkpoint, DType compute) {
  const Json config = metadata_json(*checkpoint, "config");
  LTX_CHECK(config.contains("vae"), "conditioning", checkpoint->describe(), ": `config` has no \"vae\" section");
  const WeightLoader vae(checkpoint, "vae.");
  video_vae::VideoEncoder enc =
      video_vae::VideoEncoder::load(vae, video_vae::VideoVaeConfig::from_metadata(config), compute);
  vae.ignore("decoder.");
  vae.finish();
  return enc;
}

Tensor encode_pixels(const Backend& backend, const video_vae::VideoEncoder& encoder, const Tensor& pixels) {
  LTX_CHECK(pixels.rank() == 5 && pixels.dim(1) == 3, "conditioning", "pixels must be [B, 3, F, H, W], got ",
            pixels.shape().str());
  Graph g;
  const Tensor x = pixels.to(DType::F32).contiguous();
  g.output(encoder.forward(g.input("video", DType::F32, x.shape())), "latent");
  auto plan = compile(g, backend);
  return plan->run(std::span<const Tensor>(&x, 1))[0].clone();
}

std::function<std::vector<VideoCondition>(int64_t, int64_t)> image_conditioner(
    const Backend& backend, std::vector<ImageConditionInput> inputs,
    std::shared_ptr<const video_vae::VideoEncoder> encoder, PixelSource pixels, bool all_keyframes) {
  return [&backend, inputs = std::move(inputs), encoder = std::move(encoder), pixels = std::move(pixels),
          all_keyframes](int64_t height, int64_t width) {
    std::vector<VideoCondition> out;
    for (size_t i = 0; i < inputs.size(); ++i)
      out.push_back({encode_pixels(backend, *encoder, pixels(i, height, width)), inputs[i].frame, inputs[i].strength,
                     all_keyframes ? Placement::Keyframe : Placement::ByFrame});
    return out;
  };
}

}  // namespace ltx::stages
