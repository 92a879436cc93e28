#include "core/path_fields.h"

#include <exception>

namespace ltx {
namespace {

bool parse_number(const std::string& s, double& out) {
  if (s.empty()) return false;
  try {
    size_t used = 0;
    out = std::stod(s, &used);
    return used == s.size();
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

PathFields split_path_fields(const std::string& argument, int max_fields) {
  PathFields out;
  std::string rest = argument;
  for (int k = 0; k < max_fields; ++k) {
    const size_t colon = rest.rfind(':');
    if (colon == std::string::npos) break;
    double v = 0;
    if (!parse_number(rest.substr(colon + 1), v)) break;
    out.fields.insert(out.fields.begin(), rest.substr(colon + 1));
    out.values.insert(out.values.begin(), v);
    rest = rest.substr(0, colon);
  }
  out.path = rest;
  return out;
}

}  // namespace ltx
