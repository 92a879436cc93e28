#include "backend/cpu/kernel_scratch.h"

#include <cstdlib>

#include "core/error.h"

namespace ltx::cpu {
namespace {

thread_local KernelScratch t_bound;

}  // namespace

KernelScratch bound_kernel_scratch() { return t_bound; }

KernelScratchBinding::KernelScratchBinding(KernelScratch span) : previous_(t_bound) { t_bound = span; }

KernelScratchBinding::~KernelScratchBinding() { t_bound = previous_; }

std::byte* GrowOnlyBuffer::get(int64_t bytes, bool* grew) {
  if (grew != nullptr) *grew = bytes > size_;
  if (bytes > size_) {
    const auto rounded = static_cast<size_t>((bytes + 63) / 64 * 64);
    data_.reset(static_cast<std::byte*>(std::aligned_alloc(64, rounded)));
    LTX_CHECK(data_ != nullptr, "cpu", "out of memory for a ", rounded, "-byte kernel buffer");
    size_ = bytes;
  }
  return data_.get();
}

void GrowOnlyBuffer::Free::operator()(std::byte* p) const { std::free(p); }

}  // namespace ltx::cpu
