// oneDNN's matmul primitive for one 2-D problem out[M, N] = a[M, K]·b[K, N]: the vendor kernel that our GEMM is
// measured against (ltx bench) and that try_matmul may call where it measures faster. Primitives are created
// once per problem and reused.
#pragma once

#include <cstdint>
#include <memory>

#include "core/dtype.h"

namespace ltx::cpu::onednn {

struct MatmulShape {
  int64_t m = 0, n = 0, k = 0;
  DType a = DType::F32, b = DType::F32, out = DType::F32;  // f32 or bf16
  int64_t lda = 0;                                         // a row-major with row stride lda
  int64_t b_sk = 0, b_sn = 0;  // b's element strides (the Linear layout W [N, K] has b_sk = 1, b_sn = K)
  int64_t ldo = 0;
  // b reordered once into oneDNN's preferred blocked layout (set_weights), as an engine keeping its weights
  // resident in that layout would; otherwise b is read in place through the strides above on every call.
  bool packed_weights = false;
};

class Matmul {
 public:
  explicit Matmul(const MatmulShape& shape);
  ~Matmul();
  Matmul(const Matmul&) = delete;
  Matmul& operator=(const Matmul&) = delete;

  // Binds b (for packed_weights: reorders it now into an internal buffer; b may be freed afterwards).
  void set_weights(const void* b);
  void run(const void* a, void* out);
  // b read in place on this call (not packed_weights). Safe to call from several threads at once.
  void run(const void* a, const void* b, void* out) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// True for dtypes this wrapper handles (f32, bf16).
bool supports(DType t);

// oneDNN here runs on its own OpenMP threads, not on our pool. Every run() first sets the OpenMP thread count of
// the calling thread to ltx::thread_count() (LTX_THREADS), so the library and our kernels use equally many cores;
// callers must call it from outside our pool's parallel regions, or the two sets of threads oversubscribe.
void match_thread_count();

}  // namespace ltx::cpu::onednn
