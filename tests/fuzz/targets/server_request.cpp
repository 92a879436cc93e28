// `ltx serve`'s POST /v1/videos body (server/video_request.h parse_video_request): any JSON text, strict fields and
// types, base64 images, limits; a refusal is an ApiError naming the field.
#include <string_view>

#include "fuzz_target.h"
#include "io/json.h"
#include "ltx/error.hpp"
#include "server/api_error.h"
#include "server/video_request.h"

LTX_FUZZ_TARGET(server_request) {
  const ltx::Json body = ltx::Json::parse(std::string_view(reinterpret_cast<const char*>(data), size), nullptr, false);
  if (body.is_discarded()) return 0;
  try {
    (void)ltx::server::parse_video_request(body, {}, {}, "ltx-2.3");
  } catch (const ltx::server::ApiError&) {
  } catch (const ltx::Error&) {
  }
  return 0;
}
