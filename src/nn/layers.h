// Layers shared by every model: typed weights loaded once through a WeightLoader, applied by building graph nodes.
// Large matrices are converted once at load to the compute dtype (f32 in validation mode, bf16 in production)
// unless they are block-quantized, which stay quantized and are dequantized tile by tile inside the matmul.
// Biases and norm weights stay f32.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "graph/builder.h"
#include "nn/weight_loader.h"

namespace ltx::nn {

// A weight matrix as the matmul will read it: converted to `compute` once, or kept quantized.
Tensor prepare_matrix(const Tensor& stored, DType compute);
// A small parameter (bias, norm weight, table) as f32.
Tensor prepare_vector(const Tensor& stored);

// y = x·Wᵀ + b with W [out, in] (PyTorch's nn.Linear). An 8-bit float weight may come with a per-tensor
// `weight_scale` (W = W_f8 · scale, ltx_core quantization/fp8_scaled_mm.py): the f8 bytes stay resident and the
// scale multiplies the matmul's output. Its `input_scale` (static fp8 quantization of x for a GPU fp8 GEMM) is
// read and not applied: x stays in the compute dtype, as in ltx-core's fp8-cast (upcast) path.
struct Linear {
  std::string name;  // checkpoint key prefix, e.g. "transformer_blocks.0.attn1.to_q"
  Tensor weight;     // [out, in]
  Tensor bias;       // [out], or empty
  float weight_scale = 1.0f;
  // LoRA updates applied beside the layer rather than fused into `weight` (models/ltx/dit/lora_fuse.h): each adds
  // scale·(x·downᵀ)·upᵀ, down [rank, in] and up [out, rank] in the compute dtype.
  struct LowRank {
    Tensor down, up;
    float scale = 1.0f;
  };
  std::vector<LowRank> low_rank;
  // The compute dtype chosen at load (f32 validation, bf16 production): with a quantized or fp8 weight it is the
  // only record of which mode the layer runs in.
  DType compute = DType::F32;
  static Linear load(const WeightLoader& loader, std::string_view name, int64_t in, int64_t out, bool bias,
                     DType compute);
  Value operator()(Value x) const;  // x [..., in] -> [..., out]
};

// x / rms(x) over the last axis, times w (or 1 + w, Gemma's form), or no weight at all.
struct RmsNorm {
  std::string name;
  Tensor weight;  // [dim] or empty
  float eps = 1e-6f;
  NormWeight form = NormWeight::Plain;
  static RmsNorm load(const WeightLoader& loader, std::string_view name, int64_t dim, float eps, NormWeight form);
  static RmsNorm without_weight(float eps) { return RmsNorm{"", {}, eps, NormWeight::None}; }
  Value operator()(Value x) const;
};

struct LayerNorm {
  std::string name;
  Tensor weight, bias;  // [dim] or empty (elementwise_affine=False)
  float eps = 1e-6f;
  static LayerNorm load(const WeightLoader& loader, std::string_view name, int64_t dim, float eps, bool affine,
                        bool bias);
  Value operator()(Value x) const;
};

// Heads: [B, T, H·D] <-> [B, H, T, D].
Value split_heads(Value x, int64_t n_heads);
Value merge_heads(Value x);

}  // namespace ltx::nn
