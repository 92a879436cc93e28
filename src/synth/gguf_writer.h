// A streaming GGUF v3 writer (ggml/docs/gguf.md): metadata of any GGUF value type, tensor infos, and tensor data
// encoded from f32 values a callback produces, chunk by chunk, so a tensor of any size is written in bounded
// memory. The file is written to "<path>.partial" and renamed into place once complete. Tensors without a
// callback are all-zero bytes left as holes in a sparse file (zero bytes decode to 0.0 in f32/f16/bf16 and in
// every block type ltx writes: their scales are zero). The reader is io/gguf.h.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/dtype.h"
#include "core/shape.h"
#include "io/gguf_value.h"

namespace ltx::synth {

// Writes elements [first, first + count) of a tensor, in row-major order (outermost dimension first), to out.
// Called from several threads at once for disjoint ranges.
using GGUFFillFn = std::function<void(int64_t first, int64_t count, float* out)>;

class GGUFWriter {
 public:
  // `alignment` (a power of two) is written as general.alignment when it is not GGUF's default of 32.
  explicit GGUFWriter(uint32_t alignment = 32);
  GGUFWriter(const GGUFWriter&) = delete;  // string-array values are views of this writer's own storage
  GGUFWriter& operator=(const GGUFWriter&) = delete;

  // Metadata, in the order added; a key added twice throws. String-array elements are copied, so `value` may
  // view another file's mapping.
  void add(const std::string& key, const GGUFValue& value);
  void add_u32(const std::string& key, uint32_t v);
  void add_i32(const std::string& key, int32_t v);
  void add_f32(const std::string& key, float v);
  void add_bool(const std::string& key, bool v);
  void add_string(const std::string& key, const std::string& v);
  void add_strings(const std::string& key, const std::vector<std::string>& v);
  void add_i32s(const std::string& key, const std::vector<int32_t>& v);
  void add_f32s(const std::string& key, const std::vector<float>& v);

  // A tensor: `shape` outermost first (stored innermost first, as ggml's ne), `dtype` f32, f16, bf16 or a GGUF
  // block type whose block divides the innermost dimension (at most 4 dimensions). An empty `fill` writes zeros.
  void add_tensor(std::string name, const Shape& shape, DType dtype, GGUFFillFn fill = {});

  size_t tensor_count() const { return tensors_.size(); }
  // Size of the file write() produces.
  uint64_t file_bytes() const;

  // Writes the file (via "<path>.partial", renamed at the end; removed on failure) and returns its size.
  // `progress`, when set, gets a line at the start, about every 5% of the data, and at the end.
  uint64_t write(const std::string& path, const std::function<void(const std::string&)>& progress = {}) const;

  // The f32 values buffered per chunk while encoding (two encoded chunks may be in flight besides): a few tens
  // of MB whatever the tensor's size.
  static constexpr int64_t kChunkElems = int64_t{8} << 20;

 private:
  struct PendingTensor {
    std::string name;
    Shape shape;
    DType dtype;
    GGUFFillFn fill;
    uint64_t offset = 0;  // from the start of the data section
    uint64_t bytes = 0;
  };

  std::string header() const;  // everything before the data section, padded to the alignment
  void write_tensor(int fd, uint64_t at, const PendingTensor& t, const std::function<void(uint64_t)>& done) const;

  uint32_t alignment_;
  std::vector<std::pair<std::string, GGUFValue>> metadata_;
  std::deque<std::string> strings_;  // storage behind string-array views (a deque keeps them in place)
  std::set<std::string, std::less<>> keys_;
  std::vector<PendingTensor> tensors_;
  std::set<std::string, std::less<>> tensor_names_;
  uint64_t data_bytes_ = 0;  // end of the last tensor, from the start of the data section
};

}  // namespace ltx::synth
