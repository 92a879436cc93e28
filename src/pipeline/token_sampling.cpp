#include "pipeline/token_sampling.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "core/error.h"

namespace ltx {

int32_t TokenSampler::next(std::span<const float> logits) {
  LTX_CHECK(!logits.empty(), "sampling", "no logits to sample from");
  for (const float x : logits)  // a NaN would break the orderings below
    LTX_CHECK(!std::isnan(x), "sampling", "the logits hold NaN: the model's output is not finite");
  if (options_.greedy) return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
  LTX_CHECK(options_.temperature > 0.0f, "sampling", "temperature must be > 0, got ", options_.temperature);
  const auto n = static_cast<int64_t>(logits.size());
  std::vector<float> s(logits.begin(), logits.end());
  for (float& x : s) x /= options_.temperature;
  // Candidates in descending order of score; ties keep the lower id first (a stable order).
  std::vector<int32_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  const auto by_score = [&](int32_t a, int32_t b) { return s[a] > s[b]; };
  int64_t keep = n;
  if (options_.top_k > 0 && options_.top_k < n) {
    // TopKLogitsWarper: every score below the k-th largest goes (ties with it stay).
    std::nth_element(order.begin(), order.begin() + (options_.top_k - 1), order.end(), by_score);
    const float kth = s[order[static_cast<size_t>(options_.top_k - 1)]];
    keep = std::partition(order.begin(), order.end(), [&](int32_t i) { return s[i] >= kth; }) - order.begin();
  }
  std::stable_sort(order.begin(), order.begin() + keep, by_score);
  order.resize(static_cast<size_t>(keep));
  // Softmax over the kept scores (the masked ones add nothing), in f64 to sum.
  std::vector<double> p(order.size());
  const double top = s[order.front()];
  double total = 0.0;
  for (size_t i = 0; i < order.size(); ++i) total += p[i] = std::exp(static_cast<double>(s[order[i]]) - top);
  for (double& x : p) x /= total;
  if (options_.top_p < 1.0f) {
    // TopPLogitsWarper: in ascending order a token goes when the cumulative probability up to it is <= 1 - top_p,
    // the most likely one always stays; in descending order that is the tail whose sum stays <= 1 - top_p.
    double tail = 0.0;
    size_t cut = order.size();
    for (size_t i = order.size(); i-- > 1;) {
      if (tail + p[i] > 1.0 - static_cast<double>(options_.top_p)) break;
      tail += p[i];
      cut = i;
    }
    order.resize(cut);
    p.resize(cut);
    double kept = 0.0;
    for (double x : p) kept += x;
    for (double& x : p) x /= kept;
  }
  // The exponential race: argmax p_i / E_i, E_i = -log(1 - u_i), u_i uniform in [0, 1) from 53 random bits.
  size_t best = 0;
  double best_score = -1.0;
  for (size_t i = 0; i < p.size(); ++i) {
    const double u = static_cast<double>(generator_.random64() >> 11) * 0x1.0p-53;
    const double score = p[i] / -std::log1p(-u);
    if (score > best_score) {
      best_score = score;
      best = i;
    }
  }
  return order[best];
}

}  // namespace ltx
