// LoRA files for the DiT: reading a file in any of the published namings and matching its pairs to the DiT's
// Linear layers by their official names. Fusing into resident weights is lora_fuse.h.
//
// Namings (a module M is an official DiT Linear such as "transformer_blocks.0.attn1.to_q"):
//   official / ComfyUI  diffusion_model.M.lora_A.weight, diffusion_model.M.lora_B.weight (what ltx-core loads:
//                       ltx_core/loader/sd_ops.py LTXV_LORA_COMFY_RENAMING_MAP strips "diffusion_model.")
//   ComfyUI / kohya     diffusion_model.M.lora_down.weight, .lora_up.weight, .alpha; or the flattened
//                       lora_unet_<M with '.' as '_'>.lora_down.weight / .lora_up.weight / .alpha
//   Diffusers (PEFT)    transformer.<Diffusers name of M>.lora_A.weight / .lora_B.weight (dit_keys.h)
// The update of a module is B·A (ltx_core/loader/fuse_loras.py _prepare_deltas: matmul(B·strength, A), no alpha);
// a file that carries `<module>.alpha` gets ComfyUI's alpha / rank factor on top, and a Diffusers file's
// `lora_adapter_metadata` its lora_alpha / r. Keys for the text connectors or the feature extractor
// (text_embedding_projection.*, *_embeddings_connector.*) are recognised but not applied: ltx-core fuses LoRAs
// into the transformer only (ltx_pipelines/utils/model_ledger.py).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/tensor.h"
#include "nn/weight_source.h"

namespace ltx::ltxm {

// `--lora FILE[:STRENGTH]`: strength 1 by default (ltx_pipelines/utils/constants.py DEFAULT_LORA_STRENGTH). A
// colon followed by something that is not a number belongs to the path.
struct LoraSpec {
  std::string path;
  float strength = 1.0f;
};
LoraSpec parse_lora_spec(std::string_view arg);

struct LoraLayer {
  std::string target;  // official DiT module, e.g. "transformer_blocks.0.attn1.to_q"
  Tensor down;         // A [rank, in], as stored
  Tensor up;           // B [out, rank], as stored
  float scale = 1.0f;  // alpha / rank where the file states an alpha, else 1
};

struct LoraAdapter {
  std::string path;
  std::string naming;                    // "official", "comfyui", "kohya", "diffusers" (the first pair's)
  std::vector<LoraLayer> layers;         // one per module, in file order
  std::vector<std::string> not_applied;  // modules outside the DiT that ltx-core also leaves alone
  std::vector<std::string> unmatched;    // with allow_partial: keys that name no DiT Linear
};

// What the DiT offers: is `module` one of its Linears, and its weight shape [out, in].
struct LoraTargets {
  std::vector<std::string> modules;  // official names
  std::function<std::pair<int64_t, int64_t>(const std::string& module)> shape;
};

// Reads `path` and maps every pair to a target. Fails with one error listing every key that names no DiT
// Linear (unless allow_partial), every incomplete pair and every shape that does not fit its target.
LoraAdapter read_lora(const std::string& path, const LoraTargets& targets, bool allow_partial);
// The same over the tensors of `file` whose names start with `key_prefix` (stripped), e.g. a LoRA stored inside a
// golden case's weights.
LoraAdapter read_lora(const WeightSource& file, const LoraTargets& targets, bool allow_partial,
                      std::string_view key_prefix = "");

}  // namespace ltx::ltxm
