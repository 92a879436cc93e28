// Named tensors a model loads from: one or more safetensors files (a single-file checkpoint, a sharded Hugging
// Face folder) or a GGUF file. Tensors stay zero-copy views of the mapped files.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/tensor.h"
#include "io/json.h"

namespace ltx {

class WeightSource {
 public:
  virtual ~WeightSource() = default;
  virtual std::vector<std::string> names() const = 0;  // sorted
  virtual bool contains(std::string_view name) const = 0;
  virtual DType dtype(std::string_view name) const = 0;
  virtual Shape shape(std::string_view name) const = 0;
  virtual Tensor get(std::string_view name) const = 0;
  // The string metadata of the file(s): safetensors "__metadata__" (e.g. the checkpoint's "config" JSON).
  virtual const std::map<std::string, std::string>& metadata() const = 0;
  virtual std::string describe() const = 0;  // the path(s), for error messages
  // The name the file itself gives a tensor, for error messages (differs when a source renames a layout).
  virtual std::string file_name(std::string_view name) const { return std::string(name); }
};

// The JSON held in a string metadata entry (e.g. the checkpoint's "config"); throws naming the source when absent
// or malformed.
Json metadata_json(const WeightSource& source, const std::string& key);

// One safetensors file, or several whose tensor names must not collide (shards).
std::shared_ptr<WeightSource> open_safetensors(const std::vector<std::string>& paths);
// A .safetensors file, or a folder of shards: those its *.safetensors.index.json names (each checked to exist and
// hold the tensors the index puts there), or without an index every *.safetensors file in it.
std::shared_ptr<WeightSource> open_safetensors(const std::string& path);
// A GGUF file; names are GGUF's own (e.g. "blk.0.attn_q.weight"), shapes outermost first.
std::shared_ptr<WeightSource> open_gguf(const std::string& path);

}  // namespace ltx
