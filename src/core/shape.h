// Shapes and strides: up to six dimensions, outermost first (the PyTorch order), stored inline.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>

namespace ltx {

inline constexpr int kMaxRank = 6;

class Shape {
 public:
  Shape() = default;
  Shape(std::initializer_list<int64_t> dims);
  explicit Shape(std::span<const int64_t> dims);

  int rank() const { return rank_; }
  int64_t operator[](int i) const { return dims_[static_cast<size_t>(i)]; }
  int64_t& operator[](int i) { return dims_[static_cast<size_t>(i)]; }
  // Dimension i, counting from the end when negative.
  int64_t dim(int i) const { return dims_[static_cast<size_t>(axis(i))]; }
  // Normalizes a possibly negative axis; throws on out of range.
  int axis(int i) const;
  int64_t numel() const;
  void push_back(int64_t d);
  const int64_t* begin() const { return dims_.data(); }
  const int64_t* end() const { return dims_.data() + rank_; }
  std::span<const int64_t> span() const { return {dims_.data(), static_cast<size_t>(rank_)}; }

  // Row-major strides in elements for these dimensions.
  Shape contiguous_strides() const;
  std::string str() const;  // "[2, 3, 4]"

  friend bool operator==(const Shape& a, const Shape& b) {
    if (a.rank_ != b.rank_) return false;
    for (int i = 0; i < a.rank_; ++i)
      if (a.dims_[static_cast<size_t>(i)] != b.dims_[static_cast<size_t>(i)]) return false;
    return true;
  }

 private:
  std::array<int64_t, kMaxRank> dims_{};
  int rank_ = 0;
};

// The shape two operands broadcast to (numpy rules); throws when they don't.
Shape broadcast_shapes(const Shape& a, const Shape& b);

}  // namespace ltx
