// Reference kernels for DepthToSpace, SpaceToDepth and UpsampleNearest: pure data movement, so elements are
// copied bytewise (exact for every plain dtype). One loop over the output index, computing the input index.
#include <cstring>

#include "backend/cpu/kernels.h"
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

}  // namespace ltx::cpu::ref
