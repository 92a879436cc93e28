#include "core/tensor.h"

#include <cstring>

#include "core/error.h"
#include "core/float8.h"
#include "core/half.h"
#include "core/quant.h"

namespace ltx {
namespace {

void check_plain(const Tensor& t, const char* what) {
  LTX_CHECK(!dtype_is_quantized(t.dtype()), "tensor", what, " is not supported on quantized ", t.describe());
}

// Quantized views must keep the last dimension whole and contiguous.
void check_quantized_layout(DType dtype, const Shape& shape, const Shape& strides) {
  if (!dtype_is_quantized(dtype) || shape.rank() == 0) return;
  const auto block = static_cast<int64_t>(dtype_block_elems(dtype));
  LTX_CHECK(strides[shape.rank() - 1] == 1 && shape[shape.rank() - 1] % block == 0, "tensor", "a ", dtype_name(dtype),
            " view must keep whole contiguous rows of ", block, "-element blocks");
  for (int i = 0; i < shape.rank() - 1; ++i)
    LTX_CHECK(shape[i] == 1 || strides[i] % block == 0, "tensor", "a ", dtype_name(dtype),
              " view must start rows on block boundaries");
}

}  // namespace

float load_as_f32(const std::byte* p, DType t) {
  switch (t) {
    case DType::F32: {
      float v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case DType::BF16: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return bf16_to_f32(v);
    }
    case DType::F16: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return f16_to_f32(v);
    }
    case DType::I32: {
      int32_t v;
      std::memcpy(&v, p, 4);
      return static_cast<float>(v);
    }
    case DType::I64: {
      int64_t v;
      std::memcpy(&v, p, 8);
      return static_cast<float>(v);
    }
    case DType::U8:
      return static_cast<float>(static_cast<uint8_t>(*p));
    case DType::F8_E4M3:
      return f8_e4m3_to_f32(static_cast<uint8_t>(*p));
    case DType::F8_E5M2:
      return f8_e5m2_to_f32(static_cast<uint8_t>(*p));
    default:
      fail("tensor", std::string("element access on quantized ") + std::string(dtype_name(t)));
  }
}

void store_from_f32(std::byte* p, DType t, float v) {
  switch (t) {
    case DType::F32:
      std::memcpy(p, &v, 4);
      return;
    case DType::BF16: {
      const uint16_t h = f32_to_bf16(v);
      std::memcpy(p, &h, 2);
      return;
    }
    case DType::F16: {
      const uint16_t h = f32_to_f16(v);
      std::memcpy(p, &h, 2);
      return;
    }
    case DType::I32: {
      const auto i = static_cast<int32_t>(v);
      std::memcpy(p, &i, 4);
      return;
    }
    case DType::I64: {
      const auto i = static_cast<int64_t>(v);
      std::memcpy(p, &i, 8);
      return;
    }
    case DType::U8:
      *p = static_cast<std::byte>(static_cast<uint8_t>(v));
      return;
    default:
      fail("tensor", std::string("element store into quantized ") + std::string(dtype_name(t)));
  }
}

int64_t load_as_i64(const std::byte* p, DType t) {
  switch (t) {
    case DType::I32: {
      int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case DType::I64: {
      int64_t v;
      std::memcpy(&v, p, 8);
      return v;
    }
    case DType::U8:
      return static_cast<uint8_t>(*p);
    default:
      return static_cast<int64_t>(load_as_f32(p, t));
  }
}

void store_from_i64(std::byte* p, DType t, int64_t v) {
  switch (t) {
    case DType::I32: {
      const auto i = static_cast<int32_t>(v);
      std::memcpy(p, &i, 4);
      return;
    }
    case DType::I64:
      std::memcpy(p, &v, 8);
      return;
    case DType::U8:
      *p = static_cast<std::byte>(static_cast<uint8_t>(v));
      return;
    default:
      store_from_f32(p, t, static_cast<float>(v));
  }
}

Tensor Tensor::empty(DType dtype, const Shape& shape) {
  return view_of(Storage::allocate(dtype_bytes_for(dtype, shape.numel())), 0, dtype, shape);
}

Tensor Tensor::view_of(std::shared_ptr<Storage> storage, size_t offset, DType dtype, const Shape& shape) {
  const size_t need = dtype_bytes_for(dtype, shape.numel());
  LTX_CHECK(storage != nullptr && offset + need <= storage->bytes(), "tensor", "a view of ", need, " bytes at offset ",
            offset, " does not fit its storage");
  Tensor t;
  t.storage_ = std::move(storage);
  t.offset_ = offset;
  t.dtype_ = dtype;
  t.shape_ = shape;
  t.strides_ = shape.contiguous_strides();
  return t;
}

Tensor Tensor::from_floats(DType dtype, const Shape& shape, std::span<const float> values) {
  LTX_CHECK(static_cast<int64_t>(values.size()) == shape.numel(), "tensor", values.size(), " values given for shape ",
            shape.str());
  Tensor t = empty(dtype, shape);
  if (dtype_is_quantized(dtype)) {
    quantize_row(dtype, values.data(), t.raw(), shape.numel());
    return t;
  }
  const size_t es = dtype_block_bytes(dtype);
  for (size_t i = 0; i < values.size(); ++i) store_from_f32(t.raw() + i * es, dtype, values[i]);
  return t;
}

Tensor Tensor::from_ints(DType dtype, const Shape& shape, std::span<const int64_t> values) {
  LTX_CHECK(dtype == DType::I32 || dtype == DType::I64 || dtype == DType::U8, "tensor",
            "from_ints needs an integer dtype, not ", dtype_name(dtype));
  LTX_CHECK(static_cast<int64_t>(values.size()) == shape.numel(), "tensor", values.size(), " values given for shape ",
            shape.str());
  Tensor t = empty(dtype, shape);
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == DType::I32)
      t.data<int32_t>()[i] = static_cast<int32_t>(values[i]);
    else if (dtype == DType::I64)
      t.data<int64_t>()[i] = values[i];
    else
      t.data<uint8_t>()[i] = static_cast<uint8_t>(values[i]);
  }
  return t;
}

