// Helpers for graph tests: run the same computation op by op through the reference kernels.
#pragma once

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "backend/cpu/kernels.h"
#include "core/error.h"
#include "core/tensor.h"
#include "graph/builder.h"
#include "graph/compile.h"

namespace ltx::test {

inline Tensor random_tensor(DType dtype, const Shape& shape, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<size_t>(shape.numel()));
  for (auto& x : v) x = dist(rng);
  return Tensor::from_floats(dtype, shape, v);
}

// One op through its reference kernel: the oracle for compiled plans.
inline Tensor ref(OpKind kind, const OpAttrs& attrs, std::vector<Tensor> in) {
  std::vector<TensorMeta> metas;
  for (const auto& t : in) metas.push_back({t.dtype(), t.shape()});
  const TensorMeta m = infer_output(kind, attrs, metas);
  Tensor out = Tensor::empty(m.dtype, m.shape);
  cpu::run_reference(kind, attrs, in, out);
  return out;
}

inline float max_abs_diff(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.shape(), b.shape());
  const auto x = a.to_floats(), y = b.to_floats();
  float m = 0;
  for (size_t i = 0; i < x.size(); ++i) m = std::max(m, std::abs(x[i] - y[i]));
  return m;
}

// max |a - b| / max |b|: an error relative to the output's scale, meaningful near zero crossings too.
inline double max_rel_diff(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.shape(), b.shape());
  const auto x = a.to_floats(), y = b.to_floats();
  double worst = 0, scale = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    worst = std::max(worst, std::abs(double(x[i]) - y[i]));
    scale = std::max(scale, std::abs(double(y[i])));
  }
  return worst / std::max(scale, 1e-30);
}

inline CompileOptions no_dump() {
  CompileOptions o;
  o.dump_regex.clear();
  return o;
}

}  // namespace ltx::test
