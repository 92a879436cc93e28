#include "nn/weight_source.h"

#include <algorithm>
#include <filesystem>

#include "core/error.h"
#include "io/gguf.h"
#include "io/safetensors.h"

namespace ltx {
namespace {

class SafetensorsSource : public WeightSource {
 public:
  explicit SafetensorsSource(const std::vector<std::string>& paths) {
    LTX_CHECK(!paths.empty(), "weights", "no safetensors files given");
    for (const auto& p : paths) {
      files_.push_back(SafetensorsFile::open(p));
      const size_t index = files_.size() - 1;
      for (const TensorInfo& t : files_.back().tensors()) {
        auto [it, fresh] = where_.emplace(t.name, index);
        LTX_CHECK(fresh, "weights", "tensor '", t.name, "' is in both ", files_[it->second].path(), " and ", p);
      }
      for (const auto& [k, v] : files_.back().metadata()) metadata_.emplace(k, v);
      description_ += (description_.empty() ? "" : ", ") + p;
    }
  }
  std::vector<std::string> names() const override {
    std::vector<std::string> n;
    for (const auto& [name, i] : where_) n.push_back(name);
    return n;
  }
  bool contains(std::string_view name) const override { return where_.count(std::string(name)) != 0; }
  DType dtype(std::string_view name) const override { return file(name).info(name).dtype; }
  Shape shape(std::string_view name) const override { return file(name).info(name).shape; }
  Tensor get(std::string_view name) const override { return file(name).get(name); }
  const std::map<std::string, std::string>& metadata() const override { return metadata_; }
  std::string describe() const override { return description_; }

 private:
  const SafetensorsFile& file(std::string_view name) const {
    auto it = where_.find(std::string(name));
    LTX_CHECK(it != where_.end(), "weights", describe(), ": no tensor '", name, "'");
    return files_[it->second];
  }
  std::vector<SafetensorsFile> files_;
  std::map<std::string, size_t> where_;
  std::map<std::string, std::string> metadata_;
  std::string description_;
};

class GgufSource : public WeightSource {
 public:
  explicit GgufSource(const std::string& path) : file_(GGUFFile::open(path)), path_(path) {
    for (const auto& t : file_.tensors()) names_.push_back(t.name);
    std::sort(names_.begin(), names_.end());
    // String entries double as metadata, so a DiT GGUF that carries the checkpoint's "config" (as the LTX-2 GGUFs
    // made for ComfyUI-GGUF do, its PR #399) configures itself like a safetensors checkpoint.
    for (const auto& [key, value] : file_.metadata())
      if (value.type() == GGUFType::String) metadata_.emplace(key, value.as_string());
  }
  std::vector<std::string> names() const override { return names_; }
  bool contains(std::string_view name) const override {
    return std::binary_search(names_.begin(), names_.end(), std::string(name));
  }
  DType dtype(std::string_view name) const override { return get(name).dtype(); }
  Shape shape(std::string_view name) const override { return get(name).shape(); }
  // ComfyUI-GGUF (tools/convert.py) may store a tensor flattened and record its shape as an i32 array
  // "comfy.gguf.orig_shape.<name>"; plain tensors are viewed in that shape, block-quantized ones only when their
  // rows keep their length.
  Tensor get(std::string_view name) const override {
    Tensor t = file_.get(name);
    const GGUFValue* orig = file_.find("comfy.gguf.orig_shape." + std::string(name));
    if (orig == nullptr) return t;
    std::vector<int64_t> dims;
    const GGUFArray& a = orig->as_array();
    LTX_CHECK(a.elem_type() == GGUFType::I32, "weights", path_, ": comfy.gguf.orig_shape.", name,
              " is not an array of i32");
    for (int32_t d : std::get<std::vector<int32_t>>(a.values)) dims.push_back(d);
    const Shape shape{std::span<const int64_t>(dims)};
    LTX_CHECK(shape.numel() == t.numel() && (!dtype_is_quantized(t.dtype()) || shape.dim(-1) == t.shape().dim(-1)),
              "weights", path_, ": tensor '", name, "' stored as ", t.shape().str(), " cannot take its original shape ",
              shape.str());
    return t.reshape(shape);
  }
  const std::map<std::string, std::string>& metadata() const override { return metadata_; }
  std::string describe() const override { return path_; }

 private:
  GGUFFile file_;
  std::string path_;
  std::vector<std::string> names_;
  std::map<std::string, std::string> metadata_;
};

}  // namespace

Json metadata_json(const WeightSource& source, const std::string& key) {
  const auto it = source.metadata().find(key);
  LTX_CHECK(it != source.metadata().end(), "weights", source.describe(), ": no `", key, "` metadata");
  return parse_json(it->second, source.describe() + " " + key);
}

std::shared_ptr<WeightSource> open_safetensors(const std::vector<std::string>& paths) {
  return std::make_shared<SafetensorsSource>(paths);
}

std::shared_ptr<WeightSource> open_safetensors(const std::string& path) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(path)) return open_safetensors(std::vector<std::string>{path});
  std::vector<std::string> shards;
  for (const auto& e : fs::directory_iterator(path))
    if (e.is_regular_file() && e.path().extension() == ".safetensors") shards.push_back(e.path().string());
  std::sort(shards.begin(), shards.end());
  LTX_CHECK(!shards.empty(), "weights", path, ": no .safetensors files in this folder");
  return open_safetensors(shards);
}

std::shared_ptr<WeightSource> open_gguf(const std::string& path) { return std::make_shared<GgufSource>(path); }

}  // namespace ltx
