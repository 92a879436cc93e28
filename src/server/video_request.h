// The body of POST /v1/videos, checked field by field: a JSON object with known fields of the right types and
// ranges (unknown fields are refused), turned into the engine's GenerateRequest and the record the job keeps.
// Images come as bytes (base64), never as paths: the server decides where they are written.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/json.h"
#include "ltx/request.hpp"

namespace ltx::server {

// What one request may ask for (`ltx serve --max-frames` ...): the server's own bounds, inside the engine's.
struct RequestLimits {
  int64_t max_frames = 257;
  int64_t max_width = 1920, max_height = 1920;
  int max_steps = 100;
  int64_t max_batch = 4;
  size_t max_images = 8;
  size_t max_prompt_chars = 20000;
};

// The values a request gets for the fields it leaves out (the embedded default model runs smaller).
struct RequestDefaults {
  int64_t frames = 121, height = 512, width = 768;
  int steps = 0;  // 0: the model's own
  double fps = 24.0;
};

struct EncodedImage {
  std::vector<uint8_t> bytes;
  std::string extension;  // ".png", ".jpg", ".webp", ".bmp": from the bytes' signature
  int64_t frame = 0;
  double strength = 1.0;
  int crf = 33;
};

struct VideoRequest {
  GenerateRequest request;  // images left empty: the server writes `images` and adds their paths
  std::vector<EncodedImage> images;
  Json record;  // the accepted fields after defaults (no image bytes): what the job object shows
};

// The request's fields, for error messages and the OpenAPI document's check.
const std::vector<std::string>& video_request_fields();

// Throws ApiError (400) naming the first field at fault and the valid values.
VideoRequest parse_video_request(const Json& body, const RequestLimits& limits, const RequestDefaults& defaults,
                                 const std::string& model_id);

// RFC 4648 base64 (padding required, no line breaks); std::nullopt when `text` is not that.
std::optional<std::vector<uint8_t>> decode_base64(std::string_view text);

}  // namespace ltx::server
