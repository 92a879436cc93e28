#include "nn/weight_loader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "core/error.h"
#include "graph/compile.h"
#include "io/safetensors.h"
#include "nn/layers.h"

namespace ltx {
namespace {
namespace fs = std::filesystem;

class WeightLoaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ltx_nn_test_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& file, std::vector<std::pair<std::string, Tensor>> tensors) {
    const std::string path = (dir_ / file).string();
    write_safetensors(path, tensors, {{"config", "{}"}});
    return path;
  }
  static Tensor filled(const Shape& s, float v) {
    return Tensor::from_floats(DType::F32, s, std::vector<float>(static_cast<size_t>(s.numel()), v));
  }
  fs::path dir_;
};

TEST_F(WeightLoaderTest, ScopesPrefixesAndAcceptsAMatchingCheckpoint) {
  const auto src = open_safetensors(write("a.safetensors", {{"model.blocks.0.proj.weight", filled({3, 2}, 1)},
                                                            {"model.blocks.0.proj.bias", filled({3}, 2)},
                                                            {"vae.other", filled({1}, 0)}}));
  WeightLoader root(src, "model.");
  const auto proj = nn::Linear::load(root.scope("blocks").scope(0), "proj", 2, 3, true, DType::F32);
  EXPECT_EQ(proj.name, "model.blocks.0.proj");
  EXPECT_EQ(proj.weight.shape(), (Shape{3, 2}));
  EXPECT_EQ(proj.bias.to_floats()[0], 2.0f);
  EXPECT_NO_THROW(root.finish());  // "vae.other" is outside the root
}

// Every problem is reported in one error: missing, wrong shape and unexpected, each by full name.
TEST_F(WeightLoaderTest, ReportsEveryProblemAtOnce) {
  const auto src = open_safetensors(write(
      "b.safetensors",
      {{"m.a.weight", filled({4, 4}, 1)}, {"m.b.weight", filled({2, 2}, 1)}, {"m.stray.weight", filled({1}, 1)}}));
  WeightLoader l(src, "m.");
  l.get("a.weight", {4, 4});
  l.get("b.weight", {3, 3});
  l.get("c.weight", {5});
  try {
    l.finish();
    FAIL() << "finish() accepted a mismatched checkpoint";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("m.c.weight [5]"), std::string::npos) << msg;
    EXPECT_NE(msg.find("m.b.weight: expected [3, 3], file has [2, 2]"), std::string::npos) << msg;
    EXPECT_NE(msg.find("m.stray.weight"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("m.a.weight"), std::string::npos) << msg;
  }
}

TEST_F(WeightLoaderTest, IgnoredPrefixesAreNotUnexpected) {
  const auto src =
      open_safetensors(write("c.safetensors", {{"vision_tower.x", filled({1}, 1)}, {"w", filled({1}, 1)}}));
  WeightLoader l(src);
  l.get("w", {1});
  l.ignore("vision_tower.");
  EXPECT_NO_THROW(l.finish());
}

TEST_F(WeightLoaderTest, ShardedFolderLoadsAndDuplicateNamesAreAnError) {
  write("model-00001-of-00002.safetensors", {{"x", filled({2}, 1)}});
  write("model-00002-of-00002.safetensors", {{"y", filled({2}, 2)}});
  const auto src = open_safetensors(dir_.string());
  EXPECT_TRUE(src->contains("x") && src->contains("y"));
  EXPECT_EQ(src->metadata().at("config"), "{}");
  write("model-00003-of-00002.safetensors", {{"x", filled({2}, 3)}});
  EXPECT_THROW(open_safetensors(dir_.string()), Error);
}

TEST_F(WeightLoaderTest, LinearMatchesTheMatmulReference) {
  const std::vector<float> w = {1, 2, 3, 4, 5, 6}, b = {0.5f, -1.0f}, x = {1, 0, -1, 2, 1, 0};
  const auto src = open_safetensors(write("d.safetensors", {{"l.weight", Tensor::from_floats(DType::F32, {2, 3}, w)},
                                                            {"l.bias", Tensor::from_floats(DType::F32, {2}, b)}}));
  const auto lin = nn::Linear::load(WeightLoader(src), "l", 3, 2, true, DType::F32);
  Graph g;
  g.output(lin(g.input("x", DType::F32, {2, 3})), "y");
  auto plan = compile(g, cpu_backend());
  const auto y = plan->run({Tensor::from_floats(DType::F32, {2, 3}, x)})[0].to_floats();
  // [1,0,-1]·W^T = [1-3, 4-6] = [-2, -2]; [2,1,0]·W^T = [4, 13]
  const std::vector<float> expect = {-2 + 0.5f, -2 - 1.0f, 4 + 0.5f, 13 - 1.0f};
  EXPECT_EQ(y, expect);
}

}  // namespace
}  // namespace ltx
