#include "graph/plan.h"

#include <algorithm>

#include "core/error.h"

namespace ltx {

void Plan::check_inputs(std::span<const Tensor> inputs) const {
  LTX_CHECK(inputs.size() == input_metas_.size(), "plan", "expected ", input_metas_.size(), " inputs, got ",
            inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i)
    LTX_CHECK(
        inputs[i].defined() && inputs[i].dtype() == input_metas_[i].dtype && inputs[i].shape() == input_metas_[i].shape,
        "plan", "input '", input_names_[i], "' is ", inputs[i].defined() ? inputs[i].describe() : "empty",
        " but the plan was compiled for ", dtype_name(input_metas_[i].dtype), input_metas_[i].shape.str());
}

bool Plan::input_is_persistent(size_t i) const { return i < persistent_.size() && persistent_[i]; }

bool Plan::reuse_input(size_t i, uint64_t version) {
  LTX_CHECK(i < input_metas_.size(), "plan", "input ", i, " of ", input_metas_.size());
  if (!input_is_persistent(i)) return false;
  if (held_[i] == version) return true;
  held_[i] = version;
  return false;
}

void Plan::forget_persistent_inputs() const {
  for (auto& version : held_) version.reset();
}

void Plan::mark_persistent_inputs(std::span<const std::string> names, bool holds_inputs) {
  persistent_.assign(input_names_.size(), false);
  held_.assign(input_names_.size(), std::nullopt);
  for (const std::string& name : names) {
    LTX_CHECK(holds_inputs, "graph", "persistent input '", name,
              "': only a plan that holds its inputs (inputs_in_arena) keeps them across runs");
    const auto it = std::find(input_names_.begin(), input_names_.end(), name);
    LTX_CHECK(it != input_names_.end(), "graph", "persistent input '", name, "' is not an input of the graph");
    persistent_[static_cast<size_t>(it - input_names_.begin())] = true;
  }
}

void Plan::take_input(size_t i, Plan& producer, size_t output) {
  const auto produced = producer.outputs();
  LTX_CHECK(output < produced.size(), "plan", "output ", output, " of ", produced.size());
  const Tensor& dst = input(i);
  LTX_CHECK(produced[output].dtype() == dst.dtype() && produced[output].shape() == dst.shape(), "plan", "input '",
            input_names_[i], "' is ", dst.describe(), " but output '", producer.output_names()[output], "' is ",
            produced[output].describe());
  Tensor view = dst;
  view.copy_from(produced[output]);
  if (input_is_persistent(i)) held_[i].reset();  // its value is no longer the one written under a version
}

}  // namespace ltx
