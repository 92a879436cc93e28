#include "io/wav_write.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.h"
#include "io/atomic_file.h"

namespace ltx::io {
namespace {

void put16(std::vector<uint8_t>& b, uint32_t v) {
  b.push_back(static_cast<uint8_t>(v));
  b.push_back(static_cast<uint8_t>(v >> 8));
}
void put32(std::vector<uint8_t>& b, uint32_t v) {
  put16(b, v & 0xffff);
  put16(b, v >> 16);
}
void tag(std::vector<uint8_t>& b, const char* t) { b.insert(b.end(), t, t + 4); }

}  // namespace

void write_wav(const std::string& path, int64_t sample_rate, int64_t channels, std::span<const float> planar) {
  LTX_CHECK(sample_rate > 0 && channels > 0 && channels <= 16, "wav", path, ": bad sample rate ", sample_rate,
            " or channel count ", channels);
  LTX_CHECK(planar.size() % static_cast<size_t>(channels) == 0, "wav", path, ": ", planar.size(),
            " samples do not split into ", channels, " channels");
  const size_t n = planar.size() / static_cast<size_t>(channels);
  const uint64_t data_bytes = planar.size() * 2;
  LTX_CHECK(data_bytes + 36 <= 0xffffffffull, "wav", path, ": too long for a RIFF file");
  std::vector<uint8_t> b;
  b.reserve(44 + data_bytes);
  tag(b, "RIFF");
  put32(b, static_cast<uint32_t>(36 + data_bytes));
  tag(b, "WAVE");
  tag(b, "fmt ");
  put32(b, 16);
  put16(b, 1);  // PCM
  put16(b, static_cast<uint32_t>(channels));
  put32(b, static_cast<uint32_t>(sample_rate));
  put32(b, static_cast<uint32_t>(sample_rate * channels * 2));  // bytes per second
  put16(b, static_cast<uint32_t>(channels * 2));                // block align
  put16(b, 16);                                                 // bits per sample
  tag(b, "data");
  put32(b, static_cast<uint32_t>(data_bytes));
  for (size_t i = 0; i < n; ++i) {
    for (size_t c = 0; c < static_cast<size_t>(channels); ++c) {
      const float x = std::clamp(planar[c * n + i], -1.0f, 1.0f);  // NaN -> 0 below
      const long v = std::isnan(x) ? 0 : std::lrint(x * 32767.0f);
      put16(b, static_cast<uint32_t>(static_cast<uint16_t>(static_cast<int16_t>(v))));
    }
  }
  AtomicFile out(path);
  out.write(b.data(), b.size());
  out.commit();
}

}  // namespace ltx::io
