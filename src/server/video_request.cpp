#include "server/video_request.h"

#include <charconv>
#include <cmath>
#include <limits>

#include "server/api_error.h"

namespace ltx::server {
namespace {

[[noreturn]] void invalid(const std::string& param, const std::string& message) {
  throw ApiError(400, "invalid_value", message, param);
}

std::string type_name(const Json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number_integer() || v.is_number_unsigned()) return "an integer";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_array()) return "an array";
  return "an object";
}

[[noreturn]] void wrong_type(const std::string& param, const char* wanted, const Json& v) {
  throw ApiError(400, "invalid_type", param + " must be " + wanted + ", got " + type_name(v), param);
}

// Integer fields take JSON integers only (17, not 17.0 or "17").
int64_t integer(const Json& v, const std::string& param, int64_t min, int64_t max) {
  if (!v.is_number_integer() && !v.is_number_unsigned()) wrong_type(param, "an integer", v);
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(max))
    invalid(param, param + " must be in [" + std::to_string(min) + ", " + std::to_string(max) + "], got " + v.dump());
  const int64_t i = v.get<int64_t>();
  if (i < min || i > max)
    invalid(param, param + " must be in [" + std::to_string(min) + ", " + std::to_string(max) + "], got " + v.dump());
  return i;
}

double number(const Json& v, const std::string& param) {
  if (!v.is_number()) wrong_type(param, "a number", v);
  const double d = v.get<double>();
  if (!std::isfinite(d)) invalid(param, param + " must be finite");
  return d;
}

const std::string& text(const Json& v, const std::string& param) {
  if (!v.is_string()) wrong_type(param, "a string", v);
  return v.get_ref<const std::string&>();
}

bool boolean(const Json& v, const std::string& param) {
  if (!v.is_boolean()) wrong_type(param, "a boolean", v);
  return v.get<bool>();
}

void only_fields(const Json& object, const std::string& where, const std::vector<std::string>& fields) {
  for (const auto& [key, value] : object.items()) {
    if (std::find(fields.begin(), fields.end(), key) != fields.end()) continue;
    std::string valid;
    for (const std::string& f : fields) valid += (valid.empty() ? "" : ", ") + f;
    const std::string param = where.empty() ? key : where + "." + key;
    throw ApiError(400, "unknown_field", "unknown field '" + param + "' (valid: " + valid + ")", param);
  }
}

// "768x512": two whole numbers, each a multiple of 32 within the limits (64 for two stages is the engine's check).
std::pair<int64_t, int64_t> parse_size(const std::string& s, const RequestLimits& limits) {
  const size_t x = s.find('x');
  int64_t w = 0, h = 0;
  const auto whole = [](std::string_view part, int64_t& out) {
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), out);
    return !part.empty() && ec == std::errc() && end == part.data() + part.size();
  };
  if (x == std::string::npos || !whole(std::string_view(s).substr(0, x), w) ||
      !whole(std::string_view(s).substr(x + 1), h))
    invalid("size", "size must be \"WIDTHxHEIGHT\" (e.g. \"768x512\"), got \"" + s + "\"");
  if (w < 32 || h < 32 || w % 32 != 0 || h % 32 != 0 || w > limits.max_width || h > limits.max_height)
    invalid("size", "size \"" + s + "\": width and height must be multiples of 32, width in [32, " +
                        std::to_string(limits.max_width) + "], height in [32, " + std::to_string(limits.max_height) +
                        "]");
  return {w, h};
}

