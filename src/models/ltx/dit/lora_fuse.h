// LoRA fusion into the DiT's resident weights: W = W_base + Σ strength·scale·B·A from the checkpoint's stored weights,
// rounded as ltx_core/loader/fuse_loras.py rounds it for bf16 resident weights (B·strength when stored in bf16, each
// B·A, the deltas' sum and W + delta, each to bf16 in turn: tests/golden/dit/lora_bf16_rounding), and once for f32.
//
// The fuser keeps no copy of the base weights: each touched matrix is recomputed from the stored tensor (a view of
// the mapped checkpoint), and a matrix no adapter touches any more is re-read from it as at load. So switching
// between weight sets (user LoRAs for stage 1, user LoRAs + the distilled LoRA for stage 2) costs one pass over the
// touched matrices and no second resident copy, and switching back gives exactly the loaded weights.
//
// Block-quantized resident weights (GGUF) that a LoRA touches are dequantized, fused and kept in the compute dtype
// (bf16 in production): the fused matrix is no longer in the quantization grid. The report counts those bytes.
// fp8 matrices with a per-tensor weight_scale fuse into W8·scale and keep scale 1 while fused; a restore brings back
// the fp8 bytes and their scale.
#pragma once

#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "graph/compile.h"
#include "models/ltx/dit/dit.h"
#include "models/ltx/dit/lora.h"

namespace ltx::ltxm {

// How the updates reach the layers: fused into resident copies of the matrices they touch (ltx-core's fused
// weights; a copy of every touched matrix), or applied beside each layer unfused,
// y = x·Wᵀ + Σ s·(x·Aᵀ)·Bᵀ (nn::Linear::low_rank: no copy, the base weights stay mapped and can be streamed; per
// token rank·(in + out) more multiply-adds, about 19% of a 4096x4096 layer at rank 384).
enum class LoraApplication { Fused, Unfused };

struct WeightedLora {
  const LoraAdapter* adapter;
  float strength;
};

struct LoraFuseReport {
  int64_t layers_fused = 0;       // matrices that now carry at least one LoRA update
  int64_t layers_restored = 0;    // matrices returned to the checkpoint's weights
  int64_t dequantized_bytes = 0;  // resident bytes added by fusing into quantized matrices
  double seconds = 0.0;
};

class DitLoraFuser {
 public:
  // `source` is what the DiT was loaded from (its Linear names are keys there, under `prefix`); it is kept to re-read
  // stored weights. `compute`: the DiT's resident dtype for matrices.
  DitLoraFuser(Dit& dit, std::shared_ptr<const WeightSource> source, DType compute,
               std::string prefix = "model.diffusion_model.");

  // The DiT's Linear layers by official name, and their shapes.
  const LoraTargets& targets() const { return targets_; }
  // The resident weight of a layer by official name.
  const Tensor& weight(const std::string& module) const { return linears_.at(module)->weight; }
  // Its per-tensor scale (fp8 weights; 1 otherwise and while fused).
  float weight_scale(const std::string& module) const { return linears_.at(module)->weight_scale; }

  // Fused (the default) or unfused; set before the first apply.
  void set_application(LoraApplication a);
  LoraApplication application() const { return application_; }

  // Makes the layers base + these adapters; a no-op when they already are exactly that. The report's
  // layers_fused counts the layers carrying an update, fused or not.
  LoraFuseReport apply(std::span<const WeightedLora> loras);

 private:
  Tensor stored(const std::string& module) const;
  float stored_scale(const std::string& module) const;  // the per-tensor fp8 weight_scale, 1 when there is none

  Dit& dit_;
  std::shared_ptr<const WeightSource> source_;
  DType compute_;
  std::string prefix_;
  std::map<std::string, nn::Linear*> linears_;  // official name -> the DiT's layer
  LoraTargets targets_;
  std::vector<std::pair<const LoraAdapter*, float>> current_;
  LoraApplication application_ = LoraApplication::Fused;
  std::vector<std::string> fused_;  // modules that differ from the checkpoint now (fused or carrying low_rank)
  PlanCache plans_;                 // W + U·D -> resident dtype, one plan per shape
};

}  // namespace ltx::ltxm
