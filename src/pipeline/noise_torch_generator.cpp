// torch's CPU generator (CPUGeneratorImpl over at::mt19937) and the two paths of its normal_ kernel
// (aten/src/ATen/native/cpu/DistributionTemplates.h, normal_kernel). See shared/reference/torch-randn-notes.md.
#include <algorithm>
#include <cmath>
#include <numbers>

#include "core/error.h"
#include "core/half.h"
#include "pipeline/noise.h"

namespace ltx {

RandnMath default_randn_math() {
#if defined(__x86_64__) || defined(_M_X64)
  return RandnMath::Avx2;
#else
  return RandnMath::Scalar;
#endif
}

// at::mt19937 (aten/src/ATen/core/MT19937RNGEngine.h) is the standard MT19937 seeded with the seed's low word.
Mt19937::Mt19937(uint64_t seed) {
  state_[0] = static_cast<uint32_t>(seed);
  for (size_t j = 1; j < state_.size(); ++j) {
    const uint32_t prev = state_[j - 1];
    state_[j] = 1812433253u * (prev ^ (prev >> 30)) + static_cast<uint32_t>(j);
  }
  index_ = state_.size();
}

void Mt19937::twist() {
  constexpr size_t kN = 624, kM = 397;
  for (size_t k = 0; k < kN; ++k) {
    const uint32_t y = (state_[k] & 0x80000000u) | (state_[(k + 1) % kN] & 0x7fffffffu);
    state_[k] = state_[(k + kM) % kN] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
  }
  index_ = 0;
}

uint32_t Mt19937::next() {
  if (index_ >= state_.size()) twist();
  uint32_t y = state_[index_++];
  y ^= y >> 11;
  y ^= (y << 7) & 0x9d2c5680u;
  y ^= (y << 15) & 0xefc60000u;
  y ^= y >> 18;
  return y;
}

namespace {

constexpr int64_t kBlock = 16;  // normal_fill works in blocks of 16 (8 Box-Muller pairs)

// uniform_real_distribution<float>: the low 24 bits of one draw on the 2^-24 grid (TransformationHelper.h).
float uniform_f32(uint32_t bits) { return static_cast<float>(bits & 0xffffffu) * 0x1p-24f; }

// uniform_real_distribution<double>: the low 53 bits of a random64() on the 2^-53 grid.
double uniform_f64(uint64_t bits) { return static_cast<double>(bits & ((1ull << 53) - 1)) * 0x1p-53; }

}  // namespace

TorchGenerator::TorchGenerator(uint64_t seed, RandnMath math) : engine_(seed), seed_(seed), math_(math) {}

void TorchGenerator::manual_seed(uint64_t seed) {
  engine_ = Mt19937(seed);
  seed_ = seed;
  cached_normal_.reset();
}

uint64_t TorchGenerator::random64() {
  const uint64_t hi = engine_.next();
  const uint64_t lo = engine_.next();
  return (hi << 32) | lo;
}

// normal_distribution<double> (ATen/core/DistributionsHelper.h): one Box-Muller pair per two calls; the first
// uniform gives the angle, the second the radius, and the sin half waits in the generator for the next call.
double TorchGenerator::next_scalar_normal() {
  if (cached_normal_) {
    const double z = *cached_normal_;
    cached_normal_.reset();
    return z;
  }
  const double u1 = uniform_f64(random64());
  const double u2 = uniform_f64(random64());
  const double radius = std::sqrt(-2.0 * std::log1p(-u2));
  const double theta = 2.0 * std::numbers::pi * u1;
  cached_normal_ = radius * std::sin(theta);
  return radius * std::cos(theta);
}

// normal_fill (float): every uniform first, then 16-blocks in place. When n is not a multiple of 16 the last 16
// slots get 16 fresh uniforms and are transformed again as one block, so n + 16 draws are used.
void TorchGenerator::fill_vector_f32(float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = uniform_f32(engine_.next());
  for (int64_t b = 0; b + kBlock <= n; b += kBlock) detail::box_muller_16(out + b, math_);
  if (n % kBlock != 0) {
    float* tail = out + n - kBlock;
    for (int64_t i = 0; i < kBlock; ++i) tail[i] = uniform_f32(engine_.next());
    detail::box_muller_16(tail, math_);
  }
}

void TorchGenerator::fill_randn(float* out, int64_t n) {
  LTX_CHECK(n >= 0, "noise", "negative element count ", n);
  if (n < kBlock) {
    // The scalar path: normal_distribution<double>, cast to float.
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(next_scalar_normal());
    return;
  }
  fill_vector_f32(out, n);
}

// bf16 and f16 in torch 2.15 (established by the goldens, not by the older code the notes describe): blocks of
// 16 fresh uniforms each, transformed in float with the same maths as f32 and rounded to nearest even. A partial
// last block is a full block of 16 fresh draws written over the last 16 slots, so ceil(n/16)*16 draws are used.
// Below 16 elements the scalar path runs, double -> float -> 16-bit.
void TorchGenerator::fill_randn_16bit(uint16_t* out, int64_t n, uint16_t (*round)(float)) {
  LTX_CHECK(n >= 0, "noise", "negative element count ", n);
  if (n < kBlock) {
    for (int64_t i = 0; i < n; ++i) out[i] = round(static_cast<float>(next_scalar_normal()));
    return;
  }
  float block[kBlock];
  for (int64_t b = 0; b < n; b += kBlock) {
    for (float& u : block) u = uniform_f32(engine_.next());
    detail::box_muller_16(block, math_);
    uint16_t* dst = out + std::min(b, n - kBlock);
    for (int64_t i = 0; i < kBlock; ++i) dst[i] = round(block[i]);
  }
}

// normal_fill<double> (torch.randn(..., dtype=torch.float64)), the same on every CPU: every uniform first (53-bit),
// then 16-blocks in place in double with libm maths (normal_fill_16: u1 = 1 - u[j] takes the radius, u[j+8] the
// angle), the last 16 slots redrawn and transformed again when n is not a multiple of 16. Below 16 elements the
// scalar path, whose cached normal it shares with the f32 draws.
void TorchGenerator::fill_randn_f64(double* out, int64_t n) {
  LTX_CHECK(n >= 0, "noise", "negative element count ", n);
  if (n < kBlock) {
    for (int64_t i = 0; i < n; ++i) out[i] = next_scalar_normal();
    return;
  }
  auto transform = [](double* d) {
    for (int j = 0; j < kBlock / 2; ++j) {
      const double radius = std::sqrt(-2.0 * std::log(1.0 - d[j]));
      const double theta = 2.0 * std::numbers::pi * d[j + 8];
      d[j] = radius * std::cos(theta);
      d[j + 8] = radius * std::sin(theta);
    }
  };
  for (int64_t i = 0; i < n; ++i) out[i] = uniform_f64(random64());
  for (int64_t i = 0; i + kBlock <= n; i += kBlock) transform(out + i);
  if (n % kBlock != 0) {
    double* tail = out + n - kBlock;
    for (int64_t i = 0; i < kBlock; ++i) tail[i] = uniform_f64(random64());
    transform(tail);
  }
}

void TorchGenerator::fill_randn_bf16(uint16_t* out, int64_t n) { fill_randn_16bit(out, n, f32_to_bf16); }

void TorchGenerator::fill_randn_f16(uint16_t* out, int64_t n) { fill_randn_16bit(out, n, f32_to_f16); }

Tensor TorchGenerator::randn(const Shape& shape, DType dtype) {
  Tensor t = Tensor::empty(dtype, shape);
  switch (dtype) {
    case DType::F32:
      fill_randn(t.data<float>(), t.numel());
      break;
    case DType::BF16:
      fill_randn_bf16(t.data<uint16_t>(), t.numel());
      break;
    case DType::F16:
      fill_randn_f16(t.data<uint16_t>(), t.numel());
      break;
    default:
      fail("noise", "randn supports f32, bf16 and f16, not " + std::string(dtype_name(dtype)));
  }
  return t;
}

}  // namespace ltx
