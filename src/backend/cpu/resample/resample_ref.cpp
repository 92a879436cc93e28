// Reference kernels for DepthToSpace, SpaceToDepth and UpsampleNearest: pure data movement, so elements are
// copied bytewise (exact for every plain dtype). One loop over the output index, computing the input index.
// Also AntiAliasSnakeBeta, step by step as ltx_core/model/audio_vae/vocoder.py runs Activation1d.
#include <cmath>
#include <cstring>
#include <vector>

#include "backend/cpu/kernels.h"
#include "backend/cpu/padding.h"
#include "core/error.h"

namespace ltx::cpu::ref {

// Channel order (c, f0, f1, f2), f2 fastest, as torch's pixel_shuffle and LTX's einops patterns
// "b (c p1 p2 p3) d h w -> b c (d p1) (h p2) (w p3)" (ltx_core/model/video_vae/sampling.py). Note that
// patchify in video_vae/ops.py orders channels (c, p, w-factor, h-factor) instead: that is a permute away.
void resample(OpKind kind, const ResampleAttrs& a, Inputs in, const Tensor& out) {
  const Tensor& x = in[0];
  const int n = a.spatial;
  const size_t es = dtype_block_bytes(out.dtype());
  int64_t i = 0;
  for_each_index(out.shape(), [&](const int64_t* o) {
    int64_t src[kMaxRank] = {o[0], o[1]};
    switch (kind) {
      case OpKind::DepthToSpace: {
        int64_t sub = 0;  // (f0, f1, f2) offset within the block, row-major
        for (int d = 0; d < n; ++d) {
          const int64_t f = a.factor[static_cast<size_t>(d)];
          sub = sub * f + o[2 + d] % f;
          src[2 + d] = o[2 + d] / f;
        }
        src[1] = o[1] * (x.shape()[1] / out.shape()[1]) + sub;
        break;
      }
      case OpKind::SpaceToDepth: {
        int64_t sub = o[1] % (out.shape()[1] / x.shape()[1]);
        src[1] = o[1] / (out.shape()[1] / x.shape()[1]);
        for (int d = n - 1; d >= 0; --d) {  // peel f2 first: it is the fastest-varying part of the channel
          const int64_t f = a.factor[static_cast<size_t>(d)];
          src[2 + d] = o[2 + d] * f + sub % f;
          sub /= f;
        }
        break;
      }
      case OpKind::UpsampleNearest:
        for (int d = 0; d < n; ++d) src[2 + d] = o[2 + d] / a.factor[static_cast<size_t>(d)];
        break;
      default:
        fail("cpu", std::string(op_name(kind)) + ": not a resampling op");
    }
    std::memcpy(out.raw() + static_cast<size_t>(i++) * es, x.raw() + element_byte_offset(x, src), es);
  });
}

// vocoder.py Activation1d(SnakeBeta) with its default ratio 2, one (b, c) row at a time in f32:
//   UpSample1d: replicate pad p = Ku/2 - 1, conv_transpose1d stride 2 with `up`, times 2, crop
//     [2p + (Ku-2)/2, len - 2p - (Ku-1)/2);
//   SnakeBeta: u + 1/(β + 1e-9)·sin²(α·u), α and β exp()'d when stored as logs;
//   DownSample1d (LowPassFilter1d): replicate pad Kd/2 - 1 | Kd/2, conv1d stride 2 with `down`.
// Sums run over the taps in increasing input position.
void anti_alias_snake_beta(const SnakeAttrs& a, Inputs in, const Tensor& out) {
  const Tensor& x = in[0];
  const std::vector<float> up = in[3].to_floats(), down = in[4].to_floats();
  const int64_t ku = static_cast<int64_t>(up.size()), kd = static_cast<int64_t>(down.size());
  const int64_t batch = x.dim(0), chans = x.dim(1), len = x.dim(2);
  const int64_t pad = ku / 2 - 1, crop_l = 2 * pad + (ku - 2) / 2, crop_r = 2 * pad + (ku - 1) / 2;
  const int64_t full = (len + 2 * pad - 1) * 2 + ku;  // conv_transpose1d output length
  const int64_t up_len = full - crop_l - crop_r;      // = 2·len
  const int64_t dl = kd / 2 - 1;
  const size_t oes = dtype_block_bytes(out.dtype());
  std::vector<float> xp(static_cast<size_t>(len + 2 * pad)), y(static_cast<size_t>(full)),
      s(static_cast<size_t>(up_len));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t c = 0; c < chans; ++c) {
      const auto param = [&](const Tensor& p) {
        const float v = load_as_f32(p.raw() + element_byte_offset(p, &c), p.dtype());
        return a.log_scale ? std::exp(v) : v;
      };
      const float alpha = param(in[1]), beta = param(in[2]);
      for (int64_t i = 0; i < len + 2 * pad; ++i) {
        const int64_t idx[3] = {b, c, pad_source_index(i - pad, len, PadMode::Replicate)};
        xp[static_cast<size_t>(i)] = load_as_f32(x.raw() + element_byte_offset(x, idx), x.dtype());
      }
      for (int64_t t = 0; t < full; ++t) {
        float acc = 0.0f;
        for (int64_t l = std::max<int64_t>(0, (t - ku + 2) / 2); l < len + 2 * pad && 2 * l <= t; ++l)
          if (t - 2 * l < ku) acc += xp[static_cast<size_t>(l)] * up[static_cast<size_t>(t - 2 * l)];
        y[static_cast<size_t>(t)] = acc;
      }
      for (int64_t j = 0; j < up_len; ++j) {
        const float u = 2.0f * y[static_cast<size_t>(j + crop_l)];
        const float sn = std::sin(u * alpha);
        s[static_cast<size_t>(j)] = u + (1.0f / (beta + 1e-9f)) * (sn * sn);
      }
      for (int64_t i = 0; i < len; ++i) {
        float acc = 0.0f;
        for (int64_t k = 0; k < kd; ++k)
          acc += s[static_cast<size_t>(pad_source_index(2 * i + k - dl, up_len, PadMode::Replicate))] *
                 down[static_cast<size_t>(k)];
        store_from_f32(out.raw() + static_cast<size_t>((b * chans + c) * len + i) * oes, out.dtype(), acc);
      }
    }
}

}  // namespace ltx::cpu::ref
