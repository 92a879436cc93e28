// GGUF metadata values: the format's scalar types, strings, and arrays of them.
// Type ids from ggml/docs/gguf.md ("gguf_metadata_value_type").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace ltx {

enum class GGUFType : uint32_t {
  U8 = 0,
  I8 = 1,
  U16 = 2,
  I16 = 3,
  U32 = 4,
  I32 = 5,
  F32 = 6,
  Bool = 7,
  String = 8,
  Array = 9,
  U64 = 10,
  I64 = 11,
  F64 = 12,
};
inline constexpr uint32_t kGGUFTypeCount = 13;
std::string_view gguf_type_name(GGUFType t);  // "u32", "string", "array", ...

// Alternatives are in GGUFType order, so variant::index() is the element type id. Nested arrays are not
// supported (no known model uses them); their slot holds monostate. String elements are views of the file's
// mapping (a Gemma vocabulary is 262k of them: no allocation each), valid while the GGUFFile that parsed them
// lives.
using GGUFArrayValues = std::variant<std::vector<uint8_t>, std::vector<int8_t>, std::vector<uint16_t>,
                                     std::vector<int16_t>, std::vector<uint32_t>, std::vector<int32_t>,
                                     std::vector<float>, std::vector<bool>, std::vector<std::string_view>,
                                     std::monostate, std::vector<uint64_t>, std::vector<int64_t>, std::vector<double>>;

struct GGUFArray {
  GGUFArrayValues values;
  GGUFType elem_type() const { return static_cast<GGUFType>(values.index()); }
  size_t size() const;
};

class GGUFValue {
 public:
  using Variant = std::variant<uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, float, bool, std::string,
                               GGUFArray, uint64_t, int64_t, double>;
  GGUFValue() = default;
  explicit GGUFValue(Variant v) : value_(std::move(v)) {}

  GGUFType type() const { return static_cast<GGUFType>(value_.index()); }
  const Variant& variant() const { return value_; }
  bool is_integer() const;
  // Typed access; each throws ltx::Error("gguf", ...) naming the actual type when it does not fit.
  int64_t as_int() const;   // any integer type (u64 above INT64_MAX throws)
  double as_float() const;  // f32, f64 or any integer type
  bool as_bool() const;
  const std::string& as_string() const;
  const GGUFArray& as_array() const;
  // A one-line rendering; arrays longer than max_items show their type, length and first items.
  std::string str(size_t max_items = 8) const;

 private:
  Variant value_;
};

}  // namespace ltx
