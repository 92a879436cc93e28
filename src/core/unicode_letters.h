// Unicode letters as Python's str.isalpha() sees them (general categories Lu, Ll, Lt, Lm, Lo), from a table generated
// by tools/reference/make_unicode_letters.py; and UTF-8 decoding one code point at a time.
#pragma once

#include <cstddef>
#include <string_view>
#include <utility>

namespace ltx {

bool is_unicode_letter(char32_t c);

// The code point at text[i] and its length in bytes; a malformed or truncated sequence: its first byte, length 1.
inline std::pair<char32_t, size_t> utf8_code_point(std::string_view text, size_t i) {
  const auto b = static_cast<unsigned char>(text[i]);
  const size_t n = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 1;
  if (n == 1 || i + n > text.size()) return {b, 1};
  char32_t c = b & (0x7F >> n);
  for (size_t k = 1; k < n; ++k) {
    const auto next = static_cast<unsigned char>(text[i + k]);
    if ((next >> 6) != 2) return {b, 1};
    c = (c << 6) | (next & 0x3F);
  }
  return {c, n};
}

}  // namespace ltx
