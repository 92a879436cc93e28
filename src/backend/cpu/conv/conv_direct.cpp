#include "backend/cpu/conv/conv_direct.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "backend/cpu/matmul/matmul_gemm.h"
#include "backend/cpu/padding.h"
#include "core/half.h"
#include "core/thread_pool.h"

namespace ltx::cpu::opt {
namespace {

// Depthwise 1-D (groups = channels, one filter per channel: the vocoder's anti-aliased ×2 resampling): per row,
// the input converted to f32 once (with its padding), the filter in f32, each output a K-tap dot product; any
// input/weight/output float dtypes. Memory-bound, so no GEMM.

void row_to_f32(const Tensor& t, int64_t b, int64_t c, float* dst) {
  const int64_t n = t.dim(2), st = t.strides()[2];
  const auto es = static_cast<int64_t>(dtype_block_bytes(t.dtype()));
  const std::byte* src = t.raw() + (b * t.strides()[0] + c * t.strides()[1]) * es;
  if (t.dtype() == DType::BF16 && st == 1) {
    const auto* h = reinterpret_cast<const uint16_t*>(src);
    for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_f32(h[i]);
  } else if (t.dtype() == DType::F32 && st == 1) {
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
  } else {
    for (int64_t i = 0; i < n; ++i) dst[i] = load_as_f32(src + i * st * es, t.dtype());
  }
}

void store_row(const float* v, int64_t n, const Tensor& out, int64_t row) {
  if (out.dtype() == DType::F32) {
    std::memcpy(out.data<float>() + row * n, v, static_cast<size_t>(n) * sizeof(float));
  } else if (out.dtype() == DType::BF16) {
    auto* h = reinterpret_cast<uint16_t*>(out.raw()) + row * n;
    for (int64_t i = 0; i < n; ++i) h[i] = f32_to_bf16(v[i]);
  } else {
    const auto es = static_cast<int64_t>(dtype_block_bytes(out.dtype()));
    for (int64_t i = 0; i < n; ++i) store_from_f32(out.raw() + (row * n + i) * es, out.dtype(), v[i]);
  }
}

}  // namespace

bool is_depthwise_1d(OpKind kind, const ConvAttrs& a, Inputs in) {
  if (a.spatial != 1 || in[0].rank() != 3) return false;
  const int64_t c = in[0].dim(1);
  return a.groups == c && in[1].dim(0) == c && in[1].dim(1) == 1;
}

void conv_depthwise_1d(OpKind kind, const ConvAttrs& a, Inputs in, const Tensor& out) {
  const Tensor& x = in[0];
  const int64_t batch = x.dim(0), chans = x.dim(1), len = x.dim(2), taps = in[1].dim(2), olen = out.dim(2);
  const int64_t stride = a.stride[0], dil = a.dilation[0], pb = a.pad_before[0];
  const bool transposed = kind == OpKind::ConvTranspose1d;
  const int64_t padded = transposed ? len : len + pb + a.pad_after[0];
  parallel_for(batch * chans, 4, [&](int64_t begin, int64_t end) {
    std::vector<float> row(static_cast<size_t>(padded)), src(static_cast<size_t>(len)), y(static_cast<size_t>(olen));
    std::vector<float> w(static_cast<size_t>(taps));
    for (int64_t r = begin; r < end; ++r) {
      const int64_t b = r / chans, c = r % chans;
      for (int64_t k = 0; k < taps; ++k)
        w[static_cast<size_t>(k)] =
            load_as_f32(in[1].raw() + (c * in[1].strides()[0] + k * in[1].strides()[2]) *
                                          static_cast<int64_t>(dtype_block_bytes(in[1].dtype())),
                        in[1].dtype());
      const float bias = in.size() == 3
                             ? load_as_f32(in[2].raw() + c * in[2].strides()[0] *
                                                             static_cast<int64_t>(dtype_block_bytes(in[2].dtype())),
                                           in[2].dtype())
                             : 0.0f;
      row_to_f32(x, b, c, src.data());
      if (transposed) {  // y[l·stride + k·dil - pad] += x[l]·w[k]
        std::fill(y.begin(), y.end(), bias);
        for (int64_t l = 0; l < len; ++l) {
          const float v = src[static_cast<size_t>(l)];
          for (int64_t k = 0; k < taps; ++k) {
            const int64_t t = l * stride + k * dil - pb;
            if (t >= 0 && t < olen) y[static_cast<size_t>(t)] += v * w[static_cast<size_t>(k)];
          }
        }
      } else {  // y[t] = Σ_k xpad[t·stride + k·dil]·w[k]
        for (int64_t i = 0; i < padded; ++i) {
          const int64_t sidx = pad_source_index(i - pb, len, a.pad_mode[0]);
          row[static_cast<size_t>(i)] = sidx < 0 ? 0.0f : src[static_cast<size_t>(sidx)];
        }
        for (int64_t t = 0; t < olen; ++t) {
          const float* xp = row.data() + t * stride;
          float acc = bias;
          for (int64_t k = 0; k < taps; ++k) acc += xp[k * dil] * w[static_cast<size_t>(k)];
          y[static_cast<size_t>(t)] = acc;
        }
      }
      store_row(y.data(), olen, out, r);
    }
  });
}

// im2col over our GEMM: the last resort, for calls oneDNN has no primitive for.

void conv_im2col(const ConvAttrs& a, Inputs in, const Tensor& out) {
  const Tensor& x = in[0];              // [B, C, *S]
  const Tensor w = in[1].contiguous();  // [O, C/G, *K] = [O, C/G·taps] row-major
  const int sp = a.spatial;
  const int64_t batch = x.dim(0), groups = a.groups;
  const int64_t cg = w.dim(1), og = w.dim(0) / groups;
  int64_t taps = 1, positions = 1;
  int64_t kdim[3] = {1, 1, 1}, odim[3] = {1, 1, 1}, xdim[3] = {1, 1, 1};
  for (int d = 0; d < sp; ++d) {
    kdim[3 - sp + d] = w.dim(2 + d);
    odim[3 - sp + d] = out.dim(2 + d);
    xdim[3 - sp + d] = x.dim(2 + d);
    taps *= w.dim(2 + d);
    positions *= out.dim(2 + d);
  }
  auto attr3 = [&](const std::array<int64_t, 3>& v, int64_t fill) {  // right-aligned to 3 dims
    std::array<int64_t, 3> r{fill, fill, fill};
    for (int d = 0; d < sp; ++d) r[static_cast<size_t>(3 - sp + d)] = v[static_cast<size_t>(d)];
    return r;
  };
  const auto stride = attr3(a.stride, 1), dil = attr3(a.dilation, 1), pb = attr3(a.pad_before, 0);
  std::array<PadMode, 3> mode{PadMode::Zeros, PadMode::Zeros, PadMode::Zeros};
  for (int d = 0; d < sp; ++d) mode[static_cast<size_t>(3 - sp + d)] = a.pad_mode[static_cast<size_t>(d)];
  int64_t xs[3] = {0, 0, 0};
  for (int d = 0; d < sp; ++d) xs[3 - sp + d] = x.strides()[2 + d];

  const int64_t k_total = cg * taps;
  // Columns of at most ~4M elements, at least 96 positions wide (the GEMM's panels want width).
  const int64_t chunk = std::min(positions, std::max<int64_t>(96, (int64_t{4} << 20) / k_total / 16 * 16));
  const DType dt = x.dtype();
  const auto es = static_cast<int64_t>(dtype_block_bytes(dt));
  const auto oes = static_cast<int64_t>(dtype_block_bytes(out.dtype()));
  std::vector<std::byte> col(static_cast<size_t>(k_total * chunk * es));
  std::vector<float> acc(static_cast<size_t>(og * chunk));
  std::vector<float> bias(static_cast<size_t>(out.dim(1)), 0.0f);
  if (in.size() == 3)
    for (int64_t o = 0; o < out.dim(1); ++o)
      bias[static_cast<size_t>(o)] = load_as_f32(
          in[2].raw() + o * in[2].strides()[0] * static_cast<int64_t>(dtype_block_bytes(in[2].dtype())), in[2].dtype());

  for (int64_t b = 0; b < batch; ++b)
    for (int64_t g = 0; g < groups; ++g)
      for (int64_t p0 = 0; p0 < positions; p0 += chunk) {
        const int64_t pc = std::min(chunk, positions - p0);
        // col[(c·taps + tap), p] = x_padded[b, g·cg + c, pos(p)·stride + k(tap)·dilation]
        parallel_for(k_total, 8, [&](int64_t begin, int64_t end) {
          for (int64_t row = begin; row < end; ++row) {
            const int64_t c = row / taps, tap = row % taps;
            const int64_t k[3] = {tap / (kdim[1] * kdim[2]), (tap / kdim[2]) % kdim[1], tap % kdim[2]};
            const std::byte* xc = x.raw() + (b * x.strides()[0] + (g * cg + c) * x.strides()[1]) * es;
            std::byte* dst = col.data() + row * chunk * es;
            for (int64_t p = 0; p < pc; ++p) {
              const int64_t pos = p0 + p;
              const int64_t o[3] = {pos / (odim[1] * odim[2]), (pos / odim[2]) % odim[1], pos % odim[2]};
              int64_t off = 0;
              for (int d = 0; d < 3 && off >= 0; ++d) {
                const auto i = static_cast<size_t>(d);
                const int64_t s = pad_source_index(o[d] * stride[i] + k[d] * dil[i] - pb[i], xdim[d], mode[i]);
                off = s < 0 ? -1 : off + s * xs[d];
              }
              if (off < 0)
                std::memset(dst + p * es, 0, static_cast<size_t>(es));
              else
                std::memcpy(dst + p * es, xc + off * es, static_cast<size_t>(es));
            }
          }
        });
        gemm::Problem prob;
        prob.m = og, prob.n = pc, prob.k = k_total;
        prob.a = {w.raw() + g * og * k_total * es, dt, k_total, 1};
        prob.b.data = col.data(), prob.b.dtype = dt, prob.b.sk = chunk, prob.b.sn = 1;
        prob.out = reinterpret_cast<std::byte*>(acc.data()), prob.out_dtype = DType::F32, prob.ldo = pc;
        prob.compute = dt == DType::BF16 ? gemm::Compute::BF16 : gemm::Compute::F32;
        gemm::run_avx512(prob);
        for (int64_t o = 0; o < og; ++o) {  // bias and the one rounding to out's dtype
          const int64_t oc = g * og + o;
          std::byte* dst = out.raw() + ((b * out.dim(1) + oc) * positions + p0) * oes;
          for (int64_t p = 0; p < pc; ++p)
            store_from_f32(dst + p * oes, out.dtype(),
                           acc[static_cast<size_t>(o * pc + p)] + bias[static_cast<size_t>(oc)]);
        }
      }
}

}  // namespace ltx::cpu::opt
