// The run's memory plan (stages/memory_plan.h) at the published LTX-2.3 size: all resident when the budget holds
// every phase, the transformer streamed under a budget below its weights, and a request no plan fits refused with
// what it needs and the largest size that fits.
#include "stages/memory_plan.h"

#include <gtest/gtest.h>

#include <fstream>

#include "core/error.h"
#include "nlohmann/json.hpp"

namespace ltx::stages {
namespace {

constexpr size_t kGiB = size_t{1} << 30;

ltxm::DitConfig published_dit() {
  std::ifstream in(std::string(LTX_SOURCE_DIR) + "/src/synth/layouts/ltx-2.3-22b.json");
  const nlohmann::json j = nlohmann::json::parse(in);
  return ltxm::DitConfig::from_metadata(j.at("metadata").at("config").at("transformer"),
                                        ltxm::DitModelType::AudioVideo);
}

// The fp8 checkpoint and a Gemma Q4_K_M (sizes users report: ~22 GB transformer, ~7 GB Gemma).
PhaseWeights fp8_weights() {
  PhaseWeights w;
  w.text_encoder = 7 * kGiB;
  w.transformer = 22 * kGiB;
  w.decoders = kGiB;
  w.upsampler = kGiB;
  w.text_bytes_per_token = 49 * 3840 * 4 + 3 * 15360 * 2;
  return w;
}

RunShape shape(int64_t w, int64_t h, int64_t f) {
  RunShape s;
  s.width = w;
  s.height = h;
  s.frames = f;
  s.passes = 1;
  return s;
}

TEST(RunMemoryPlan, EverythingResidentWhenTheBudgetHoldsIt) {
  const MemoryPlan p = plan_memory(published_dit(), fp8_weights(), shape(768, 512, 25), 64 * kGiB);
  EXPECT_TRUE(p.all_resident);
  for (const PhaseMemory& phase : p.phases) EXPECT_EQ(phase.streamed_bytes, 0u) << phase.name;
  EXPECT_GE(p.peak_bytes(), 30 * kGiB);
  EXPECT_LE(p.peak_bytes(), 64 * kGiB);
}

TEST(RunMemoryPlan, TheTransformerStreamsUnderABudgetBelowItsWeights) {
  const MemoryPlan p = plan_memory(published_dit(), fp8_weights(), shape(768, 512, 25), 12 * kGiB);
  EXPECT_FALSE(p.all_resident);
  const PhaseMemory* dit = p.phase("transformer");
  ASSERT_NE(dit, nullptr);
  EXPECT_GT(dit->streamed_bytes, 10 * kGiB);
  EXPECT_EQ(dit->resident_bytes + dit->streamed_bytes, 22 * kGiB);
  EXPECT_EQ(p.phase("text encoder")->streamed_bytes, 0u);  // 7 GiB fits on its own
  EXPECT_LE(p.peak_bytes(), 12 * kGiB);
  EXPECT_NE(p.describe().find("streamed"), std::string::npos);
}

TEST(RunMemoryPlan, ActivationsGrowWithTheRequest) {
  const ltxm::DitConfig dit = published_dit();
  const size_t small = estimate_dit_activation_bytes(dit, shape(384, 256, 9));
  const size_t large = estimate_dit_activation_bytes(dit, shape(768, 512, 121));
  EXPECT_GT(large, 4 * small);  // 32x the video tokens, over a fixed part (contexts, scratch)
  RunShape guided = shape(768, 512, 121);
  guided.passes = 3;
  EXPECT_GT(estimate_dit_activation_bytes(dit, guided), 2 * large);
}

// Appended conditioning tokens cost what generated ones do; an IC-LoRA stage's [T, T] attention mask adds its mask,
// bias and batched copy (3 x T² f32) per item and pass.
TEST(RunMemoryPlan, ConditioningTokensAndTheAttentionMaskAreCounted) {
  const ltxm::DitConfig dit = published_dit();
  const RunShape plain = shape(768, 512, 25);
  RunShape appended = plain;
  appended.appended_video_tokens = 384;
  EXPECT_GT(estimate_dit_activation_bytes(dit, appended), estimate_dit_activation_bytes(dit, plain));
  RunShape masked = plain;
  masked.passes = 2;
  masked.masked_stage_tokens = 3072;
  RunShape unmasked = masked;
  unmasked.masked_stage_tokens = 0;
  EXPECT_EQ(estimate_dit_activation_bytes(dit, masked) - estimate_dit_activation_bytes(dit, unmasked),
            size_t{2} * 3072 * 3072 * 12);
}

// Between two stages the transformer's resident pages stay while the upsampler runs: its weights and the reordered
// copy its convolutions make of them are counted in the transformer phase, so they fit beside its resident share.
TEST(RunMemoryPlan, TheUpsamplerBetweenTheStagesFitsBesideTheResidentTransformer) {
  RunShape one = shape(384, 256, 9), two = one;
  two.two_stage = true;
  const MemoryPlan p1 = plan_memory(published_dit(), fp8_weights(), one, 20 * kGiB);
  const MemoryPlan p2 = plan_memory(published_dit(), fp8_weights(), two, 20 * kGiB);
  const PhaseMemory *dit1 = p1.phase("transformer"), *dit2 = p2.phase("transformer");
  ASSERT_NE(dit2, nullptr);
  EXPECT_GE(dit2->activation_bytes, dit1->activation_bytes + 2 * fp8_weights().upsampler);
  EXPECT_LE(dit2->resident_bytes + dit2->activation_bytes + p2.read_ahead_bytes, 20 * kGiB);
  EXPECT_LE(p2.peak_bytes(), 20 * kGiB);
}

// A budget is a limit, not a target: a plan that streams (and so would fill the budget) keeps the reserve free for
// what it does not model, with what was already held counted too, and uses the rest.
TEST(RunMemoryPlan, AStreamingPlanKeepsTheReserveFree) {
  for (const size_t budget : {12 * kGiB, 20 * kGiB}) {
    SCOPED_TRACE(budget / kGiB);
    PhaseWeights w = fp8_weights();
    w.held_bytes = kGiB / 2;
    const MemoryPlan p = plan_memory(published_dit(), w, shape(384, 256, 9), budget);
    ASSERT_FALSE(p.all_resident);
    const size_t reserve = unplanned_reserve_bytes(budget);
    EXPECT_EQ(p.reserve_bytes, reserve);
    EXPECT_GE(reserve, budget / 64);
    EXPECT_LE(p.peak_bytes() + reserve, budget);
    EXPECT_GE(p.peak_bytes() + reserve + (size_t{16} << 20), budget) << "the plan should use the rest";
    EXPECT_NE(p.describe().find("kept free for what the plan does not model"), std::string::npos) << p.describe();
  }
}

// Only Gemma's plan streams: the feature extractor and the connectors (5.9 GiB in the 2.3 checkpoint) run whole, so a
// streaming text-encoder phase holds them resident and gives Gemma what is left. With Gemma given the whole resident
// share instead, the phase once mapped 12.7 GiB of weights plus activations under a 12 GiB budget (peak 13.5 GiB).
TEST(RunMemoryPlan, TheConnectorsStayWholeWhenTheTextEncoderStreams) {
  PhaseWeights w = fp8_weights();
  w.text_encoder_unstreamed = 6 * kGiB;
  w.text_encoder = 7 * kGiB + w.text_encoder_unstreamed;
  const MemoryPlan p = plan_memory(published_dit(), w, shape(384, 256, 9), 12 * kGiB);
  const PhaseMemory* text = p.phase("text encoder");
  ASSERT_NE(text, nullptr);
  EXPECT_GT(text->streamed_bytes, 0u);
  EXPECT_EQ(text->unstreamed_bytes, 6 * kGiB);
  EXPECT_GE(text->resident_bytes, text->unstreamed_bytes);
  EXPECT_LE(p.held_bytes + p.reserve_bytes + text->resident_bytes + text->activation_bytes + p.read_ahead_bytes,
            12 * kGiB);
  // A budget that cannot hold the connectors beside the activations is refused, naming what the run needs.
  EXPECT_THROW(plan_memory(published_dit(), w, shape(384, 256, 9), 6 * kGiB), Error);
}

TEST(RunMemoryPlan, ARequestNoPlanFitsIsRefusedWithTheSizeThatFits) {
  try {
    plan_memory(published_dit(), fp8_weights(), shape(100032, 100032, 121), 20 * kGiB);
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("100032x100032x121 needs at least"), std::string::npos) << m;
    EXPECT_NE(m.find("the largest size that fits: "), std::string::npos) << m;
    EXPECT_EQ(m.find("fits: none"), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace ltx::stages
