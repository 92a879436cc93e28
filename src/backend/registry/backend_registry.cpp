// The backends an engine can choose by name (backend/backend.h): one line per backend built in. The XLA backend is
// built when scripts/setup found the PJRT header (LTX_HAVE_XLA); choosing it loads its plugin.
#include "backend/backend.h"
#include "core/error.h"
#ifdef LTX_HAVE_XLA
#include "backend/xla/xla_backend.h"
#endif

namespace ltx {

std::vector<std::string> backend_names() {
#ifdef LTX_HAVE_XLA
  return {"cpu", "xla"};
#else
  return {"cpu"};
#endif
}

const Backend& backend_named(std::string_view name, const std::string& xla_plugin) {
  if (name == "cpu") return cpu_backend();
#ifdef LTX_HAVE_XLA
  if (name == "xla") return xla::xla_backend(xla_plugin);
#endif
  std::string valid;
  for (const std::string& n : backend_names()) valid += (valid.empty() ? "" : ", ") + n;
  fail("options", "unknown backend '" + std::string(name) + "' (valid: " + valid + ")");
}

}  // namespace ltx
