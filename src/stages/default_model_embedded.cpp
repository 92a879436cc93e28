// src/stages/default_model.safetensors linked into the library (core/embedded_file.h). CMakeLists.txt passes the
// folder as LTX_STAGES_DIR and lists the file as this source's OBJECT_DEPENDS.
#include "core/embedded_file.h"
#include "stages/default_model.h"

#ifndef LTX_STAGES_DIR
#error "LTX_STAGES_DIR must name the src/stages folder (CMakeLists.txt sets it)"
#endif

LTX_EMBED_FILE(ltx_default_model, LTX_STAGES_DIR "/default_model.safetensors")

namespace ltx::stages {

std::span<const uint8_t> embedded_default_checkpoint() {
  return {reinterpret_cast<const uint8_t*>(ltx_default_model_begin),
          static_cast<size_t>(ltx_default_model_end - ltx_default_model_begin)};
}

}  // namespace ltx::stages
