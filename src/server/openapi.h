// The OpenAPI 3.1 document of `ltx serve`'s API: docs/openapi.json, built into the binary (GET /openapi.json).
#pragma once

#include <string>

namespace ltx::server {

const std::string& openapi_document();

}  // namespace ltx::server
