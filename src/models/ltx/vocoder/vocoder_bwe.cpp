// Vocoder loading and running, including LTX-2.3's bandwidth extension (vocoder.py VocoderWithBWE).
#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/thread_pool.h"
#include "graph/compile.h"
#include "models/ltx/vocoder/vocoder.h"

namespace ltx::vocoder {
namespace {

std::map<std::string, Tensor> run_graph(const Backend& backend, Graph& g,
                                        const std::vector<std::pair<std::string, Value>>& outs,
                                        const video_vae::Taps& taps, const std::vector<Tensor>& inputs) {
  std::vector<std::pair<std::string, Value>> all = outs;
  all.insert(all.end(), taps.begin(), taps.end());
  std::map<int, std::string> first;  // node -> the name it is declared under
  for (const auto& [name, v] : all)
    if (first.emplace(v.id, name).second) g.output(v, name);
  CompileOptions options = CompileOptions::from_env();
  options.prepare_weights = false;  // one run per plan: converting the weights to keep them would only add a copy
  auto plan = compile(g, backend, options);
  const auto results = plan->run(std::span<const Tensor>(inputs));
  std::map<std::string, Tensor> by_first;
  for (size_t i = 0; i < plan->output_names().size(); ++i) by_first[plan->output_names()[i]] = results[i].clone();
  std::map<std::string, Tensor> out;
  for (const auto& [name, v] : all) out[name] = by_first.at(first.at(v.id));
  return out;
}

// MelSTFT.mel_spectrogram on [R, L] rows (L a multiple of hop): causal STFT through the stored bases (left pad
// n_fft - hop), magnitude, mel projection, log(clamp(·, 1e-5)). Accumulates in f64.
void log_mel(const VocoderWithBwe& v, const std::vector<float>& y, int64_t rows, int64_t len,
             std::vector<float>& magnitude, std::vector<float>& mel) {
  const int64_t n_fft = v.config.n_fft, hop = v.config.hop_length, nf = n_fft / 2 + 1, m = v.config.num_mels;
  const int64_t left = n_fft - hop, frames = (len + left - n_fft) / hop + 1;
  magnitude.assign(static_cast<size_t>(rows * nf * frames), 0.0f);
  mel.assign(static_cast<size_t>(rows * m * frames), 0.0f);
  // Frames in parallel; within a frame the sums run over j as before (the left padding's zeros skipped).
  parallel_for(rows * frames, 8, [&](int64_t begin, int64_t end) {
    for (int64_t rf = begin; rf < end; ++rf) {
      const int64_t r = rf / frames, f = rf % frames;
      const float* row = y.data() + r * len;
      const int64_t j0 = std::max<int64_t>(0, left - f * hop);
      const float* seg = row + (f * hop + j0 - left);  // sample of tap j0
      // acc[k] (real k < F, imaginary k >= F) summed over j in order; all 2F sums advance together (vectorizable).
      thread_local std::vector<double> acc_buf;
      acc_buf.assign(static_cast<size_t>(2 * nf), 0.0);
      double* acc = acc_buf.data();
      for (int64_t j = j0; j < n_fft; ++j) {
        const float* b = v.forward_basis_t.data() + j * 2 * nf;
        const double s = seg[j - j0];
        for (int64_t k = 0; k < 2 * nf; ++k) acc[k] += static_cast<double>(b[k]) * s;
      }
      for (int64_t k = 0; k < nf; ++k)
        magnitude[static_cast<size_t>((r * nf + k) * frames + f)] =
            static_cast<float>(std::sqrt(acc[k] * acc[k] + acc[k + nf] * acc[k + nf]));
      for (int64_t i = 0; i < m; ++i) {
        double acc = 0;
        for (int64_t k = 0; k < nf; ++k)
          acc += static_cast<double>(v.mel_basis[static_cast<size_t>(i * nf + k)]) *
                 magnitude[static_cast<size_t>((r * nf + k) * frames + f)];
        mel[static_cast<size_t>((r * m + i) * frames + f)] = std::log(std::max(static_cast<float>(acc), 1e-5f));
      }
    }
  });
}

}  // namespace

Vocoder Vocoder::load(const WeightLoader& root, const Json& checkpoint_config, DType compute) {
  // model_configurator.py VocoderConfigurator: a nested {"vocoder", "bwe"} config selects VocoderWithBWE.
  const Json cfg = checkpoint_config.value("vocoder", Json::object());
  Vocoder v;
  if (!cfg.contains("bwe")) {
    LTX_CHECK(cfg.value("stereo", true), "vocoder", "only stereo vocoders are supported");
    v.hifigan = Generator::load(root, GeneratorConfig::from_json(cfg), compute);
    return v;
  }
  const Json& bwe = cfg.at("bwe");
  VocoderWithBwe w;
  w.config.input_sampling_rate = bwe.at("input_sampling_rate").get<int64_t>();
  w.config.output_sampling_rate = bwe.at("output_sampling_rate").get<int64_t>();
  w.config.hop_length = bwe.at("hop_length").get<int64_t>();
  w.config.n_fft = bwe.at("n_fft").get<int64_t>();
  w.config.num_mels = bwe.at("num_mels").get<int64_t>();
  LTX_CHECK(w.config.output_sampling_rate % w.config.input_sampling_rate == 0 && w.config.num_mels == 64, "vocoder",
            "BWE needs an integer rate ratio and 64 mels");
  GeneratorConfig main = GeneratorConfig::from_json(cfg.value("vocoder", Json::object()));
  main.output_sampling_rate = w.config.input_sampling_rate;
  GeneratorConfig ext = GeneratorConfig::from_json(bwe);
  ext.apply_final_activation = false;
  ext.output_sampling_rate = w.config.output_sampling_rate;
  w.vocoder = Generator::load(root.scope("vocoder"), main, compute);
  w.vocoder.prefix = "vocoder.";
  w.bwe_generator = Generator::load(root.scope("bwe_generator"), ext, compute);
  w.bwe_generator.prefix = "bwe_generator.";
  const int64_t nf = w.config.n_fft / 2 + 1;
  const WeightLoader stft = root.scope("mel_stft");
  const std::vector<float> basis = stft.get("stft_fn.forward_basis", {2 * nf, 1, w.config.n_fft}).to_floats();
  w.forward_basis_t.resize(basis.size());
  for (int64_t k = 0; k < 2 * nf; ++k)
    for (int64_t j = 0; j < w.config.n_fft; ++j)
      w.forward_basis_t[static_cast<size_t>(j * 2 * nf + k)] = basis[static_cast<size_t>(k * w.config.n_fft + j)];
  w.mel_basis = stft.get("mel_basis", {w.config.num_mels, nf}).to_floats();
  stft.ignore("stft_fn.inverse_basis");  // only used to resynthesise, which inference never does
  v.bwe = std::move(w);
  return v;
}

int64_t Vocoder::output_sampling_rate() const {
  return hifigan ? hifigan->config.output_sampling_rate : bwe->config.output_sampling_rate;
}

Tensor Vocoder::run(const Backend& backend, const Tensor& mel, std::map<std::string, Tensor>* intermediates) const {
  video_vae::Taps taps;
  video_vae::Taps* tp = intermediates ? &taps : nullptr;
  if (hifigan) {
    Graph g;
    const Value w = hifigan->forward(g.input("mel", DType::F32, mel.shape()), tp);
    auto out = run_graph(backend, g, {{"waveform", w}}, taps, {mel});
    if (intermediates) intermediates->insert(out.begin(), out.end());
    return out.at("waveform");
  }
  const VocoderWithBwe& v = *bwe;
  // 1. the 16 kHz generator
  Tensor x16;
  {
    Graph g;
    const Value w = v.vocoder.forward(g.input("mel", DType::F32, mel.shape()), tp);
    auto out = run_graph(backend, g, {{"vocoder.out", w}}, taps, {mel});
    x16 = out.at("vocoder.out");
    if (intermediates) intermediates->insert(out.begin(), out.end());
    taps.clear();  // they belong to this graph
  }
  const int64_t b = x16.dim(0), ch = x16.dim(1), n = x16.dim(2);
  const int64_t ratio = v.config.output_sampling_rate / v.config.input_sampling_rate;
  const int64_t out_len = n * v.config.output_sampling_rate / v.config.input_sampling_rate;
  const int64_t hop = v.config.hop_length;
  const int64_t padded = (n + hop - 1) / hop * hop;  // zero-padded to whole hops
  std::vector<float> y(static_cast<size_t>(b * ch * padded), 0.0f);
  const std::vector<float> xs = x16.to_floats();
  for (int64_t r = 0; r < b * ch; ++r) std::copy(xs.begin() + r * n, xs.begin() + (r + 1) * n, y.begin() + r * padded);
  // 2. causal log-mel of the 16 kHz signal (host)
  std::vector<float> magnitude, logmel;
  log_mel(v, y, b * ch, padded, magnitude, logmel);
  const int64_t nf = v.config.n_fft / 2 + 1, m = v.config.num_mels, frames = padded / hop;
  if (intermediates)
    (*intermediates)["mel_stft.stft_fn.out"] = Tensor::from_floats(DType::F32, {b * ch, nf, frames}, magnitude);
  const Tensor mel_bwe =  // [B, C, M, frames] -> [B, C, frames, M]
      Tensor::from_floats(DType::F32, {b, ch, m, frames}, logmel).transpose(2, 3).contiguous();
  if (intermediates) (*intermediates)["bwe_generator.in.mel"] = mel_bwe;
  // 3. residual from the BWE generator + Hann-sinc ×ratio skip, clamped, cropped
  Graph g;
  const Value res =
      video_vae::tap(tp, "bwe_generator.out", v.bwe_generator.forward(g.input("mel", DType::F32, mel_bwe.shape()), tp));
  const Tensor x_pad = Tensor::from_floats(DType::F32, {b, ch, padded}, y);
  Value skip = g.input("x", DType::F32, x_pad.shape());
  // vocoder.py UpSample1d(window "hann"): pad = width, crop [2·width·ratio, L - (K - ratio))
  const std::vector<float> filt = hann_sinc_filter(ratio);
  const int64_t k = static_cast<int64_t>(filt.size()), width = (k - 1) / (2 * ratio);
  std::vector<float> filt_c;
  for (int64_t c = 0; c < ch; ++c) filt_c.insert(filt_c.end(), filt.begin(), filt.end());
  {
    const int64_t before[] = {0, 0, width}, after[] = {0, 0, width};
    skip = ops::pad(skip, before, after, PadMode::Replicate);
    ConvAttrs a;
    a.spatial = 1;
    a.stride = {ratio, 1, 1};
    a.groups = ch;
    skip = ops::conv_transpose1d(
        skip, g.constant("resampler.filter", Tensor::from_floats(DType::F32, {ch, 1, k}, filt_c)), std::nullopt, a);
    skip = ops::scale(skip, static_cast<float>(ratio));
    skip = ops::slice(skip, 2, 2 * width * ratio, skip.dim(2) - (k - ratio));
  }
  skip = video_vae::tap(tp, "resampler.out", skip);
  LTX_CHECK(skip.shape() == res.shape(), "vocoder", "BWE residual ", res.shape().str(), " != skip ",
            skip.shape().str());
  const Value wave = ops::slice(ops::clamp(ops::add(res, skip), -1.0f, 1.0f), 2, 0, out_len);
  auto out = run_graph(backend, g, {{"waveform", wave}}, taps, {mel_bwe, x_pad});
  if (intermediates) intermediates->insert(out.begin(), out.end());
  return out.at("waveform");
}

}  // namespace ltx::vocoder
