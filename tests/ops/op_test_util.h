// Shared helpers for op tests, and the coverage registry: every OpKind must have at least one registered test
// (checked by OpCoverage.EveryOpHasATest in coverage_test.cpp).
#pragma once

#include <gtest/gtest.h>

#include <bitset>
#include <cstdint>
#include <random>
#include <vector>

#include "backend/cpu/kernels.h"
#include "core/tensor.h"
#include "ops/op.h"

namespace ltx::test {

inline std::bitset<kOpKindCount>& covered_ops() {
  static std::bitset<kOpKindCount> ops;
  return ops;
}

// Records at static-initialisation time that a test exercises `kind`, so the coverage check sees it whichever
// tests a run selects.
struct OpCoverage {
  explicit OpCoverage(std::initializer_list<OpKind> kinds) {
    for (OpKind k : kinds) covered_ops().set(static_cast<size_t>(k));
  }
};
#define LTX_OP_COVERAGE_CAT2(a, b) a##b
#define LTX_OP_COVERAGE_CAT(a, b) LTX_OP_COVERAGE_CAT2(a, b)
// Usage at namespace scope in a test file: LTX_COVERS_OPS(OpKind::Add, OpKind::Sub);
#define LTX_COVERS_OPS(...) \
  static const ::ltx::test::OpCoverage LTX_OP_COVERAGE_CAT(ltx_op_coverage_, __LINE__) { __VA_ARGS__ }

// Deterministic uniform values in [lo, hi).
inline std::vector<float> random_values(int64_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = dist(rng);
  return v;
}

inline Tensor random_tensor(DType dtype, const Shape& shape, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  return Tensor::from_floats(dtype, shape, random_values(shape.numel(), seed, lo, hi));
}

// The same values as `t`, laid out non-contiguously: stored with the last two axes swapped when both exceed 1 (a
// transpose involving a size-1 axis would still be contiguous), else every other element of a buffer twice as long
// on the last axis. A scalar has no other layout and is returned as is.
inline Tensor non_contiguous(const Tensor& t) {
  if (t.rank() == 0) return t;
  if (t.rank() >= 2 && t.dim(-1) > 1 && t.dim(-2) > 1) {
    Tensor swapped = Tensor::empty(t.dtype(), t.transpose(-1, -2).shape());
    swapped.copy_from(t.transpose(-1, -2));
    Tensor back = swapped.transpose(-1, -2);
    EXPECT_FALSE(back.is_contiguous());
    return back;
  }
  Shape wide = t.shape();
  wide[t.rank() - 1] *= 2;
  Tensor view = Tensor::empty(t.dtype(), wide).slice(-1, 0, wide.dim(-1), 2);
  view.copy_from(t);
  EXPECT_TRUE(t.numel() <= 1 || !view.is_contiguous());
  return view;
}

// Conv attributes per spatial dimension, outermost first; entries past `spatial` are ignored.
inline ConvAttrs conv_attrs(int spatial, std::array<int64_t, 3> stride, std::array<int64_t, 3> dilation,
                            std::array<int64_t, 3> before, std::array<int64_t, 3> after, std::array<PadMode, 3> mode,
                            int64_t groups) {
  ConvAttrs a;
  a.spatial = spatial;
  a.stride = stride;
  a.dilation = dilation;
  a.pad_before = before;
  a.pad_after = after;
  a.pad_mode = mode;
  a.groups = groups;
  return a;
}

// Output tensor for a call, shaped by shape inference.
inline Tensor output_for(OpKind kind, const OpAttrs& attrs, std::span<const Tensor> inputs) {
  std::vector<TensorMeta> metas;
  for (const auto& t : inputs) metas.push_back({t.dtype(), t.shape()});
  const TensorMeta m = infer_output(kind, attrs, metas);
  return Tensor::empty(m.dtype, m.shape);
}

inline Tensor run_reference(OpKind kind, const OpAttrs& attrs, std::vector<Tensor> inputs) {
  Tensor out = output_for(kind, attrs, inputs);
  cpu::run_reference(kind, attrs, inputs, out);
  return out;
}

inline Tensor run_dispatched(OpKind kind, const OpAttrs& attrs, std::vector<Tensor> inputs) {
  Tensor out = output_for(kind, attrs, inputs);
  cpu::run(kind, attrs, inputs, out);
  return out;
}

// Largest |a-b| - (atol + rtol·|b|) over all elements; <= 0 means allclose.
inline void expect_close(const Tensor& actual, const Tensor& expected, float atol, float rtol, const char* what = "") {
  ASSERT_EQ(actual.shape(), expected.shape()) << what;
  const auto a = actual.to_floats();
  const auto b = expected.to_floats();
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const float tol = atol + rtol * std::abs(b[i]);
    if (!(std::abs(a[i] - b[i]) <= tol)) {
      if (bad++ == 0) first = i;
    }
  }
  EXPECT_EQ(bad, 0u) << what << ": " << bad << " of " << a.size() << " elements differ; first at " << first << ": "
                     << (a.empty() ? 0 : a[first]) << " vs " << (b.empty() ? 0 : b[first]);
}

}  // namespace ltx::test
