// Gemma-3 text model weights, filled through a WeightLoader under Hugging Face names (the suffixes after
// `model.`). Sources: a HF safetensors file or folder (Gemma3ForCausalLM `model.*`, Gemma3ForConditionalGeneration
// `language_model.model.*` or `model.language_model.*`; vision tower and projector ignored) or a GGUF file, whose
// `blk.N.*` names are presented under the same HF names (gguf_source). Quantized GGUF matrices stay quantized.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "models/gemma3/config.h"
#include "nn/layers.h"

namespace ltx::gemma3 {

struct LayerWeights {
  nn::RmsNorm input_layernorm, post_attention_layernorm, pre_feedforward_layernorm, post_feedforward_layernorm;
  nn::Linear q_proj, k_proj, v_proj, o_proj;  // [H·D, hidden], [Hkv·D, hidden] x2, [hidden, H·D]
  nn::RmsNorm q_norm, k_norm;                 // [D]
  nn::Linear gate_proj, up_proj, down_proj;   // [I, hidden] x2, [hidden, I]
};

struct Weights {
  Tensor embed_tokens;  // [V, hidden]: f32/bf16 or GGUF-quantized rows
  std::vector<LayerWeights> layers;
  nn::RmsNorm norm;

  // `root` is the prefix above `embed_tokens` (e.g. "language_model.model."); everything else under the
  // source must be either consumed or a known non-text part (vision tower, projector, tied lm_head).
  static Weights load(const Config& config, std::shared_ptr<const WeightSource> source, const std::string& root,
                      DType compute);
};

// Decodes the layers' block-quantized matrices once, to `to` (f32, or bf16: the f32 values rounded), when their
// size in `to` is at most budget_bytes (all or none). In f32 the values are exactly those the matmul would decode
// tile by tile on every call, and in bf16 those its bf16 panels hold, so results do not change; small models
// (270M: 0.4 GB in f32) skip the per-call decode, which dominates at prompt lengths. The embedding table stays
// quantized (a prompt gathers only its own rows).
void dequantize_layer_matrices(Weights& weights, DType to, int64_t budget_bytes);
// The layer matrices dequantize_layer_matrices decodes (layer by layer: q, k, v, o, gate, up, down): the quantized
// ones, or none when their decoded size exceeds budget_bytes. `to` must be f32 or bf16.
std::vector<nn::Linear*> quantized_layer_matrices(Weights& weights, DType to, int64_t budget_bytes);
// A block-quantized [N, K] matrix decoded to f32, then rounded to bf16 (round-to-nearest-even, as Tensor::to) when
// `to` is bf16; rows split across the pool. The f32 values are exactly those the matmul would decode tile by tile.
Tensor dequantize_matrix(const Tensor& quantized, DType to);
// The same into `out` (contiguous, f32 or bf16, the matrix's shape).
void dequantize_matrix_into(const Tensor& quantized, const Tensor& out);

// A GGUF file's tensors under HF names ("model.layers.3.self_attn.q_proj.weight"); tensors with no HF
// counterpart keep their GGUF name so the loader reports them. Quantized tensors (Q5_0, Q4_K, ...) stay as stored.
std::shared_ptr<WeightSource> open_gguf_as_hf(const std::string& path);

// The prefix of the text model inside a HF checkpoint: the first of "language_model.model.",
// "model.language_model.", "model." that holds "embed_tokens.weight".
std::string detect_hf_root(const WeightSource& source);

}  // namespace ltx::gemma3
