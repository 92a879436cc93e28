// ltx::embedded_default_model (ltx/options.hpp) and ltx::embedded_default_request (ltx/request.hpp): the tiny
// checkpoint of stages/default_model.h, made on first use, with the Gemma 3 270M GGUF.
#include "stages/default_model.h"

#include "api/error_phase.h"
#include "ltx/options.hpp"
#include "ltx/request.hpp"

namespace ltx {

EngineOptions embedded_default_model(bool* made) {
  return api::in_phase(
      ErrorCategory::InvalidModel,
      [&] {
        const std::string gguf = stages::find_default_text_encoder();
        if (gguf.empty())
          throw Error("default model", stages::default_text_encoder_missing_message(), ErrorCategory::InvalidModel);
        const stages::DefaultModelFile file = stages::ensure_default_model(gguf);
        if (made != nullptr) *made = file.made;
        EngineOptions options;
        options.checkpoint = file.path;
        options.text_encoder = gguf;
        return options;
      },
      ErrorCategory::Io);  // a cache folder or file that cannot be written
}

GenerateRequest embedded_default_request() {
  const stages::DefaultModelRequest d;
  GenerateRequest r;
  r.frames = d.frames;
  r.height = d.height;
  r.width = d.width;
  r.steps = d.steps;
  return r;
}

}  // namespace ltx
