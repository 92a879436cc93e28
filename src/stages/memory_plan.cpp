#include "stages/memory_plan.h"

#include <algorithm>
#include <cstdio>

#include "core/error.h"
#include "pipeline/latent_tools.h"

namespace ltx::stages {
namespace {

constexpr size_t kGiB = size_t{1} << 30;

std::string gib(size_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GiB", static_cast<double>(bytes) / static_cast<double>(kGiB));
  return text;
}

// Per-token bytes of one stream's block working set: the residual x (f32), its normalized and modulated copies,
// q, k, v and the attention output (bf16), the RoPE tables (f32 cos and sin) and the feed-forward's hidden
// activations (bf16, before and after the GELU); doubled where the compiled plan keeps two blocks' values alive.
size_t stream_bytes_per_token(int64_t dim) {
  const auto d = static_cast<size_t>(dim);
  return 4 * d + 2 * 2 * d + 4 * 2 * d + 2 * 4 * d + 2 * 2 * 4 * d;
}

size_t activation_for(const std::string& phase, const ltxm::DitConfig& dit, const RunShape& s,
                      size_t text_bytes_per_token) {
  if (phase == "text encoder") return static_cast<size_t>(2 * s.items * s.prompt_tokens) * text_bytes_per_token;
  if (phase == "transformer") return estimate_dit_activation_bytes(dit, s);
  if (phase == "upsampler") {
    const VideoLatentShape v =
        VideoLatentShape::from_pixels(s.items, dit.in_channels, s.frames, s.height / 2, s.width / 2);
    return static_cast<size_t>(v.tokens() * s.items) * 1024 * 4 * 4;  // mid channels 1024 (f32), a few alive
  }
  return estimate_decode_activation_bytes(s);
}

struct Need {
  MemoryPlan plan;
  size_t least = 0;  // the smallest budget this plan's streaming could run in
};

Need plan_for(const ltxm::DitConfig& dit, const PhaseWeights& w, const RunShape& s, size_t budget) {
  Need need;
  MemoryPlan& plan = need.plan;
  plan.budget_bytes = budget;
  plan.held_bytes = w.held_bytes;
  plan.reserve_bytes = unplanned_reserve_bytes(budget);
  const size_t kept = w.held_bytes + plan.reserve_bytes;  // not the phases'
  need.least = kept;
  budget = budget > kept ? budget - kept : 0;  // what the phases may use
  const std::pair<const char*, size_t> phases[] = {{"text encoder", w.text_encoder},
                                                   {"transformer", w.transformer},
                                                   {"upsampler", s.two_stage ? w.upsampler : 0},
                                                   {"decoders", w.decoders}};
  size_t all_weights = 0, max_activation = 0;
  for (const auto& [name, bytes] : phases) {
    if (bytes == 0 && std::string(name) != "transformer" && std::string(name) != "decoders") continue;
    PhaseMemory p;
    p.name = name;
    p.weight_bytes = bytes;
    p.unstreamed_bytes = std::string(name) == "text encoder" ? std::min(w.text_encoder_unstreamed, bytes) : 0;
    p.activation_bytes = activation_for(name, dit, s, w.text_bytes_per_token);
    // Two stages: the transformer's resident pages stay through the upsampler between the stages (stage 2 reads them
    // again), so the upsampler's mapped weights, the reordered copy its convolutions prepare from them and its
    // activations are alive beside them (measured at full size: 0.8 GiB of copies beside 0.9 GiB of weights).
    if (s.two_stage && std::string(name) == "transformer")
      p.activation_bytes += 2 * w.upsampler + activation_for("upsampler", dit, s, w.text_bytes_per_token);
    all_weights += bytes;
    max_activation = std::max(max_activation, p.activation_bytes);
    plan.phases.push_back(p);
  }
  plan.all_resident = all_weights + max_activation <= budget;
  for (PhaseMemory& p : plan.phases) {
    // The text encoder and the transformer stream (their plans run block by block); the others hold their weights.
    const bool streams = p.name == "text encoder" || p.name == "transformer";
    const size_t resident_need = p.weight_bytes + p.activation_bytes;
    if (plan.all_resident || resident_need <= budget || !streams) {
      p.resident_bytes = p.weight_bytes;
      need.least = std::max(need.least, kept + resident_need);
      continue;
    }
    plan.read_ahead_bytes = stream_read_ahead_bytes(budget);
    // The unstreamed weights are resident whatever the budget; the streamed plan keeps what is left of it.
    const size_t fixed = p.activation_bytes + plan.read_ahead_bytes;
    p.resident_bytes = std::max(p.unstreamed_bytes, budget > fixed ? std::min(p.weight_bytes, budget - fixed) : 0);
    p.streamed_bytes = p.weight_bytes - p.resident_bytes;
    need.least = std::max(need.least, kept + fixed + p.unstreamed_bytes);
  }
  return need;
}

}  // namespace

size_t unplanned_reserve_bytes(size_t budget) { return std::clamp(budget / 64, size_t{64} << 20, size_t{512} << 20); }

size_t stream_read_ahead_bytes(size_t budget) {
  return std::clamp(budget / 16, size_t{16} << 20, kStreamReadAheadBytes);
}

size_t estimate_dit_activation_bytes(const ltxm::DitConfig& dit, const RunShape& s) {
  const int64_t b = s.items * s.passes;
  const VideoLatentShape v = VideoLatentShape::from_pixels(b, dit.in_channels, s.frames, s.height, s.width);
  const AudioLatentShape a = AudioLatentShape::from_video(b, dit.audio_in_channels / 16, 16, s.frames, s.fps);
  const auto tokens_v = static_cast<size_t>(b * (v.tokens() + s.appended_video_tokens));
  const auto tokens_a = static_cast<size_t>(b * a.tokens());
  const auto ff_v = static_cast<size_t>(4 * dit.inner()), ff_a = static_cast<size_t>(4 * dit.audio_inner());
  size_t bytes = tokens_v * (stream_bytes_per_token(dit.inner()) + 2 * 2 * ff_v);
  if (dit.has_audio()) bytes += tokens_a * (stream_bytes_per_token(dit.audio_inner()) + 2 * 2 * ff_a);
  // The text contexts (f32) and one block's cross-attention keys and values (bf16), per stream.
  const auto context = static_cast<size_t>(b * 1024);
  bytes += context * static_cast<size_t>(dit.inner() + dit.audio_inner()) * (4 + 2 * 2);
  const auto masked = static_cast<size_t>(s.masked_stage_tokens);
  bytes += static_cast<size_t>(b) * masked * masked * 4 * 3;
  return bytes + (size_t{16} << 20);  // kernel scratch, modulation tables, latents
}

size_t estimate_decode_activation_bytes(const RunShape& s) {
  const auto pixels = static_cast<size_t>(s.items * s.frames * s.height * s.width);
  const auto samples = static_cast<size_t>(static_cast<double>(s.items * s.frames) / s.fps * 48000.0);
  return pixels * 3 * (4 + 1) + samples * 2 * 4 * 4 + (size_t{16} << 20);
}

size_t MemoryPlan::peak_bytes() const {
  if (all_resident) {
    size_t weights = 0, activations = 0;
    for (const PhaseMemory& p : phases) {
      weights += p.weight_bytes;
      activations = std::max(activations, p.activation_bytes);
    }
    return held_bytes + weights + activations;
  }
  size_t peak = held_bytes;
  for (const PhaseMemory& p : phases)
    peak =
        std::max(peak, held_bytes + p.resident_bytes + p.activation_bytes + (p.streamed_bytes ? read_ahead_bytes : 0));
  return peak;
}

const PhaseMemory* MemoryPlan::phase(const std::string& name) const {
  for (const PhaseMemory& p : phases)
    if (p.name == name) return &p;
  return nullptr;
}

std::string MemoryPlan::describe() const {
  std::string text = "memory plan: budget " + gib(budget_bytes) + ", planned peak " + gib(peak_bytes()) + " (" +
                     (held_bytes ? gib(held_bytes) + " already held, " : "") + gib(reserve_bytes) +
                     " kept free for what the plan does not model)" +
                     (all_resident ? ", all weights resident" : ", each phase's weights released before the next");
  for (const PhaseMemory& p : phases) {
    text += "\n  " + p.name + ": weights " + gib(p.weight_bytes) + " (" + gib(p.resident_bytes) + " resident";
    if (p.streamed_bytes) text += ", " + gib(p.streamed_bytes) + " streamed, " + gib(read_ahead_bytes) + " read ahead";
    text += "), activations ~" + gib(p.activation_bytes);
  }
  return text;
}

MemoryPlan plan_memory(const ltxm::DitConfig& dit, const PhaseWeights& weights, const RunShape& shape,
                       size_t budget_bytes) {
  const Need need = plan_for(dit, weights, shape, budget_bytes);
  if (need.least <= budget_bytes) return need.plan;
  // The largest size of the same aspect and frame count whose plan fits: widths in steps of 64 pixels.
  std::string fits = "none at " + std::to_string(shape.frames) + " frames";
  for (int64_t w = (shape.width / 64) * 64; w >= 64; w -= 64) {
    RunShape smaller = shape;
    smaller.width = w;
    smaller.height = std::max<int64_t>(64, (shape.height * w / shape.width) / 64 * 64);
    if (plan_for(dit, weights, smaller, budget_bytes).least <= budget_bytes) {
      fits = std::to_string(smaller.width) + "x" + std::to_string(smaller.height) + " at " +
             std::to_string(shape.frames) + " frames";
      break;
    }
  }
  fail("memory", std::to_string(shape.width) + "x" + std::to_string(shape.height) + "x" + std::to_string(shape.frames) +
                     " needs at least " + gib(need.least) + " (" + need.plan.describe() +
                     "\n) but the memory budget is " + gib(budget_bytes) + "; the largest size that fits: " + fits +
                     " (--memory-budget sets the budget)");
}

}  // namespace ltx::stages
