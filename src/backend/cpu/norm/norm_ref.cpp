// Reference kernels for normalization. Each normalizes independent sets of elements ("rows": the last axis, a
// PixelNorm axis, or one (batch, group) slab for GroupNorm): gather the set into f32, compute its statistics in
// f32, write the normalized values. Variance is two-pass (mean first), which torch's results match closely.
#include <cmath>
#include <limits>
#include <variant>
#include <vector>

#include "backend/cpu/kernels.h"
#include "core/error.h"

namespace ltx::cpu::ref {
namespace {

float load(const Tensor& t, const int64_t* idx) {
  return load_as_f32(t.raw() + element_byte_offset(t, idx), t.dtype());
}

void store(const Tensor& out, const int64_t* idx, float v) {
  store_from_f32(out.raw() + element_byte_offset(out, idx), out.dtype(), v);
}

// The per-feature affine transform: y·w (or y·(1+w), Gemma's RMSNorm) then + b.
struct Affine {
  const Tensor* weight = nullptr;
  const Tensor* bias = nullptr;
  bool one_plus = false;

  Affine(const NormAttrs& a, Inputs in) {
    size_t next = 1;
    if (a.weight != NormWeight::None) weight = &in[next++];
    if (a.bias) bias = &in[next++];
    one_plus = a.weight == NormWeight::OnePlus;
  }
  float apply(float y, int64_t feature) const {
    if (weight != nullptr) {
      const float w = load(*weight, &feature);
      y *= one_plus ? 1.0f + w : w;
    }
    if (bias != nullptr) y += load(*bias, &feature);
    return y;
  }
};

float mean_of(const std::vector<float>& v) {
  float s = 0.0f;
  for (float x : v) s += x;
  return s / static_cast<float>(v.size());
}

float mean_square_of(const std::vector<float>& v, float center) {
  float s = 0.0f;
  for (float x : v) s += (x - center) * (x - center);
  return s / static_cast<float>(v.size());
}

// Normalizes every row along `axis`: prepare(row) computes its statistics, then apply(x_j, j) gives y_j.
template <typename Prepare, typename Apply>
void along_axis(const Tensor& x, const Tensor& out, int axis, Prepare&& prepare, Apply&& apply) {
  Shape outer = x.shape();
  const int64_t n = outer[axis];
  outer[axis] = 1;
  std::vector<float> row(static_cast<size_t>(n));
  for_each_index(outer, [&](const int64_t* base) {
    int64_t idx[kMaxRank];
    for (int i = 0; i < x.rank(); ++i) idx[i] = base[i];
    for (int64_t j = 0; j < n; ++j) {
      idx[axis] = j;
      row[static_cast<size_t>(j)] = load(x, idx);
    }
    prepare(row);
    for (int64_t j = 0; j < n; ++j) {
      idx[axis] = j;
      store(out, idx, apply(row[static_cast<size_t>(j)], j));
    }
  });
}

void softmax(const SoftmaxAttrs& a, const Tensor& x, const Tensor& out) {
  float max = 0.0f, sum = 0.0f;
  along_axis(
      x, out, x.rank() - 1,
      [&](std::vector<float>& row) {
        max = -std::numeric_limits<float>::infinity();
        for (float& v : row) max = std::fmax(max, v *= a.scale);
        sum = 0.0f;
        for (float& v : row) sum += v = std::exp(v - max);
      },
      [&](float e, int64_t) { return e / sum; });
}

// GroupNorm (torch.nn.GroupNorm): statistics over each (batch, group of C/G channels, all positions) slab.
void group_norm(const NormAttrs& a, const Affine& affine, const Tensor& x, const Tensor& out) {
  Shape slab = x.shape();
  const int64_t channels_per_group = slab[1] / a.groups;
  slab[0] = 1;
  slab[1] = channels_per_group;
  std::vector<float> v(static_cast<size_t>(slab.numel()));
  for (int64_t b = 0; b < x.shape()[0]; ++b) {
    for (int64_t g = 0; g < a.groups; ++g) {
      const auto visit = [&](auto&& fn) {
        size_t k = 0;
        for_each_index(slab, [&](const int64_t* s) {
          int64_t idx[kMaxRank];
          for (int i = 0; i < x.rank(); ++i) idx[i] = s[i];
          idx[0] = b;
          idx[1] = g * channels_per_group + s[1];
          fn(idx, k++);
        });
      };
      visit([&](const int64_t* idx, size_t k) { v[k] = load(x, idx); });
      const float mean = mean_of(v);
      const float rstd = 1.0f / std::sqrt(mean_square_of(v, mean) + a.eps);
      visit([&](const int64_t* idx, size_t k) { store(out, idx, affine.apply((v[k] - mean) * rstd, idx[1])); });
    }
  }
}

}  // namespace

void norm(OpKind kind, const OpAttrs& attrs, Inputs in, const Tensor& out) {
  const Tensor& x = in[0];
  if (kind == OpKind::Softmax) return softmax(std::get<SoftmaxAttrs>(attrs), x, out);
  const auto& a = std::get<NormAttrs>(attrs);
  const Affine affine(a, in);
  const int last = x.rank() - 1;
  float mean = 0.0f, rstd = 0.0f, rms = 0.0f;
  switch (kind) {
    case OpKind::RmsNorm:  // y = x / sqrt(mean(x²) + eps) · w (torch.nn.functional.rms_norm)
      return along_axis(
          x, out, last, [&](std::vector<float>& row) { rstd = 1.0f / std::sqrt(mean_square_of(row, 0.0f) + a.eps); },
          [&](float v, int64_t j) { return affine.apply(v * rstd, j); });
    case OpKind::LayerNorm:  // y = (x − mean) / sqrt(var + eps) · w + b, biased variance (torch layer_norm)
      return along_axis(
          x, out, last,
          [&](std::vector<float>& row) {
            mean = mean_of(row);
            rstd = 1.0f / std::sqrt(mean_square_of(row, mean) + a.eps);
          },
          [&](float v, int64_t j) { return affine.apply((v - mean) * rstd, j); });
    case OpKind::PixelNorm:  // y = x / sqrt(mean(x², axis) + eps) (ltx_core/model/common/normalization.py)
      return along_axis(
          x, out, x.shape().axis(a.axis),
          [&](std::vector<float>& row) { rms = std::sqrt(mean_square_of(row, 0.0f) + a.eps); },
          [&](float v, int64_t) { return v / rms; });
    case OpKind::GroupNorm:
      return group_norm(a, affine, x, out);
    default:
      fail("cpu", std::string(op_name(kind)) + ": not a normalization op");
  }
}

}  // namespace ltx::cpu::ref
