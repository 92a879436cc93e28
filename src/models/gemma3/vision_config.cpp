#include "models/gemma3/vision_config.h"

#include <cmath>
#include <sstream>

#include "core/error.h"
#include "io/gguf.h"

namespace ltx::gemma3 {
namespace {

// The shapes the tower and projector need to be consistent (Gemma3MultiModalProjector.__init__'s arithmetic).
void check(const VisionConfig& c, const std::string& where) {
  LTX_CHECK(c.hidden_size > 0 && c.intermediate_size > 0 && c.n_layers > 0 && c.n_heads > 0 && c.patch_size > 0 &&
                c.image_size > 0 && c.mm_tokens_per_image > 0 && c.text_hidden_size > 0,
            "gemma3", where, ": vision sizes must be positive (", c.describe(), ")");
  LTX_CHECK(c.hidden_size % c.n_heads == 0, "gemma3", where, ": vision width ", c.hidden_size,
            " is not a multiple of its ", c.n_heads, " heads");
  LTX_CHECK(c.image_size % c.patch_size == 0, "gemma3", where, ": image size ", c.image_size,
            " is not a multiple of the patch size ", c.patch_size);
  const int64_t side = c.tokens_per_side();
  LTX_CHECK(side * side == c.mm_tokens_per_image && c.grid() % side == 0, "gemma3", where, ": ", c.mm_tokens_per_image,
            " image tokens do not pool a ", c.grid(), "x", c.grid(), " patch grid");
}

}  // namespace

int64_t VisionConfig::tokens_per_side() const {
  return static_cast<int64_t>(std::llround(std::sqrt(static_cast<double>(mm_tokens_per_image))));
}

std::optional<VisionConfig> VisionConfig::from_hf_json(const Json& root) {
  return read_json_fields("gemma3", "config.json", [&]() -> std::optional<VisionConfig> {
    if (!root.contains("vision_config") || root.at("vision_config").is_null()) return std::nullopt;
    const Json& v = root.at("vision_config");
    VisionConfig c;
    c.hidden_size = v.value("hidden_size", c.hidden_size);
    c.intermediate_size = v.value("intermediate_size", c.intermediate_size);
    c.n_layers = v.value("num_hidden_layers", c.n_layers);
    c.n_heads = v.value("num_attention_heads", c.n_heads);
    c.image_size = v.value("image_size", c.image_size);
    c.patch_size = v.value("patch_size", c.patch_size);
    c.layer_norm_eps = v.value("layer_norm_eps", c.layer_norm_eps);
    LTX_CHECK(v.value("num_channels", int64_t{3}) == 3, "gemma3", "config: the vision tower reads 3 channels");
    LTX_CHECK(v.value("hidden_act", std::string("gelu_pytorch_tanh")) == "gelu_pytorch_tanh", "gemma3",
              "config: vision hidden_act '", v.value("hidden_act", std::string()), "' is not supported");
    LTX_CHECK(!v.value("vision_use_head", false), "gemma3", "config: vision_use_head is not supported");
    c.mm_tokens_per_image = root.value("mm_tokens_per_image", c.mm_tokens_per_image);
    if (root.contains("text_config"))
      c.text_hidden_size = root.at("text_config").value("hidden_size", c.text_hidden_size);
    c.boi_token = root.value("boi_token_index", c.boi_token);
    c.eoi_token = root.value("eoi_token_index", c.eoi_token);
    c.image_token = root.value("image_token_index", root.value("image_token_id", c.image_token));
    check(c, "config.json");
    return c;
  });
}

std::optional<VisionConfig> VisionConfig::from_hf_file(const std::string& path) {
  return from_hf_json(read_json_file(path, "gemma3"));
}

// Keys as llama.cpp's convert_hf_to_gguf.py writes them for Gemma3VisionModel (gguf-py constants.py Keys.ClipVision).
VisionConfig VisionConfig::from_mmproj(const GGUFFile& f) {
  const std::string arch = f.value("general.architecture").as_string();
  LTX_CHECK(arch == "clip", "gemma3", f.path(), ": architecture '", arch, "', expected an mmproj file ('clip')");
  if (const GGUFValue* p = f.find("clip.projector_type"))
    LTX_CHECK(p->as_string() == "gemma3", "gemma3", f.path(), ": projector '", p->as_string(),
              "', expected Gemma 3's ('gemma3')");
  const auto get_int = [&](const char* key) { return f.value(std::string("clip.vision.") + key).as_int(); };
  VisionConfig c;
  c.hidden_size = get_int("embedding_length");
  c.intermediate_size = get_int("feed_forward_length");
  c.n_layers = get_int("block_count");
  c.n_heads = get_int("attention.head_count");
  c.image_size = get_int("image_size");
  c.patch_size = get_int("patch_size");
  c.layer_norm_eps = f.value("clip.vision.attention.layer_norm_epsilon").as_float();
  c.text_hidden_size = get_int("projection_dim");
  const int64_t pool = f.find("clip.vision.projector.scale_factor") ? get_int("projector.scale_factor") : 4;
  LTX_CHECK(pool > 0 && c.patch_size > 0 && (c.image_size / c.patch_size) % pool == 0, "gemma3", f.path(),
            ": a pool of ", pool, " does not divide the patch grid");
  const int64_t side = c.image_size / c.patch_size / pool;
  c.mm_tokens_per_image = side * side;
  check(c, f.path());
  return c;
}

std::string VisionConfig::describe() const {
  std::ostringstream s;
  s << "gemma3 vision: " << n_layers << " layers, width " << hidden_size << ", ffn " << intermediate_size << ", heads "
    << n_heads << ", " << image_size << "px in " << patch_size << "px patches, " << mm_tokens_per_image << " tokens of "
    << text_hidden_size;
  return s.str();
}

}  // namespace ltx::gemma3
