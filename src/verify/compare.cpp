#include "verify/compare.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "io/safetensors.h"

namespace ltx {
namespace {

// Values in f64: integers exactly (to_ints), floating and quantized types through f32 (their native precision).
std::vector<double> values_f64(const Tensor& t) {
  std::vector<double> out;
  out.reserve(static_cast<size_t>(t.numel()));
  if (dtype_is_float(t.dtype()) || dtype_is_quantized(t.dtype())) {
    for (float v : t.to_floats()) out.push_back(v);
  } else {
    for (int64_t v : t.to_ints()) out.push_back(static_cast<double>(v));
  }
  return out;
}

}  // namespace

TensorComparison compare_tensors(const std::string& name, const Tensor& a, const Tensor& b,
                                 const CompareOptions& options) {
  TensorComparison c;
  c.name = name;
  c.dtype_a = a.dtype();
  c.dtype_b = b.dtype();
  c.shape_a = a.shape();
  c.shape_b = b.shape();
  if (!(a.shape() == b.shape())) {
    c.status = TensorComparison::Status::ShapeMismatch;
    return c;
  }
  const std::vector<double> va = values_f64(a);
  const std::vector<double> vb = values_f64(b);
  double sum_abs = 0, diff_sq = 0, ref_sq = 0;
  bool any_nan = false;
  for (size_t i = 0; i < va.size(); ++i) {
    // As torch.isclose: equal values (infinities included) are close; otherwise the difference must be finite
    // and within tolerance, so NaN and mismatched infinities never are (aten/src/ATen/native/TensorCompare.cpp).
    const double diff = va[i] == vb[i] ? 0.0 : std::fabs(va[i] - vb[i]);
    const bool close = std::isfinite(diff) && diff <= options.atol + options.rtol * std::fabs(vb[i]);
    if (!close) ++c.n_mismatched;
    const double bound = options.atol + options.rtol * std::fabs(vb[i]);
    if (diff > 0)
      c.worst_ratio = std::max(c.worst_ratio, bound > 0 ? diff / bound : std::numeric_limits<double>::infinity());
    if (std::isnan(diff))
      any_nan = true;
    else if (diff > c.max_abs)
      c.max_abs = diff;
    sum_abs += diff;
    diff_sq += diff * diff;
    ref_sq += vb[i] * vb[i];
  }
  if (!va.empty()) c.mean_abs = sum_abs / static_cast<double>(va.size());
  c.rel_l2 = ref_sq > 0 ? std::sqrt(diff_sq / ref_sq) : (diff_sq == 0 ? 0.0 : std::numeric_limits<double>::infinity());
  if (any_nan) c.max_abs = c.mean_abs = c.rel_l2 = c.worst_ratio = std::numeric_limits<double>::quiet_NaN();
  c.tolerance = options.atol > 0 ? options.atol : options.rtol;
  c.status = c.n_mismatched == 0 ? TensorComparison::Status::Ok : TensorComparison::Status::Fail;
  return c;
}

CompareReport compare_files(const SafetensorsFile& a, const SafetensorsFile& b, const CompareOptions& options) {
  CompareReport r;
  for (const auto& info : a.tensors()) {
    if (!b.contains(info.name)) {
      TensorComparison c;
      c.name = info.name;
      c.status = TensorComparison::Status::MissingInB;
      c.dtype_a = info.dtype;
      c.shape_a = info.shape;
      r.tensors.push_back(std::move(c));
      ++r.n_missing;
      continue;
    }
    r.tensors.push_back(compare_tensors(info.name, a.get(info.name), b.get(info.name), options));
    if (r.tensors.back().ok())
      ++r.n_ok;
    else
      ++r.n_failed;
  }
  for (const auto& info : b.tensors()) {
    if (a.contains(info.name)) continue;
    TensorComparison c;
    c.name = info.name;
    c.status = TensorComparison::Status::ExtraInB;
    c.dtype_b = info.dtype;
    c.shape_b = info.shape;
    r.tensors.push_back(std::move(c));
    ++r.n_extra;
  }
  return r;
}

}  // namespace ltx
