// Tensor: a typed, strided view over a Storage. Copies are cheap (they share storage); views never copy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/shape.h"
#include "core/storage.h"

namespace ltx {

class Tensor {
 public:
  Tensor() = default;

  // Owned, contiguous, zero-filled.
  static Tensor empty(DType dtype, const Shape& shape);
  // Contiguous view of `bytes` starting at `offset` inside a storage (an arena slot, a mapped file).
  static Tensor view_of(std::shared_ptr<Storage> storage, size_t offset, DType dtype, const Shape& shape);
  // Owned copy of f32 values converted (or quantized) to dtype.
  static Tensor from_floats(DType dtype, const Shape& shape, std::span<const float> values);
  static Tensor from_floats(DType dtype, const Shape& shape, std::initializer_list<float> values) {
    return from_floats(dtype, shape, std::span<const float>(values.begin(), values.size()));
  }
  // Owned copy of integer values (i32, i64 or u8).
  static Tensor from_ints(DType dtype, const Shape& shape, std::span<const int64_t> values);

  bool defined() const { return storage_ != nullptr; }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  const Shape& strides() const { return strides_; }  // in elements
  int rank() const { return shape_.rank(); }
  int64_t dim(int i) const { return shape_.dim(i); }
  int64_t numel() const { return shape_.numel(); }
  size_t nbytes() const { return dtype_bytes_for(dtype_, numel()); }  // bytes if it were contiguous
  bool is_contiguous() const;
  const std::shared_ptr<Storage>& storage() const { return storage_; }
  size_t offset() const { return offset_; }  // bytes from the start of storage to element 0

  std::byte* raw() const { return storage_->data() + offset_; }
  template <typename T>
  T* data() const {
    return reinterpret_cast<T*>(raw());
  }

  // Views (no copy). Quantized tensors allow only views that keep whole rows of the last dimension.
  Tensor permute(std::span<const int> perm) const;
  Tensor permute(std::initializer_list<int> perm) const {
    return permute(std::span<const int>(perm.begin(), perm.size()));
  }
  Tensor transpose(int a, int b) const;
  Tensor slice(int axis, int64_t start, int64_t end, int64_t step = 1) const;
  Tensor reshape(const Shape& shape) const;       // a view; throws if the layout makes that impossible
  Tensor broadcast_to(const Shape& shape) const;  // stride-0 view
  Tensor unsqueeze(int axis) const;
  Tensor with_strides(const Shape& shape, const Shape& strides, size_t offset) const;

  // Copies.
  Tensor contiguous() const;  // this tensor itself when already contiguous
  Tensor clone() const;
  Tensor to(DType dtype) const;          // converts; quantized sources dequantize, quantized targets quantize
  std::vector<float> to_floats() const;  // logical (row-major) order, any dtype and layout
  std::vector<int64_t> to_ints() const;  // integer dtypes only

  // Copies src's values into this tensor's (possibly strided) view, converting dtype. Shapes must match.
  void copy_from(const Tensor& src);

  std::string describe() const;  // "bf16[2, 3]"

 private:
  std::shared_ptr<Storage> storage_;
  size_t offset_ = 0;
  DType dtype_ = DType::F32;
  Shape shape_;
  Shape strides_;
};

// Plain-type element access in f32 (the conversion reference kernels use).
float load_as_f32(const std::byte* p, DType t);
void store_from_f32(std::byte* p, DType t, float v);
// Integer element access, exact for i64 ids.
int64_t load_as_i64(const std::byte* p, DType t);
void store_from_i64(std::byte* p, DType t, int64_t v);

// Byte offset of the element at `index` (rank entries) for a plain-type tensor.
inline int64_t element_byte_offset(const Tensor& t, const int64_t* index) {
  int64_t off = 0;
  for (int i = 0; i < t.rank(); ++i) off += index[i] * t.strides()[i];
  return off * static_cast<int64_t>(dtype_block_bytes(t.dtype()));
}

// Calls fn(index) for every index of `shape` in row-major order; `index` points at rank entries.
template <typename Fn>
void for_each_index(const Shape& shape, Fn&& fn) {
  const int rank = shape.rank();
  if (shape.numel() == 0) return;
  int64_t index[kMaxRank] = {};
  while (true) {
    fn(static_cast<const int64_t*>(index));
    int i = rank - 1;
    for (; i >= 0; --i) {
      if (++index[i] < shape[i]) break;
      index[i] = 0;
    }
    if (i < 0) return;
  }
}

}  // namespace ltx
