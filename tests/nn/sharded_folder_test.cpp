// Sharded safetensors folders as Hugging Face writes them (model-0000N-of-0000M.safetensors beside
// model.safetensors.index.json): the index decides the shards, and a missing, truncated or mismatched shard is
// named when the folder is opened, before anything is computed.
#include <gtest/gtest.h>

#include <filesystem>

#include "io/safetensors.h"
#include "io/test_files.h"
#include "nn/weight_source.h"

namespace ltx {
namespace {
namespace fs = std::filesystem;

// Two shards of two tensors each, and their index.
void write_sharded(const test::TempDir& dir) {
  const Tensor t = Tensor::from_floats(DType::F32, Shape{4}, {1, 2, 3, 4});
  const std::vector<std::pair<std::string, Tensor>> a = {{"a.weight", t}, {"a.bias", t}};
  const std::vector<std::pair<std::string, Tensor>> b = {{"b.weight", t}, {"b.bias", t}};
  write_safetensors(dir.file("model-00001-of-00002.safetensors"), a);
  write_safetensors(dir.file("model-00002-of-00002.safetensors"), b);
  test::write_bytes(dir.file("model.safetensors.index.json"),
                    R"({"metadata": {"total_size": 64}, "weight_map": {
                         "a.weight": "model-00001-of-00002.safetensors", "a.bias": "model-00001-of-00002.safetensors",
                         "b.weight": "model-00002-of-00002.safetensors", "b.bias": "model-00002-of-00002.safetensors"}})");
}

TEST(ShardedFolder, TheIndexDecidesTheShards) {
  test::TempDir dir;
  write_sharded(dir);
  // A stray file beside them (an older download, a LoRA) is not part of the model.
  write_safetensors(dir.file("stray.safetensors"), std::vector<std::pair<std::string, Tensor>>{
                                                       {"stray", Tensor::from_floats(DType::F32, Shape{1}, {0})}});
  const auto source = open_safetensors(dir.path().string());
  EXPECT_EQ(source->names(), (std::vector<std::string>{"a.bias", "a.weight", "b.bias", "b.weight"}));
  EXPECT_EQ(source->get("b.weight").to_floats(), (std::vector<float>{1, 2, 3, 4}));
}

TEST(ShardedFolder, AMissingShardIsNamed) {
  test::TempDir dir;
  write_sharded(dir);
  fs::remove(dir.file("model-00002-of-00002.safetensors"));
  test::expect_error(
      [&] { open_safetensors(dir.path().string()); },
      {"model.safetensors.index.json", "names the shard model-00002-of-00002.safetensors", "2 tensors", "not in"});
}

TEST(ShardedFolder, ATruncatedShardIsNamed) {
  test::TempDir dir;
  write_sharded(dir);
  const std::string shard = dir.file("model-00001-of-00002.safetensors");
  fs::resize_file(shard, fs::file_size(shard) - 5);  // an interrupted download
  test::expect_error([&] { open_safetensors(dir.path().string()); },
                     {shard, "beyond the data section", "truncated file?"});
}

TEST(ShardedFolder, ATensorMissingFromItsShardIsNamed) {
  test::TempDir dir;
  write_sharded(dir);
  // The second shard of another download: same name, other tensors.
  const Tensor t = Tensor::from_floats(DType::F32, Shape{4}, {1, 2, 3, 4});
  write_safetensors(dir.file("model-00002-of-00002.safetensors"),
                    std::vector<std::pair<std::string, Tensor>>{{"b.weight", t}, {"c.bias", t}});
  test::expect_error([&] { open_safetensors(dir.path().string()); },
                     {"puts tensor 'b.bias' in model-00002-of-00002.safetensors", "does not hold it"});
}

TEST(ShardedFolder, AMalformedIndexIsNamed) {
  test::TempDir dir;
  write_sharded(dir);
  test::write_bytes(dir.file("model.safetensors.index.json"), R"({"metadata": {}})");
  test::expect_error([&] { open_safetensors(dir.path().string()); }, {"model.safetensors.index.json", "weight_map"});
}

}  // namespace
}  // namespace ltx
