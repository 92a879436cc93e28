// Safetensors write-then-read round trips.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>

#include "io/safetensors.h"
#include "test_files.h"

namespace ltx {
namespace {

using test::TempDir;

uint64_t header_length(const std::string& bytes) {
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = n << 8 | static_cast<uint8_t>(bytes[static_cast<size_t>(i)]);
  return n;
}

TEST(SafetensorsRoundTrip, EveryPlainDTypeAndMetadata) {
  TempDir dir;
  const std::string path = dir.file("all.safetensors");
  const std::vector<float> floats = {1.5f, -2.25f, 0.0f, 3.0f, 1024.0f, -0.125f};
  const std::vector<int64_t> ints = {0, 1, -7, 123456, -99, 42};
  const std::vector<int64_t> bytes = {0, 1, 2, 200, 255, 17};
  const std::vector<int64_t> big = {int64_t{1} << 40, -(int64_t{1} << 50), 3, 4, 5, 6};
  std::vector<std::pair<std::string, Tensor>> tensors = {
      {"f32", Tensor::from_floats(DType::F32, {2, 3}, floats)},
      {"bf16", Tensor::from_floats(DType::BF16, {3, 2}, floats)},
      {"f16", Tensor::from_floats(DType::F16, {6}, floats)},
      {"i32", Tensor::from_ints(DType::I32, {1, 6}, ints)},
      {"i64", Tensor::from_ints(DType::I64, {2, 3}, big)},
      {"u8", Tensor::from_ints(DType::U8, {3, 1, 2}, bytes)},
  };
  const std::map<std::string, std::string> metadata = {{"config", R"({"a": 1})"}, {"format", "pt"}};
  write_safetensors(path, tensors, metadata);

  const auto file = SafetensorsFile::open(path);
  EXPECT_EQ(file.path(), path);
  EXPECT_EQ(file.metadata(), metadata);
  ASSERT_EQ(file.tensors().size(), tensors.size());
  for (size_t i = 1; i < file.tensors().size(); ++i) EXPECT_LT(file.tensors()[i - 1].name, file.tensors()[i].name);
  for (const auto& [name, want] : tensors) {
    ASSERT_TRUE(file.contains(name));
    const Tensor got = file.get(name);
    EXPECT_EQ(got.dtype(), want.dtype()) << name;
    EXPECT_EQ(got.shape(), want.shape()) << name;
    ASSERT_EQ(got.nbytes(), want.nbytes());
    EXPECT_EQ(std::memcmp(got.raw(), want.raw(), want.nbytes()), 0) << name;
    EXPECT_FALSE(got.storage()->owned()) << name << " should be a view of the mapping";
  }
  EXPECT_EQ(file.get("i64").to_ints(), big);
  EXPECT_FALSE(file.contains("missing"));

  // The header is padded so the data section is 8-byte aligned, and each tensor sits at a multiple of its size.
  const std::string raw = test::read_bytes(path);
  EXPECT_EQ((8 + header_length(raw)) % 8, 0u);
  for (const auto& t : file.tensors()) EXPECT_EQ(t.begin % dtype_block_bytes(t.dtype), 0u) << t.name;
}

TEST(SafetensorsRoundTrip, NonContiguousSources) {
  TempDir dir;
  const std::string path = dir.file("views.safetensors");
  std::vector<float> values(24);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) * 0.5f - 3.0f;
  const Tensor base = Tensor::from_floats(DType::F32, {2, 3, 4}, values);
  const Tensor transposed = base.transpose(0, 2);  // [4, 3, 2]
  const Tensor strided = base.slice(2, 1, 4, 2);   // [2, 3, 2]
  const Tensor broadcast = Tensor::from_floats(DType::BF16, {3, 1}, {1, 2, 3}).broadcast_to(Shape{3, 5});
  ASSERT_FALSE(transposed.is_contiguous());
  ASSERT_FALSE(strided.is_contiguous());
  const std::vector<std::pair<std::string, Tensor>> tensors = {
      {"transposed", transposed}, {"strided", strided}, {"broadcast", broadcast}};
  write_safetensors(path, tensors);

