// oneDNN compositions that bench_kernels measures our attention and convolution against, each in oneDNN's own
// preferred layouts (inputs reordered before timing, as an engine built on oneDNN would keep them).
#pragma once

#include <cstdint>
#include <memory>

#include "core/dtype.h"

namespace ltx::cpu::onednn {

// softmax(q·kᵀ·scale)·v per head: q [H, Tq, D], k and v [H, Tk, D], contiguous; scores and softmax in f32,
// probabilities in `dtype` for the second matmul (f32 or bf16).
class AttentionPeer {
 public:
  AttentionPeer(int64_t heads, int64_t tq, int64_t tk, int64_t d, DType dtype);
  ~AttentionPeer();
  void run(const void* q, const void* k, const void* v, void* out);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// 3-D convolution x [1, C, T, H, W] * w [O, C, kt, kh, kw], stride 1, zero padding `pad` on every side.
class ConvPeer {
 public:
  ConvPeer(int64_t c, int64_t o, const int64_t spatial[3], const int64_t kernel[3], const int64_t pad[3], DType dtype);
  ~ConvPeer();
  // Reorders x and w (plain NCDHW / OIDHW) into the primitive's layouts; run() then times the conv alone.
  void set_inputs(const void* x, const void* w);
  void run();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ltx::cpu::onednn
