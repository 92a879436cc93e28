#include "pipeline/diffusion_step.h"

#include <vector>

#include "core/error.h"

namespace ltx {
namespace {

void check_same(const Tensor& a, const Tensor& b, const char* what) {
  LTX_CHECK(a.shape() == b.shape(), "pipeline", what, ": shapes ", a.shape().str(), " and ", b.shape().str());
}

// The mask [B, T, 1] broadcast over the channels of [B, T, C].
std::vector<float> mask_per_element(const Tensor& mask, const Tensor& like) {
  LTX_CHECK(mask.rank() == 3 && mask.dim(0) == like.dim(0) && mask.dim(1) == like.dim(1) && mask.dim(2) == 1,
            "pipeline", "denoise mask ", mask.shape().str(), " does not fit latent ", like.shape().str());
  return mask.broadcast_to(like.shape()).to_floats();
}

}  // namespace

Tensor add_noise(const Tensor& latent, const Tensor& noise, const Tensor& denoise_mask, float noise_scale) {
  check_same(latent, noise, "add_noise");
  const std::vector<float> x = latent.to_floats(), n = noise.to_floats();
  const std::vector<float> m = mask_per_element(denoise_mask, latent);
  std::vector<float> out(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const float s = m[i] * noise_scale;
    out[i] = n[i] * s + x[i] * (1.0f - s);
  }
  return Tensor::from_floats(DType::F32, latent.shape(), out);
}

Tensor post_process_x0(const Tensor& x0, const Tensor& denoise_mask, const Tensor& clean) {
  check_same(x0, clean, "post_process_x0");
  const std::vector<float> d = x0.to_floats(), c = clean.to_floats();
  const std::vector<float> m = mask_per_element(denoise_mask, x0);
  std::vector<float> out(d.size());
  for (size_t i = 0; i < d.size(); ++i) out[i] = d[i] * m[i] + c[i] * (1.0f - m[i]);
  return Tensor::from_floats(DType::F32, x0.shape(), out);
}

Tensor euler_step(const Tensor& x, const Tensor& x0, float sigma, float sigma_next) {
  check_same(x, x0, "euler_step");
  LTX_CHECK(sigma != 0.0f, "pipeline", "Euler step at sigma 0");
  const std::vector<float> a = x.to_floats(), d = x0.to_floats();
  const float dt = sigma_next - sigma;  // a f32 0-d tensor in the reference
  std::vector<float> out(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const float v = (a[i] - d[i]) / sigma;
    out[i] = a[i] + v * dt;
  }
  return Tensor::from_floats(DType::F32, x.shape(), out);
}

}  // namespace ltx
