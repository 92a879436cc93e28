#include "backend/cpu/cpu_backend.h"

#include <array>

#include "backend/cpu/conv/conv_opt.h"
#include "backend/cpu/kernel_scratch.h"
#include "backend/cpu/kernels.h"
#include "core/error.h"

namespace ltx {

const StepBackend& cpu_backend() {
  static const cpu::CpuBackend backend;
  return backend;
}

const StepBackend& reference_backend() {
  static const cpu::ReferenceBackend backend;
  return backend;
}

namespace cpu {

bool CpuBackend::supports(OpKind, std::span<const TensorMeta>, const TensorMeta&) const { return true; }

bool CpuBackend::supports(const FusedProgram&, std::span<const TensorMeta>, const TensorMeta&) const { return true; }

size_t CpuBackend::scratch_bytes(OpKind op, const OpAttrs& attrs, std::span<const TensorMeta> in,
                                 const TensorMeta& out) const {
  if (op == OpKind::MatMul && in.size() == 2) return matmul_scratch_bytes(std::get<MatMulAttrs>(attrs), in, out, false);
  if ((op == OpKind::Conv || op == OpKind::ConvTranspose1d) && in.size() >= 2)
    return opt::conv_scratch_bytes(op, std::get<ConvAttrs>(attrs), in, out);
  return 0;
}

size_t CpuBackend::scratch_bytes(const FusedProgram& program, std::span<const TensorMeta> leaves,
                                 const TensorMeta& out) const {
  if (program.instrs.empty() || program.instrs[0].kind != OpKind::MatMul) return 0;
  const FusedInstr& mm = program.instrs[0];  // its results go to the rest of the program (an epilogue)
  const std::array<TensorMeta, 2> in{leaves[static_cast<size_t>(mm.args[0])], leaves[static_cast<size_t>(mm.args[1])]};
  return matmul_scratch_bytes(std::get<MatMulAttrs>(mm.attrs), in, out, true);
}

void CpuBackend::run(OpKind op, const OpAttrs& attrs, std::span<const Tensor> in, const Tensor& out,
                     const StepContext& context) const {
  const KernelScratchBinding scratch({context.scratch.data(), context.scratch.size()});
  cpu::run(op, attrs, in, out, context.prepared);
}

void CpuBackend::run(const FusedProgram& program, std::span<const Tensor> leaves, const Tensor& out,
                     const StepContext& context) const {
  const KernelScratchBinding scratch({context.scratch.data(), context.scratch.size()});
  run_fused(program, leaves, out);
}

// The attention kernels gather q per query block and pack v per head anyway. Not k: its rows, H·D apart (8 KB in the
// DiT), would be read in place and alias in L1 (measured 7% slower attention); not Rope's x (measured 2x slower).
bool CpuBackend::permute_may_be_view(OpKind reader, int operand) const {
  return reader == OpKind::Attention && (operand == 0 || operand == 2);
}

bool ReferenceBackend::supports(OpKind, std::span<const TensorMeta>, const TensorMeta&) const { return true; }

bool ReferenceBackend::supports(const FusedProgram&, std::span<const TensorMeta>, const TensorMeta&) const {
  return false;
}

void ReferenceBackend::run(OpKind op, const OpAttrs& attrs, std::span<const Tensor> in, const Tensor& out,
                           const StepContext&) const {
  run_reference(op, attrs, in, out);
}

void ReferenceBackend::run(const FusedProgram&, std::span<const Tensor>, const Tensor&, const StepContext&) const {
  fail("reference backend", "runs unfused steps only (compile with CompileOptions::fuse = false)");
}

}  // namespace cpu
}  // namespace ltx
