// Writes one StableHLO function as MLIR text (the generic form: every op as "stablehlo.name"(operands) {attributes}
// : (types) -> type), the program PJRT's compile takes. Values are SSA names with their element type and
// dimensions; each method appends one op and returns its result. Float constants are written as hex bit patterns, so
// they are exact and infinities need no literal.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.h"

namespace ltx::xla {

// An element type as StableHLO spells it: "f32", "bf16", "i32", "i1" (the comparisons' booleans), ...
using Elem = std::string;
Elem elem_of(DType dtype);       // throws for the GGUF block types, which no StableHLO type holds
bool is_integer(const Elem& e);  // i32, i64, ui8, ... (not i1)

struct HloValue {
  std::string name;  // "%12", "%arg3"
  Elem elem;
  std::vector<int64_t> dims;

  int rank() const { return static_cast<int>(dims.size()); }
  int64_t numel() const;
  std::string type() const;  // "tensor<2x3xf32>"
};

enum class Compare { EQ, NE, LT, LE, GT, GE };
enum class Reduction { Sum, Max, Min };

class HloBuilder {
 public:
  // One parameter of the function (call in argument order before anything else).
  HloValue parameter(Elem elem, std::vector<int64_t> dims);
  // The whole module: `func.func public @main(...) -> (results)`.
  std::string module(std::span<const HloValue> results) const;

  // Elementwise, on operands of the result's type (see broadcast for mixing shapes).
  HloValue unary(std::string_view op, const HloValue& x);                      // "exponential", "tanh", "logistic", ...
  HloValue binary(std::string_view op, const HloValue& a, const HloValue& b);  // "add", "multiply", ...
  HloValue add(const HloValue& a, const HloValue& b) { return binary("add", a, b); }
  HloValue sub(const HloValue& a, const HloValue& b) { return binary("subtract", a, b); }
  HloValue mul(const HloValue& a, const HloValue& b) { return binary("multiply", a, b); }
  HloValue div(const HloValue& a, const HloValue& b) { return binary("divide", a, b); }
  HloValue max(const HloValue& a, const HloValue& b) { return binary("maximum", a, b); }
  HloValue min(const HloValue& a, const HloValue& b) { return binary("minimum", a, b); }
  HloValue compare(const HloValue& a, const HloValue& b, Compare direction);
  HloValue select(const HloValue& predicate, const HloValue& on_true, const HloValue& on_false);
  HloValue clamp(const HloValue& lo, const HloValue& x, const HloValue& hi);
  HloValue erf(const HloValue& x);                      // chlo.erf, which XLA expands
  HloValue convert(const HloValue& x, const Elem& to);  // the same value when already of that type
  HloValue bitcast(const HloValue& x, const Elem& to);  // the same bits as another type of the same width

  // A constant of `dims` filled with `value` (floats exactly, integers by value).
  HloValue splat(double value, const Elem& elem, std::vector<int64_t> dims);
  // x times `factor`, x plus `offset` (scalars, broadcast).
  HloValue scaled(const HloValue& x, double factor) { return mul(x, splat(factor, x.elem, x.dims)); }
  HloValue shifted(const HloValue& x, double offset) { return add(x, splat(offset, x.elem, x.dims)); }
  HloValue iota(const Elem& elem, std::vector<int64_t> dims, int axis);

  // Layout.
  HloValue reshape(const HloValue& x, std::vector<int64_t> dims);
  HloValue transpose(const HloValue& x, std::span<const int> perm);
  // x's dimension i becomes result dimension mapping[i].
  HloValue broadcast_in_dim(const HloValue& x, std::vector<int64_t> dims, std::span<const int64_t> mapping);
  // numpy broadcasting: x's dimensions aligned to the right of `dims`.
  HloValue broadcast_to(const HloValue& x, const std::vector<int64_t>& dims);
  HloValue slice(const HloValue& x, std::span<const int64_t> start, std::span<const int64_t> limit,
                 std::span<const int64_t> strides);
  HloValue slice_axis(const HloValue& x, int axis, int64_t start, int64_t limit, int64_t stride = 1);
  HloValue concat(std::span<const HloValue> parts, int axis);
  HloValue pad(const HloValue& x, const HloValue& value, std::span<const int64_t> low, std::span<const int64_t> high,
               std::span<const int64_t> interior);
  HloValue reverse(const HloValue& x, std::span<const int64_t> axes);

  // Reductions (an f32 accumulator is the caller's choice: convert first) over `axes`, which leave the result.
  HloValue reduce(const HloValue& x, std::span<const int64_t> axes, Reduction kind);

  // dot_general: batch dimensions pair up, contracting dimensions are summed; the result is batch dims, then lhs's
  // free dims, then rhs's.
  HloValue dot_general(const HloValue& lhs, const HloValue& rhs, std::span<const int64_t> lhs_batch,
                       std::span<const int64_t> rhs_batch, std::span<const int64_t> lhs_contract,
                       std::span<const int64_t> rhs_contract, const Elem& result_elem);

  // Convolution over layout [B, C, *S] x [O, I, *K] -> [B, O, *S'] with explicit low/high zero padding.
  struct ConvWindow {
    std::vector<int64_t> stride, pad_low, pad_high, lhs_dilation, rhs_dilation;
    int64_t feature_groups = 1;
  };
  HloValue convolution(const HloValue& x, const HloValue& w, const ConvWindow& window, const Elem& result_elem);

  // A loop: `state` is carried through `body` while `condition` (an i1 scalar) holds; returns the final state. Both
  // regions see only the state (everything they read from outside is passed in it).
  using Region = std::function<std::vector<HloValue>(HloBuilder&, const std::vector<HloValue>&)>;
  std::vector<HloValue> while_loop(const std::vector<HloValue>& state, const Region& condition, const Region& body);
  // x[start...] of `sizes` (starts are i32 scalars, clamped into range as XLA does).
  HloValue dynamic_slice(const HloValue& x, const std::vector<HloValue>& starts, std::vector<int64_t> sizes);

  // Rows of `table` [V, D] picked by `ids` [...] -> [..., D].
  HloValue gather_rows(const HloValue& table, const HloValue& ids);

  const std::string& body() const { return body_; }

 private:
  HloValue fresh(Elem elem, std::vector<int64_t> dims);
  // Appends `%r = "stablehlo.<op>"(operands) {attributes} : (types) -> type`.
  HloValue emit(std::string_view op, std::span<const HloValue> operands, const std::string& attributes, Elem elem,
                std::vector<int64_t> dims);

  std::vector<HloValue> parameters_;
  std::string body_;
  int next_ = 0;
};

// "array<i64: 1, 2>"
std::string i64_array(std::span<const int64_t> values);

}  // namespace ltx::xla
