// The whole run's memory, planned before any heavy work. A generation runs in phases (text encoder, transformer,
// upsampler, decoders) whose weights stay in their mapped files; the plan decides, against the budget (default:
// MemAvailable), whether all phases' weights stay resident, or each phase's pages are dropped before the next, and
// within a phase how much of its weights stays resident while the rest streams block by block from the file
// (graph/weight_streaming.h). A request whose smallest plan does not fit is refused at once, naming the memory it
// would need and the largest size that fits.
//
// Activations are estimated here from the shapes (the DiT's per-token working set, the decoded video); the compiled
// plans know their exact peaks, and the streamed phases size their resident share with them (stages/generate.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "models/ltx/dit/dit_config.h"

namespace ltx::stages {

// Weight bytes each phase reads from its files, and the text encoder's activation bytes per prompt token (its
// hidden states, all layers, plus a layer's working set).
struct PhaseWeights {
  size_t text_encoder = 0, transformer = 0, upsampler = 0, decoders = 0;
  // Of text_encoder, the weights read whole even when the phase streams: the feature extractor and the connectors,
  // whose plans run from the checkpoint unstreamed (only Gemma's plan streams).
  size_t text_encoder_unstreamed = 0;
  size_t text_bytes_per_token = 0;
  size_t held_bytes = 0;  // what the process already holds outside the weight files (core/mapped_file.h)
};

// What a request asks for, in the terms memory depends on.
struct RunShape {
  int64_t items = 1;   // generations in the batch
  int64_t passes = 1;  // guidance passes batched into one DiT call (cond, uncond, perturbed, isolated)
  int64_t frames = 121, height = 512, width = 768;
  double fps = 24.0;
  bool two_stage = false;
  int64_t prompt_tokens = 1024;  // Gemma's longest real prompt length (1024 when unknown)
  // Conditioning tokens appended to each item's video at the full-size stage (keyframes), and the video token count
  // of a stage that carries a [T, T] self-attention mask (IC-LoRA's weighted references; 0: none): the mask, its
  // log-space bias and the batched copy each hold T² f32 per item and pass.
  int64_t appended_video_tokens = 0;
  int64_t masked_stage_tokens = 0;
};

struct PhaseMemory {
  std::string name;
  size_t weight_bytes = 0;      // the phase's weights
  size_t activation_bytes = 0;  // its activation peak (estimated)
  size_t resident_bytes = 0;    // weights kept in memory through the phase (the unstreamed ones included)
  size_t streamed_bytes = 0;    // weights read from the file on every call (the rest)
  size_t unstreamed_bytes = 0;  // weights read whole even when streaming (PhaseWeights::text_encoder_unstreamed)
};

struct MemoryPlan {
  size_t budget_bytes = 0;
  size_t held_bytes = 0;     // already held before the run (PhaseWeights::held_bytes), counted against the budget
  size_t reserve_bytes = 0;  // kept free within the budget for what the plan does not model (unplanned_reserve_bytes)
  bool all_resident = true;  // every phase's weights stay; false: each phase's pages go before the next
  size_t read_ahead_bytes = 0;  // streamed phases read this far ahead of the step that needs the bytes
  std::vector<PhaseMemory> phases;
  size_t peak_bytes() const;     // the largest phase's (or all weights + the largest activations)
  std::string describe() const;  // one line per phase
  const PhaseMemory* phase(const std::string& name) const;
};

// What a plan keeps free within the budget for what it does not model: the allocator's slack (memory freed but kept
// by malloc), thread stacks, the libraries' own buffers (oneDNN, FFmpeg's encoders), pages the kernel maps around a
// read. A budget is a limit, not a target (a container's hard limit kills a process 1 MB over): the phases plan
// within budget - held - this. A sixty-fourth of the budget, within [64 MiB, 512 MiB].
size_t unplanned_reserve_bytes(size_t budget_bytes);

// The read-ahead a streamed phase uses (and the least memory it needs beyond its activations): a sixteenth of the
// budget, within [16 MiB, kStreamReadAheadBytes].
inline constexpr size_t kStreamReadAheadBytes = size_t{1} << 30;
size_t stream_read_ahead_bytes(size_t budget_bytes);

// The DiT's activation peak for one call at this shape, estimated from its working set per token (the residual
// stream in f32; norms, projections, attention and feed-forward in bf16; RoPE tables), the text context and the
// latents.
size_t estimate_dit_activation_bytes(const ltxm::DitConfig& dit, const RunShape& shape);
// The decoders' least activation memory: the decoded video in f32 (a tiled decode still returns the whole video)
// plus its 8-bit frames, and the waveform.
size_t estimate_decode_activation_bytes(const RunShape& shape);

// Plans the run; throws ltx::Error (OutOfMemory category at the API) when even the all-streaming plan exceeds the
// budget, naming what it needs and the largest width x height (same aspect and frames) that fits.
MemoryPlan plan_memory(const ltxm::DitConfig& dit, const PhaseWeights& weights, const RunShape& shape,
                       size_t budget_bytes);

}  // namespace ltx::stages
