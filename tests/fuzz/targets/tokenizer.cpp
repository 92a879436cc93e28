// Gemma 3's tokenizer on any text, valid UTF-8 or not (the prompt a user or a request sends): the ids must be in the
// vocabulary and decode back without fault. The vocabulary is the 270M GGUF's that scripts/setup installs (skipped
// without it), built once.
#include "models/gemma3/tokenizer.h"

#include <cstdlib>
#include <optional>
#include <string>

#include "core/error.h"
#include "fuzz_target.h"
#include "gemma3/gemma_paths.h"

namespace {

const ltx::gemma3::Tokenizer* vocabulary() {
  static const std::optional<ltx::gemma3::Tokenizer> tokenizer = []() -> std::optional<ltx::gemma3::Tokenizer> {
    const std::string path = ltx::gemma3::testing::real_gguf_path();
    if (path.empty()) return std::nullopt;
    return ltx::gemma3::Tokenizer::from_gguf(path);
  }();
  return tokenizer ? &*tokenizer : nullptr;
}

}  // namespace

LTX_FUZZ_TARGET(tokenizer) {
  const ltx::gemma3::Tokenizer* tok = vocabulary();
  if (tok == nullptr) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const std::vector<int32_t> ids = tok->encode(text);
    for (int32_t id : ids)
      if (id < 0 || id >= tok->vocab_size()) std::abort();  // an id outside the vocabulary would index past it
    (void)tok->decode(ids, false);
    (void)tok->decode(ids, true);
  } catch (const ltx::Error&) {
  }
  return 0;
}
