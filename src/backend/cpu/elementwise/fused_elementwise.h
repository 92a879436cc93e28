// The fused elementwise evaluator behind run_fused and the matmul epilogue (fused_elementwise.cpp), and its AVX-512
// pieces (fused_elementwise_avx512.cpp; callers first check gemm::avx512_available()).
//   Exact ops (add, sub, mul, div, lerp, scale, clamp, leaky_relu) give the reference kernel's bits.
//   silu, sigmoid and gelu_tanh use a polynomial exp (vec_avx512.h) when `approximate` is set: a few f32 ulps
//   (the bound is measured in tests/ops), which run_fused allows only when the result is stored in bf16/f16, so
//   f32 (validation) results keep libm's bits.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backend/cpu/kernels.h"
#include "core/dtype.h"
#include "core/tensor.h"
#include "ops/fused.h"

namespace ltx::cpu::fused {

// r = op(a, b, c) over n elements; false when this op (or its exact form) has no vector version.
bool eval_avx512(const FusedInstr& ins, const float* a, const float* b, const float* c, float* r, int64_t n,
                 bool approximate);
// n contiguous bf16 values -> f32; f32 -> n contiguous bf16 (round to nearest even, as f32_to_bf16).
void load_bf16_avx512(const uint16_t* src, int64_t n, float* dst);
void store_bf16_avx512(const float* src, int64_t n, uint16_t* dst);

inline constexpr int64_t kBlock = 256;  // elements per evaluation block
inline constexpr int kMaxValues = 64;   // leaves + instructions in one program

// A leaf as seen from the output's index space: strides per output dimension (0 where broadcast).
struct LeafView {
  const std::byte* base = nullptr;
  DType dtype = DType::F32;
  int64_t strides[kMaxRank] = {};
};

// A program bound to its leaves and output, evaluated over runs of one output row (the output viewed as
// rows × its last dim): leaves loaded as f32 blocks, instructions in f32, one store in out's dtype. For a program
// led by a MatMul or a norm (ops/fused.h) that first result is not computed here: run_row takes it as `given` (f32
// values), and only the leaves the later instructions read are loaded.
class ProgramRunner {
 public:
  ProgramRunner(const FusedProgram& program, std::span<const Tensor> leaves, const Tensor& out);
  // Output elements (row, col + j), j < count; given: the leading op's count results (else unused).
  void run_row(int64_t row, int64_t col, int64_t count, const float* given) const;
  int64_t rows() const { return rows_; }
  int64_t inner() const { return inner_; }

 private:
  const FusedProgram& program_;
  Tensor out_;
  LeafView views_[kMaxValues];
  uint64_t loaded_ = 0;  // bit v: leaf v is loaded elementwise
  int n_values_ = 0, rank_ = 0, first_instr_ = 0;
  int64_t inner_ = 1, rows_ = 0;
  bool vector_ = false, approximate_ = false;
};

// The epilogue of a program led by a MatMul (kernels.h MatMulEpilogue): the matmul kernels hand it their f32 sums.
class FusedEpilogue final : public MatMulEpilogue {
 public:
  FusedEpilogue(const FusedProgram& program, std::span<const Tensor> leaves, const Tensor& out)
      : runner_(program, leaves, out) {}
  void store(int64_t row, int64_t col, int64_t count, const float* values) const override {
    runner_.run_row(row, col, count, values);
  }

 private:
  ProgramRunner runner_;
};

}  // namespace ltx::cpu::fused
