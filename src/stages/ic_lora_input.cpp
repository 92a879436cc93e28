#include "stages/ic_lora_input.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>

#include "core/error.h"
#include "core/half.h"
#include "core/path_fields.h"
#include "io/media_read.h"
#include "io/safetensors.h"
#include "stages/image_conditioning.h"

namespace ltx::stages {
namespace {

float bf16(float x) { return bf16_to_f32(f32_to_bf16(x)); }

// The first `frame_cap` frames of the file's video stream, each through image_to_pixels: [1, 3, F, height, width].
Tensor video_pixels(const std::string& path, int64_t height, int64_t width, int64_t frame_cap, const char* what) {
  LTX_CHECK(frame_cap > 0, "ic-lora", "a frame cap must be positive, got ", frame_cap);
  const std::optional<io::DecodedVideo> v = io::read_video(path, frame_cap);
  LTX_CHECK(v.has_value(), "ic-lora", "the ", what, " ", path, " has no video stream");
  const int64_t plane = height * width, frame_bytes = v->height * v->width * 3;
  std::vector<float> px(static_cast<size_t>(3 * v->frames * plane));
  for (int64_t f = 0; f < v->frames; ++f) {
    io::RgbImage frame{v->height, v->width, {}};
    frame.rgb.assign(v->rgb.begin() + f * frame_bytes, v->rgb.begin() + (f + 1) * frame_bytes);
    const std::vector<float> one = image_to_pixels(frame, height, width).to_floats();  // [1, 3, 1, H, W]
    for (int64_t c = 0; c < 3; ++c)
      std::copy_n(one.begin() + c * plane, plane, px.begin() + (c * v->frames + f) * plane);
  }
  return Tensor::from_floats(DType::F32, {1, 3, v->frames, height, width}, px);
}

// torch's adaptive average pooling window along one axis: [floor(o·in/out), ceil((o+1)·in/out)).
std::pair<int64_t, int64_t> area_window(int64_t o, int64_t in, int64_t out) {
  return {o * in / out, ((o + 1) * in + out - 1) / out};
}

}  // namespace

ReferenceVideoInput parse_reference_argument(const std::string& argument, double default_strength) {
  const PathFields f = split_path_fields(argument, 1);
  LTX_CHECK(!f.path.empty(), "generate", "--video '", argument, "' names no file");
  return {f.path, f.values.empty() ? default_strength : f.values[0]};
}

Tensor load_reference_pixels(const std::string& path, int64_t height, int64_t width, int64_t frame_cap) {
  return video_pixels(path, height, width, frame_cap, "reference video");
}

int64_t reference_latent_frames(int64_t pixel_frames) { return pixel_frames < 1 ? 0 : (pixel_frames - 1) / 8 + 1; }

bool mask_frames_fit(int64_t mask_frames, int64_t latent_frames) {
  return latent_frames == 1 || (mask_frames > 1 && (mask_frames - 1) % (latent_frames - 1) == 0);
}

std::string reference_size_problem(int64_t stage1_height, int64_t stage1_width, int64_t factor) {
  if (stage1_height % (32 * factor) == 0 && stage1_width % (32 * factor) == 0) return {};
  return "the reference videos are read at the stage-1 size " + std::to_string(stage1_width) + "x" +
         std::to_string(stage1_height) + " / " + std::to_string(factor) +
         " (the IC-LoRA's reference_downscale_factor), which must be multiples of 32: give a width and height whose "
         "stage-1 size is a multiple of " +
         std::to_string(32 * factor);
}

std::vector<VideoCondition> reference_conditions(const Backend& backend, const video_vae::VideoEncoder& encoder,
                                                 const ReferenceRequest& r) {
  const std::string size = reference_size_problem(r.height, r.width, r.downscale_factor);
  LTX_CHECK(size.empty(), "ic-lora", size);
  const int64_t f = r.downscale_factor;
  std::vector<Tensor> pixels;
  for (const ReferenceVideoInput& v : r.videos) {
    Tensor p = load_reference_pixels(v.path, r.height / f, r.width / f, r.frames);
    const int64_t keep = (p.dim(2) - 1) / 8 * 8 + 1;  // VideoEncoder.forward drops the frames past 8k+1
    pixels.push_back(keep == p.dim(2) ? std::move(p) : p.slice(2, 0, keep).contiguous());
  }
  Tensor mask;
  if (!r.mask.empty()) {
    mask = load_attention_mask_pixels(r.mask, r.height, r.width, r.frames);
    for (size_t i = 0; i < pixels.size(); ++i) {
      const int64_t latent = reference_latent_frames(pixels[i].dim(2));
      LTX_CHECK(mask_frames_fit(mask.dim(2), latent), "ic-lora", "the conditioning mask ", r.mask, " has ", mask.dim(2),
                " frames but ", r.videos[i].path, " encodes to ", latent, " latent frames: the mask needs 1 + k*",
                latent - 1, " frames, such as ", 1 + (latent - 1) * 8);
    }
  }
  std::vector<VideoCondition> out;
  for (size_t i = 0; i < pixels.size(); ++i) {
    const Tensor latent = encode_pixels(backend, encoder, pixels[i]);
    VideoCondition c{latent, 0, r.videos[i].strength, Placement::Reference, f, {}};
    if (mask.defined())
      c.attention = attention_mask_weights(mask, latent.dim(2), latent.dim(3), latent.dim(4), r.conditioning_strength);
    else if (r.conditioning_strength < 1.0)
      c.attention = {r.compute == DType::BF16 ? bf16(static_cast<float>(r.conditioning_strength))
                                              : static_cast<float>(r.conditioning_strength)};
    out.push_back(std::move(c));
  }
  return out;
}

Tensor load_attention_mask_pixels(const std::string& path, int64_t height, int64_t width, int64_t frame_cap) {
  const Tensor rgb = video_pixels(path, height, width, frame_cap, "conditioning mask");  // f32 (x / 127.5 - 1)
  const int64_t frames = rgb.dim(2), n = frames * height * width;
  const std::vector<float> p = rgb.to_floats();
  std::vector<float> mask(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    // normalize_latent rounds to bf16; mean(dim=1) sums in f32 and rounds once; + 1, / 2, clamp in bf16.
    float sum = 0.0f;
    for (int64_t c = 0; c < 3; ++c) sum += bf16(p[static_cast<size_t>(c * n + i)]);
    const float grey = bf16(sum / 3.0f);
    mask[static_cast<size_t>(i)] = std::clamp(bf16(bf16(grey + 1.0f) / 2.0f), 0.0f, 1.0f);
  }
  return Tensor::from_floats(DType::F32, {1, 1, frames, height, width}, mask);
}

std::vector<float> attention_mask_weights(const Tensor& mask, int64_t frames, int64_t height, int64_t width,
                                          double strength) {
  LTX_CHECK(mask.rank() == 5 && mask.dim(0) == 1 && mask.dim(1) == 1, "ic-lora",
            "a conditioning mask must be [1, 1, F, H, W], got ", mask.shape().str());
  const int64_t f_pix = mask.dim(2), ih = mask.dim(3), iw = mask.dim(4);
  // ic_lora.py asserts (F_pix - 1) % (F_lat - 1) == 0; one mask frame for several latent frames gives too few values.
  LTX_CHECK(mask_frames_fit(f_pix, frames), "ic-lora", "the conditioning mask has ", f_pix,
            " frames but the reference video has ", frames, " latent frames: the mask needs 1 + k*", frames - 1,
            " frames (", frames == 1 ? 1 : 1 + (frames - 1) * 8, " for a reference of that length)");
  const std::vector<float> m = mask.to_floats();
  // Area interpolation per frame: f32 sums, one rounding to bf16 (torch's bf16 adaptive_avg_pool2d).
  std::vector<float> pooled(static_cast<size_t>(f_pix * height * width));
  for (int64_t f = 0; f < f_pix; ++f)
    for (int64_t y = 0; y < height; ++y) {
      const auto [y0, y1] = area_window(y, ih, height);
      for (int64_t x = 0; x < width; ++x) {
        const auto [x0, x1] = area_window(x, iw, width);
        float sum = 0.0f;
        for (int64_t a = y0; a < y1; ++a)
          for (int64_t b = x0; b < x1; ++b) sum += m[static_cast<size_t>((f * ih + a) * iw + b)];
        pooled[static_cast<size_t>((f * height + y) * width + x)] =
            bf16(sum / static_cast<float>((y1 - y0) * (x1 - x0)));
      }
    }
  // The first frame alone, then the mean of each group of t frames (bf16 mean: f32 sum, one rounding); x strength.
  const int64_t plane = height * width, t = frames > 1 ? (f_pix - 1) / (frames - 1) : 1;
  const auto s = static_cast<float>(strength);
  std::vector<float> out(static_cast<size_t>(frames * plane));
  for (int64_t i = 0; i < plane; ++i) out[static_cast<size_t>(i)] = bf16(pooled[static_cast<size_t>(i)] * s);
  for (int64_t f = 1; f < frames; ++f)
    for (int64_t i = 0; i < plane; ++i) {
      float sum = 0.0f;
      for (int64_t k = 0; k < t; ++k) sum += pooled[static_cast<size_t>((1 + (f - 1) * t + k) * plane + i)];
      out[static_cast<size_t>(f * plane + i)] = bf16(bf16(sum / static_cast<float>(t)) * s);
    }
  return out;
}

IcLoraMetadata read_ic_lora_metadata(const std::vector<std::string>& lora_paths) {
  IcLoraMetadata out;
  std::string first;
  for (const std::string& path : lora_paths) {
    const SafetensorsFile file = SafetensorsFile::open(path);
    const auto it = file.metadata().find("reference_downscale_factor");
    if (it == file.metadata().end()) continue;
    out.ic_loras.push_back(path);
    char* end = nullptr;
    const long factor = std::strtol(it->second.c_str(), &end, 10);
    LTX_CHECK(end != it->second.c_str() && *end == '\0' && factor >= 1, "lora", path, ": reference_downscale_factor '",
              it->second, "' is not a positive integer");
    if (factor == 1) continue;
    LTX_CHECK(out.downscale_factor == 1 || out.downscale_factor == factor, "lora",
              "IC-LoRAs with different reference_downscale_factor values cannot be combined: ", first, " has ",
              out.downscale_factor, ", ", path, " has ", factor);
    out.downscale_factor = factor;
    first = path;
  }
  return out;
}

}  // namespace ltx::stages
