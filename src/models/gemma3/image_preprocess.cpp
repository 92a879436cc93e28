#include "models/gemma3/image_preprocess.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.h"

namespace ltx::gemma3 {
namespace {

// One axis of a separable resize: output i = clamp((round + sum_k w[i][k] * in[start[i] + k]) >> shift, 0, 255).
struct AxisTaps {
  std::vector<int64_t> start, count;
  std::vector<std::vector<int64_t>> weights;  // fixed point, `shift` fractional bits
  int shift = 0;
};

uint8_t clip8(int64_t v, int shift) { return static_cast<uint8_t>(std::clamp<int64_t>(v >> shift, 0, 255)); }

// Applies `taps` along the width (horizontal) or the height of an RGB image.
io::RgbImage apply_taps(const io::RgbImage& in, const AxisTaps& taps, bool horizontal) {
  io::RgbImage out;
  const auto n = static_cast<int64_t>(taps.start.size());
  out.height = horizontal ? in.height : n;
  out.width = horizontal ? n : in.width;
  out.rgb.resize(static_cast<size_t>(out.height * out.width * 3));
  const int64_t round = int64_t{1} << (taps.shift - 1);
  for (int64_t y = 0; y < out.height; ++y)
    for (int64_t x = 0; x < out.width; ++x) {
      const int64_t i = horizontal ? x : y;
      const std::vector<int64_t>& w = taps.weights[static_cast<size_t>(i)];
      for (int c = 0; c < 3; ++c) {
        int64_t sum = round;
        for (int64_t k = 0; k < taps.count[i]; ++k) {
          const int64_t sx = horizontal ? taps.start[i] + k : x, sy = horizontal ? y : taps.start[i] + k;
          sum += w[static_cast<size_t>(k)] * in.rgb[static_cast<size_t>((sy * in.width + sx) * 3 + c)];
        }
        out.rgb[static_cast<size_t>((y * out.width + x) * 3 + c)] = clip8(sum, taps.shift);
      }
    }
  return out;
}

// ATen's bilinear weights for uint8 without antialias (UpSampleKernel.cpp _compute_indices_min_size_weights_aa's
// antialias=false branch, area_pixel_compute_source_index, guard_index_and_lambda), in double, then made int16 with
// the precision _compute_index_ranges_int16_weights picks from the largest weight.
AxisTaps torch_taps(int64_t in, int64_t out) {
  AxisTaps t;
  std::vector<std::vector<double>> w(static_cast<size_t>(out));
  const double scale = static_cast<double>(in) / static_cast<double>(out);
  double w_max = 0.0;
  for (int64_t i = 0; i < out; ++i) {
    const double real = std::max(scale * (static_cast<double>(i) + 0.5) - 0.5, 0.0);
    const int64_t idx = std::min(static_cast<int64_t>(std::floor(real)), in - 1);
    const double lambda = std::clamp(real - static_cast<double>(idx), 0.0, 1.0);
    t.start.push_back(idx);
    // At the last input pixel both taps fall on it: one tap holding their sum (its int16 value rounds to the
    // same output; see the note in docs/gemma3_vision.md §1b).
    if (idx + 1 < in) {
      w[static_cast<size_t>(i)] = {1.0 - lambda, lambda};
    } else {
      w[static_cast<size_t>(i)] = {(1.0 - lambda) + lambda};
    }
    t.count.push_back(static_cast<int64_t>(w[static_cast<size_t>(i)].size()));
    for (double v : w[static_cast<size_t>(i)]) w_max = std::max(w_max, v);
  }
  int precision = 0;
  for (; precision < 22; ++precision)
    if (static_cast<int>(0.5 + w_max * static_cast<double>(1 << (precision + 1))) >= (1 << 15)) break;
  t.shift = precision;
  for (const std::vector<double>& row : w) {
    std::vector<int64_t> q;
    for (double v : row)
      q.push_back(static_cast<int16_t>(static_cast<int>(0.5 + v * static_cast<double>(1 << precision))));
    t.weights.push_back(std::move(q));
  }
  return t;
}

// Pillow's bilinear coefficients (Resample.c precompute_coeffs with the triangle filter, support 1, widened by the
// scale when shrinking; normalize_coeffs_8bpc: 22 fractional bits).
AxisTaps pil_taps(int64_t in, int64_t out) {
  constexpr int kPrecisionBits = 32 - 8 - 2;
  AxisTaps t;
  t.shift = kPrecisionBits;
  const double scale = static_cast<double>(in) / static_cast<double>(out);
  const double filterscale = std::max(scale, 1.0), support = 1.0 * filterscale, ss = 1.0 / filterscale;
  for (int64_t xx = 0; xx < out; ++xx) {
    const double center = (static_cast<double>(xx) + 0.5) * scale;
    const int64_t xmin = std::max<int64_t>(static_cast<int64_t>(center - support + 0.5), 0);
    const int64_t xsize = std::min<int64_t>(static_cast<int64_t>(center + support + 0.5), in) - xmin;
    std::vector<double> k(static_cast<size_t>(std::max<int64_t>(xsize, 0)));
    double ww = 0.0;
    for (int64_t x = 0; x < xsize; ++x) {
      const double v = std::max(0.0, 1.0 - std::fabs((static_cast<double>(x + xmin) - center + 0.5) * ss));
      k[static_cast<size_t>(x)] = v;
      ww += v;
    }
    std::vector<int64_t> q;
    for (double v : k) {
      if (ww != 0.0) v /= ww;
      const double f = v * static_cast<double>(1 << kPrecisionBits);
      q.push_back(static_cast<int>(v < 0 ? -0.5 + f : 0.5 + f));
    }
    t.start.push_back(xmin);
    t.count.push_back(static_cast<int64_t>(q.size()));
    t.weights.push_back(std::move(q));
  }
  return t;
}

void check_image(const io::RgbImage& image, int64_t height, int64_t width) {
  LTX_CHECK(
      image.height >= 1 && image.width >= 1 && image.rgb.size() == static_cast<size_t>(image.height * image.width * 3),
      "image", "an RGB image of ", image.height, "x", image.width, " pixels holds ", image.rgb.size(), " bytes");
  LTX_CHECK(height >= 1 && width >= 1, "image", "cannot resize to ", height, "x", width);
}

// Both libraries' order: the width pass first (when the width changes), then the height pass, through uint8.
io::RgbImage separable_resize(const io::RgbImage& image, int64_t height, int64_t width,
                              AxisTaps (*taps)(int64_t in, int64_t out)) {
  check_image(image, height, width);
  io::RgbImage out = image;
  if (width != image.width) out = apply_taps(out, taps(image.width, width), true);
  if (height != image.height) out = apply_taps(out, taps(image.height, height), false);
  return out;
}

}  // namespace

io::RgbImage torch_bilinear_resize(const io::RgbImage& image, int64_t height, int64_t width) {
  return separable_resize(image, height, width, torch_taps);
}

io::RgbImage pil_bilinear_resize(const io::RgbImage& image, int64_t height, int64_t width) {
  return separable_resize(image, height, width, pil_taps);
}

io::RgbImage resize_long_side(const io::RgbImage& image, int64_t long_side) {
  check_image(image, long_side, long_side);
  const auto h = static_cast<double>(image.height), w = static_cast<double>(image.width);
  const double s = static_cast<double>(long_side) / std::max(h, w);
  const auto th = static_cast<int64_t>(h * s), tw = static_cast<int64_t>(w * s);  // Python int(): truncation
  LTX_CHECK(th >= 1 && tw >= 1, "image", "a ", image.height, "x", image.width, " image scaled to a long side of ",
            long_side, " has no rows or columns left");
  const double sc = std::max(static_cast<double>(th) / h, static_cast<double>(tw) / w);
  const auto nh = static_cast<int64_t>(std::ceil(h * sc)), nw = static_cast<int64_t>(std::ceil(w * sc));
  const io::RgbImage big = torch_bilinear_resize(image, nh, nw);
  const int64_t top = (nh - th) / 2, left = (nw - tw) / 2;
  io::RgbImage out{th, tw, std::vector<uint8_t>(static_cast<size_t>(th * tw * 3))};
  for (int64_t y = 0; y < th; ++y)
    std::copy_n(big.rgb.begin() + ((y + top) * nw + left) * 3, tw * 3, out.rgb.begin() + y * tw * 3);
  return out;
}

Tensor gemma_pixel_values(const io::RgbImage& image, int64_t size) {
  const io::RgbImage square = pil_bilinear_resize(image, size, size);
  std::vector<float> v(static_cast<size_t>(3 * size * size));
  for (int64_t c = 0; c < 3; ++c)
    for (int64_t p = 0; p < size * size; ++p) {
      // image_transforms.py rescale: float64 product, stored float32; normalize: float32 (x - 0.5) / 0.5.
      const auto r =
          static_cast<float>(static_cast<double>(square.rgb[static_cast<size_t>(p * 3 + c)]) * 0.00392156862745098);
      v[static_cast<size_t>(c * size * size + p)] = (r - 0.5f) / 0.5f;
    }
  return Tensor::from_floats(DType::F32, {1, 3, size, size}, v);
}

Tensor enhance_image_pixels(const io::RgbImage& image, int64_t long_side, int64_t size) {
  return gemma_pixel_values(resize_long_side(image, long_side), size);
}

}  // namespace ltx::gemma3
