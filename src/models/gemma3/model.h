// Gemma-3 text model (transformers models/gemma3/modeling_gemma3.py, Gemma3TextModel): scaled embeddings,
// sandwich-normed decoder layers with QK-norm, GQA, sliding-window and global attention with their own RoPE,
// GeGLU MLP; returns every hidden state in HF's output_hidden_states convention (0 = scaled embeddings,
// i = output of layer i−1, last = final norm of the last layer's output).
//
// Positions and key validity are explicit per token, so a left-padded batch can run either in full (positions
// 0..T−1, pads masked as keys, as HF runs it) or compactly: only the last T' columns that hold real tokens, at
// their padded positions. Real tokens get the same hidden states either way (tests/gemma3/model_test.cpp).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "graph/compile.h"
#include "models/gemma3/config.h"
#include "models/gemma3/weights.h"

namespace ltx::gemma3 {

// The rotary inverse frequencies (modeling_gemma3.py:Gemma3RotaryEmbedding.compute_default_rope_parameters):
// 1 / base^(2j/D) for j < D/2, base ** tensor rounded as torch's CPU kernels do (core/torch_cpu_math.h), then divided
// by the "linear" rope_scaling factor (global layers).
std::vector<float> rope_inv_freq(int64_t head_dim, double base, double linear_factor);

struct Output {
  std::vector<Tensor> hidden_states;            // n_layers + 1 tensors, each f32 [B, T, hidden]
  std::map<std::string, Tensor> intermediates;  // HF module paths: layers.{i}.out, layers.0.self_attn.out, ...
};

// One generation's keys and values (Model::extend): per layer [1, KVH, capacity, head_dim] f32, slots [0, length)
// filled in order, each flagged whether it may be attended to (a pad keeps its slot, masked).
struct KvCache {
  int64_t length = 0;
  std::vector<Tensor> keys, values;
  std::vector<int64_t> valid;
  int64_t capacity() const { return keys.empty() ? 0 : keys.front().dim(2); }
};

// Image features placed in a prompt: row k of `features` replaces the embedding of the k-th token whose `image` is
// not -1; `image` numbers each token's image (-1: a text token), one entry per token given to Model::extend.
struct ImageEmbeddings {
  Tensor features;  // f32 [soft tokens, hidden]
  std::vector<int64_t> image;
};

class Model {
 public:
  // compute: the dtype large matrices are held in (f32 validation, bf16 production); quantized GGUF matrices
  // stay quantized. Activations, norms, softmax and accumulation are f32. Its forwards run on `backend`.
  Model(Config config, Weights weights, DType compute, const Backend& backend);

  // A HF folder (config.json + *.safetensors) or a .gguf file. `cache_dir` (GGUF only; empty: none): a folder where
  // the layer matrices decoded at load are kept for the next process (decoded_cache.h).
  static Model load(const std::string& path, DType compute, const Backend& backend, const std::string& cache_dir = "");
  static Model from_hf(const std::string& config_json, const std::string& weights_path, DType compute,
                       const Backend& backend);
  static Model from_gguf(const std::string& path, DType compute, const Backend& backend,
                         const std::string& cache_dir = "");

  // ids, positions: i64 [B, T]; valid: [B, T] of 0/1 (any integer dtype): whether each token may be attended to.
  // Query i sees key j iff valid[j], pos[j] <= pos[i] and, on sliding layers, pos[i] − pos[j] < window.
  Output forward(const Tensor& ids, const Tensor& positions, const Tensor& valid, bool intermediates = false);

  // HF's call on a left-padded batch (ids, attention_mask [B, T]): positions 0..T−1, every row computed.
  Output forward_padded(const Tensor& ids, const Tensor& mask, bool intermediates = false);
  // The same batch computing real tokens only, each at its padded position: all rows' real tokens are packed into
  // one sequence (prompts kept apart by the attention mask, padded to a multiple of 32 tokens so that one plan
  // serves nearby lengths). Rows come back as [B, T', hidden] with T' = max(sum(mask)): row b's real tokens are
  // its last sum(mask[b]) entries, zeros before them. With intermediates, rows run side by side instead ([B, T']
  // at positions T−T'+j, pad columns computed), which is what the intermediates' layout is.
  Output forward_real_tokens(const Tensor& ids, const Tensor& mask, bool intermediates = false);

  // Generation: runs `ids` at RoPE `positions` (`valid` 0: a pad, masked as a key for every later token too) in the
  // cache's next slots, appends their keys and values to `cache` and returns the last token's logits [vocab] f32
  // (the head tied to the embeddings, as Gemma3ForCausalLM). Attention is causal and windowed by slot index, as
  // transformers' generate masks a padded prompt. The cache grows in buckets of 128 slots and new tokens are
  // padded to a multiple of 32, so that a generation compiles a few plans and reuses them.
  // An empty cache with room for `slots` tokens (rounded up to the bucket): a generation that reserves what it needs
  // never grows it, and compiles one decode plan.
  KvCache new_cache(int64_t slots) const;
  // `images` (optional): the new tokens' image soft tokens take the image features in place of their embeddings,
  // and attend to every soft token of their own image both ways (Gemma3Model.forward's masked_scatter and
  // token_type_ids_mask_function, in the prefill that carries the pixels).
  std::vector<float> extend(KvCache& cache, const std::vector<int64_t>& ids, const std::vector<int64_t>& positions,
                            const std::vector<int64_t>& valid, const ImageEmbeddings* images = nullptr);

  const Config& config() const { return config_; }
  const PlanCache& plans() const { return plans_; }
  // How calls hold the weights mapped from the file (graph/weight_streaming.h); nullopt leaves them to the OS.
  void set_weight_streaming(const std::optional<StreamingPolicy>& policy) { streaming_ = policy; }
  // The compiled plans' activation memory back to the OS until the next forward (PlanCache::release_arena_pages).
  void release_activations() const { plans_.release_arena_pages(); }

 private:
  // The forward on flat [b, t] token data; `segment` separates prompts packed into one row (see forward).
  Output run(const std::vector<int64_t>& ids, const std::vector<int64_t>& positions, const std::vector<int64_t>& valid,
             const std::vector<int64_t>& segment, int64_t b, int64_t t, bool intermediates);

  Config config_;
  Weights weights_;
  DType compute_;
  PlanCache plans_;
  std::optional<StreamingPolicy> streaming_;
};

}  // namespace ltx::gemma3
