#include "pipeline/guidance.h"

#include <cmath>
#include <string>

#include "core/error.h"

namespace ltx {
namespace {

bool isclose(double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(std::abs(a), std::abs(b)); }

// torch.std (unbiased) over every element, accumulated in f64.
double std_all(const std::vector<float>& v) {
  LTX_CHECK(v.size() > 1, "guidance", "std of ", v.size(), " elements");
  double mean = 0;
  for (float x : v) mean += x;
  mean /= static_cast<double>(v.size());
  double ss = 0;
  for (float x : v) ss += (x - mean) * (x - mean);
  return std::sqrt(ss / static_cast<double>(v.size() - 1));
}

std::vector<float> values_of(const Tensor& t, const Tensor& like, const char* what) {
  LTX_CHECK(t.defined(), "guidance", "the ", what, " pass is needed by the guider params but was not run");
  LTX_CHECK(t.shape() == like.shape(), "guidance", what, " x0 ", t.shape().str(), " vs cond ", like.shape().str());
  return t.to_floats();
}

}  // namespace

bool GuiderParams::needs_uncond() const { return !isclose(cfg_scale, 1.0); }
bool GuiderParams::needs_perturbed() const { return !isclose(stg_scale, 0.0); }
bool GuiderParams::needs_isolated() const { return !isclose(modality_scale, 1.0); }

Tensor guide(const GuiderParams& p, const GuidancePasses& passes) {
  LTX_CHECK(passes.cond.defined(), "guidance", "no conditional x0");
  const std::vector<float> c = passes.cond.to_floats();
  std::vector<float> pred = c;
  // Each term as torch evaluates `c + a·(c - u) + ...`: the sum is built left to right in f32.
  auto add_term = [&](float scale, const Tensor& other, const char* what) {
    if (scale == 0.0f) return;
    const std::vector<float> o = values_of(other, passes.cond, what);
    for (size_t i = 0; i < pred.size(); ++i) pred[i] += scale * (c[i] - o[i]);
  };
  add_term(p.cfg_scale - 1.0f, passes.uncond, "unconditional");
  add_term(p.stg_scale, passes.perturbed, "perturbed");
  add_term(p.modality_scale - 1.0f, passes.isolated, "isolated");
  if (p.rescale_scale != 0.0f) {
    const auto factor = static_cast<float>(static_cast<float>(std_all(c)) / static_cast<float>(std_all(pred)));
    const float f = p.rescale_scale * factor + (1.0f - p.rescale_scale);
    for (float& x : pred) x *= f;
  }
  return Tensor::from_floats(DType::F32, passes.cond.shape(), pred);
}

}  // namespace ltx
