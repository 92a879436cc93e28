#include "models/ltx/video_vae/video_vae_layers.h"

#include "core/error.h"
#include "nn/layers.h"

namespace ltx::video_vae {

Conv Conv::load(const WeightLoader& loader, std::string_view name, int64_t in, int64_t out,
                std::span<const int64_t> kernel, int64_t pad, PadMode mode, DType compute, bool bias) {
  LTX_CHECK(!kernel.empty() && kernel.size() <= 3, "video_vae", "conv ", name, ": 1-3 spatial dims");
  const WeightLoader s = loader.scope(name);
  Conv c;
  c.name = s.prefix().substr(0, s.prefix().size() - 1);
  std::vector<int64_t> wshape{out, in};
  wshape.insert(wshape.end(), kernel.begin(), kernel.end());
  c.weight = nn::prepare_matrix(s.get("weight", Shape(std::span<const int64_t>(wshape))), compute);
  if (bias) c.bias = nn::prepare_vector(s.get("bias", {out}));
  c.attrs.spatial = static_cast<int>(kernel.size());
  for (size_t i = 0; i < kernel.size(); ++i) {
    c.attrs.pad_before[i] = pad;
    c.attrs.pad_after[i] = pad;
    c.attrs.pad_mode[i] = mode;
  }
  return c;
}

Value Conv::operator()(Value x) const {
  Graph& g = *x.graph;
  std::optional<Value> b;
  if (bias.defined()) b = g.constant(name + ".bias", bias);
  return ops::conv(x, g.constant(name + ".weight", weight), b, attrs);
}

CausalConv3d CausalConv3d::load(const WeightLoader& loader, std::string_view name, int64_t in, int64_t out,
                                PadMode spatial_mode, DType compute, std::array<int64_t, 3> stride, int64_t kernel) {
  CausalConv3d c;
  c.kernel = kernel;
  const std::array<int64_t, 3> k{kernel, kernel, kernel};
  c.conv = Conv::load(loader.scope(name), "conv", in, out, k, kernel / 2, spatial_mode, compute);
  c.conv.attrs.stride = stride;
  return c;
}

Value CausalConv3d::operator()(Value x, bool causal) const {
  LTX_CHECK(x.rank() == 5, "video_vae", conv.name, ": expects [B, C, F, H, W], got ", x.shape().str());
  Conv c = conv;
  c.attrs.pad_mode[0] = PadMode::Replicate;  // edge frames are repeated, never zeros
  c.attrs.pad_before[0] = causal ? kernel - 1 : (kernel - 1) / 2;
  c.attrs.pad_after[0] = causal ? 0 : (kernel - 1) / 2;
  return c(x);
}

}  // namespace ltx::video_vae
