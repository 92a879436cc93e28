// The CPU backend behind the seam (backend/backend.h): every op has a reference kernel, so it supports every step;
// cpu::run / run_fused pick the optimized kernels; the GEMM's and the channels-last conv's scratch are laid out in
// the plan's arena and lent to the kernels for their step (kernel_scratch.h).
#pragma once

#include "backend/backend.h"

namespace ltx::cpu {

class CpuBackend final : public StepBackend {
 public:
  const char* name() const override { return "cpu"; }
  bool supports(OpKind op, std::span<const TensorMeta> in, const TensorMeta& out) const override;
  bool supports(const FusedProgram& program, std::span<const TensorMeta> leaves, const TensorMeta& out) const override;
  size_t scratch_bytes(OpKind op, const OpAttrs& attrs, std::span<const TensorMeta> in,
                       const TensorMeta& out) const override;
  size_t scratch_bytes(const FusedProgram& program, std::span<const TensorMeta> leaves,
                       const TensorMeta& out) const override;
  void run(OpKind op, const OpAttrs& attrs, std::span<const Tensor> in, const Tensor& out,
           const StepContext& context) const override;
  void run(const FusedProgram& program, std::span<const Tensor> leaves, const Tensor& out,
           const StepContext& context) const override;
  bool permute_may_be_view(OpKind reader, int operand) const override;
};

// reference_backend(): the plain reference kernels alone, unfused, no scratch, no views.
class ReferenceBackend final : public StepBackend {
 public:
  const char* name() const override { return "cpu-reference"; }
  bool supports(OpKind op, std::span<const TensorMeta> in, const TensorMeta& out) const override;
  bool supports(const FusedProgram& program, std::span<const TensorMeta> leaves, const TensorMeta& out) const override;
  size_t scratch_bytes(OpKind, const OpAttrs&, std::span<const TensorMeta>, const TensorMeta&) const override {
    return 0;
  }
  size_t scratch_bytes(const FusedProgram&, std::span<const TensorMeta>, const TensorMeta&) const override { return 0; }
  void run(OpKind op, const OpAttrs& attrs, std::span<const Tensor> in, const Tensor& out,
           const StepContext& context) const override;
  void run(const FusedProgram& program, std::span<const Tensor> leaves, const Tensor& out,
           const StepContext& context) const override;
  bool permute_may_be_view(OpKind, int) const override { return false; }
};

}  // namespace ltx::cpu
