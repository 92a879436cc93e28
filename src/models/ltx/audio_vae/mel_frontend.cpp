#include "models/ltx/audio_vae/mel_frontend.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <numeric>

#include "core/error.h"

namespace ltx::mel {
namespace {

constexpr double kPi = std::numbers::pi;

// |DFT| of one real frame, bins 0..n/2, in double (torch.stft's onesided magnitude): an iterative radix-2 FFT when n
// is a power of two (every LTX audio VAE's n_fft), else the direct sum. Both agree with the exact DFT to ~1e-15
// relative; the FFT makes a real-size mel (n_fft 1024) 100x cheaper than the direct sum.
class FrameSpectrum {
 public:
  explicit FrameSpectrum(int64_t n) : n_(n), re_(static_cast<size_t>(n)), im_(static_cast<size_t>(n)) {
    for (int64_t i = 0; i < n; ++i) {
      cos_.push_back(std::cos(2 * kPi * static_cast<double>(i) / static_cast<double>(n)));
      sin_.push_back(std::sin(2 * kPi * static_cast<double>(i) / static_cast<double>(n)));
    }
    radix2_ = n >= 2 && (n & (n - 1)) == 0;
    if (radix2_) {
      int64_t bits = 0;
      while ((int64_t{1} << bits) < n) ++bits;
      for (int64_t i = 0; i < n; ++i) {
        int64_t r = 0;
        for (int64_t b = 0; b < bits; ++b) r |= ((i >> b) & 1) << (bits - 1 - b);
        reversed_.push_back(r);
      }
    }
  }

  // magnitude[k] = |Σ_i frame[i]·e^{-2πi·ik/n}| for k = 0..n/2.
  void magnitude(const std::vector<double>& frame, std::vector<double>& magnitude) {
    const int64_t bins = n_ / 2 + 1;
    if (!radix2_) {
      for (int64_t k = 0; k < bins; ++k) {
        double re = 0, im = 0;
        for (int64_t i = 0; i < n_; ++i) {
          const auto idx = static_cast<size_t>((k * i) % n_);
          re += frame[static_cast<size_t>(i)] * cos_[idx];
          im -= frame[static_cast<size_t>(i)] * sin_[idx];
        }
        magnitude[static_cast<size_t>(k)] = std::sqrt(re * re + im * im);
      }
      return;
    }
    for (int64_t i = 0; i < n_; ++i) {
      re_[static_cast<size_t>(reversed_[static_cast<size_t>(i)])] = frame[static_cast<size_t>(i)];
      im_[static_cast<size_t>(reversed_[static_cast<size_t>(i)])] = 0.0;
    }
    for (int64_t len = 2; len <= n_; len *= 2) {
      const int64_t step = n_ / len;  // twiddle e^{-2πi·j/len} = cos_[j·step] - i·sin_[j·step]
      for (int64_t start = 0; start < n_; start += len)
        for (int64_t j = 0; j < len / 2; ++j) {
          const auto a = static_cast<size_t>(start + j), b = static_cast<size_t>(start + j + len / 2);
          const double wr = cos_[static_cast<size_t>(j * step)], wi = -sin_[static_cast<size_t>(j * step)];
          const double tr = re_[b] * wr - im_[b] * wi, ti = re_[b] * wi + im_[b] * wr;
          re_[b] = re_[a] - tr;
          im_[b] = im_[a] - ti;
          re_[a] += tr;
          im_[a] += ti;
        }
    }
    for (int64_t k = 0; k < bins; ++k)
      magnitude[static_cast<size_t>(k)] = std::hypot(re_[static_cast<size_t>(k)], im_[static_cast<size_t>(k)]);
  }

