// Record and replay of noise draws: whole-pipeline goldens record every noise tensor the reference draws, and
// the engine replays them so the comparison tests the model, not the RNG (DESIGN.md, "Numerics reference").
#include <cstdio>

#include "core/error.h"
#include "io/safetensors.h"
#include "pipeline/noise.h"

namespace ltx {
namespace {

constexpr const char* kPrefix = "noise.";

// The index in "noise.0042", or nothing when the name is not of that form.
std::optional<size_t> parse_noise_index(const std::string& name) {
  const std::string prefix = kPrefix;
  if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) return std::nullopt;
  size_t index = 0;
  for (size_t i = prefix.size(); i < name.size(); ++i) {
    const char c = name[i];
    if (c < '0' || c > '9' || i - prefix.size() > 9) return std::nullopt;
    index = index * 10 + static_cast<size_t>(c - '0');
  }
  if (noise_tensor_name(index) != name) return std::nullopt;  // no stray leading zeros or short forms
  return index;
}

}  // namespace

std::string noise_tensor_name(size_t index) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%s%04zu", kPrefix, index);
  return buffer;
}

Tensor NoiseRecorder::randn(const Shape& shape, DType dtype) {
  Tensor t = source_.randn(shape, dtype);
  // A clone, so a caller that writes into the returned noise in place cannot change the record.
  entries_.emplace_back(noise_tensor_name(entries_.size()), t.clone());
  return t;
}

void NoiseRecorder::save(const std::string& path, const std::map<std::string, std::string>& metadata) const {
  write_safetensors(path, entries_, metadata);
}

NoiseReplayer::NoiseReplayer(std::span<const std::pair<std::string, Tensor>> entries) {
  tensors_.resize(entries.size());
  std::string problems;
  for (const auto& [name, tensor] : entries) {
    const std::optional<size_t> index = parse_noise_index(name);
    if (!index || *index >= entries.size()) {
      problems += "\n  unexpected tensor '" + name + "' (want noise.0000 .. " +
                  noise_tensor_name(entries.size() ? entries.size() - 1 : 0) + ")";
    } else if (tensors_[*index].defined()) {
      problems += "\n  duplicate tensor '" + name + "'";
    } else {
      tensors_[*index] = tensor;
    }
  }
  for (size_t i = 0; i < tensors_.size() && problems.empty(); ++i)
    LTX_CHECK(tensors_[i].defined(), "noise", "recording lacks ", noise_tensor_name(i));
  LTX_CHECK(problems.empty(), "noise", "bad noise recording:", problems);
}

NoiseReplayer NoiseReplayer::load(const std::string& path) {
  const SafetensorsFile file = SafetensorsFile::open(path);
  std::vector<std::pair<std::string, Tensor>> entries;
  entries.reserve(file.tensors().size());
  for (const TensorInfo& info : file.tensors()) entries.emplace_back(info.name, file.get(info.name));
  try {
    return NoiseReplayer(entries);
  } catch (const Error& e) {
    fail("noise", path + ": " + e.what());
  }
}

Tensor NoiseReplayer::randn(const Shape& shape, DType dtype) {
  LTX_CHECK(next_ < tensors_.size(), "noise", "replay exhausted: draw ", next_, " asks for ", dtype_name(dtype),
            shape.str(), " but only ", tensors_.size(), " tensors were recorded");
  const Tensor& t = tensors_[next_];
  LTX_CHECK(t.shape() == shape && t.dtype() == dtype, "noise", "replay mismatch at ", noise_tensor_name(next_),
            ": the pipeline asks for ", dtype_name(dtype), shape.str(), " but the recording holds ", t.describe());
  ++next_;
  // A copy, so the caller may modify it without touching the recording (or a read-only file mapping).
  return t.clone();
}

}  // namespace ltx
