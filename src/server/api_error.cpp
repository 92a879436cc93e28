#include "server/api_error.h"

namespace ltx::server {

std::string to_text(const Json& json) { return json.dump(-1, ' ', false, Json::error_handler_t::replace); }

Json error_body(const ApiError& error) {
  const char* type = error.status == 401   ? "authentication_error"
                     : error.status == 404 ? "not_found_error"
                     : error.status == 429 ? "rate_limit_error"
                     : error.status >= 500 ? "server_error"
                                           : "invalid_request_error";
  return Json{{"error",
               {{"message", error.what()},
                {"type", type},
                {"param", error.param.empty() ? Json(nullptr) : Json(error.param)},
                {"code", error.code}}}};
}

}  // namespace ltx::server
