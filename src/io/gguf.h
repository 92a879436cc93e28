// GGUF files (versions 2 and 3): typed metadata, tensor infos and zero-copy tensor views.
// Format: ggml/docs/gguf.md. Shapes are outermost-first, the reverse of ggml's ne order, so a ggml weight
// with ne = [K, N] is Shape{N, K} as in PyTorch.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/mapped_file.h"
#include "core/tensor.h"
#include "io/gguf_value.h"

namespace ltx {

struct GGUFTensorInfo {
  std::string name;
  uint32_t ggml_type = 0;      // ggml_type id as stored
  std::optional<DType> dtype;  // empty when ltx cannot read this type
  Shape shape;                 // outermost first
  uint64_t offset = 0;         // bytes from the start of the data section
  uint64_t bytes = 0;          // 0 when the type's size is unknown
};

// The ggml type's name ("q4_k", "q5_0", ...) or "type <id>" when unknown.
std::string ggml_type_name(uint32_t ggml_type);
// The ggml type id that stores `t` in a GGUF file (f32 0, q8_0 8, bf16 30, ...); empty for dtypes GGUF has no
// type ltx reads for (i32, fp8, ...).
std::optional<uint32_t> ggml_type_of(DType t);

class GGUFFile {
 public:
  // Maps and validates the file; throws ltx::Error("gguf", "<path>: <problem>").
  static GGUFFile open(const std::string& path);
  // The same, parsed once per process and shared while the file keeps its size and modification time (a Gemma
  // GGUF's metadata holds its 262k-piece vocabulary: a parse takes 2-5 ms, string elements being views of the
  // mapping and numeric arrays one copy each, and a load reads it four times).
  static std::shared_ptr<const GGUFFile> open_shared(const std::string& path);

  const std::string& path() const { return path_; }
  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_start_; }  // file offset of the data section
  const std::map<std::string, GGUFValue, std::less<>>& metadata() const { return metadata_; }
  const GGUFValue* find(std::string_view key) const;                       // nullptr when absent
  const GGUFValue& value(std::string_view key) const;                      // throws naming the key and file when absent
  const std::vector<GGUFTensorInfo>& tensors() const { return tensors_; }  // in file order
  bool contains(std::string_view name) const;
  const GGUFTensorInfo& info(std::string_view name) const;
  // A zero-copy view; throws naming the tensor and its type when ltx does not support that type.
  Tensor get(std::string_view name) const;

 private:
  std::string path_;
  std::shared_ptr<MappedFile> file_;
  std::shared_ptr<Storage> storage_;
  uint32_t version_ = 0;
  uint64_t alignment_ = 32;
  uint64_t data_start_ = 0;
  std::map<std::string, GGUFValue, std::less<>> metadata_;
  std::vector<GGUFTensorInfo> tensors_;
  std::map<std::string, size_t, std::less<>> index_;
};

}  // namespace ltx
