#include "stages/media.h"

#include <algorithm>
#include <map>

#include "core/error.h"
#include "graph/compile.h"
#include "models/ltx/video_vae/video_vae_plan.h"

namespace ltx::stages {
namespace {

Tensor run_single_output(const Backend& backend, Graph& g, Value out, const std::vector<Tensor>& inputs) {
  g.output(out, "out");
  auto plan = compile(g, backend);
  return plan->run(std::span<const Tensor>(inputs))[0].clone();
}

}  // namespace

Tensor upsample_latent(const Backend& backend, const upsampler::LatentUpsampler& up,
                       const video_vae::LatentStats& stats, const Tensor& latent) {
  LTX_CHECK(latent.rank() == 5, "pipeline", "upsample: latent must be [B, C, F, H, W], got ", latent.shape().str());
  Graph g;
  const Tensor x = latent.to(DType::F32).contiguous();
  const Value out = upsampler::upsample_video(up, stats, g.input("latent", DType::F32, x.shape()));
  return run_single_output(backend, g, out, {x});
}

Tensor decode_video(const Backend& backend, const video_vae::VideoDecoder& decoder, const Tensor& latent,
                    NoiseSource* noise, DType noise_dtype, size_t budget_bytes, std::string* strategy) {
  LTX_CHECK(latent.rank() == 5, "pipeline", "decode: latent must be [B, C, F, H, W], got ", latent.shape().str());
  Graph g;
  const Tensor x = latent.to(DType::F32).contiguous();
  std::vector<Tensor> bound{x};
  const Value in = g.input("latent", DType::F32, x.shape());
  video_vae::DecoderNoise dn;
  const auto needed = decoder.noise_inputs(x.shape());
  LTX_CHECK(needed.empty() || noise != nullptr, "pipeline",
            "the video decoder is timestep-conditioned and needs a noise source");
  if (budget_bytes > 0) {  // planned: the noise drawn in the same order, for the whole latent
    std::map<std::string, Tensor> drawn;
    for (const auto& [name, shape] : needed) drawn[name] = noise->randn(shape, noise_dtype).to(DType::F32);
    const video_vae::DecodeStrategy s = video_vae::plan_decode(backend, decoder, x.shape(), budget_bytes);
    if (strategy != nullptr) *strategy = s.describe();
    return video_vae::decode_video(backend, decoder, x, s, drawn);
  }
  for (const auto& [name, shape] : needed) {
    const Tensor t = noise->randn(shape, noise_dtype).to(DType::F32);
    const Value v = g.input(name, DType::F32, shape);
    if (name == "noise.latent") {
      dn.latent = v;
    } else {
      dn.spatial[name] = v;
    }
    bound.push_back(t);
  }
  return run_single_output(backend, g, decoder.forward(in, dn), bound);
}

Tensor decode_audio_mel(const Backend& backend, const audio_vae::AudioDecoder& decoder, const Tensor& latent) {
  LTX_CHECK(latent.rank() == 4, "pipeline", "audio decode: latent must be [B, C, T, M], got ", latent.shape().str());
  Graph g;
  const Tensor x = latent.to(DType::F32).contiguous();
  return run_single_output(backend, g, decoder.forward(g.input("latent", DType::F32, x.shape())), {x});
}

std::vector<uint8_t> video_to_rgb8(const Tensor& video, int64_t item) {
  LTX_CHECK(video.rank() == 5 && video.dim(1) == 3 && item < video.dim(0), "pipeline",
            "decoded video must be [B, 3, F, H, W], got ", video.shape().str());
  // [3, F, H, W] of this item -> [F, H, W, 3]
  const std::vector<float> v = video.slice(0, item, item + 1).permute({0, 2, 3, 4, 1}).contiguous().to_floats();
  std::vector<uint8_t> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    const float x = std::clamp((v[i] + 1.0f) / 2.0f, 0.0f, 1.0f) * 255.0f;
    out[i] = static_cast<uint8_t>(x);  // truncation, as .to(torch.uint8)
  }
  return out;
}

}  // namespace ltx::stages
