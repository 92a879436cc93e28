// The plan the graph layer compiles for a step backend (graph/compile.cpp): ordered kernels over one arena whose
// layout was fixed at compile time. Running it again at the same shapes allocates nothing: inputs are bound as views,
// outputs are views into the arena (valid until the next run). A plan compiled with CompileOptions::inputs_in_arena
// holds its inputs too: each is an arena buffer live from the start of a run to its last use (its space is reused
// after that; a persistent input's never is), and peak_bytes() then counts every byte a run holds besides the
// weights. The kernels' scratch (StepBackend::scratch_bytes: the GEMM's packed blocks and f32 partials, the conv
// slabs) is laid out in the arena too, one buffer per step.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "graph/plan.h"
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
  // Set at compile when the step's weights are the plan's Constant slots (an op: every input after the first; a
  // fused step led by a MatMul or a norm: that op's operands after the first): the kernel may keep weights it
  // derived from them here (PreparedWeights, backend/backend.h), for the plan's life.
  bool constant_weights = false;
  PreparedSlot prepared;
  // The kernel's scratch for this step (StepBackend::scratch_bytes), an arena buffer live for this step only that
  // run lends the backend; 0 bytes when it needs none.
  size_t scratch_offset = 0;
  size_t scratch_bytes = 0;
};

class StepPlan final : public Plan {
 public:
  explicit StepPlan(const StepBackend& backend) : Plan(backend) {}

  std::span<const Tensor> run(std::span<const Tensor> inputs) override;
  using Plan::run;
  const Tensor& input(size_t i) const override;
  std::span<const Tensor> run() override;
  std::span<const Tensor> outputs() override { return outputs_; }
  std::string describe() const override;
  void set_streaming(const std::optional<StreamingPolicy>& policy) override;
  const WeightStreamer* streamer() const override { return streamer_.get(); }
  void release_arena_pages() const override;
  size_t mapped_weight_bytes() const override;

 private:
  friend class PlanBuilder;

  void write_dump() const;
  std::span<const Tensor> execute();

  std::shared_ptr<Storage> arena_;
  std::vector<Slot> slots_;
  std::vector<Step> steps_;
  std::vector<std::pair<int, int>> input_refs_;  // (step, arg) pairs that read an input slot directly
  std::vector<int> input_slots_;                 // holds_inputs_: each input's arena slot
  std::vector<int> output_slots_;
  std::vector<Tensor> outputs_;
  std::string dump_path_;
  std::unique_ptr<WeightStreamer> streamer_;
};

}  // namespace ltx
