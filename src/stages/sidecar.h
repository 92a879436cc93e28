// The JSON sidecar of a generation (`ltx generate --sidecar FILE.json` or `--json`): what was asked (prompts,
// seed, model files with their sizes, every parameter after the model's defaults), what came out (sizes, outputs)
// and what it cost (seconds per stage, total, peak resident memory), with the engine's version.
#pragma once

#include <cstdint>
#include <string>

#include "io/json.h"
#include "stages/generate.h"

namespace ltx::stages {

// The engine's version string (CMake's project version).
const char* ltx_version();

// Peak resident set of this process so far, in bytes (getrusage).
int64_t peak_rss_bytes();

// `total_seconds`: wall time of the whole run so far.
Json sidecar_json(const GenerateRequest& request, const GenerateReport& report, double total_seconds);

}  // namespace ltx::stages
