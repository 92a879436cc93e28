// The dual-stream LTX-2 / LTX-2.3 diffusion transformer (ltx_core/model/transformer/model.py, transformer.py,
// transformer_args.py). A call builds a static-shape graph, takes the cached plan for that shape, writes its inputs
// (latents, contexts, timestep sinusoids, RoPE tables, the additive self-attention bias, perturbation masks) into
// the plan's arena, which holds them, and runs it.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "graph/compile.h"
#include "models/ltx/dit/dit_config.h"
#include "models/ltx/dit/taps.h"
#include "nn/adaln.h"
#include "nn/attention_block.h"
#include "nn/feed_forward.h"

namespace ltx::ltxm {

struct DitStreamWeights {
  nn::Linear patchify;                                 // patchify_proj [D, C]
  nn::AdaLayerNormSingle adaln;                        // adaln_single, coef 6 | 9
  std::optional<nn::AdaLayerNormSingle> prompt_adaln;  // prompt_adaln_single (cross-attention AdaLN), coef 2
  std::optional<nn::Linear> caption_1, caption_2;      // caption_projection.linear_{1,2} (LTX-2.0)
  Tensor out_table;                                    // scale_shift_table [2, D]
  nn::Linear proj_out;                                 // [C_out, D]
  // A<->V AdaLNs of this stream (audio-video only): av_ca_<stream>_scale_shift (coef 4) and the gate (coef 1).
  std::optional<nn::AdaLayerNormSingle> av_scale_shift, av_gate;
};

struct DitBlockStream {
  nn::AttentionBlock attn1, attn2;
  nn::FeedForward ff;
  Tensor table;         // scale_shift_table [coef, D]
  Tensor prompt_table;  // prompt_scale_shift_table [2, D] (cross-attention AdaLN) or empty
  Tensor av_table;      // scale_shift_table_a2v_ca_<stream> [5, D] (audio-video) or empty
};

struct DitBlockWeights {
  std::optional<DitBlockStream> video, audio;
  std::optional<nn::AttentionBlock> audio_to_video, video_to_audio;
};

struct DitWeights {
  std::optional<DitStreamWeights> video, audio;
  std::vector<DitBlockWeights> blocks;
};

// One stream's inputs (ltx_core Modality), tokens already patchified.
struct DitStreamInput {
  Tensor latent;          // [B, T, C]
  Tensor sigma;           // [B]
  Tensor timesteps;       // [B, T] or [B, T, 1]: σ·denoise_mask per token
  Tensor positions;       // [B, 3, T, 2] video (seconds, pixels) / [B, 1, T, 2] audio (seconds)
  Tensor context;         // [B, S, Dc]
  Tensor attention_mask;  // [B, T, T] in [0, 1] (appended conditioning tokens), or empty
  // σ per item when the caller holds it in float64 (res_2s substeps: ltx-core keeps such a σ in float64 until the
  // timestep embedding casts it): σ·multiplier (and the A<->V gate's factor) then round once from it. Empty: f32.
  std::vector<double> sigma_f64;
};

// Skip*: perturbations.py PerturbationType. Disable*: the stream's Modality.enabled = False (a guider skipping this
// step for one stream only): its blocks leave it unchanged, A<->V attention into it included, while it still feeds
// the other stream's A<->V attention (transformer.py run_vx / run_ax).
enum class Perturbation { SkipVideoSelfAttn, SkipAudioSelfAttn, SkipA2V, SkipV2A, DisableVideo, DisableAudio };
struct PerturbationSpec {
  Perturbation kind;
  std::optional<std::vector<int64_t>> blocks;  // absent: every block
};
using SamplePerturbations = std::vector<PerturbationSpec>;

struct DitCall {
  std::optional<DitStreamInput> video, audio;
  // One entry per batch item (guidance passes batched into one call), or empty for none.
  std::vector<SamplePerturbations> perturbations;
};

struct DitOutput {
  Tensor video_velocity, video_denoised, audio_velocity, audio_denoised;  // [B, T, C]; empty for an absent stream
  std::map<std::string, Tensor> intermediates;  // with collect_intermediates, by the reference's module paths
};

class Dit {
 public:
  // `loader` is rooted at the DiT's prefix ("model.diffusion_model."); the connectors' keys under it are ignored.
  // Calls loader.finish(): one error lists every missing, mis-shaped or unexpected key. Its calls run on `backend`.
  static Dit load(const WeightLoader& loader, const DitConfig& config, DType compute, const Backend& backend);

  DitOutput run(const DitCall& call, bool collect_intermediates = false);

  const DitConfig& config() const { return config_; }
  const DitWeights& weights() const { return weights_; }
  // The weights to change in place (LoRA fusion, lora_fuse.h). Drops the cached plans: they bind the old weights.
  DitWeights& weights_for_update() {
    plans_.clear();
    last_streamer_ = nullptr;
    return weights_;
  }
  const PlanCache& plans() const { return plans_; }  // one plan per call shape seen
  const Backend& backend() const { return plans_.backend(); }
  // The last call's plan: its arena holds the call's inputs too (latents, contexts, RoPE tables, timestep rows;
  // stats.input_bytes of stats.arena_bytes), so stats.arena_bytes is all the activation memory a call holds.
  const PlanStats& last_plan_stats() const { return last_plan_stats_; }
  // How calls hold the weights the checkpoint maps (graph/weight_streaming.h): nullopt leaves them to the OS (all
  // resident when memory allows); a policy keeps its first resident_bytes and streams the rest block by block.
  void set_weight_streaming(const std::optional<StreamingPolicy>& policy) { streaming_ = policy; }
  // The compiled plans' activation memory back to the OS until the next call (PlanCache::release_arena_pages).
  void release_activations() const { plans_.release_arena_pages(); }
  // The last call's plan's streamer (null when not streaming): its resident and streamed bytes.
  const WeightStreamer* last_streamer() const { return last_streamer_; }

 private:
  explicit Dit(const Backend& backend) : plans_(backend) {}

  DitConfig config_;
  DitWeights weights_;
  PlanCache plans_;
  PlanStats last_plan_stats_;
  std::optional<StreamingPolicy> streaming_;
  const WeightStreamer* last_streamer_ = nullptr;
};

}  // namespace ltx::ltxm
