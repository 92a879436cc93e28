// Convolution layers shared by the media models (video VAE, upsamplers): a plain N-d convolution with stored
// weights, and LTX's CausalConv3d with its replicated temporal padding.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "graph/builder.h"
#include "nn/weight_loader.h"

namespace ltx::video_vae {

// Named intermediates a forward pass reports, in the golden cases' naming (`up_blocks.2.out`); several names may
// share one value (a block's output is its last res block's).
using Taps = std::vector<std::pair<std::string, Value>>;
// Labels v in the graph (LTX_DUMP) and records it in taps when given.
inline Value tap(Taps* taps, const std::string& name, Value v) {
  v.graph->name(v, name);
  if (taps) taps->emplace_back(name, v);
  return v;
}

// torch.nn.ConvNd: weight [O, I/groups, *K] at `<name>.weight`, optional bias [O].
struct Conv {
  std::string name;
  Tensor weight, bias;
  ConvAttrs attrs;
  // Symmetric padding `pad` on every spatial dimension with `mode`.
  static Conv load(const WeightLoader& loader, std::string_view name, int64_t in, int64_t out,
                   std::span<const int64_t> kernel, int64_t pad, PadMode mode, DType compute, bool bias = true);
  Value operator()(Value x) const;
  int64_t out_channels() const { return weight.shape()[0]; }
};

// ltx_core/model/video_vae/convolution.py CausalConv3d: k×k×k conv (key `<name>.conv.weight`), space padded by
// k/2 with the spatial mode inside the conv; time padded by replicating frames: causal = k-1 copies of the first
// frame in front, non-causal = (k-1)/2 copies of the first frame in front and of the last behind.
struct CausalConv3d {
  Conv conv;
  int64_t kernel = 3;
  static CausalConv3d load(const WeightLoader& loader, std::string_view name, int64_t in, int64_t out,
                           PadMode spatial_mode, DType compute, std::array<int64_t, 3> stride = {1, 1, 1},
                           int64_t kernel = 3);
  Value operator()(Value x, bool causal) const;  // x [B, I, F, H, W] -> [B, O, F', H', W']
  int64_t out_channels() const { return conv.out_channels(); }
};

}  // namespace ltx::video_vae
