// ltx::parse_lora_file (ltx/options.hpp), ltx::parse_image_condition and ltx::parse_reference_video
// (ltx/request.hpp): the argument grammars the CLI and the C API share.
#include <charconv>
#include <cmath>
#include <optional>
#include <string>
#include <system_error>

#include "api/error_phase.h"
#include "ltx/options.hpp"
#include "ltx/request.hpp"
#include "stages/ic_lora_input.h"
#include "stages/image_conditioning.h"

namespace ltx {
namespace {

// The whole of `text` as a finite number (std::from_chars: no locale, no leading '+' or spaces).
std::optional<double> parse_finite(std::string_view text) {
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || !std::isfinite(value))
    return std::nullopt;
  return value;
}

}  // namespace

LoraFile parse_lora_file(std::string_view text, std::string_view name) {
  LoraFile lora{std::string(text), 1.0f};
  if (const size_t colon = text.rfind(':'); colon != std::string_view::npos) {
    const std::optional<double> strength = parse_finite(text.substr(colon + 1));
    if (strength && std::isfinite(static_cast<float>(*strength))) {
      lora.path = std::string(text.substr(0, colon));
      lora.strength = static_cast<float>(*strength);
    }
  }
  if (lora.path.empty())
    throw Error("options", std::string(name) + " '" + std::string(text) + "' names no file",
                ErrorCategory::InvalidRequest);
  return lora;
}

ImageCondition parse_image_condition(std::string_view text) {
  return api::in_phase(ErrorCategory::InvalidRequest, [&] {
    const stages::ImageConditionInput in = stages::parse_image_argument(std::string(text));
    return ImageCondition{in.path, in.frame, in.strength, in.crf};
  });
}

ReferenceVideo parse_reference_video(std::string_view text, double default_strength) {
  return api::in_phase(ErrorCategory::InvalidRequest, [&] {
    const stages::ReferenceVideoInput in = stages::parse_reference_argument(std::string(text), default_strength);
    return ReferenceVideo{in.path, in.strength};
  });
}

}  // namespace ltx
