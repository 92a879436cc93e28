#include "io/mapped_tensor.h"

#include <cstdint>
#include <cstring>

namespace ltx::io {

std::shared_ptr<Storage> storage_of_mapping(const std::shared_ptr<MappedFile>& file) {
  // The mapping is read-only (PROT_READ); tensors made from it must never be written.
  auto* data = const_cast<std::byte*>(file->data());
  return Storage::borrow(data, file->size(), file);
}

// Block types start with an f16 scale; the 8-bit floats are single bytes.
size_t required_alignment(DType dtype) { return dtype_block_elems(dtype) > 1 ? 2 : dtype_block_bytes(dtype); }

Tensor mapped_tensor(const std::shared_ptr<Storage>& storage, size_t offset, DType dtype, const Shape& shape) {
  const auto address = reinterpret_cast<uintptr_t>(storage->data()) + offset;
  if (address % required_alignment(dtype) == 0) return Tensor::view_of(storage, offset, dtype, shape);
  Tensor copy = Tensor::empty(dtype, shape);
  std::memcpy(copy.raw(), storage->data() + offset, copy.nbytes());
  return copy;
}

}  // namespace ltx::io
