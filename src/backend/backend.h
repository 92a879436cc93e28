// The seam between compiled plans and the hardware that runs them. A backend is one of two kinds
// (docs/architecture.md "Backends"):
// - a step backend (StepBackend: the CPU; a CUDA backend would be another) answers per step: what it can run, how
//   much scratch a step needs, which layouts its kernels read in place, and runs one step at a time; the graph
//   layer's compiler (graph/compile.cpp) lays the steps out over one arena and its StepPlan hands them over;
// - a whole-graph backend (XLA through PJRT) takes the Graph itself in compile_graph and returns its own Plan
//   (graph/plan.h), an executable with the same surface.
// An engine chooses its backend (backend_named); nothing above the graph layer includes a backend header.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/tensor.h"
#include "graph/plan.h"
#include "ops/fused.h"
#include "ops/op.h"

namespace ltx {

class Graph;
struct CompileOptions;
class StepBackend;

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;

  // Whether the backend runs this op (or fused program) for operands and a result of these types and shapes.
  // Both kinds answer: the compiler names the first node a backend declines.
  virtual bool supports(OpKind op, std::span<const TensorMeta> in, const TensorMeta& out) const = 0;
  virtual bool supports(const FusedProgram& program, std::span<const TensorMeta> leaves,
                        const TensorMeta& out) const = 0;

  // The step table of a step backend; null for a whole-graph backend.
  virtual const StepBackend* steps() const { return nullptr; }
  // A whole-graph backend's compiler: the graph as one program behind a Plan (graph/compile.cpp calls it when
  // steps() is null; a null result is an error there).
  virtual std::unique_ptr<Plan> compile_graph(const Graph& /*graph*/, const CompileOptions& /*options*/) const {
    return nullptr;
  }
};

// What a kernel derives once from a plan step's constant weights and reuses on every later run of that step (conv
// weights reordered into a primitive's layout; on an accelerator, the weights uploaded). A plan passes a slot only
// for steps whose weight inputs are its constants, immutable once loaded; the kernel records the identity it
// prepared from and prepares again if that ever differs.
struct PreparedWeights {
  virtual ~PreparedWeights() = default;
};
using PreparedSlot = std::shared_ptr<PreparedWeights>;

// One step's run: the scratch the plan laid out for it (scratch_bytes() of the step, live for the step only) and
// its prepared-weights slot (null when the step's weights are not constants or preparing is off).
struct StepContext {
  std::span<std::byte> scratch;
  PreparedSlot* prepared = nullptr;
};

class StepBackend : public Backend {
 public:
  const StepBackend* steps() const final { return this; }

  // The scratch bytes a step takes from the plan's arena during its run (0: none). Counted in Plan::peak_bytes().
  virtual size_t scratch_bytes(OpKind op, const OpAttrs& attrs, std::span<const TensorMeta> in,
                               const TensorMeta& out) const = 0;
  virtual size_t scratch_bytes(const FusedProgram& program, std::span<const TensorMeta> leaves,
                               const TensorMeta& out) const = 0;

  // Runs a step into `out` (preallocated, contiguous, of the inferred dtype and shape); inputs may be strided.
  virtual void run(OpKind op, const OpAttrs& attrs, std::span<const Tensor> in, const Tensor& out,
                   const StepContext& context) const = 0;
  virtual void run(const FusedProgram& program, std::span<const Tensor> leaves, const Tensor& out,
                   const StepContext& context) const = 0;

  // Layout rule: may a Permute read by `reader` as operand `operand` stay a strided view of its source instead of
  // a copy? (Only where the reader's kernel is as fast on the strided layout: a measured rule per backend.)
  virtual bool permute_may_be_view(OpKind reader, int operand) const = 0;
};

// The backends an engine can choose by name (EngineOptions::backend, `--backend`; backend/registry/): "cpu" (our
// kernels) and, where the build found the PJRT header, "xla" (backend/xla/). An unknown name is an error listing
// these. `xla_plugin` is the PJRT plugin "xla" loads ("": $LTX_XLA_PLUGIN, else the CPU plugin scripts/setup
// installed); loading a bad one throws, naming it.
std::vector<std::string> backend_names();
const Backend& backend_named(std::string_view name, const std::string& xla_plugin = "");

// The CPU step backend (defined by it): what an engine runs on unless told otherwise, and what tools and tests that
// exercise the kernels themselves compile for.
const StepBackend& cpu_backend();

// Every op's plain reference kernel (reads any strides, computes and reduces in f32, rounds once at the store): the
// oracle every backend's kernels are checked against (`ltx selfcheck`). It runs unfused steps only: compile for it
// with CompileOptions::fuse = false.
const StepBackend& reference_backend();

}  // namespace ltx
