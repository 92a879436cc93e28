// Errors at the library boundary: the one exception type, ltx::Error (public, ltx/error.hpp: "[component] message"
// and a category), and the checks that throw it. Code below the API leaves the category Unspecified; the API names
// the phase's category (src/api/error_phase.h).
#pragma once

#include <sstream>
#include <string>

#include "ltx/error.hpp"

namespace ltx {

namespace detail {
template <typename... Args>
std::string concat(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return out.str();
}
}  // namespace detail

// Throws ltx::Error("component", message parts...) unless cond holds. For bad input, not for programmer bugs.
#define LTX_CHECK(cond, component, ...)                                             \
  do {                                                                              \
    if (!(cond)) throw ::ltx::Error(component, ::ltx::detail::concat(__VA_ARGS__)); \
  } while (0)

[[noreturn]] inline void fail(const std::string& component, const std::string& message) {
  throw Error(component, message);
}

}  // namespace ltx
