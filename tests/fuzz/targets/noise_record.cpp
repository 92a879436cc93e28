// A noise recording (`--replay-noise FILE`: pipeline/noise.h NoiseReplayer::load): a safetensors file of
// noise.NNNN tensors, each then asked for at its recorded shape.
#include "core/error.h"
#include "fuzz_target.h"
#include "io/safetensors.h"
#include "pipeline/noise.h"

LTX_FUZZ_TARGET(noise_record) {
  static ltx::fuzz::InputFile file("noise_record");
  try {
    const std::string& path = file.write(data, size);
    ltx::NoiseReplayer replay = ltx::NoiseReplayer::load(path);
    const ltx::SafetensorsFile st = ltx::SafetensorsFile::open(path);
    for (size_t i = 0; i < replay.size(); ++i) {
      const ltx::TensorInfo& t = st.info(ltx::noise_tensor_name(i));
      (void)replay.randn(t.shape, ltx::DType::F32);
    }
  } catch (const ltx::Error&) {
  }
  return 0;
}
