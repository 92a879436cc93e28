// NoiseRecorder / NoiseReplayer: a replay hands back exactly what was recorded, in order, and refuses clearly
// when the pipeline asks for something else.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "io/safetensors.h"
#include "pipeline/noise.h"

namespace ltx {
namespace {

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

std::string error_of(const auto& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(NoiseRecord, NamesAreZeroPaddedIndices) {
  EXPECT_EQ(noise_tensor_name(0), "noise.0000");
  EXPECT_EQ(noise_tensor_name(42), "noise.0042");
  EXPECT_EQ(noise_tensor_name(12345), "noise.12345");
}

TEST(NoiseRecord, RecordsEveryDrawInOrderAndPassesItThrough) {
  TorchGenerator gen(42), twin(42);
  TorchNoise live(gen);
  NoiseRecorder recorder(live);
  const Tensor a = recorder.randn({1, 128, 3, 4, 6}, DType::BF16);
  const Tensor b = recorder.randn({3}, DType::F32);
  ASSERT_EQ(recorder.entries().size(), 2u);
  EXPECT_EQ(recorder.entries()[0].first, "noise.0000");
  EXPECT_EQ(recorder.entries()[1].first, "noise.0001");
  EXPECT_TRUE(same_bits(a, twin.randn({1, 128, 3, 4, 6}, DType::BF16)));
  EXPECT_TRUE(same_bits(b, twin.randn({3}, DType::F32)));
  // The record is a copy: the caller may overwrite its noise in place.
  a.data<uint16_t>()[0] ^= 0xffff;
  EXPECT_FALSE(same_bits(a, recorder.entries()[0].second));
}

TEST(NoiseRecord, ReplayReturnsTheRecordingThenRefusesMore) {
  TorchGenerator gen(0);
  TorchNoise live(gen);
  NoiseRecorder recorder(live);
  recorder.randn({2, 16}, DType::F32);
  recorder.randn({5}, DType::F16);
  NoiseReplayer replay(recorder.entries());
  EXPECT_EQ(replay.remaining(), 2u);
  EXPECT_TRUE(same_bits(replay.randn({2, 16}, DType::F32), recorder.entries()[0].second));
  EXPECT_TRUE(same_bits(replay.randn({5}, DType::F16), recorder.entries()[1].second));
  EXPECT_EQ(replay.remaining(), 0u);
  const std::string message = error_of([&] { replay.randn({1}, DType::F32); });
  EXPECT_NE(message.find("replay exhausted"), std::string::npos) << message;
  EXPECT_NE(message.find("2 tensors"), std::string::npos) << message;
}

TEST(NoiseRecord, ReplayNamesShapeAndDtypeMismatches) {
  TorchGenerator gen(1);
  TorchNoise live(gen);
  NoiseRecorder recorder(live);
  recorder.randn({4, 4}, DType::BF16);
  NoiseReplayer by_shape(recorder.entries());
  std::string message = error_of([&] { by_shape.randn({16}, DType::BF16); });
  EXPECT_NE(message.find("noise.0000"), std::string::npos) << message;
  EXPECT_NE(message.find("bf16[16]"), std::string::npos) << message;
  EXPECT_NE(message.find("bf16[4, 4]"), std::string::npos) << message;
  NoiseReplayer by_dtype(recorder.entries());
  message = error_of([&] { by_dtype.randn({4, 4}, DType::F32); });
  EXPECT_NE(message.find("f32[4, 4]"), std::string::npos) << message;
  // A refused request does not consume the entry.
  EXPECT_EQ(by_dtype.remaining(), 1u);
}

TEST(NoiseRecord, ReplayerRejectsBadEntrySets) {
  const Tensor t = Tensor::from_floats(DType::F32, {1}, {0.5f});
  using Entries = std::vector<std::pair<std::string, Tensor>>;
  const Entries stray{{"noise.0000", t}, {"latent", t}};
  EXPECT_NE(error_of([&] { NoiseReplayer r(stray); }).find("unexpected tensor 'latent'"), std::string::npos);
  const Entries gap{{"noise.0000", t}, {"noise.0002", t}};
  EXPECT_NE(error_of([&] { NoiseReplayer r(gap); }).find("noise.0002"), std::string::npos);
  const Entries duplicate{{"noise.0000", t}, {"noise.0000", t}};
  EXPECT_NE(error_of([&] { NoiseReplayer r(duplicate); }).find("duplicate"), std::string::npos);
  const Entries short_name{{"noise.0", t}};
  EXPECT_NE(error_of([&] { NoiseReplayer r(short_name); }).find("noise.0"), std::string::npos);
  // Out-of-order entries (a file's name-sorted map past 9999 draws) are put back in index order.
  const Tensor u = Tensor::from_floats(DType::F32, {1}, {1.5f});
  const Entries shuffled{{"noise.0001", u}, {"noise.0000", t}};
  NoiseReplayer r(shuffled);
  EXPECT_EQ(r.randn({1}, DType::F32).to_floats()[0], 0.5f);
  EXPECT_EQ(r.randn({1}, DType::F32).to_floats()[0], 1.5f);
}

TEST(NoiseRecord, SavesAndLoadsThroughSafetensors) {
  TorchGenerator gen(2);
  TorchNoise live(gen);
  NoiseRecorder recorder(live);
  recorder.randn({1, 128, 3, 4, 6}, DType::BF16);
  recorder.randn({7}, DType::F32);
  recorder.randn({20}, DType::F16);
  const auto dir = std::filesystem::temp_directory_path() / ("ltx_noise_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "noise.safetensors").string();
  recorder.save(path, {{"seed", "2"}});
  EXPECT_EQ(SafetensorsFile::open(path).metadata().at("seed"), "2");
  NoiseReplayer replay = NoiseReplayer::load(path);
  ASSERT_EQ(replay.size(), 3u);
  EXPECT_TRUE(same_bits(replay.randn({1, 128, 3, 4, 6}, DType::BF16), recorder.entries()[0].second));
  EXPECT_TRUE(same_bits(replay.randn({7}, DType::F32), recorder.entries()[1].second));
  EXPECT_TRUE(same_bits(replay.randn({20}, DType::F16), recorder.entries()[2].second));

  // A file with other tensors in it is not a noise recording; the error names the file.
  const std::string other = (dir / "other.safetensors").string();
  const std::vector<std::pair<std::string, Tensor>> tensors{{"latent", recorder.entries()[1].second}};
  write_safetensors(other, tensors);
  const std::string message = error_of([&] { NoiseReplayer::load(other); });
  EXPECT_NE(message.find(other), std::string::npos) << message;
  EXPECT_NE(message.find("latent"), std::string::npos) << message;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ltx
