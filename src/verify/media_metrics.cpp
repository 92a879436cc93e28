#include "verify/media_metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

#include "core/error.h"

namespace ltx {
namespace {

// The normalized 1-D Gaussian of `size` taps (odd), sigma 1.5.
std::vector<double> gaussian(int64_t size) {
  std::vector<double> g(static_cast<size_t>(size));
  double sum = 0.0;
  for (int64_t i = 0; i < size; ++i) {
    const double x = static_cast<double>(i - size / 2);
    g[static_cast<size_t>(i)] = std::exp(-x * x / (2.0 * 1.5 * 1.5));
    sum += g[static_cast<size_t>(i)];
  }
  for (double& v : g) v /= sum;
  return g;
}

// Valid-region separable filtering of one plane [h, w] -> [h - k + 1, w - k + 1].
std::vector<double> filter(const std::vector<double>& x, int64_t h, int64_t w, const std::vector<double>& g) {
  const auto k = static_cast<int64_t>(g.size());
  const int64_t oh = h - k + 1, ow = w - k + 1;
  std::vector<double> rows(static_cast<size_t>(h * ow)), out(static_cast<size_t>(oh * ow));
  for (int64_t y = 0; y < h; ++y)
    for (int64_t xo = 0; xo < ow; ++xo) {
      double s = 0.0;
      for (int64_t t = 0; t < k; ++t) s += g[static_cast<size_t>(t)] * x[static_cast<size_t>(y * w + xo + t)];
      rows[static_cast<size_t>(y * ow + xo)] = s;
    }
  for (int64_t yo = 0; yo < oh; ++yo)
    for (int64_t xo = 0; xo < ow; ++xo) {
      double s = 0.0;
      for (int64_t t = 0; t < k; ++t) s += g[static_cast<size_t>(t)] * rows[static_cast<size_t>((yo + t) * ow + xo)];
      out[static_cast<size_t>(yo * ow + xo)] = s;
    }
  return out;
}

double ssim_plane(const std::vector<double>& a, const std::vector<double>& b, int64_t h, int64_t w) {
  const int64_t k = std::max<int64_t>(1, (std::min<int64_t>({11, h, w}) - 1) / 2 * 2 + 1);
  const std::vector<double> g = gaussian(k);
  std::vector<double> aa(a.size()), bb(a.size()), ab(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    aa[i] = a[i] * a[i];
    bb[i] = b[i] * b[i];
    ab[i] = a[i] * b[i];
  }
  const std::vector<double> ma = filter(a, h, w, g), mb = filter(b, h, w, g), saa = filter(aa, h, w, g),
                            sbb = filter(bb, h, w, g), sab = filter(ab, h, w, g);
  constexpr double c1 = 0.01 * 0.01, c2 = 0.03 * 0.03;
  double sum = 0.0;
  for (size_t i = 0; i < ma.size(); ++i) {
    const double va = saa[i] - ma[i] * ma[i], vb = sbb[i] - mb[i] * mb[i], cov = sab[i] - ma[i] * mb[i];
    sum += (2 * ma[i] * mb[i] + c1) * (2 * cov + c2) / ((ma[i] * ma[i] + mb[i] * mb[i] + c1) * (va + vb + c2));
  }
  return sum / static_cast<double>(ma.size());
}

}  // namespace

FrameMetrics compare_frames(std::span<const float> a, std::span<const float> b, int64_t frames, int64_t height,
                            int64_t width, int64_t channels) {
  const int64_t n = frames * height * width * channels;
  LTX_CHECK(n > 0 && static_cast<int64_t>(a.size()) == n && static_cast<int64_t>(b.size()) == n, "compare",
            "frames of ", a.size(), " and ", b.size(), " values for ", frames, "x", height, "x", width, "x", channels);
  double se = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(a[static_cast<size_t>(i)]) - b[static_cast<size_t>(i)];
    se += d * d;
  }
  FrameMetrics m;
  m.psnr_db = se == 0.0 ? std::numeric_limits<double>::infinity() : 10.0 * std::log10(static_cast<double>(n) / se);
  double ssim = 0.0;
  std::vector<double> pa(static_cast<size_t>(height * width)), pb(pa.size());
  for (int64_t f = 0; f < frames; ++f)
    for (int64_t c = 0; c < channels; ++c) {
      for (int64_t p = 0; p < height * width; ++p) {
        const auto i = static_cast<size_t>((f * height * width + p) * channels + c);
        pa[static_cast<size_t>(p)] = a[i];
        pb[static_cast<size_t>(p)] = b[i];
      }
      ssim += ssim_plane(pa, pb, height, width);
    }
  m.ssim = ssim / static_cast<double>(frames * channels);
  return m;
}

WaveformMetrics compare_waveforms(std::span<const float> a, std::span<const float> b) {
  LTX_CHECK(!a.empty() && a.size() == b.size(), "compare", "waveforms of ", a.size(), " and ", b.size(), " samples");
  double dd = 0.0, aa = 0.0, bb = 0.0, ab = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double x = a[i], y = b[i];
    dd += (x - y) * (x - y);
    aa += x * x;
    bb += y * y;
    ab += x * y;
  }
  WaveformMetrics m;
  m.rel_l2 = bb > 0.0 ? std::sqrt(dd / bb) : (dd == 0.0 ? 0.0 : std::numeric_limits<double>::infinity());
  m.cosine = aa > 0.0 && bb > 0.0 ? ab / std::sqrt(aa * bb) : (aa == bb ? 1.0 : 0.0);
  return m;
}

MediaGates MediaGates::relaxed_to(const std::optional<FrameMetrics>& official_frames,
                                  const std::optional<WaveformMetrics>& official_audio) {
  MediaGates g;
  if (official_frames) {
    g.min_psnr_db = std::min(g.min_psnr_db, official_frames->psnr_db);
    g.min_ssim = std::min(g.min_ssim, official_frames->ssim);
  }
  if (official_audio) {
    g.max_rel_l2 = std::max(g.max_rel_l2, official_audio->rel_l2);
    g.min_cosine = std::min(g.min_cosine, official_audio->cosine);
  }
  return g;
}

std::string describe(const FrameMetrics& m) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "PSNR %.2f dB, SSIM %.6f", m.psnr_db, m.ssim);
  return buf;
}

std::string describe(const WaveformMetrics& m) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "rel L2 %.3g, cosine %.8f", m.rel_l2, m.cosine);
  return buf;
}

}  // namespace ltx
