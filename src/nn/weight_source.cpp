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
  }
  std::vector<std::string> names() const override { return names_; }
  bool contains(std::string_view name) const override {
    return std::binary_search(names_.begin(), names_.end(), std::string(name));
  }
  DType dtype(std::string_view name) const override { return get(name).dtype(); }
  Shape shape(std::string_view name) const override { return get(name).shape(); }
  Tensor get(std::string_view name) const override { return file_.get(name); }
  const std::map<std::string, std::string>& metadata() const override { return empty_; }
  std::string describe() const override { return path_; }
  const GGUFFile& file() const { return file_; }

 private:
  GGUFFile file_;
  std::string path_;
  std::vector<std::string> names_;
  std::map<std::string, std::string> empty_;
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
