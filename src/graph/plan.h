// A compiled graph, behind one interface whatever compiled it (backend/backend.h): the StepPlan the graph layer
// lays out for a step backend (graph/step_plan.h), or a whole-graph backend's executable. Models and stages build
// graphs and run plans through this surface only.
//
// Inputs are staged on the host: passed to run(inputs), or, in a plan compiled with CompileOptions::inputs_in_arena,
// written through input(i) before run(). An input named in CompileOptions::persistent_inputs keeps its value from
// one run to the next: the caller asks reuse_input(i, version) and writes it only when that says no (a device
// backend then uploads it once per value, not once per run). Outputs are host views, valid until the next run; a
// plan on the same backend can take one as its input without a trip through the host (take_input).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "graph/weight_streaming.h"
#include "ops/op.h"

namespace ltx {

class Backend;  // backend/backend.h

struct PlanStats {
  int n_nodes = 0;           // graph nodes
  int n_live = 0;            // after dead-node elimination
  int n_steps = 0;           // kernels run (a whole-graph plan: 1)
  int n_fused_ops = 0;       // elementwise ops folded into fused steps (not materialized)
  int n_aliases = 0;         // reshapes and permutes that became views
  size_t arena_bytes = 0;    // the plan's activation peak (with the inputs when it holds them)
  size_t input_bytes = 0;    // the inputs' bytes when the plan holds them (they share arena_bytes), else 0
  size_t naive_bytes = 0;    // what the activations would take without reuse
  size_t scratch_bytes = 0;  // the largest step's kernel scratch (part of arena_bytes, live during its step only)
};

class Plan {
 public:
  virtual ~Plan() = default;
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;

  // Runs on inputs in the order the graph declared them; shapes and dtypes must match the compiled ones. A plan that
  // holds its inputs copies them into input(i) first. Returns the outputs (as outputs()).
  virtual std::span<const Tensor> run(std::span<const Tensor> inputs) = 0;
  std::span<const Tensor> run(std::initializer_list<Tensor> inputs) {
    return run(std::span<const Tensor>(inputs.begin(), inputs.size()));
  }
  // A plan that holds its inputs (CompileOptions::inputs_in_arena): input i's host view, to write before run().
  // Unless the input is persistent, its contents are overwritten by the run once its last reader is done.
  bool holds_inputs() const { return holds_inputs_; }
  virtual const Tensor& input(size_t i) const = 0;
  virtual std::span<const Tensor> run() = 0;
  // The last run's outputs as host views, in the order the graph declared them; valid until the next run.
  virtual std::span<const Tensor> outputs() = 0;

  // A persistent input (CompileOptions::persistent_inputs): true when it still holds the value the caller wrote
  // under `version` (then the caller writes nothing); false when the caller must write input(i) now, which is
  // then recorded under `version`. An input that is not persistent always answers false.
  bool reuse_input(size_t i, uint64_t version);
  bool input_is_persistent(size_t i) const;
  // Input i of the next run is output `output` of `producer`'s last run (its shape and dtype). The base copies
  // through the host; a backend whose outputs stay on its device passes the buffer.
  virtual void take_input(size_t i, Plan& producer, size_t output);

  const std::vector<std::string>& output_names() const { return output_names_; }
  const std::vector<std::string>& input_names() const { return input_names_; }
  // The plan's activation peak (weights are not counted; inputs are when it holds them).
  size_t peak_bytes() const { return stats_.arena_bytes; }
  const PlanStats& stats() const { return stats_; }
  virtual std::string describe() const = 0;  // one line per step, for debugging
  const Backend& backend() const { return *backend_; }

  // Streams the weights this plan reads from mapped files (graph/weight_streaming.h) from the next run on; nullopt
  // (the default) leaves their pages to the OS. A plan whose weights live on a device ignores it.
  virtual void set_streaming(const std::optional<StreamingPolicy>& /*policy*/) {}
  virtual const WeightStreamer* streamer() const { return nullptr; }
  // Returns the activation memory to the system until the next run: outputs of earlier runs (and persistent
  // inputs) are lost, nothing else changes. For a plan that will not run for a while (a finished phase).
  virtual void release_arena_pages() const = 0;
  // Weight bytes this plan reads from mapped files in host memory (resident or not).
  virtual size_t mapped_weight_bytes() const = 0;

 protected:
  explicit Plan(const Backend& backend) : backend_(&backend) {}
  // Throws unless `inputs` match the compiled inputs.
  void check_inputs(std::span<const Tensor> inputs) const;
  // After release_arena_pages: no persistent input holds a value any more.
  void forget_persistent_inputs() const;
  // Marks the named inputs (CompileOptions::persistent_inputs) persistent, after input_names_ is filled; throws for
  // a name that is no input, or when the plan does not hold its inputs (`holds_inputs`).
  void mark_persistent_inputs(std::span<const std::string> names, bool holds_inputs);

  const Backend* backend_;
  std::vector<TensorMeta> input_metas_;
  std::vector<std::string> input_names_;
  std::vector<std::string> output_names_;
  bool holds_inputs_ = false;
  std::vector<bool> persistent_;                       // per input
  mutable std::vector<std::optional<uint64_t>> held_;  // per persistent input: the version it holds
  PlanStats stats_;
};

}  // namespace ltx
