// opt::try_pixel_norm: PixelNorm over a non-last axis of a contiguous f32 tensor (the video VAE's norm over
// channels of [B, C, F, H, W]), y = x / sqrt(mean(x², axis) + eps) (ltx_core/model/common/normalization.py).
// The reference (norm_ref.cpp) gathers each strided set of C values one element at a time, which on the decoder's
// activations costs as much as a third of a convolution. Here the positions after the axis are walked in blocks
// of contiguous columns: for each block the squares are summed channel by channel into a row of sums, then the
// block is divided by its norms. Each column's sum runs over the channels in the same order, with the same f32
// operations (square, add; divide by C, add eps, sqrt; divide) as the reference, so the output is byte-identical.
#include <algorithm>
#include <cmath>
#include <vector>

#include "backend/cpu/optimized.h"
#include "core/thread_pool.h"

namespace ltx::cpu::opt {

bool try_pixel_norm(const NormAttrs& a, Inputs in, const Tensor& out) {
  if (in.size() != 1 || a.weight != NormWeight::None || a.bias) return false;
  const Tensor& x = in[0];
  if (x.dtype() != DType::F32 || out.dtype() != DType::F32 || !x.is_contiguous() || !out.is_contiguous() ||
      x.shape() != out.shape())
    return false;
  const int axis = x.shape().axis(a.axis);
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; ++i) outer *= x.dim(i);
  for (int i = axis + 1; i < x.rank(); ++i) inner *= x.dim(i);
  const int64_t chans = x.dim(axis);
  if (inner < 16 || chans == 0) return false;  // rows along the last axis: the reference reads them contiguously
  constexpr int64_t kBlock = 1024;             // columns per block: sums and a C×block slab stay in cache
  const int64_t blocks = (inner + kBlock - 1) / kBlock;
  const float n = static_cast<float>(chans), eps = a.eps;
  const float* src = x.data<float>();
  float* dst = out.data<float>();
  parallel_for(outer * blocks, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> sum(static_cast<size_t>(kBlock));
    for (int64_t job = begin; job < end; ++job) {
      const int64_t o = job / blocks, p0 = job % blocks * kBlock, len = std::min(kBlock, inner - p0);
      const float* xs = src + o * chans * inner + p0;
      float* ys = dst + o * chans * inner + p0;
      float* s = sum.data();
      std::fill(s, s + len, 0.0f);
      for (int64_t c = 0; c < chans; ++c) {
        const float* xc = xs + c * inner;
        for (int64_t p = 0; p < len; ++p) s[p] += xc[p] * xc[p];
      }
      for (int64_t p = 0; p < len; ++p) s[p] = std::sqrt(s[p] / n + eps);
      for (int64_t c = 0; c < chans; ++c) {
        const float* xc = xs + c * inner;
        float* yc = ys + c * inner;
        for (int64_t p = 0; p < len; ++p) yc[p] = xc[p] / s[p];
      }
    }
  });
  return true;
}

}  // namespace ltx::cpu::opt