 private:
  int64_t n_;
  bool radix2_ = false;
  std::vector<double> cos_, sin_, re_, im_;
  std::vector<int64_t> reversed_;
};

// Slaney mel scale (torchaudio.functional.functional._hz_to_mel / _mel_to_hz, mel_scale="slaney").
double hz_to_mel(double f) {
  const double f_sp = 200.0 / 3, min_log_hz = 1000.0, min_log_mel = min_log_hz / f_sp;
  const double logstep = std::log(6.4) / 27.0;
  return f >= min_log_hz ? min_log_mel + std::log(f / min_log_hz) / logstep : f / f_sp;
}
double mel_to_hz(double m) {
  const double f_sp = 200.0 / 3, min_log_hz = 1000.0, min_log_mel = min_log_hz / f_sp;
  const double logstep = std::log(6.4) / 27.0;
  return m >= min_log_mel ? min_log_hz * std::exp(logstep * (m - min_log_mel)) : f_sp * m;
}

}  // namespace

Tensor resample(const Tensor& waveform, int64_t sample_rate, int64_t target_rate) {
  // torchaudio.functional.resample: _get_sinc_resample_kernel + _apply_sinc_resample_kernel (sinc_interp_hann).
  if (sample_rate == target_rate) return waveform.contiguous();
  const int64_t g = std::gcd(sample_rate, target_rate);
  const int64_t orig = sample_rate / g, next = target_rate / g;
  constexpr double kLowpassWidth = 6, kRolloff = 0.99;
  const double base_freq = static_cast<double>(std::min(orig, next)) * kRolloff;
  const int64_t width = static_cast<int64_t>(std::ceil(kLowpassWidth * static_cast<double>(orig) / base_freq));
  const int64_t taps = 2 * width + orig;
  std::vector<double> kernel(static_cast<size_t>(next * taps));
  for (int64_t p = 0; p < next; ++p) {
    for (int64_t i = 0; i < taps; ++i) {
      double t = (static_cast<double>(-p) / static_cast<double>(next) +
                  static_cast<double>(i - width) / static_cast<double>(orig)) *
                 base_freq;
      t = std::clamp(t, -kLowpassWidth, kLowpassWidth);
      const double w = std::pow(std::cos(t * kPi / kLowpassWidth / 2), 2);
      t *= kPi;
      const double s = t == 0 ? 1.0 : std::sin(t) / t;
      kernel[static_cast<size_t>(p * taps + i)] = s * w * base_freq / static_cast<double>(orig);
    }
  }
  const int64_t b = waveform.dim(0), c = waveform.dim(1), n = waveform.dim(2);
  const int64_t out_n = (next * n + orig - 1) / orig;  // ceil(new · length / orig)
  const std::vector<float> x = waveform.to_floats();
  std::vector<float> out(static_cast<size_t>(b * c * out_n));
  for (int64_t r = 0; r < b * c; ++r) {
    const float* row = x.data() + r * n;
    for (int64_t o = 0; o < out_n; ++o) {
      const int64_t frame = o / next, phase = o % next;
      double acc = 0;
      for (int64_t i = 0; i < taps; ++i) {
        const int64_t s = frame * orig + i - width;  // zero padding (width, width + orig)
        if (s >= 0 && s < n) acc += kernel[static_cast<size_t>(phase * taps + i)] * row[s];
      }
      out[static_cast<size_t>(r * out_n + o)] = static_cast<float>(acc);
    }
  }
  return Tensor::from_floats(DType::F32, {b, c, out_n}, out);
}

std::vector<double> slaney_mel_filterbank(int64_t n_freqs, double f_max, int64_t n_mels, int64_t sample_rate) {
  // torchaudio.functional.melscale_fbanks with f_min 0, norm "slaney", mel_scale "slaney".
  std::vector<double> all(static_cast<size_t>(n_freqs));
  for (int64_t i = 0; i < n_freqs; ++i)
    all[static_cast<size_t>(i)] =
        static_cast<double>(sample_rate / 2) * static_cast<double>(i) / static_cast<double>(n_freqs - 1);
  const double m_min = hz_to_mel(0.0), m_max = hz_to_mel(f_max);
  std::vector<double> f_pts(static_cast<size_t>(n_mels + 2));
  for (int64_t i = 0; i < n_mels + 2; ++i)
    f_pts[static_cast<size_t>(i)] =
        mel_to_hz(m_min + (m_max - m_min) * static_cast<double>(i) / static_cast<double>(n_mels + 1));
  std::vector<double> fb(static_cast<size_t>(n_freqs * n_mels));
  for (int64_t f = 0; f < n_freqs; ++f) {
    for (int64_t m = 0; m < n_mels; ++m) {
      const auto mi = static_cast<size_t>(m);
      const double down = (all[static_cast<size_t>(f)] - f_pts[mi]) / (f_pts[mi + 1] - f_pts[mi]);
      const double up = (f_pts[mi + 2] - all[static_cast<size_t>(f)]) / (f_pts[mi + 2] - f_pts[mi + 1]);
      const double enorm = 2.0 / (f_pts[mi + 2] - f_pts[mi]);
      fb[static_cast<size_t>(f * n_mels + m)] = std::max(0.0, std::min(down, up)) * enorm;
    }
  }
  return fb;
}

MelOutputs waveform_to_mel(const Tensor& waveform, int64_t sample_rate, const MelFrontendConfig& cfg) {
  LTX_CHECK(waveform.rank() == 3, "mel", "waveform must be [B, C, N], got ", waveform.shape().str());
  MelOutputs out;
  out.resampled = resample(waveform, sample_rate, cfg.target_sample_rate);
  const int64_t b = waveform.dim(0), c = waveform.dim(1), n = out.resampled.dim(2);
  const int64_t n_fft = cfg.n_fft, hop = cfg.hop_length, nf = n_fft / 2 + 1, m = cfg.n_mels, half = n_fft / 2;
  LTX_CHECK(n > half, "mel", "reflect padding needs more than ", half, " samples, got ", n);
  const int64_t frames = n / hop + 1;  // centred: (n + 2·half - n_fft) / hop + 1
  std::vector<double> window(static_cast<size_t>(n_fft));
  for (int64_t i = 0; i < n_fft; ++i)  // torch.hann_window (periodic)
    window[static_cast<size_t>(i)] =
        0.5 - 0.5 * std::cos(2 * kPi * static_cast<double>(i) / static_cast<double>(n_fft));
  FrameSpectrum spectrum(n_fft);
  const std::vector<double> fb =
      slaney_mel_filterbank(nf, static_cast<double>(cfg.target_sample_rate) / 2.0, m, cfg.target_sample_rate);
  const std::vector<float> x = out.resampled.to_floats();
  std::vector<float> spec(static_cast<size_t>(b * c * nf * frames)), mel_lin(static_cast<size_t>(b * c * m * frames));
  std::vector<float> mel(static_cast<size_t>(b * c * frames * m));
  std::vector<double> frame(static_cast<size_t>(n_fft)), mag(static_cast<size_t>(nf));
  for (int64_t r = 0; r < b * c; ++r) {
    const float* row = x.data() + r * n;
    for (int64_t t = 0; t < frames; ++t) {
      for (int64_t i = 0; i < n_fft; ++i) {
        int64_t s = t * hop + i - half;
        if (s < 0) s = -s;  // reflect, edge not repeated
        if (s >= n) s = 2 * (n - 1) - s;
        frame[static_cast<size_t>(i)] = row[s] * window[static_cast<size_t>(i)];
      }
      spectrum.magnitude(frame, mag);
      for (int64_t k = 0; k < nf; ++k)
        spec[static_cast<size_t>((r * nf + k) * frames + t)] = static_cast<float>(mag[static_cast<size_t>(k)]);
      for (int64_t j = 0; j < m; ++j) {
        double acc = 0;
        for (int64_t k = 0; k < nf; ++k) acc += mag[static_cast<size_t>(k)] * fb[static_cast<size_t>(k * m + j)];
        mel_lin[static_cast<size_t>((r * m + j) * frames + t)] = static_cast<float>(acc);
        mel[static_cast<size_t>((r * frames + t) * m + j)] = static_cast<float>(std::log(std::max(acc, 1e-5)));
      }
    }
  }
  out.spectrogram = Tensor::from_floats(DType::F32, {b, c, nf, frames}, spec);
  out.mel_scale = Tensor::from_floats(DType::F32, {b, c, m, frames}, mel_lin);
  out.mel = Tensor::from_floats(DType::F32, {b, c, frames, m}, mel);
  return out;
}

}  // namespace ltx::mel
