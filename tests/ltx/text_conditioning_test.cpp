// Text conditioning details the golden cases do not isolate: feature extractor selection and register ids.
#include "models/ltx/text/text_conditioning.h"

#include <gtest/gtest.h>

namespace ltx::ltxm {
namespace {

TEST(LtxText, FeatureExtractorVersionFromConfigKeys) {
  EXPECT_EQ(feature_extractor_version(nlohmann::json::object()), FeatureExtractorVersion::V1);
  const nlohmann::json v2 = {{"caption_proj_before_connector", true},
                             {"caption_projection_first_linear", false},
                             {"caption_proj_input_norm", false},
                             {"caption_projection_second_linear", false}};
  EXPECT_EQ(feature_extractor_version(v2), FeatureExtractorVersion::V2);
  nlohmann::json partial = v2;
  partial["caption_proj_input_norm"] = true;
  EXPECT_THROW(feature_extractor_version(partial), Error);
}

TEST(LtxText, RegisterIdsPutValidTokensFirstThenTiledRegisters) {
  EmbeddingsConnector c;
  c.registers = Tensor::empty(DType::F32, {2, 4});
  // Two samples of 4 tokens: left-padded with 1 and 3 valid tokens.
  const Tensor mask = Tensor::from_floats(DType::F32, {2, 4}, {0, 0, 0, 1, 0, 1, 1, 1});
  const std::vector<int64_t> ids = c.register_ids(mask).to_ints();
  // Table rows: 8 feature rows (b·T + t), then register r at row 8 + r; position p >= L takes register p mod 2.
  const std::vector<int64_t> want = {3, 8 + 1, 8 + 0, 8 + 1, 5, 6, 7, 8 + 1};
  EXPECT_EQ(ids, want);
  EXPECT_THROW(c.register_ids(Tensor::empty(DType::F32, {1, 3})), Error);  // 3 is not a multiple of 2
}

TEST(LtxText, RegisterIdsIntoFeaturesOfTheLastColumnsOnly) {
  EmbeddingsConnector c;
  c.registers = Tensor::empty(DType::F32, {2, 4});
  const Tensor mask = Tensor::from_floats(DType::F32, {2, 4}, {0, 0, 0, 1, 0, 1, 1, 1});
  // Features for columns 1..3 only: table rows b·3 + (t − 1), then register r at row 6 + r.
  const std::vector<int64_t> want = {2, 6 + 1, 6 + 0, 6 + 1, 3, 4, 5, 6 + 1};
  EXPECT_EQ(c.register_ids(mask, 1).to_ints(), want);
  EXPECT_THROW(c.register_ids(mask, 2), Error);  // sample 1 has a real token in column 1
}

}  // namespace
}  // namespace ltx::ltxm
