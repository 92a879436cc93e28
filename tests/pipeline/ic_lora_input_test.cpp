// IC-LoRA inputs and reference tokens: the --video argument grammar, the encoder's latent frame count, the mask's
// frame-count rule (ic_lora.py _downsample_mask_to_latent asserts it), the LoRA metadata reader (conflicting factors
// refused), and the self-attention mask of several appended groups (mask_utils.py build_attention_mask: a wrapped
// group at its weights, a later unwrapped group at 1 with the generated tokens and 0 with the earlier group). The
// whole chain on files is compared with the reference in tests/golden/pipeline/ic_lora.
#include "stages/ic_lora_input.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "cli/cli_files.h"
#include "core/error.h"
#include "io/safetensors.h"
#include "pipeline/latent_tools.h"
#include "stages/conditioning.h"

namespace ltx {
namespace {

namespace fs = std::filesystem;
using stages::Placement;
using stages::VideoCondition;

TEST(IcLoraInput, ReferenceArgumentTakesATrailingStrengthOnly) {
  const auto a = stages::parse_reference_argument("dir:x/control.mp4:0.25", 1.0);
  EXPECT_EQ(a.path, "dir:x/control.mp4");
  EXPECT_DOUBLE_EQ(a.strength, 0.25);
  const auto b = stages::parse_reference_argument("dir:x/control.mp4", 0.5);
  EXPECT_EQ(b.path, "dir:x/control.mp4");
  EXPECT_DOUBLE_EQ(b.strength, 0.5);
  EXPECT_THROW(stages::parse_reference_argument(":0.5", 1.0), Error);
}

TEST(IcLoraInput, LatentFramesDropTheFramesPast8kPlus1) {
  EXPECT_EQ(stages::reference_latent_frames(1), 1);
  EXPECT_EQ(stages::reference_latent_frames(8), 1);
  EXPECT_EQ(stages::reference_latent_frames(9), 2);
  EXPECT_EQ(stages::reference_latent_frames(16), 2);
  EXPECT_EQ(stages::reference_latent_frames(121), 16);
}

TEST(IcLoraInput, MaskFramesMustFitTheReferenceLatentFrames) {
  const auto mask = [](int64_t frames) {
    return Tensor::from_floats(DType::F32, {1, 1, frames, 4, 4}, std::vector<float>(frames * 16, 1.0f));
  };
  // 2 latent frames take any mask of 2 or more frames; 3 latent frames need 1 + 2k.
  EXPECT_EQ(stages::attention_mask_weights(mask(5), 2, 1, 1, 0.5).size(), 2u);
  EXPECT_EQ(stages::attention_mask_weights(mask(9), 3, 2, 2, 1.0).size(), 12u);
  EXPECT_EQ(stages::attention_mask_weights(mask(1), 1, 2, 2, 1.0).size(), 4u);
  EXPECT_THROW(stages::attention_mask_weights(mask(4), 3, 1, 1, 1.0), Error);
  EXPECT_THROW(stages::attention_mask_weights(mask(1), 2, 1, 1, 1.0), Error);
  // A full mask at strength 0.5 gives 0.5 everywhere (exact in bf16).
  for (const float w : stages::attention_mask_weights(mask(9), 2, 2, 2, 0.5)) EXPECT_EQ(w, 0.5f);
}

TEST(IcLoraInput, MetadataFactorsAreReadAndConflictsRefused) {
  const fs::path dir = fresh_temp_dir("ltx_iclora_input_", "metadata");
  const Tensor t = Tensor::from_floats(DType::F32, {1, 1}, {0.0f});
  const auto lora = [&](const std::string& name, const std::string& factor) {
    std::map<std::string, std::string> metadata;
    if (!factor.empty()) metadata["reference_downscale_factor"] = factor;
    const std::vector<std::pair<std::string, Tensor>> tensors{{"x", t}};
    write_safetensors((dir / name).string(), tensors, metadata);
    return (dir / name).string();
  };
  const std::string plain = lora("plain.safetensors", ""), one = lora("one.safetensors", "1"),
                    two = lora("two.safetensors", "2"), four = lora("four.safetensors", "4"),
                    bad = lora("bad.safetensors", "half");
  const stages::IcLoraMetadata m = stages::read_ic_lora_metadata({plain, one, two});
  EXPECT_EQ(m.downscale_factor, 2);
  EXPECT_EQ(m.ic_loras, (std::vector<std::string>{one, two}));
  EXPECT_TRUE(stages::read_ic_lora_metadata({plain}).ic_loras.empty());
  EXPECT_THROW(stages::read_ic_lora_metadata({two, four}), Error);
  EXPECT_THROW(stages::read_ic_lora_metadata({bad}), Error);
  fs::remove_all(dir);
}

TEST(IcLoraConditioning, AttentionMaskBlocksOfSeveralGroups) {
  // A 1-frame 1x2 latent (2 generated tokens), then a wrapped reference of 1 token at weight 0.25, then an
  // unwrapped reference of 1 token: T = 4.
  const VideoLatentShape target{1, 2, 1, 1, 2};
  stages::StreamState s;
  s.latent = Tensor::from_floats(DType::F32, {1, 2, 2}, std::vector<float>(4, 0.0f));
  s.clean = s.latent;
  s.denoise_mask = Tensor::from_floats(DType::F32, {1, 2, 1}, {1.0f, 1.0f});
  s.positions = video_positions(target, 24.0);
  const Tensor ref = Tensor::from_floats(DType::F32, {1, 2, 1, 1, 1}, {0.5f, -0.5f});
  const std::vector<VideoCondition> items{{ref, 0, 1.0, Placement::Reference, 2, {0.25f}},
                                          {ref, 0, 0.5, Placement::Reference, 1, {}}};
  stages::apply_video_conditions(s, items, target, 24.0);
  ASSERT_EQ(s.attention_mask.shape(), (Shape{1, 4, 4}));
  const std::vector<float> expected = {1,     1,     0.25f, 1,  //
                                       1,     1,     0.25f, 1,  //
                                       0.25f, 0.25f, 1,     0,  //
                                       1,     1,     0,     1};
  EXPECT_EQ(s.attention_mask.to_floats(), expected);
  EXPECT_EQ(s.denoise_mask.to_floats(), (std::vector<float>{1, 1, 0, 0.5f}));
  // Reference positions: time from 0 with the causal fix, H and W times the factor (2 for the first group only).
  const std::vector<float> p = s.positions.to_floats();  // [1, 3, 4, 2]
  const auto at = [&](int64_t axis, int64_t token, int64_t end) {
    return p[static_cast<size_t>((axis * 4 + token) * 2 + end)];
  };
  EXPECT_EQ(at(2, 2, 1), 2 * at(2, 3, 1));
  EXPECT_EQ(at(1, 2, 1), 2 * at(1, 3, 1));
  EXPECT_EQ(at(0, 2, 0), at(0, 3, 0));
}

}  // namespace
}  // namespace ltx
