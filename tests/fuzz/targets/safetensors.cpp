// The safetensors reader (io/safetensors.h): the 8-byte header length, the JSON header (dtypes, shapes, offsets,
// __metadata__), then every tensor's bytes read as floats (a wrong range would read outside the mapping).
#include "io/safetensors.h"

#include "core/error.h"
#include "fuzz_target.h"

LTX_FUZZ_TARGET(safetensors) {
  static ltx::fuzz::InputFile file("safetensors");
  try {
    const ltx::SafetensorsFile st = ltx::SafetensorsFile::open(file.write(data, size));
    double sum = 0.0;
    for (const auto& [key, value] : st.metadata()) sum += static_cast<double>(key.size() + value.size());
    for (const ltx::TensorInfo& t : st.tensors())
      if (t.shape.numel() <= (int64_t{1} << 20))
        for (float v : st.get(t.name).to_floats()) sum += v;
    return sum == 0.5 ? 1 : 0;  // keeps the reads
  } catch (const ltx::Error&) {
    return 0;
  }
}
