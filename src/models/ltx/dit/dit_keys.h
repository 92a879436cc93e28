// DiT checkpoint key names in the layouts ltx reads, mapped onto the official (ltx-core) names that Dit::load asks
// for. Official: ltx_core model/transformer/model.py + transformer.py module paths (the single-file checkpoint's
// keys after `model.diffusion_model.`). Diffusers: LTX2VideoTransformer3DModel (diffusers 0.42.1,
// models/transformers/transformer_ltx2.py), whose names the official conversion renames to in
// diffusers scripts/convert_ltx2_to_diffusers.py (LTX_2_0_ / LTX_2_3_TRANSFORMER_KEYS_RENAME_DICT and
// convert_ltx2_transformer_adaln_single).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ltx::ltxm {

// An official DiT key (no prefix) as Diffusers names it; keys of no DiT family pass through unchanged.
std::string dit_key_to_diffusers(std::string_view official);
// The inverse: a Diffusers key as the official layout names it.
std::string dit_key_from_diffusers(std::string_view diffusers);

}  // namespace ltx::ltxm
