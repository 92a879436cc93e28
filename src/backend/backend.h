// The seam between compiled plans and the hardware that runs them. The compiler (graph/compile.cpp) asks a backend
// what it can run, how much scratch each step needs and which layouts its kernels read in place; a Plan holds the
// backend it was compiled for and hands it each step. Nothing above the graph layer includes a backend header.
//
// Two kinds of backend fit (docs/architecture.md "Backends"): step-by-step kernel backends like this one (the CPU
// today; a CUDA backend would implement the same table over device memory, preparing weights on a step's first
// run through its PreparedSlot), and whole-graph compilers (XLA through PJRT), which would take the Graph itself
// behind the same Plan surface (run, input(i), peak_bytes) rather than these per-step calls.
#pragma once

#include <cstddef>
#include <memory>
#include <span>

#include "core/tensor.h"
#include "ops/fused.h"
#include "ops/op.h"

namespace ltx {

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

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;

  // Whether the backend runs this op (or fused program) for operands and a result of these types and shapes.
  virtual bool supports(OpKind op, std::span<const TensorMeta> in, const TensorMeta& out) const = 0;
  virtual bool supports(const FusedProgram& program, std::span<const TensorMeta> leaves,
                        const TensorMeta& out) const = 0;

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

// The backend plans compile for unless told otherwise (the CPU backend; defined by it).
const Backend& default_backend();

// Every op's plain reference kernel (reads any strides, computes and reduces in f32, rounds once at the store): the
// oracle every backend's kernels are checked against (`ltx selfcheck`). It runs unfused steps only: compile for it
// with CompileOptions::fuse = false.
const Backend& reference_backend();

}  // namespace ltx
