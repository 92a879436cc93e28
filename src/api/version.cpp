// ltx::version() (ltx/engine.hpp): CMake's project version, defined for this file only (CMakeLists.txt), so a new
// version rebuilds one file.
#include "ltx/engine.hpp"

#ifndef LTX_VERSION
#define LTX_VERSION "unknown"
#endif

namespace ltx {

const char* version() { return LTX_VERSION; }

}  // namespace ltx