  const auto file = SafetensorsFile::open(path);
  EXPECT_TRUE(file.metadata().empty());
  for (const auto& [name, want] : tensors) {
    const Tensor got = file.get(name);
    EXPECT_EQ(got.shape(), want.shape()) << name;
    EXPECT_EQ(got.to_floats(), want.to_floats()) << name;
  }
}

TEST(SafetensorsRoundTrip, ScalarsAndEmptyTensors) {
  TempDir dir;
  const std::string path = dir.file("edge.safetensors");
  const std::vector<std::pair<std::string, Tensor>> tensors = {
      {"scalar", Tensor::from_floats(DType::F32, Shape{}, {7.0f})},
      {"empty", Tensor::empty(DType::F16, {0, 4})},
  };
  write_safetensors(path, tensors);
  const auto file = SafetensorsFile::open(path);
  EXPECT_EQ(file.get("scalar").rank(), 0);
  EXPECT_EQ(file.get("scalar").to_floats(), std::vector<float>{7.0f});
  EXPECT_EQ(file.get("empty").shape(), (Shape{0, 4}));
}

TEST(SafetensorsRoundTrip, ViewsOutliveTheFileObject) {
  TempDir dir;
  const std::string path = dir.file("alive.safetensors");
  const std::vector<std::pair<std::string, Tensor>> tensors = {
      {"w", Tensor::from_floats(DType::F32, {4}, {1, 2, 3, 4})}};
  write_safetensors(path, tensors);
  Tensor view;
  {
    const auto file = SafetensorsFile::open(path);
    view = file.get("w");
  }
  EXPECT_EQ(view.to_floats(), (std::vector<float>{1, 2, 3, 4}));
}

// A header whose length is not padded puts the data at an odd address: get() must hand back an aligned copy.
TEST(SafetensorsRoundTrip, MisalignedDataIsCopied) {
  TempDir dir;
  const std::string path = dir.file("odd.safetensors");
  const std::string header = R"({"x":{"dtype":"F32","shape":[3],"data_offsets":[0,12]}})";
  ASSERT_NE((8 + header.size()) % 4, 0u);
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i) bytes[static_cast<size_t>(i)] = static_cast<char>(header.size() >> (8 * i));
  bytes += header;
  const float values[3] = {1.25f, -4.0f, 9.5f};
  bytes.append(reinterpret_cast<const char*>(values), sizeof(values));
  test::write_bytes(path, bytes);

  const Tensor t = SafetensorsFile::open(path).get("x");
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.raw()) % alignof(float), 0u);
  EXPECT_TRUE(t.storage()->owned());
  EXPECT_EQ(t.data<float>()[0], 1.25f);
  EXPECT_EQ(t.to_floats(), (std::vector<float>{1.25f, -4.0f, 9.5f}));
}

TEST(SafetensorsWrite, FailureLeavesNoFile) {
  TempDir dir;
  const std::string path = dir.file("out.safetensors");
  test::write_bytes(path, "previous contents");
  const std::vector<std::pair<std::string, Tensor>> quantized = {{"q", Tensor::empty(DType::Q8_0, {1, 32})}};
  test::expect_error([&] { write_safetensors(path, quantized); }, {path, "q8_0", "cannot store"});
  const std::vector<std::pair<std::string, Tensor>> twice = {{"a", Tensor::empty(DType::F32, {1})},
                                                             {"a", Tensor::empty(DType::F32, {1})}};
  test::expect_error([&] { write_safetensors(path, twice); }, {path, "'a' given twice"});
  EXPECT_EQ(test::read_bytes(path), "previous contents");
  size_t n_files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path())) ++n_files;
  EXPECT_EQ(n_files, 1u) << "a temporary file was left behind";

  const std::string nowhere = dir.file("no/such/folder/x.safetensors");
  const std::vector<std::pair<std::string, Tensor>> ok = {{"a", Tensor::empty(DType::F32, {1})}};
  test::expect_error([&] { write_safetensors(nowhere, ok); }, {nowhere});
}

TEST(SafetensorsWrite, ReplacesAnExistingFile) {
  TempDir dir;
  const std::string path = dir.file("out.safetensors");
  test::write_bytes(path, "old");
  const std::vector<std::pair<std::string, Tensor>> ok = {{"a", Tensor::from_floats(DType::F32, {1}, {5})}};
  write_safetensors(path, ok);
  EXPECT_EQ(SafetensorsFile::open(path).get("a").to_floats(), std::vector<float>{5});
}

}  // namespace
}  // namespace ltx
