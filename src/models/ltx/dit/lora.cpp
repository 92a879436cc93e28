#include "models/ltx/dit/lora.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "core/error.h"
#include "io/json.h"
#include "models/ltx/dit/dit_keys.h"
#include "nn/weight_source.h"

namespace ltx::ltxm {
namespace {

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool ends_with(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

enum class Part { Down, Up, Alpha };

struct KeyParts {
  std::string module;  // the key without its LoRA suffix
  Part part;
  bool kohya_suffix;  // lora_down / lora_up rather than lora_A / lora_B
};

std::optional<KeyParts> split_key(const std::string& key) {
  static const std::pair<const char*, Part> kSuffixes[] = {
      {".lora_A.weight", Part::Down},
      {".lora_B.weight", Part::Up},
      {".lora_A.default.weight", Part::Down},
      {".lora_B.default.weight", Part::Up},
      {".lora_down.weight", Part::Down},
      {".lora_up.weight", Part::Up},
      {".alpha", Part::Alpha},
  };
  for (const auto& [suffix, part] : kSuffixes)
    if (ends_with(key, suffix)) {
      const bool kohya = std::string_view(suffix).find("lora_down") != std::string_view::npos ||
                         std::string_view(suffix).find("lora_up") != std::string_view::npos;
      return KeyParts{key.substr(0, key.size() - std::string_view(suffix).size()), part, kohya};
    }
  return std::nullopt;
}

bool outside_dit(std::string_view module) {
  return starts_with(module, "text_embedding_projection.") ||
         module.find("embeddings_connector.") != std::string_view::npos;
}

// The official name a file's module string stands for, and which naming it used; empty when none fits.
struct Resolved {
  std::string module;
  std::string naming;
};

class NameResolver {
 public:
  explicit NameResolver(const LoraTargets& targets) : known_(targets.modules.begin(), targets.modules.end()) {
    for (const auto& m : targets.modules) {
      std::string flat = m;
      for (char& c : flat)
        if (c == '.') c = '_';
      flattened_[flat] = m;
    }
  }

  bool known(const std::string& module) const { return known_.count(module) != 0; }

  Resolved resolve(std::string_view s, bool kohya) const {
    const std::string official_naming = kohya ? "comfyui" : "official";
    for (std::string_view prefix : {"diffusion_model.", "model.diffusion_model."})
      if (starts_with(s, prefix)) return {std::string(s.substr(prefix.size())), official_naming};
    if (starts_with(s, "transformer.")) return {dit_key_from_diffusers(s.substr(12)), "diffusers"};
    if (starts_with(s, "lora_unet_")) {
      const auto it = flattened_.find(std::string(s.substr(10)));
      return {it == flattened_.end() ? std::string(s) : it->second, "kohya"};
    }
    // No prefix: an official name, else a Diffusers one.
    if (known(std::string(s))) return {std::string(s), official_naming};
    return {dit_key_from_diffusers(s), "diffusers"};
  }

 private:
  std::set<std::string> known_;
  std::map<std::string, std::string> flattened_;
};

struct PairBuilder {
  std::string key_prefix;  // the file's module string, for messages
  Tensor down, up;
  std::optional<float> alpha;
};

// Diffusers / PEFT files may state one lora_alpha and r for every module in `lora_adapter_metadata`.
std::optional<float> peft_scale(const WeightSource& file) {
  const auto it = file.metadata().find("lora_adapter_metadata");
  if (it == file.metadata().end()) return std::nullopt;
  const Json m = Json::parse(it->second, nullptr, false);
  if (m.is_discarded() || !m.contains("lora_alpha") || !m.contains("r")) return std::nullopt;
  for (const char* pattern : {"alpha_pattern", "rank_pattern"})
    LTX_CHECK(!m.contains(pattern) || m.at(pattern).empty(), "lora", file.describe(), ": per-module ", pattern,
              " in lora_adapter_metadata is not supported");
  const Json& alpha = m.at("lora_alpha");
  const Json& rank = m.at("r");
  LTX_CHECK(alpha.is_number() && rank.is_number() && rank.get<double>() > 0 && std::isfinite(alpha.get<double>()) &&
                std::isfinite(rank.get<double>()),
            "lora", file.describe(), ": lora_adapter_metadata needs a finite lora_alpha and a rank r > 0, got ",
            alpha.dump(), " and ", rank.dump());
  return static_cast<float>(alpha.get<double>() / rank.get<double>());
}

// One item per line; a long list (a LoRA of another model names hundreds of layers) shows its first ten.
std::string join(const std::vector<std::string>& items) {
  constexpr size_t kShown = 10;
  std::ostringstream os;
  for (size_t i = 0; i < items.size() && i < kShown; ++i) os << "\n    " << items[i];
  if (items.size() > kShown) os << "\n    ... and " << items.size() - kShown << " more";
  return os.str();
}

// LTX-2.3 added gated attention (a to_gate_logits Linear in every attention) and nine AdaLN rows per block where
// LTX-2 has six (ltx_core/model/transformer/attention.py, transformer.py; the layouts in src/synth/layouts). A LoRA
// trained on the other version names or shapes exactly those layers differently.
bool is_gate_module(std::string_view module) { return ends_with(module, ".to_gate_logits"); }
bool is_adaln_module(std::string_view module) { return module.find("adaln_single.linear") != std::string_view::npos; }

struct VersionSigns {
  bool lora_gates = false;    // the LoRA adapts a to_gate_logits layer
  bool adaln_6_on_9 = false;  // an AdaLN pair of 6 rows per block against a DiT of 9
  bool adaln_9_on_6 = false;  // and the reverse
};

// " (a LoRA for LTX-2.3 on an LTX-2 DiT)"-style words for the head of the error, or "" when nothing points at
// a version mismatch.
std::string version_mismatch(const VersionSigns& v, const LoraTargets& targets) {
  const bool dit_gates = std::any_of(targets.modules.begin(), targets.modules.end(),
                                     [](const std::string& m) { return is_gate_module(m); });
  if ((v.lora_gates && !dit_gates) || v.adaln_9_on_6)
    return " this LoRA was made for LTX-2.3 and the DiT is LTX-2 (LTX-2.3's gated attention and 9-row AdaLN "
           "layers do not exist or do not fit here); use a LoRA trained for LTX-2.";
  if (v.adaln_6_on_9 && dit_gates)
    return " this LoRA was made for LTX-2 and the DiT is LTX-2.3 (its AdaLN layers have 6 rows per block where "
           "LTX-2.3 has 9); use a LoRA trained for LTX-2.3.";
  return "";
}

}  // namespace

LoraSpec parse_lora_spec(std::string_view arg) {
  LoraSpec spec{std::string(arg), 1.0f};
  const size_t colon = arg.rfind(':');
  if (colon == std::string_view::npos || colon + 1 == arg.size()) return spec;
  const std::string_view tail = arg.substr(colon + 1);
  float v = 0.0f;
  const auto [end, ec] = std::from_chars(tail.data(), tail.data() + tail.size(), v);
  if (ec != std::errc() || end != tail.data() + tail.size()) return spec;  // part of the path (e.g. C:\...)
  spec.path = std::string(arg.substr(0, colon));
  spec.strength = v;
  LTX_CHECK(!spec.path.empty(), "lora", "'", std::string(arg), "' names no file");
  return spec;
}

LoraAdapter read_lora(const std::string& path, const LoraTargets& targets, bool allow_partial) {
  return read_lora(*open_safetensors(path), targets, allow_partial);
}

LoraAdapter read_lora(const WeightSource& source, const LoraTargets& targets, bool allow_partial,
                      std::string_view key_prefix) {
  const WeightSource* file = &source;
  const std::string path = source.describe();
  const NameResolver resolver(targets);
  const std::optional<float> metadata_scale = peft_scale(*file);

  LoraAdapter out;
  out.path = path;
  std::map<std::string, PairBuilder> pairs;  // by official module
  std::vector<std::string> order;
  std::set<std::string> not_applied;
  std::vector<std::string> unmatched, problems;
  VersionSigns signs;
  for (const std::string& key : file->names()) {
    if (!starts_with(key, key_prefix)) continue;
    const auto parts = split_key(key.substr(key_prefix.size()));
    if (!parts) {
      unmatched.push_back(key + " (not a LoRA tensor: no lora_A/lora_B/lora_down/lora_up/alpha suffix)");
      continue;
    }
    const Resolved r = resolver.resolve(parts->module, parts->kohya_suffix);
    signs.lora_gates = signs.lora_gates || is_gate_module(r.module);
    if (outside_dit(r.module)) {
      not_applied.insert(r.module);
      continue;
    }
    if (!resolver.known(r.module)) {
      unmatched.push_back(key);
      continue;
    }
    if (out.naming.empty()) out.naming = r.naming;
    auto [it, fresh] = pairs.try_emplace(r.module);
    if (fresh) {
      order.push_back(r.module);
      it->second.key_prefix = parts->module;
    }
    PairBuilder& p = it->second;
    if (parts->part == Part::Alpha) {
      p.alpha = file->get(key).to(DType::F32).to_floats().at(0);
    } else {
      Tensor& slot = parts->part == Part::Down ? p.down : p.up;
      if (slot.defined()) problems.push_back(key + ": a second tensor for the same module (mixed namings?)");
      slot = file->get(key);
    }
  }
  for (const std::string& module : order) {
    PairBuilder& p = pairs.at(module);
    if (!p.down.defined() || !p.up.defined()) {
      problems.push_back(p.key_prefix + ": has " + (p.down.defined() ? "A/down" : "B/up") + " but not " +
                         (p.down.defined() ? "B/up" : "A/down"));
      continue;
    }
    const auto [n_out, n_in] = targets.shape(module);
    const Shape& a = p.down.shape();
    const Shape& b = p.up.shape();
    if (a.rank() != 2 || b.rank() != 2 || a[1] != n_in || b[0] != n_out || a[0] != b[1]) {
      if (is_adaln_module(module) && b.rank() == 2) {
        signs.adaln_6_on_9 = signs.adaln_6_on_9 || b[0] * 9 == n_out * 6;
        signs.adaln_9_on_6 = signs.adaln_9_on_6 || b[0] * 6 == n_out * 9;
      }
      problems.push_back(p.key_prefix + ": A " + a.str() + " and B " + b.str() + " do not fit " + module + " [" +
                         std::to_string(n_out) + ", " + std::to_string(n_in) + "]");
      continue;
    }
    LoraLayer layer{module, p.down, p.up, 1.0f};
    const auto rank = static_cast<float>(a[0]);
    if (p.alpha)
      layer.scale = *p.alpha / rank;
    else if (metadata_scale)
      layer.scale = *metadata_scale;
    out.layers.push_back(std::move(layer));
  }
  out.not_applied.assign(not_applied.begin(), not_applied.end());
  // --lora-allow-partial skips keys this DiT lacks, but not those of another model version.
  const std::string mismatch = version_mismatch(signs, targets);
  if (!unmatched.empty() && (!allow_partial || !mismatch.empty()))
    problems.push_back(std::to_string(unmatched.size()) + " keys name no Linear layer of this DiT" +
                       (mismatch.empty() ? " (--lora-allow-partial skips them)" : "") + ":" + join(unmatched));
  else
    out.unmatched = unmatched;
  LTX_CHECK(problems.empty(), "lora", path, ":", mismatch, join(problems));
  LTX_CHECK(!out.layers.empty(), "lora", path, ": no LoRA layer applies to this DiT");
  return out;
}

}  // namespace ltx::ltxm
