// Safetensors files: an 8-byte little-endian header length, a JSON header, then the raw tensor bytes.
// Format: https://github.com/huggingface/safetensors (README "Format"). Reading maps the file; tensors are
// zero-copy views that keep the mapping alive.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/mapped_file.h"
#include "core/tensor.h"

namespace ltx {

struct TensorInfo {
  std::string name;
  DType dtype = DType::F32;
  Shape shape;
  uint64_t begin = 0;  // byte range [begin, end) relative to the start of the data section
  uint64_t end = 0;
};

class SafetensorsFile {
 public:
  // Maps and validates the file; throws ltx::Error("safetensors", "<path>: <problem>") on any bad header.
  static SafetensorsFile open(const std::string& path);

  const std::string& path() const { return path_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }  // "__metadata__"
  const std::vector<TensorInfo>& tensors() const { return tensors_; }               // in name order
  bool contains(std::string_view name) const;
  const TensorInfo& info(std::string_view name) const;  // throws naming the tensor and file when absent
  // A zero-copy view borrowing the mapping, or an aligned owned copy when the bytes are misaligned.
  Tensor get(std::string_view name) const;

 private:
  std::string path_;
  std::shared_ptr<MappedFile> file_;
  std::shared_ptr<Storage> storage_;
  uint64_t data_start_ = 0;
  std::map<std::string, std::string> metadata_;
  std::vector<TensorInfo> tensors_;
};

// Safetensors dtype names ("F32", "BF16", ...) for the plain ltx dtypes; quantized types have none.
std::string_view safetensors_dtype_name(DType dtype);

// Writes tensors (any layout; plain dtypes) and string metadata. The file is written under a temporary name
// in the same folder and renamed into place, so a failure never leaves a partial file at `path`.
void write_safetensors(const std::string& path, std::span<const std::pair<std::string, Tensor>> tensors,
                       const std::map<std::string, std::string>& metadata = {});

}  // namespace ltx