bool Tensor::is_contiguous() const {
  int64_t expect = 1;
  for (int i = rank() - 1; i >= 0; --i) {
    if (shape_[i] != 1 && strides_[i] != expect) return false;
    expect *= shape_[i];
  }
  return true;
}

Tensor Tensor::with_strides(const Shape& shape, const Shape& strides, size_t offset) const {
  LTX_CHECK(shape.rank() == strides.rank(), "tensor", "shape ", shape.str(), " and strides ", strides.str(),
            " differ in rank");
  check_quantized_layout(dtype_, shape, strides);
  if (!dtype_is_quantized(dtype_) && shape.numel() > 0) {
    int64_t last = 0;
    for (int i = 0; i < shape.rank(); ++i) last += (shape[i] - 1) * strides[i];
    const size_t end = offset + static_cast<size_t>(last + 1) * dtype_block_bytes(dtype_);
    LTX_CHECK(end <= storage_->bytes(), "tensor", "view ", shape.str(), " runs past its storage");
  }
  Tensor t = *this;
  t.shape_ = shape;
  t.strides_ = strides;
  t.offset_ = offset;
  return t;
}

Tensor Tensor::permute(std::span<const int> perm) const {
  LTX_CHECK(static_cast<int>(perm.size()) == rank(), "tensor", "permutation of ", perm.size(), " axes for ",
            describe());
  Shape shape, strides;
  bool seen[kMaxRank] = {};
  for (int p : perm) {
    const int a = shape_.axis(p);
    LTX_CHECK(!seen[a], "tensor", "axis ", a, " repeated in a permutation");
    seen[a] = true;
    shape.push_back(shape_[a]);
    strides.push_back(strides_[a]);
  }
  return with_strides(shape, strides, offset_);
}

Tensor Tensor::transpose(int a, int b) const {
  int perm[kMaxRank];
  for (int i = 0; i < rank(); ++i) perm[i] = i;
  std::swap(perm[shape_.axis(a)], perm[shape_.axis(b)]);
  return permute(std::span<const int>(perm, static_cast<size_t>(rank())));
}

Tensor Tensor::slice(int axis, int64_t start, int64_t end, int64_t step) const {
  const int a = shape_.axis(axis);
  const int64_t n = shape_[a];
  if (start < 0) start += n;
  if (end < 0) end += n;
  end = std::min(end, n);
  LTX_CHECK(step > 0 && start >= 0 && start <= end, "tensor", "bad slice [", start, ":", end, ":", step, "] of axis ",
            a, " in ", describe());
  Shape shape = shape_, strides = strides_;
  shape[a] = (end - start + step - 1) / step;
  strides[a] = strides_[a] * step;
  const int64_t elem_off = start * strides_[a];
  const auto block = static_cast<int64_t>(dtype_block_elems(dtype_));
  LTX_CHECK(elem_off % block == 0, "tensor", "slice does not start on a block boundary of ", describe());
  const size_t off = offset_ + static_cast<size_t>(elem_off / block) * dtype_block_bytes(dtype_);
  return with_strides(shape, strides, off);
}

Tensor Tensor::reshape(const Shape& shape) const {
  LTX_CHECK(shape.numel() == numel(), "tensor", "cannot reshape ", describe(), " to ", shape.str());
  LTX_CHECK(is_contiguous(), "tensor", "reshape of non-contiguous ", describe(), " needs a copy first");
  return with_strides(shape, shape.contiguous_strides(), offset_);
}

