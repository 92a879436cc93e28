// A LoRA file (`--lora FILE`: models/ltx/dit/lora.h read_lora): its key naming (official, ComfyUI, kohya, Diffusers),
// pairs, alphas and shapes matched against a DiT's Linears (here two blocks of the official names with their
// widths), strictly and with allow_partial.
#include "models/ltx/dit/lora.h"

#include <string>
#include <utility>

#include "core/error.h"
#include "fuzz_target.h"

namespace {

ltx::ltxm::LoraTargets two_blocks() {
  ltx::ltxm::LoraTargets t;
  for (int b = 0; b < 2; ++b)
    for (const char* m : {"attn1.to_q", "attn1.to_k", "attn1.to_v", "attn1.to_out.0", "attn2.to_q", "attn2.to_k",
                          "attn2.to_v", "attn2.to_out.0", "ff.net.0.proj", "ff.net.2"})
      t.modules.push_back("transformer_blocks." + std::to_string(b) + "." + m);
  t.shape = [](const std::string& module) -> std::pair<int64_t, int64_t> {
    if (module.find("ff.net.0") != std::string::npos) return {128, 32};
    if (module.find("ff.net.2") != std::string::npos) return {32, 128};
    return {32, 32};
  };
  return t;
}

}  // namespace

LTX_FUZZ_TARGET(lora) {
  static ltx::fuzz::InputFile file("lora");
  static const ltx::ltxm::LoraTargets targets = two_blocks();
  const std::string& path = file.write(data, size);
  for (const bool partial : {false, true}) {
    try {
      (void)ltx::ltxm::read_lora(path, targets, partial);
    } catch (const ltx::Error&) {
    }
  }
  return 0;
}
