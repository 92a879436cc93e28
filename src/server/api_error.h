// The one way `ltx serve` refuses a request: an HTTP status and an OpenAI-style error object
// ({"error": {"message", "type", "param", "code"}}) naming the field and the reason.
#pragma once

#include <stdexcept>
#include <string>

#include "io/json.h"

namespace ltx::server {

struct ApiError : std::runtime_error {
  int status;           // 400, 401, 404, 405, 409, 411, 413, 415, 416, 429, 500
  std::string param;    // the request field at fault; empty when none is
  std::string code;     // "invalid_value", "unknown_field", "queue_full", ...
  int retry_after = 0;  // 429: the seconds the client should wait (the Retry-After header); 0: none

  ApiError(int status, std::string code, const std::string& message, std::string param = {})
      : std::runtime_error(message), status(status), param(std::move(param)), code(std::move(code)) {}
};

// JSON text with any invalid UTF-8 (a client's bytes quoted in a message) replaced, never an exception.
std::string to_text(const Json& json);

// {"error": {...}}; the type follows the status: invalid_request_error (4xx), authentication_error (401),
// not_found_error (404), rate_limit_error (429), server_error (5xx).
Json error_body(const ApiError& error);

}  // namespace ltx::server
