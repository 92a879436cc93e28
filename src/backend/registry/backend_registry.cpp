// The backends an engine can choose by name (backend/backend.h): one line per backend built in.
#include "backend/backend.h"
#include "core/error.h"

namespace ltx {

std::vector<std::string> backend_names() { return {"cpu"}; }

const Backend& backend_named(std::string_view name) {
  if (name == "cpu") return cpu_backend();
  std::string valid;
  for (const std::string& n : backend_names()) valid += (valid.empty() ? "" : ", ") + n;
  fail("options", "unknown backend '" + std::string(name) + "' (valid: " + valid + ")");
}

}  // namespace ltx
