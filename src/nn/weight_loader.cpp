#include "nn/weight_loader.h"

#include <sstream>

#include "core/error.h"

namespace ltx {

WeightLoader::WeightLoader(std::shared_ptr<const WeightSource> source, std::string root)
    : WeightLoader(std::move(source), root, root, std::make_shared<State>()) {}

WeightLoader::WeightLoader(std::shared_ptr<const WeightSource> source, std::string root, std::string prefix,
                           std::shared_ptr<State> state)
    : source_(std::move(source)), root_(std::move(root)), prefix_(std::move(prefix)), state_(std::move(state)) {
  LTX_CHECK(source_ != nullptr, "weights", "no weight source");
}

WeightLoader WeightLoader::scope(std::string_view name) const {
  return WeightLoader(source_, root_, prefix_ + std::string(name) + ".", state_);
}

WeightLoader WeightLoader::scope(int64_t index) const { return scope(std::to_string(index)); }

bool WeightLoader::has(std::string_view name) const { return source_->contains(prefix_ + std::string(name)); }

std::optional<Tensor> WeightLoader::get_optional(std::string_view name, const Shape& shape) const {
  if (!has(name)) return std::nullopt;
  return get(name, shape);
}

Tensor WeightLoader::get(std::string_view name, const Shape& shape) const {
  const std::string key = prefix_ + std::string(name);
  if (!source_->contains(key)) {
    state_->missing.push_back(source_->file_name(key) + " " + shape.str());
    return {};
  }
  state_->used.insert(key);
  const Shape actual = source_->shape(key);
  if (!(actual == shape)) {
    state_->misshaped.push_back(source_->file_name(key) + ": expected " + shape.str() + ", file has " + actual.str());
    return {};
  }
  return source_->get(key);
}

void WeightLoader::ignore(std::string_view name_prefix) const {
  state_->ignored_prefixes.push_back(prefix_ + std::string(name_prefix));
}

void WeightLoader::finish() const {
  std::vector<std::string> unexpected;
  for (const std::string& name : source_->names()) {
    if (name.rfind(root_, 0) != 0 || state_->used.count(name)) continue;
    bool ignored = false;
    for (const auto& p : state_->ignored_prefixes) ignored = ignored || name.rfind(p, 0) == 0;
    if (!ignored) unexpected.push_back(source_->file_name(name));
  }
  if (state_->missing.empty() && state_->misshaped.empty() && unexpected.empty()) return;
  std::ostringstream msg;
  msg << source_->describe() << ": the weights do not match the model";
  auto list = [&](const char* title, const std::vector<std::string>& items) {
    if (items.empty()) return;
    msg << "\n  " << title << " (" << items.size() << "):";
    for (const auto& i : items) msg << "\n    " << i;
  };
  list("missing", state_->missing);
  list("wrong shape", state_->misshaped);
  list("unexpected", unexpected);
  fail("weights", msg.str());
}

}  // namespace ltx
