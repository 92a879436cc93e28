// The loader on full-size stand-ins of the published LTX-2.3 single file (src/synth: the reference's own key list,
// shapes, dtypes and config), written all-zero as sparse files in seconds: it accepts the bf16 and fp8 layouts
// whole, and refuses a file with one key renamed or missing, naming it.
#include <gtest/gtest.h>

#include <algorithm>

#include "../io/test_files.h"
#include "core/error.h"
#include "stages/loaded_models.h"
#include "synth/fp8.h"
#include "synth/layout.h"
#include "synth/safetensors_stream.h"
#include "synth/values.h"

namespace ltx {
namespace {

// Writes `layout` all-zero (fp8 scales 1) to `path`.
void write_zeros(const synth::Layout& layout, const std::string& path) {
  const synth::ValueGenerator zeros(0, true);
  synth::write_safetensors_stream(path, synth::stand_in_tensors(layout, zeros), synth::layout_file_metadata(layout),
                                  {});
}

std::string load_error(const std::string& path) {
  stages::ModelFiles files;
  files.checkpoint = path;
  try {
    stages::load_models(files);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

uint64_t dit_bytes(const synth::Layout& l) {
  uint64_t bytes = 0;
  for (const synth::TensorSpec& t : l.tensors)
    if (t.name.rfind("model.diffusion_model.", 0) == 0 && t.name.find("embeddings_connector.") == std::string::npos)
      bytes += synth::tensor_bytes(t);
  return bytes;
}

TEST(FullSizeLoad, ThePublishedSingleFilesLoadWhole) {
  const test::TempDir dir;
  for (const bool fp8 : {false, true}) {
    const synth::Layout bf16 = synth::published_layout("ltx-2.3-22b");
    const synth::Layout layout = fp8 ? synth::fp8_layout(bf16) : bf16;
    const std::string path = dir.file(fp8 ? "fp8.safetensors" : "bf16.safetensors");
    write_zeros(layout, path);
    stages::ModelFiles files;
    files.checkpoint = path;
    const auto m = stages::load_models(files);
    EXPECT_EQ(m->models.dit->config().n_layers, 48);
    EXPECT_EQ(m->weight_bytes.transformer, dit_bytes(layout)) << (fp8 ? "fp8" : "bf16");
    std::filesystem::remove(path);
  }
}

TEST(FullSizeLoad, ARenamedOrMissingKeyIsNamed) {
  const test::TempDir dir;
  const std::string path = dir.file("broken.safetensors");
  const std::string dit_key = "model.diffusion_model.transformer_blocks.7.attn1.to_q.weight";
  const std::string vae_key = "vae.decoder.conv_out.conv.weight";
  {
    synth::Layout l = synth::published_layout("ltx-2.3-22b");
    auto it = std::find_if(l.tensors.begin(), l.tensors.end(), [&](const auto& t) { return t.name == dit_key; });
    ASSERT_NE(it, l.tensors.end());
    it->name = "model.diffusion_model.transformer_blocks.7.attn1.to_query.weight";
    std::sort(l.tensors.begin(), l.tensors.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    write_zeros(l, path);
    const std::string e = load_error(path);
    EXPECT_NE(e.find("transformer_blocks.7.attn1.to_q.weight"), std::string::npos) << e;
    EXPECT_NE(e.find("to_query.weight"), std::string::npos) << e;
  }
  {
    synth::Layout l = synth::published_layout("ltx-2.3-22b");
    const auto before = l.tensors.size();
    std::erase_if(l.tensors, [&](const auto& t) { return t.name == vae_key; });
    ASSERT_EQ(l.tensors.size(), before - 1) << vae_key << " is not in the layout";
    std::filesystem::remove(path);
    write_zeros(l, path);
    const std::string e = load_error(path);
    EXPECT_NE(e.find("conv_out.conv.weight"), std::string::npos) << e;
  }
}

}  // namespace
}  // namespace ltx
