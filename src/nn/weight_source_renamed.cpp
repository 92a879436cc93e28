#include "nn/weight_source_renamed.h"

#include <algorithm>

#include "core/error.h"

namespace ltx {
namespace {

class RenamedSource : public WeightSource {
 public:
  RenamedSource(std::shared_ptr<const WeightSource> file, KeyRename to_file, KeyRename from_file, std::string layout)
      : file_(std::move(file)), to_file_(std::move(to_file)), layout_(std::move(layout)) {
    for (const std::string& name : file_->names()) {
      std::string model_name = from_file(name);
      LTX_CHECK(to_file_(model_name) == name, "weights", file_->describe(), ": tensor '", name, "' of the ", layout_,
                " layout has no unambiguous model name (maps to '", model_name, "')");
      names_.push_back(std::move(model_name));
    }
    std::sort(names_.begin(), names_.end());
    const auto dup = std::adjacent_find(names_.begin(), names_.end());
    LTX_CHECK(dup == names_.end(), "weights", file_->describe(), ": two tensors of the ", layout_, " layout map to '",
              dup == names_.end() ? std::string() : *dup, "'");
  }
  std::vector<std::string> names() const override { return names_; }
  bool contains(std::string_view name) const override { return file_->contains(to_file_(name)); }
  DType dtype(std::string_view name) const override { return file_->dtype(to_file_(name)); }
  Shape shape(std::string_view name) const override { return file_->shape(to_file_(name)); }
  Tensor get(std::string_view name) const override { return file_->get(to_file_(name)); }
  const std::map<std::string, std::string>& metadata() const override { return file_->metadata(); }
  std::string describe() const override { return file_->describe() + " (" + layout_ + " layout)"; }
  std::string file_name(std::string_view name) const override { return file_->file_name(to_file_(name)); }

 private:
  std::shared_ptr<const WeightSource> file_;
  KeyRename to_file_;
  std::string layout_;
  std::vector<std::string> names_;
};

}  // namespace

std::shared_ptr<WeightSource> rename_weights(std::shared_ptr<const WeightSource> file, KeyRename to_file,
                                             KeyRename from_file, std::string layout) {
  LTX_CHECK(file != nullptr, "weights", "no weight source to rename");
  return std::make_shared<RenamedSource>(std::move(file), std::move(to_file), std::move(from_file), std::move(layout));
}

}  // namespace ltx