Tensor Tensor::broadcast_to(const Shape& shape) const {
  check_plain(*this, "broadcast");
  LTX_CHECK(shape.rank() >= rank(), "tensor", "cannot broadcast ", describe(), " to ", shape.str());
  Shape strides;
  const int lead = shape.rank() - rank();
  for (int i = 0; i < shape.rank(); ++i) {
    const int j = i - lead;
    if (j < 0) {
      strides.push_back(0);
      continue;
    }
    LTX_CHECK(shape_[j] == shape[i] || shape_[j] == 1, "tensor", "cannot broadcast ", describe(), " to ", shape.str());
    strides.push_back(shape_[j] == shape[i] ? strides_[j] : 0);
  }
  return with_strides(shape, strides, offset_);
}

Tensor Tensor::unsqueeze(int axis) const {
  const int a = axis < 0 ? axis + rank() + 1 : axis;
  LTX_CHECK(a >= 0 && a <= rank(), "tensor", "unsqueeze axis ", axis, " out of range for ", describe());
  Shape shape, strides;
  for (int i = 0; i <= rank(); ++i) {
    if (i == a) {
      shape.push_back(1);
      strides.push_back(i < rank() ? strides_[i] * shape_[i] : 1);
    }
    if (i < rank()) {
      shape.push_back(shape_[i]);
      strides.push_back(strides_[i]);
    }
  }
  return with_strides(shape, strides, offset_);
}

void Tensor::copy_from(const Tensor& src) {
  LTX_CHECK(src.shape() == shape_, "tensor", "copy of ", src.describe(), " into ", describe());
  if (src.dtype() == dtype_ && src.is_contiguous() && is_contiguous()) {
    std::memmove(raw(), src.raw(), nbytes());
    return;
  }
  if (dtype_is_quantized(dtype_) || dtype_is_quantized(src.dtype())) {
    const std::vector<float> values = src.to_floats();
    LTX_CHECK(is_contiguous(), "tensor", "quantizing into a strided view ", describe());
    if (dtype_is_quantized(dtype_))
      quantize_row(dtype_, values.data(), raw(), numel());
    else
      for (size_t i = 0; i < values.size(); ++i)
        store_from_f32(raw() + i * dtype_block_bytes(dtype_), dtype_, values[i]);
    return;
  }
  const bool ints = !dtype_is_float(dtype_) && !dtype_is_float(src.dtype());
  for_each_index(shape_, [&](const int64_t* idx) {
    std::byte* d = raw() + element_byte_offset(*this, idx);
    const std::byte* s = src.raw() + element_byte_offset(src, idx);
    if (ints)
      store_from_i64(d, dtype_, load_as_i64(s, src.dtype()));  // exact for large ids
    else
      store_from_f32(d, dtype_, load_as_f32(s, src.dtype()));
  });
}

Tensor Tensor::contiguous() const {
  if (is_contiguous()) return *this;
  return clone();
}

Tensor Tensor::clone() const {
  Tensor t = empty(dtype_, shape_);
  t.copy_from(*this);
  return t;
}

Tensor Tensor::to(DType dtype) const {
  Tensor t = empty(dtype, shape_);
  t.copy_from(*this);
  return t;
}

std::vector<float> Tensor::to_floats() const {
  std::vector<float> out(static_cast<size_t>(numel()));
  if (out.empty()) return out;
  if (dtype_is_quantized(dtype_)) {
    const int64_t row = shape_.dim(-1);
    const int64_t rows = numel() / row;
    Shape outer = shape_;
    outer[rank() - 1] = 1;
    int64_t r = 0;
    for_each_index(outer, [&](const int64_t* idx) {
      int64_t elem = 0;
      for (int i = 0; i < rank() - 1; ++i) elem += idx[i] * strides_[i];
      const size_t off = offset_ + static_cast<size_t>(elem) / dtype_block_elems(dtype_) * dtype_block_bytes(dtype_);
      dequantize_row(dtype_, storage_->data() + off, out.data() + r * row, row);
      ++r;
    });
    (void)rows;
    return out;
  }
  size_t i = 0;
  for_each_index(shape_,
                 [&](const int64_t* idx) { out[i++] = load_as_f32(raw() + element_byte_offset(*this, idx), dtype_); });
  return out;
}

std::vector<int64_t> Tensor::to_ints() const {
  LTX_CHECK(dtype_ == DType::I32 || dtype_ == DType::I64 || dtype_ == DType::U8, "tensor", "to_ints of non-integer ",
            describe());
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(numel()));
  for_each_index(
      shape_, [&](const int64_t* idx) { out.push_back(load_as_i64(raw() + element_byte_offset(*this, idx), dtype_)); });
  return out;
}

std::string Tensor::describe() const { return std::string(dtype_name(dtype_)) + shape_.str(); }

}  // namespace ltx
