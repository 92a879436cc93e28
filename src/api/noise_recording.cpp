#include "api/noise_recording.h"

#include "io/safetensors.h"

namespace ltx {

void NoiseRecording::save(const std::string& path) const {
  write_safetensors(path, entries_, {{"seed", std::to_string(seed_)}});
}

}  // namespace ltx
