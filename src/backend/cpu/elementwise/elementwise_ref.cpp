// Reference kernels for the elementwise family: one loop over the output index, every input read through its
// broadcast (stride-0) view, f32 arithmetic, one rounding at the store.
#include <cmath>
#include <variant>

#include "backend/cpu/kernels.h"
#include "core/error.h"

namespace ltx::cpu::ref {
namespace {

float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

// GELU with the exact erf form: x·Φ(x) = x/2·(1 + erf(x/√2)) (torch.nn.functional.gelu, approximate="none").
float gelu_erf(float x) { return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f)); }

// GELU, tanh approximation: x/2·(1 + tanh(√(2/π)·(x + 0.044715·x³))) (torch gelu, approximate="tanh").
float gelu_tanh(float x) {
  const float k = 0.79788456080286536f;  // √(2/π)
  return 0.5f * x * (1.0f + std::tanh(k * (x + 0.044715f * x * x * x)));
}

// BigVGAN's Snake/SnakeBeta: x + 1/(β + 1e-9)·sin²(α·x), with β = α for Snake and both exp()'d when stored as
// logs (ltx_core/model/audio_vae/vocoder.py, Snake.forward and SnakeBeta.forward; eps = 1e-9 there).
float snake(float x, float alpha, float beta) {
  const float s = std::sin(x * alpha);
  return x + (1.0f / (beta + 1e-9f)) * (s * s);
}

float unary(OpKind kind, const OpAttrs& a, float x) {
  switch (kind) {
    case OpKind::Scale: {
      const auto& s = std::get<ScaleAttrs>(a);
      return x * s.scale + s.bias;
    }
    case OpKind::Clamp: {
      const auto& c = std::get<ClampAttrs>(a);
      return std::isnan(x) ? x : std::fmin(std::fmax(x, c.lo), c.hi);
    }
    case OpKind::Silu:
      return x / (1.0f + std::exp(-x));
    case OpKind::Gelu:
      return gelu_erf(x);
    case OpKind::GeluTanh:
      return gelu_tanh(x);
    case OpKind::Sigmoid:
      return sigmoid(x);
    case OpKind::Tanh:
      return std::tanh(x);
    case OpKind::LeakyRelu:
      return x > 0.0f ? x : x * std::get<LeakyReluAttrs>(a).slope;
    default:
      fail("cpu", std::string(op_name(kind)) + ": not a unary elementwise op");
  }
}

float nary(OpKind kind, const float* v) {
  switch (kind) {
    case OpKind::Add:
      return v[0] + v[1];
    case OpKind::Sub:
      return v[0] - v[1];
    case OpKind::Mul:
      return v[0] * v[1];
    case OpKind::Div:
      return v[0] / v[1];
    case OpKind::Lerp:
      return v[0] + v[2] * (v[1] - v[0]);  // inputs a, b, t
    default:
      fail("cpu", std::string(op_name(kind)) + ": not a binary elementwise op");
  }
}

void snake_kernel(OpKind kind, const SnakeAttrs& a, Inputs in, const Tensor& out) {
  const Tensor& x = in[0];
  const Tensor& alpha = in[1];
  const Tensor& beta = kind == OpKind::SnakeBeta ? in[2] : in[1];
  const auto channel_value = [&](const Tensor& p, int64_t c) {
    const float v = load_as_f32(p.raw() + element_byte_offset(p, &c), p.dtype());
    return a.log_scale ? std::exp(v) : v;
  };
  const size_t es = dtype_block_bytes(out.dtype());
  int64_t i = 0;
  for_each_index(out.shape(), [&](const int64_t* idx) {
    const float xv = load_as_f32(x.raw() + element_byte_offset(x, idx), x.dtype());
    const float y = snake(xv, channel_value(alpha, idx[1]), channel_value(beta, idx[1]));
    store_from_f32(out.raw() + static_cast<size_t>(i++) * es, out.dtype(), y);
  });
}

}  // namespace

void elementwise(OpKind kind, const OpAttrs& a, Inputs in, const Tensor& out) {
  if (kind == OpKind::Snake || kind == OpKind::SnakeBeta) return snake_kernel(kind, std::get<SnakeAttrs>(a), in, out);
  LTX_CHECK(in.size() <= 3, "cpu", op_name(kind), ": too many inputs");
  Tensor views[3];
  for (size_t k = 0; k < in.size(); ++k) views[k] = in[k].broadcast_to(out.shape());
  const size_t es = dtype_block_bytes(out.dtype());
  int64_t i = 0;
  for_each_index(out.shape(), [&](const int64_t* idx) {
    float v[3];
    for (size_t k = 0; k < in.size(); ++k)
      v[k] = load_as_f32(views[k].raw() + element_byte_offset(views[k], idx), views[k].dtype());
    const float y = in.size() == 1 ? unary(kind, a, v[0]) : nary(kind, v);
    store_from_f32(out.raw() + static_cast<size_t>(i++) * es, out.dtype(), y);
  });
}

}  // namespace ltx::cpu::ref
