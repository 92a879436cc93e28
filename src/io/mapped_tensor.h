// Tensors that borrow bytes from a memory-mapped model file, shared by the safetensors and GGUF readers.
#pragma once

#include <cstddef>
#include <memory>

#include "core/mapped_file.h"
#include "core/tensor.h"

namespace ltx::io {

// A Storage spanning the whole mapping; it keeps the mapping alive as long as any tensor uses it.
std::shared_ptr<Storage> storage_of_mapping(const std::shared_ptr<MappedFile>& file);

// A zero-copy view of `shape` at byte `offset` of `storage`. When those bytes are not aligned for `dtype`
// (kernels read float* and uint16_t* directly), an owned aligned copy is returned instead.
Tensor mapped_tensor(const std::shared_ptr<Storage>& storage, size_t offset, DType dtype, const Shape& shape);

// Bytes of alignment a kernel may assume for dtype: the element size for plain types, 2 for the GGUF
// block types (their scales are f16 fields).
size_t required_alignment(DType dtype);

}  // namespace ltx::io
