// `ltx generate`'s command line as the public API's options, request and output files (ltx/ltx.hpp), with the
// usage rules that are the command's own (one text source, --json or --sidecar, --two-stage's files).
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "commands.h"
#include "ltx/ltx.hpp"

namespace ltx::cli {

extern const char* const kGenerateUsage;

struct GenerateOptions {
  EngineOptions engine;
  GenerateRequest request;
  OutputFiles files;
  std::string progress = "text";  // text | json
  bool quiet = false;
  bool help = false;  // --help / -h: print the usage, nothing else
  int64_t repeat = 1;
  // No --checkpoint, --dit, --text-encoder or --text-embeddings: the embedded default model, and for each of
  // --frames, --height, --width and --steps not given, embedded_default_request()'s value.
  bool default_model = false;
};

// Parses and checks the arguments: an unknown option, a value that is not a number or is outside its range, and
// options that exclude each other fail here, naming the option and the valid range.
GenerateOptions parse_generate_options(Args args);

}  // namespace ltx::cli
