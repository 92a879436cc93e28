// Scratch memory a plan lends the kernels of one step: Plan::run binds the step's span (laid out in its arena, sized
// by the kernel's own query, e.g. gemm::scratch_bytes) on the thread that runs the step, for the step's duration.
// A kernel that finds a large enough span bound uses it instead of its grow-only thread-local buffers, so a plan's
// peak_bytes() counts the scratch; called outside a plan, or with too small a span, it falls back to those buffers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace ltx::cpu {

struct KernelScratch {
  std::byte* data = nullptr;  // 64-byte aligned
  size_t bytes = 0;
};

// The span bound on the calling thread (empty when none).
KernelScratch bound_kernel_scratch();

// Binds a span on this thread for the binding's lifetime (the previous one is restored after).
class KernelScratchBinding {
 public:
  explicit KernelScratchBinding(KernelScratch span);
  ~KernelScratchBinding();
  KernelScratchBinding(const KernelScratchBinding&) = delete;
  KernelScratchBinding& operator=(const KernelScratchBinding&) = delete;

 private:
  KernelScratch previous_;
};

// A 64-byte aligned buffer that only grows: a kernel's fallback when no large enough span is lent. After the first call
// at a size, calls allocate nothing; `grew` (when given) says whether this call allocated.
class GrowOnlyBuffer {
 public:
  std::byte* get(int64_t bytes, bool* grew = nullptr);

 private:
  struct Free {
    void operator()(std::byte* p) const;
  };
  std::unique_ptr<std::byte, Free> data_;
  int64_t size_ = 0;
};

}  // namespace ltx::cpu
