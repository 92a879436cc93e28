#include "core/shape.h"

#include "core/error.h"

namespace ltx {

Shape::Shape(std::initializer_list<int64_t> dims) : Shape(std::span<const int64_t>(dims.begin(), dims.size())) {}

Shape::Shape(std::span<const int64_t> dims) {
  LTX_CHECK(dims.size() <= kMaxRank, "shape", "rank ", dims.size(), " exceeds the maximum of ", kMaxRank);
  for (int64_t d : dims) push_back(d);
}

int Shape::axis(int i) const {
  const int a = i < 0 ? i + rank_ : i;
  LTX_CHECK(a >= 0 && a < rank_, "shape", "axis ", i, " out of range for ", str());
  return a;
}

int64_t Shape::numel() const {
  // A zero anywhere makes it 0 even where the other dimensions' product overflows ([2^52, 2304, 0]).
  int64_t n = 1;
  bool overflow = false;
  for (int i = 0; i < rank_; ++i) {
    const int64_t d = dims_[static_cast<size_t>(i)];
    if (d == 0) return 0;
    overflow = overflow || __builtin_mul_overflow(n, d, &n);
  }
  LTX_CHECK(!overflow, "shape", str(), " holds more than 2^63 elements");
  return n;
}

void Shape::push_back(int64_t d) {
  LTX_CHECK(rank_ < kMaxRank, "shape", "rank exceeds the maximum of ", kMaxRank);
  LTX_CHECK(d >= 0, "shape", "negative dimension ", d);
  dims_[static_cast<size_t>(rank_++)] = d;
}

Shape Shape::contiguous_strides() const {
  Shape s = *this;
  int64_t stride = 1;
  for (int i = rank_ - 1; i >= 0; --i) {
    s.dims_[static_cast<size_t>(i)] = stride;
    stride *= dims_[static_cast<size_t>(i)];
  }
  return s;
}

std::string Shape::str() const {
  std::string s = "[";
  for (int i = 0; i < rank_; ++i) s += (i ? ", " : "") + std::to_string(dims_[static_cast<size_t>(i)]);
  return s + "]";
}

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  const int rank = std::max(a.rank(), b.rank());
  Shape out;
  for (int i = 0; i < rank; ++i) {
    const int ia = i - (rank - a.rank());
    const int ib = i - (rank - b.rank());
    const int64_t da = ia >= 0 ? a[ia] : 1;
    const int64_t db = ib >= 0 ? b[ib] : 1;
    LTX_CHECK(da == db || da == 1 || db == 1, "shape", "cannot broadcast ", a.str(), " with ", b.str());
    out.push_back(da == 1 ? db : da);
  }
  return out;
}

}  // namespace ltx