Guidance parse_guidance(const Json& v, const std::string& param, Json& record) {
  if (!v.is_object()) wrong_type(param, "an object", v);
  only_fields(v, param, {"cfg", "stg", "rescale", "modality", "stg_blocks", "skip_step"});
  Guidance g;
  const auto field = [&](const char* name, std::optional<float>& out) {
    if (!v.contains(name)) return;
    const double d = number(v[name], param + "." + name);
    if (std::fabs(d) > 1000) invalid(param + "." + name, param + "." + name + " must be in [-1000, 1000]");
    out = static_cast<float>(d);
  };
  field("cfg", g.cfg);
  field("stg", g.stg);
  field("rescale", g.rescale);
  field("modality", g.modality);
  if (v.contains("skip_step"))
    g.skip_step = static_cast<int>(integer(v["skip_step"], param + ".skip_step", 0, 1000000));
  if (v.contains("stg_blocks")) {
    const Json& blocks = v["stg_blocks"];
    const std::string p = param + ".stg_blocks";
    if (!blocks.is_array()) wrong_type(p, "an array of block indices", blocks);
    if (blocks.size() > 256) invalid(p, p + " holds at most 256 indices");
    std::vector<int64_t> list;
    for (size_t i = 0; i < blocks.size(); ++i)
      list.push_back(integer(blocks[i], p + "[" + std::to_string(i) + "]", 0, 1023));
    g.stg_blocks = list;
  }
  record = v;
  return g;
}

// The image formats FFmpeg's image demuxers recognise by their first bytes.
std::string image_extension(const std::vector<uint8_t>& b) {
  const auto starts = [&](std::initializer_list<uint8_t> sig) {
    return b.size() >= sig.size() && std::equal(sig.begin(), sig.end(), b.begin());
  };
  if (starts({0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A})) return ".png";
  if (starts({0xFF, 0xD8, 0xFF})) return ".jpg";
  if (b.size() >= 12 && starts({'R', 'I', 'F', 'F'}) && std::equal(b.begin() + 8, b.begin() + 12, "WEBP"))
    return ".webp";
  if (starts({'B', 'M'})) return ".bmp";
  return {};
}

EncodedImage parse_image(const Json& v, const std::string& param, int64_t frames, Json& record) {
  if (!v.is_object()) wrong_type(param, "an object {data, frame, strength, crf}", v);
  only_fields(v, param, {"data", "frame", "strength", "crf"});
  if (!v.contains("data")) invalid(param + ".data", param + ".data is required: the image file's bytes in base64");
  EncodedImage image;
  std::string_view data = text(v["data"], param + ".data");
  // A data URL's header ("data:image/png;base64,") is allowed; the format comes from the bytes.
  if (data.substr(0, 5) == "data:") {
    const size_t comma = data.find(',');
    if (comma == std::string_view::npos || data.substr(0, comma).find(";base64") == std::string_view::npos)
      invalid(param + ".data", param + ".data is a data URL without \";base64,\"");
    data = data.substr(comma + 1);
  }
  std::optional<std::vector<uint8_t>> bytes = decode_base64(data);
  if (!bytes) invalid(param + ".data", param + ".data is not base64 (RFC 4648, with padding, no line breaks)");
  image.extension = image_extension(*bytes);
  if (image.extension.empty())
    invalid(param + ".data", param + ".data is not a PNG, JPEG, WebP or BMP image (by its first bytes)");
  image.bytes = std::move(*bytes);
  if (v.contains("frame")) image.frame = integer(v["frame"], param + ".frame", 0, frames - 1);
  if (v.contains("strength")) {
    image.strength = number(v["strength"], param + ".strength");
    if (image.strength < 0 || image.strength > 1) invalid(param + ".strength", param + ".strength must be in [0, 1]");
  }
  if (v.contains("crf")) image.crf = static_cast<int>(integer(v["crf"], param + ".crf", 0, 51));
  record = {{"frame", image.frame}, {"strength", image.strength}, {"crf", image.crf}, {"bytes", image.bytes.size()}};
  return image;
}

}  // namespace

const std::vector<std::string>& video_request_fields() {
  static const std::vector<std::string> fields = {"model",
                                                  "prompt",
                                                  "negative_prompt",
                                                  "size",
                                                  "frames",
                                                  "seconds",
                                                  "fps",
                                                  "seed",
                                                  "steps",
                                                  "batch",
                                                  "mode",
                                                  "distilled",
                                                  "sampler",
                                                  "keyframe_interpolation",
                                                  "video_guidance",
                                                  "audio_guidance",
                                                  "images",
                                                  "enhance_prompt"};
  return fields;
}

