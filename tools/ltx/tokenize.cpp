// `ltx tokenize PROMPT... (--gguf FILE | --tokenizer PATH) [--max-length N] [--pieces]`: the Gemma-3 token ids of
// each prompt as LTX feeds them to the text encoder (stripped, one leading <bos>, truncated to N, default 1024;
// padding not shown), one line per prompt.
#include <cstdio>
#include <string>
#include <vector>

#include "commands.h"
#include "core/error.h"
#include "models/gemma3/tokenizer.h"

namespace ltx::cli {

int tokenize(Args args) {
  std::string gguf, tokenizer_path;
  int64_t max_length = 1024;
  bool pieces = false;
  std::vector<std::string> prompts;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string a = args[i];
    const auto value = [&]() -> std::string {
      LTX_CHECK(i + 1 < args.size(), "tokenize", a, " needs a value");
      return args[++i];
    };
    if (a == "--gguf") {
      gguf = value();
    } else if (a == "--tokenizer") {
      tokenizer_path = value();
    } else if (a == "--max-length") {
      max_length = std::stoll(value());
    } else if (a == "--pieces") {
      pieces = true;
    } else {
      prompts.push_back(a);
    }
  }
  LTX_CHECK(!gguf.empty() != !tokenizer_path.empty(), "tokenize",
            "usage: ltx tokenize PROMPT... (--gguf FILE | --tokenizer tokenizer.json|FOLDER) [--max-length N] "
            "[--pieces]");
  LTX_CHECK(!prompts.empty(), "tokenize", "no prompt given");
  const gemma3::Tokenizer tok =
      gguf.empty() ? gemma3::Tokenizer::load(tokenizer_path) : gemma3::Tokenizer::from_gguf(gguf);
  for (const std::string& p : prompts) {
    const std::vector<int32_t> ids = tok.encode_prompt(p, max_length);
    std::printf("%zu:", ids.size());
    for (int32_t id : ids) {
      if (pieces)
        std::printf(" %d=%.*s", id, static_cast<int>(tok.piece(id).size()), tok.piece(id).data());
      else
        std::printf(" %d", id);
    }
    std::printf("\n");
  }
  return 0;
}

}  // namespace ltx::cli
