#include "nn/weight_source.h"

#include <algorithm>
#include <filesystem>

#include "core/error.h"
#include "io/gguf.h"
#include "io/json.h"
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

constexpr std::string_view kIndexSuffix = ".safetensors.index.json";

// A Hugging Face sharded folder (transformers' and diffusers' `save_pretrained`): its *.safetensors.index.json maps
// every tensor to its shard. Every shard it names must exist and hold the tensors the index puts there, so that a
// missing or truncated download is named here, before anything is computed.
std::shared_ptr<WeightSource> open_indexed_folder(const std::string& folder, const std::string& index_path) {
  namespace fs = std::filesystem;
  const Json index = read_json_file(index_path, "weights");
  LTX_CHECK(index.is_object() && index.contains("weight_map") && index.at("weight_map").is_object(), "weights",
            index_path, ": no \"weight_map\" object");
  std::map<std::string, std::vector<std::string>> by_shard;  // shard file -> tensors the index puts there
  for (const auto& [tensor, shard] : index.at("weight_map").items()) {
    LTX_CHECK(shard.is_string(), "weights", index_path, ": weight_map[\"", tensor, "\"] is not a file name");
    by_shard[shard.get<std::string>()].push_back(tensor);
  }
  LTX_CHECK(!by_shard.empty(), "weights", index_path, ": the weight_map names no tensors");
  std::vector<std::string> paths;
  for (const auto& [shard, tensors] : by_shard) {
    const fs::path p = fs::path(folder) / shard;
    LTX_CHECK(fs::is_regular_file(p), "weights", index_path, " names the shard ", shard, " (", tensors.size(),
              " tensors, e.g. '", tensors.front(), "'), which is not in ", folder);
    paths.push_back(p.string());
  }
  auto source = std::make_shared<SafetensorsSource>(paths);
  for (const auto& [shard, tensors] : by_shard)
    for (const std::string& t : tensors)
      LTX_CHECK(source->contains(t), "weights", index_path, " puts tensor '", t, "' in ", shard,
                ", which does not hold it (an incomplete or mismatched download?)");
  return source;
}

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
  std::vector<std::string> shards, indexes;
  for (const auto& e : fs::directory_iterator(path)) {
    const std::string name = e.path().filename().string();
    if (!e.is_regular_file()) continue;
    if (e.path().extension() == ".safetensors") shards.push_back(e.path().string());
    if (name.size() > kIndexSuffix.size() && name.ends_with(kIndexSuffix)) indexes.push_back(e.path().string());
  }
  std::sort(shards.begin(), shards.end());
  std::sort(indexes.begin(), indexes.end());
  LTX_CHECK(indexes.size() <= 1, "weights", path, ": more than one shard index (", indexes.front(), ", ",
            indexes.back(), ")");
  if (!indexes.empty()) return open_indexed_folder(path, indexes.front());
  LTX_CHECK(!shards.empty(), "weights", path, ": no .safetensors files in this folder");
  return open_safetensors(shards);
}

std::shared_ptr<WeightSource> open_gguf(const std::string& path) { return std::make_shared<GgufSource>(path); }

}  // namespace ltx
