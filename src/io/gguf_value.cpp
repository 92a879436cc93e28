#include "io/gguf_value.h"

#include <array>
#include <limits>
#include <sstream>

#include "core/error.h"

namespace ltx {
namespace {

constexpr std::array<std::string_view, kGGUFTypeCount> kNames = {"u8",   "i8",     "u16",   "i16", "u32", "i32", "f32",
                                                                 "bool", "string", "array", "u64", "i64", "f64"};

[[noreturn]] void wrong_type(const char* wanted, GGUFType actual) {
  fail("gguf", std::string("metadata value is ") + std::string(gguf_type_name(actual)) + ", not " + wanted);
}

template <typename T>
void put(std::ostringstream& out, const T& v) {
  if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, std::string_view>) {
    // Tokens hold newlines and control bytes; escape them so a rendering stays on one line.
    out << '"';
    for (unsigned char ch : v) {
      if (ch == '"' || ch == '\\')
        out << '\\' << ch;
      else if (ch == '\n')
        out << "\\n";
      else if (ch < 0x20 || ch == 0x7f)
        out << "\\x"
            << "0123456789abcdef"[ch >> 4] << "0123456789abcdef"[ch & 15];
      else
        out << ch;
    }
    out << '"';
  } else if constexpr (std::is_same_v<T, bool>) {
    out << (v ? "true" : "false");
  } else if constexpr (std::is_integral_v<T>) {
    out << +v;  // promote 8-bit types so they print as numbers
  } else {
    out << v;
  }
}

}  // namespace

std::string_view gguf_type_name(GGUFType t) {
  const auto i = static_cast<uint32_t>(t);
  return i < kGGUFTypeCount ? kNames[i] : std::string_view("unknown");
}

size_t GGUFArray::size() const {
  return std::visit(
      [](const auto& v) -> size_t {
        if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::monostate>)
          return 0;
        else
          return v.size();
      },
      values);
}

bool GGUFValue::is_integer() const {
  switch (type()) {
    case GGUFType::U8:
    case GGUFType::I8:
    case GGUFType::U16:
    case GGUFType::I16:
    case GGUFType::U32:
    case GGUFType::I32:
    case GGUFType::U64:
    case GGUFType::I64:
      return true;
    default:
      return false;
  }
}

int64_t GGUFValue::as_int() const {
  if (!is_integer()) wrong_type("an integer", type());
  if (const auto* u = std::get_if<uint64_t>(&value_)) {
    LTX_CHECK(*u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()), "gguf", "metadata value ", *u,
              " does not fit in int64");
    return static_cast<int64_t>(*u);
  }
  return std::visit(
      [](const auto& v) -> int64_t {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_integral_v<T>)
          return static_cast<int64_t>(v);
        else
          return 0;  // unreachable: checked by is_integer()
      },
      value_);
}

double GGUFValue::as_float() const {
  if (const auto* f = std::get_if<float>(&value_)) return *f;
  if (const auto* d = std::get_if<double>(&value_)) return *d;
  if (is_integer()) return static_cast<double>(as_int());
  wrong_type("a number", type());
}

bool GGUFValue::as_bool() const {
  if (const auto* b = std::get_if<bool>(&value_)) return *b;
  wrong_type("bool", type());
}

const std::string& GGUFValue::as_string() const {
  if (const auto* s = std::get_if<std::string>(&value_)) return *s;
  wrong_type("string", type());
}

const GGUFArray& GGUFValue::as_array() const {
  if (const auto* a = std::get_if<GGUFArray>(&value_)) return *a;
  wrong_type("array", type());
}

std::string GGUFValue::str(size_t max_items) const {
  std::ostringstream out;
  out.precision(9);
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, GGUFArray>) {
          const size_t n = v.size();
          out << "[" << gguf_type_name(v.elem_type()) << " x " << n << "]";
          std::visit(
              [&](const auto& items) {
                if constexpr (!std::is_same_v<std::decay_t<decltype(items)>, std::monostate>) {
                  for (size_t i = 0; i < n && i < max_items; ++i) {
                    out << (i ? ", " : " ");
                    put(out, static_cast<typename std::decay_t<decltype(items)>::value_type>(items[i]));
                  }
                  if (n > max_items) out << ", ...";
                }
              },
              v.values);
        } else {
          put(out, v);
        }
      },
      value_);
  return out.str();
}

}  // namespace ltx
