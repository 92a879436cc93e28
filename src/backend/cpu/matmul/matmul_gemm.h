// Our blocked GEMM: one 2-D problem out[M, N] = a[M, K]·b[K, N] with strided, typed operands. try_matmul
// (matmul_opt.cpp) reduces a MatMul call to a sequence of these; the AVX-512 implementation lives in
// matmul_*_avx512.cpp and is only called when the CPU has AVX-512F/BW/VL/DQ and BF16.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "backend/cpu/kernels.h"
#include "core/dtype.h"
#include "core/tensor.h"
#include "ops/op.h"

namespace ltx::cpu::gemm {

// How products are formed; accumulation is f32 in both.
enum class Compute : uint8_t {
  F32,   // f32 FMA: operands converted to f32 exactly (f32, bf16, f16, dequantized weights)
  BF16,  // vdpbf16ps: bf16 a with bf16 weights (exact products), or with quantized weights rounded to bf16
};

struct OperandA {  // a(m, k) at data + (m·sm + k·sk) elements; f32, bf16 or f16
  const std::byte* data = nullptr;
  DType dtype = DType::F32;
  int64_t sm = 0, sk = 0;
};

struct OperandB {  // b(k, n); plain: data + (k·sk + n·sn) elements; quantized: row n (whole blocks along k) at
                   // data + n·row_bytes
  const std::byte* data = nullptr;
  DType dtype = DType::F32;
  int64_t sk = 0, sn = 0;
  int64_t row_bytes = 0;
};

struct Problem {
  int64_t m = 0, n = 0, k = 0;
  OperandA a;
  OperandB b;
  std::byte* out = nullptr;  // out(m, n) at out + (m·ldo + n) elements of out_dtype (f32, bf16 or f16)
  DType out_dtype = DType::F32;
  int64_t ldo = 0;
  Compute compute = Compute::F32;
  // When set, every path hands its f32 results to the epilogue instead of storing them in out_dtype (which then
  // only names the matmul's own dtype); row r of this problem is the epilogue's row epilogue_row0 + r.
  const MatMulEpilogue* epilogue = nullptr;
  int64_t epilogue_row0 = 0;
};

// True when this CPU runs the AVX-512 kernels: AVX-512 F, BW, VL and DQ. Their bf16 products use vdpbf16ps where the
// CPU has AVX512_BF16 and its exact AVX-512F emulation elsewhere (vec_avx512.h dpbf16), with the same sums.
bool avx512_available();

// Runs p on the process thread pool (the matrix-vector path where gemv_applies, the panel path where
// small_m_applies, else the blocked GEMM).
// Precondition: avx512_available(); m, n >= 1; k >= 0.
void run_avx512(const Problem& p);
// True when run_avx512 takes the panel path for p.
bool small_m_applies(const Problem& p);
// The bytes run_avx512 takes for p from a span bound on the calling thread (kernel_scratch.h) when it is at least
// this large: per task of the blocked path's thread grid, packed A and B blocks and the f32 partial sums of the
// task's rows × NC (run_block sizes its buffers with the same function). 0 where it needs none (the matrix-vector
// and panel paths, k = 0). Precondition as run_avx512.
int64_t scratch_bytes(const Problem& p);
// How many grow-only thread-local buffers the blocked path has allocated so far, for want of a lent span (tests).
int64_t fallback_allocations();

// A whole MatMul call (kernel contract of kernels.h) on our own kernel; false when it does not handle it.
// try_matmul calls this unless the vendor library measured faster for the case (matmul_opt.cpp). With an epilogue,
// out's dtype is the epilogue's (kernels.h).
bool matmul_own(const MatMulAttrs& attrs, std::span<const Tensor> in, const Tensor& out,
                const MatMulEpilogue* epilogue = nullptr);

// Where try_matmul runs a call: our blocked GEMM, our panel path for small M (matmul_small_avx512.cpp), our
// matrix-vector path for 1-4 f32 rows against bf16 weights (matmul_gemv_avx512.cpp), or oneDNN reading the
// operands in place (the measured rule in matmul_opt.cpp).
enum class Path : uint8_t { Blocked, Panel, Gemv, OneDNN, Int8 };
// The path try_matmul takes for this call; false when try_matmul declines it.
bool path_for(const MatMulAttrs& attrs, std::span<const Tensor> in, const Tensor& out, Path& path);
// cpu::matmul_scratch_bytes (kernels.h): scratch_bytes of the problem try_matmul would run for a call of these
// shapes and dtypes (contiguous operands), 0 on oneDNN's route.
size_t call_scratch_bytes(const MatMulAttrs& attrs, std::span<const TensorMeta> in, const TensorMeta& out,
                          bool with_epilogue);
// For tests: true sends every call oneDNN can take to oneDNN; false restores the measured rule.
void force_onednn_for_testing(bool on);

}  // namespace ltx::cpu::gemm
