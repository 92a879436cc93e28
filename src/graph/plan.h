// A compiled graph: ordered kernels over one arena whose layout was fixed at compile time. Running a plan again
// at the same shapes allocates nothing: inputs are bound as views, outputs are views into the arena (valid until
// the next run). It runs on the backend it was compiled for. A plan compiled with CompileOptions::inputs_in_arena holds
// its inputs too: each is an arena buffer live from the start of a run to its last use (its space is reused after
// that), the caller writes it through input(i) and calls run(); peak_bytes() then counts every byte a run holds besides
// the weights. The matmul kernels' scratch (Backend::scratch_bytes: the GEMM's packed blocks and f32 partials, the conv
// slabs) is laid out in the arena too, one buffer per step.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "core/tensor.h"
#include "graph/weight_streaming.h"
#include "ops/fused.h"
#include "ops/op.h"

namespace ltx {

// Where a value lives during a run.
struct Slot {
  enum class Kind : uint8_t { Input, Constant, Arena, Alias };
  Kind kind = Kind::Arena;
  int input_index = -1;  // Kind::Input: position among the graph's inputs
  Tensor tensor;         // Constant: the weight; Arena/Alias: the view, fixed at compile time
  std::string name;
  size_t offset = 0;  // Arena: byte offset
  size_t bytes = 0;   // Arena: byte size
};

struct Step {
  enum class Kind : uint8_t { Op, Fused };
  Kind kind = Kind::Op;
  OpKind op = OpKind::Add;
  OpAttrs attrs;
  FusedProgram program;  // Kind::Fused
  std::vector<int> in_slots;
  int out_slot = -1;
  std::vector<Tensor> in_tensors;  // prebuilt views; slots bound to inputs are refreshed each run
  bool dump = false;               // its output matches LTX_DUMP
  // Set at compile when every input after the first is a Constant slot (weights, bias): the kernel may keep
  // weights it derived from them here (PreparedWeights, backend/backend.h), for the plan's life.
  bool constant_weights = false;
  PreparedSlot prepared;
  // The kernel's scratch for this step (Backend::scratch_bytes), an arena buffer live for this step only that
  // Plan::run lends the backend; 0 bytes when it needs none.
  size_t scratch_offset = 0;
  size_t scratch_bytes = 0;
};

struct PlanStats {
  int n_nodes = 0;           // graph nodes
  int n_live = 0;            // after dead-node elimination
  int n_steps = 0;           // kernels run
  int n_fused_ops = 0;       // elementwise ops folded into fused steps (not materialized)
  int n_aliases = 0;         // reshapes and permutes that became views
  size_t arena_bytes = 0;    // the plan's activation peak (with the inputs when it holds them)
  size_t input_bytes = 0;    // the inputs' bytes when the arena holds them (they share arena_bytes), else 0
  size_t naive_bytes = 0;    // what the activations would take without reuse
  size_t scratch_bytes = 0;  // the largest step's kernel scratch (part of arena_bytes, live during its step only)
};

class Plan {
 public:
  // Inputs in the order the graph declared them; shapes and dtypes must match the compiled ones. A plan that holds
  // its inputs copies them into input(i) first.
  std::span<const Tensor> run(std::span<const Tensor> inputs);
  std::span<const Tensor> run(std::initializer_list<Tensor> inputs) {
    return run(std::span<const Tensor>(inputs.begin(), inputs.size()));
  }
  // A plan that holds its inputs (CompileOptions::inputs_in_arena): input i's arena view, to write before run().
  // Its contents are overwritten by the run once its last reader is done.
  bool holds_inputs() const { return holds_inputs_; }
  const Tensor& input(size_t i) const;
  std::span<const Tensor> run();
  const std::vector<std::string>& output_names() const { return output_names_; }
  const std::vector<std::string>& input_names() const { return input_names_; }
  // The plan's activation peak: the arena it holds, kernel scratch included (weights are not counted; inputs are
  // when it holds them).
  size_t peak_bytes() const { return stats_.arena_bytes; }
  const PlanStats& stats() const { return stats_; }
  std::string describe() const;  // one line per step, for debugging
  const Backend& backend() const { return *backend_; }
  // Streams the weights this plan reads from mapped files (graph/weight_streaming.h) from the next run on; nullopt
  // (the default) leaves their pages to the OS. The same policy again keeps the streamer.
  void set_streaming(const std::optional<StreamingPolicy>& policy);
  const WeightStreamer* streamer() const { return streamer_.get(); }
  // Returns the arena's pages to the OS until the next run (release_arena_pages): outputs of earlier runs are
  // lost, nothing else changes. For a plan that will not run for a while (a finished phase of a generation).
  void release_arena_pages() const;
  // Mapped weight bytes this plan reads (resident or not).
  size_t mapped_weight_bytes() const;

 private:
  friend class PlanBuilder;

  void write_dump() const;
  std::span<const Tensor> execute();

  const Backend* backend_ = nullptr;
  std::shared_ptr<Storage> arena_;
  std::vector<Slot> slots_;
  std::vector<Step> steps_;
  std::vector<TensorMeta> input_metas_;
  std::vector<std::string> input_names_;
  std::vector<std::pair<int, int>> input_refs_;  // (step, arg) pairs that read an input slot directly
  bool holds_inputs_ = false;
  std::vector<int> input_slots_;  // holds_inputs_: each input's arena slot
  std::vector<int> output_slots_;
  std::vector<std::string> output_names_;
  std::vector<Tensor> outputs_;
  std::string dump_path_;
  PlanStats stats_;
  std::unique_ptr<WeightStreamer> streamer_;
};

}  // namespace ltx
