// The `ltx` command line.
#include <cstdio>
#include <exception>
#include <string_view>
#include <vector>

#include "commands.h"
#include "core/malloc_policy.h"
#include "core/openmp_env.h"
#include "ltx/engine.hpp"

namespace ltx::cli {

std::span<const Command> commands() {
  static const std::vector<Command> table = {
      // One line per subcommand, e.g. {"inspect", "list a file's tensors and metadata", inspect},
      {"inspect", "list a model file's metadata and tensors (safetensors or GGUF)", inspect},
      {"compare", "per-tensor errors between two safetensors files", compare},
      {"compare-media", "PSNR/SSIM of two clips' frames, rel L2/cosine of their audio", compare_media},
      {"selfcheck", "check every optimized kernel against its reference on this CPU", selfcheck},
      {"encode", "text contexts (and Gemma hidden states) of prompts for a checkpoint, to safetensors", encode},
      {"verify", "run the golden cases below the given folders against the engine", verify},
      {"generate", "text to video with audio: an MP4 (H.264 + AAC) from a checkpoint", generate},
      {"serve", "the engine behind an HTTP API (OpenAI-style videos jobs, events, downloads)", serve},
      {"enhance", "a prompt rewritten by Gemma 3 as the official --enhance-prompt does", enhance},
      {"tokenize", "Gemma-3 token ids of prompts as LTX encodes them (--gguf FILE or --tokenizer)", tokenize},
      {"synth", "full-size stand-in weights with a released file's exact layout (bf16, fp8, GGUF, HF)", synth},
      {"bench", "our side of the DiT slice and decode benchmarks (--dit-slice, --vae-decode)", bench},
  };
  return table;
}

}  // namespace ltx::cli

namespace {

void usage(std::FILE* to) {
  std::fprintf(to, "usage: ltx <command> [args...]\n       ltx --version\n\ncommands:\n");
  for (const auto& c : ltx::cli::commands())
    std::fprintf(to, "  %-10.*s %.*s\n", static_cast<int>(c.name.size()), c.name.data(),
                 static_cast<int>(c.summary.size()), c.summary.data());
}

}  // namespace

int main(int argc, char** argv) {
  ltx::ensure_passive_openmp_wait(argv);
  ltx::return_large_buffers_to_system();
  if (argc >= 2 && std::string_view(argv[1]) == "--version") {
    std::printf("ltx %s\n", ltx::version());
    return 0;
  }
  if (argc < 2 || std::string_view(argv[1]) == "help" || std::string_view(argv[1]) == "--help") {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  for (const auto& c : ltx::cli::commands()) {
    if (c.name != argv[1]) continue;
    try {
      return c.run(ltx::cli::Args(argv + 2, static_cast<size_t>(argc - 2)));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ltx %s: %s\n", argv[1], e.what());
      return 1;
    }
  }
  std::fprintf(stderr, "ltx: unknown command '%s'\n", argv[1]);
  usage(stderr);
  return 2;
}
