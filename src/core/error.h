// Errors at the library boundary: one exception type whose message starts with "[component]".
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace ltx {

class Error : public std::runtime_error {
 public:
  Error(std::string component, const std::string& message)
      : std::runtime_error("[" + component + "] " + message), component_(std::move(component)) {}
  const std::string& component() const { return component_; }

 private:
  std::string component_;
};

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
