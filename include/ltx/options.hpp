// What an ltx::Engine loads once and keeps resident: the model files, LoRAs, precision, threads and the memory
// budget. Paths are as users name the published files (README "Running the released models").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ltx {

enum class Precision {
  Production,  // bf16 weights and activations (or the file's quantized weights), f32 accumulation
  Validation,  // f32 everywhere: the precision the golden cases are compared in
};

struct LoraFile {
  std::string path;
  float strength = 1.0f;
};

struct EngineOptions {
  std::string checkpoint;    // official single-file .safetensors: DiT, video VAE, audio VAE, vocoder, text projection
  std::string dit;           // the DiT from this file instead: official single file, fp8, Diffusers folder or GGUF
  std::string dit_config;    // the configuration of a GGUF DiT that carries none (default: the checkpoint's)
  std::string text_encoder;  // Gemma 3: a GGUF file or a Hugging Face folder; empty: requests give text_embeddings
  // The vision tower of a GGUF text encoder (a llama.cpp mmproj .gguf), for prompt enhancement with an image; a
  // Hugging Face folder brings its own. Loaded on first use.
  std::string text_encoder_mmproj;
  std::string upsampler;                   // the x2 spatial upsampler, for two-stage requests
  std::vector<LoraFile> loras;             // fused into the DiT at load, every stage
  std::optional<LoraFile> distilled_lora;  // the stage-2 refine of two-stage requests
  // The distilled LoRA in stage 1 too, at this strength (the official HQ pipeline: 0.25 with 0.5 in stage 2); unset:
  // stage 1 runs without it. Needs distilled_lora.
  std::optional<float> distilled_lora_stage1_strength;
  bool lora_allow_partial = false;  // skip LoRA keys that name no DiT layer instead of failing
  Precision precision = Precision::Production;
  // Worker threads of the process-wide pool; 0: $LTX_THREADS, else every core. The pool is shared by every engine
  // of the process: the last engine made sets it.
  int threads = 0;
  // The memory budget of the whole run (load, text encoder, transformer, upsampler, decoders: stages/memory_plan.h);
  // 0: what the machine has available (MemAvailable) at load and at each generate() call. LoRAs are fused into
  // copies of the matrices they touch when those copies take at most a quarter of it, else applied unfused.
  uint64_t memory_budget_bytes = 0;
  // GGUF-quantized weights (Q8_0, Q4_0, Q5_0, Q4_K, Q5_K; Q6_K for 1-4 rows) multiply activations quantized to int8
  // per block of 32, in integers (AVX512_VNNI; ignored on CPUs without it): faster, less exact than decoding the
  // weights to bf16. Process-wide, like threads.
  bool int8_activations = false;
  // What every compiled plan of this engine runs on: "cpu", the engine's own kernels, or "xla", each graph compiled
  // by XLA through a PJRT plugin (available_backends() lists what this build has). Per engine: two engines of one
  // process may run on different backends.
  std::string backend = "cpu";
  // The PJRT plugin the "xla" backend loads (a shared library: XLA's CPU plugin, jax-cuda13-pjrt's for NVIDIA GPUs,
  // libtpu); empty: $LTX_XLA_PLUGIN, else the CPU plugin scripts/setup installed. Ignored by other backends.
  std::string xla_plugin;
};

// The backends EngineOptions::backend can name in this build.
std::vector<std::string> available_backends();

// "8G", "8GiB", "1.5g", "512M", "300MB", "65536K" or a count of bytes: binary units (K = 1024), case-insensitive,
// no sign, spaces or exponent (what `ltx generate --memory-budget` and the C API's "memory_budget" take). Throws
// ltx::Error (InvalidRequest) on anything else, on less than one byte and on 2^64 bytes or more, the message
// starting with `name` and the text ("memory_budget '8X': unknown unit 'X' (examples: ...)").
uint64_t parse_size(std::string_view text, std::string_view name = "size");

// "FILE" or "FILE:STRENGTH" (`ltx generate --lora`, the C API's "lora"): the part after the last ':' is the
// strength only when it is a whole finite number, so paths with colons still work. Throws ltx::Error
// (InvalidRequest) naming `name` when no file is left.
LoraFile parse_lora_file(std::string_view text, std::string_view name = "lora");

// The embedded default model: a tiny, untrained LTX-2.3-shaped checkpoint (made deterministically on first use in
// $LTX_CACHE_DIR, $XDG_CACHE_HOME/ltx or ~/.cache/ltx) with the Gemma 3 270M GGUF that scripts/setup installs
// ($LTX_GEMMA_GGUF overrides). Throws ltx::Error (InvalidModel) saying how to install the GGUF when it is absent.
// `made` (optional) tells whether this call wrote the checkpoint.
EngineOptions embedded_default_model(bool* made = nullptr);

}  // namespace ltx