VideoRequest parse_video_request(const Json& body, const RequestLimits& limits, const RequestDefaults& defaults,
                                 const std::string& model_id) {
  if (!body.is_object()) throw ApiError(400, "invalid_type", "the body must be a JSON object, got " + type_name(body));
  only_fields(body, "", video_request_fields());
  VideoRequest out;
  GenerateRequest& r = out.request;
  Json& rec = out.record;

  if (body.contains("model") && text(body["model"], "model") != model_id)
    invalid("model", "model '" + body["model"].get<std::string>() + "' is not served here (served: " + model_id + ")");
  if (!body.contains("prompt")) invalid("prompt", "prompt is required");
  const std::string& prompt = text(body["prompt"], "prompt");
  if (prompt.find_first_not_of(" \t\r\n") == std::string::npos) invalid("prompt", "prompt is empty");
  if (prompt.size() > limits.max_prompt_chars)
    invalid("prompt", "prompt is longer than " + std::to_string(limits.max_prompt_chars) + " bytes");
  r.prompts = {prompt};
  rec["prompt"] = prompt;
  rec["negative_prompt"] = nullptr;
  if (body.contains("negative_prompt")) {
    const std::string& negative = text(body["negative_prompt"], "negative_prompt");
    if (negative.size() > limits.max_prompt_chars)
      invalid("negative_prompt",
              "negative_prompt is longer than " + std::to_string(limits.max_prompt_chars) + " bytes");
    r.negative_prompt = negative;
    rec["negative_prompt"] = negative;
  }

  r.mode = Mode::OneStage;
  if (body.contains("mode")) {
    const std::string& mode = text(body["mode"], "mode");
    if (mode != "one_stage" && mode != "two_stage")
      invalid("mode", "mode must be \"one_stage\" or \"two_stage\", got \"" + mode + "\"");
    r.mode = mode == "two_stage" ? Mode::TwoStage : Mode::OneStage;
  }
  rec["mode"] = r.mode == Mode::TwoStage ? "two_stage" : "one_stage";

  r.width = defaults.width;
  r.height = defaults.height;
  if (body.contains("size")) std::tie(r.width, r.height) = parse_size(text(body["size"], "size"), limits);
  rec["size"] = std::to_string(r.width) + "x" + std::to_string(r.height);

  r.fps = defaults.fps;
  if (body.contains("fps")) {
    r.fps = number(body["fps"], "fps");
    if (r.fps <= 0 || r.fps > 240) invalid("fps", "fps must be in (0, 240]");
  }
  rec["fps"] = r.fps;

  if (body.contains("frames") && body.contains("seconds")) invalid("seconds", "give frames or seconds, not both");
  r.frames = defaults.frames;
  if (body.contains("frames")) {
    r.frames = integer(body["frames"], "frames", 1, limits.max_frames);
    if ((r.frames - 1) % 8 != 0)
      invalid("frames", "frames must be 8k+1 (9, 17, 25, ...; at most " + std::to_string(limits.max_frames) +
                            "), got " + std::to_string(r.frames));
  } else if (body.contains("seconds")) {
    const double s = number(body["seconds"], "seconds");
    const double max_s = static_cast<double>(limits.max_frames - 1) / r.fps;
    if (s <= 0 || s > max_s)
      invalid("seconds", "seconds must be in (0, " + std::to_string(max_s) + "] at " + std::to_string(r.fps) + " fps");
    // The shortest 8k+1 frames that last at least `s`.
    r.frames = 8 * static_cast<int64_t>(std::ceil(s * r.fps / 8 - 1e-9)) + 1;
  }
  rec["frames"] = r.frames;
  rec["seconds"] = static_cast<double>(r.frames - 1) / r.fps;

  r.seed = 10;
  if (body.contains("seed"))
    r.seed = static_cast<uint64_t>(integer(body["seed"], "seed", 0, std::numeric_limits<int64_t>::max()));
  rec["seed"] = r.seed;

  if (body.contains("distilled")) r.distilled = boolean(body["distilled"], "distilled");
  rec["distilled"] = r.distilled;

  if (body.contains("sampler")) {
    const std::string& sampler = text(body["sampler"], "sampler");
    if (sampler != "euler" && sampler != "res2s")
      invalid("sampler", "sampler must be \"euler\" or \"res2s\", got \"" + sampler + "\"");
    r.sampler = sampler == "res2s" ? Sampler::Res2s : Sampler::Euler;
  }
  rec["sampler"] = r.sampler == Sampler::Res2s ? "res2s" : "euler";

  r.steps = r.distilled ? 0 : defaults.steps;
  if (body.contains("steps")) r.steps = static_cast<int>(integer(body["steps"], "steps", 1, limits.max_steps));
  rec["steps"] = r.steps > 0 ? Json(r.steps) : Json(nullptr);

  // The defaults too must be within the server's limits (a server may be started with smaller ones).
  if (r.frames > limits.max_frames)
    invalid("frames", "frames " + std::to_string(r.frames) + " is over the server's limit of " +
                          std::to_string(limits.max_frames) + ": give frames or seconds");
  if (r.width > limits.max_width || r.height > limits.max_height)
    invalid("size", "size " + std::to_string(r.width) + "x" + std::to_string(r.height) +
                        " is over the server's limit: give a size within " + std::to_string(limits.max_width) + "x" +
                        std::to_string(limits.max_height));
  if (r.steps > limits.max_steps)
    invalid("steps", "steps " + std::to_string(r.steps) + " is over the server's limit of " +
                         std::to_string(limits.max_steps) + ": give steps");
  if (body.contains("batch")) r.batch = integer(body["batch"], "batch", 1, limits.max_batch);
  rec["batch"] = r.batch;

  rec["video_guidance"] = Json::object();
  rec["audio_guidance"] = Json::object();
  if (body.contains("video_guidance"))
    r.video_guidance = parse_guidance(body["video_guidance"], "video_guidance", rec["video_guidance"]);
  if (body.contains("audio_guidance"))
    r.audio_guidance = parse_guidance(body["audio_guidance"], "audio_guidance", rec["audio_guidance"]);

  rec["images"] = Json::array();
  if (body.contains("images")) {
    const Json& images = body["images"];
    if (!images.is_array()) wrong_type("images", "an array", images);
    if (images.size() > limits.max_images)
      invalid("images", "images holds at most " + std::to_string(limits.max_images) + " images, got " +
                            std::to_string(images.size()));
    for (size_t i = 0; i < images.size(); ++i) {
      Json image_record;
      out.images.push_back(parse_image(images[i], "images[" + std::to_string(i) + "]", r.frames, image_record));
      rec["images"].push_back(image_record);
    }
  }
  if (body.contains("keyframe_interpolation"))
    r.keyframe_interpolation = boolean(body["keyframe_interpolation"], "keyframe_interpolation");
  if (r.keyframe_interpolation && out.images.empty())
    invalid("keyframe_interpolation", "keyframe_interpolation needs images (at least one)");
  rec["keyframe_interpolation"] = r.keyframe_interpolation;
  // The prompt rewritten by the text encoder first (Gemma sees the first image when there are images); the engine's
  // checks refuse it without a text encoder, or with images and no vision tower.
  if (body.contains("enhance_prompt")) r.enhance_prompt = boolean(body["enhance_prompt"], "enhance_prompt");
  rec["enhance_prompt"] = r.enhance_prompt;
  return out;
}

std::optional<std::vector<uint8_t>> decode_base64(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  const auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::vector<uint8_t> out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    const int pad = last ? (text[i + 3] == '=') + (text[i + 2] == '=' && text[i + 3] == '=') : 0;
    uint32_t bits = 0;
    for (int k = 0; k < 4 - pad; ++k) {
      const int v = value(text[i + k]);
      if (v < 0) return std::nullopt;
      bits |= static_cast<uint32_t>(v) << (18 - 6 * k);
    }
    out.push_back(static_cast<uint8_t>(bits >> 16));
    if (pad < 2) out.push_back(static_cast<uint8_t>(bits >> 8));
    if (pad < 1) out.push_back(static_cast<uint8_t>(bits));
  }
  return out;
}

}  // namespace ltx::server
