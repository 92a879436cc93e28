// The audio encoder's front end (ltx_core/model/audio_vae/ops.py AudioProcessor.waveform_to_mel): resample to
// 16 kHz (torchaudio.functional.resample, sinc_interp_hann, width 6, rolloff 0.99), magnitude STFT (n_fft = win =
// 1024, hop 160, periodic Hann, centred with reflect padding), slaney mel filterbank (0..sr/2, slaney norm), then
// log(clamp(·, 1e-5)). Computed on the host in f64; a few scalars per sample, no weights.
#pragma once

#include <cstdint>
#include <vector>

#include "core/tensor.h"

namespace ltx::mel {

struct MelFrontendConfig {
  int64_t target_sample_rate = 16000, n_fft = 1024, hop_length = 160, n_mels = 64;
};

// waveform [B, C, N] at `sample_rate` -> [B, C, N'] at the target rate.
Tensor resample(const Tensor& waveform, int64_t sample_rate, int64_t target_rate);
// torchaudio melscale_fbanks(n_fft/2+1, 0, sr/2, n_mels, sr, norm="slaney", mel_scale="slaney"): [F, n_mels].
std::vector<double> slaney_mel_filterbank(int64_t n_freqs, double f_max, int64_t n_mels, int64_t sample_rate);

struct MelOutputs {
  Tensor resampled;    // [B, C, N']
  Tensor spectrogram;  // [B, C, F, T] magnitude
  Tensor mel_scale;    // [B, C, M, T] before the log
  Tensor mel;          // [B, C, T, M] log-mel
};
MelOutputs waveform_to_mel(const Tensor& waveform, int64_t sample_rate, const MelFrontendConfig& config = {});

}  // namespace ltx::mel
