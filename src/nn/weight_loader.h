// Prefix-scoped, shape-checked weight loading. A model fills its typed weights struct with
//   auto blk = loader.scope("transformer_blocks").scope(i);
//   w.to_q = blk.get("attn1.to_q.weight", {d, d});
// and calls finish() once: every missing, mis-shaped or unexpected tensor is reported in one error, so nothing is
// silently skipped. Tensors come back as zero-copy views of the mapped files in their stored dtype.
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/tensor.h"
#include "nn/weight_source.h"

namespace ltx {

class WeightLoader {
 public:
  // `root` selects a component inside a checkpoint (e.g. "model.diffusion_model."); finish() considers only
  // tensors under it.
  WeightLoader(std::shared_ptr<const WeightSource> source, std::string root = "");

  WeightLoader scope(std::string_view name) const;  // prefix + name + "."
  WeightLoader scope(int64_t index) const;          // prefix + index + "."

  // The tensor at prefix + name with exactly this shape; on a problem, records it and returns an empty Tensor.
  Tensor get(std::string_view name, const Shape& shape) const;
  // Same, but absence is not a problem (optional parameters such as biases).
  std::optional<Tensor> get_optional(std::string_view name, const Shape& shape) const;
  bool has(std::string_view name) const;
  // Marks tensors under prefix + name as deliberately unused (e.g. a vision tower), so finish() accepts them.
  void ignore(std::string_view name_prefix) const;

  // Throws one ltx::Error listing every missing, mis-shaped and unexpected tensor under the root.
  void finish() const;

  const std::string& prefix() const { return prefix_; }
  const WeightSource& source() const { return *source_; }

 private:
  struct State {
    std::set<std::string> used;
    std::vector<std::string> ignored_prefixes;
    std::vector<std::string> missing;
    std::vector<std::string> misshaped;
  };
  WeightLoader(std::shared_ptr<const WeightSource> source, std::string root, std::string prefix,
               std::shared_ptr<State> state);

  std::shared_ptr<const WeightSource> source_;
  std::string root_;
  std::string prefix_;
  std::shared_ptr<State> state_;
};

}  // namespace ltx
