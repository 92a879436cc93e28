// GGUF reading: metadata of every type, tensor layout, alignment, zero-copy views, unsupported types.
#include "io/gguf.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/half.h"
#include "core/quant.h"
#include "gguf_writer.h"
#include "test_files.h"

namespace ltx {
namespace {

using test::bytes_of;
using test::GGUFWriter;

constexpr uint32_t kF32 = 0, kF16 = 1, kQ5_1 = 7, kQ8_0 = 8, kQ4_K = 12, kBF16 = 30;

class GGUFVersions : public ::testing::TestWithParam<uint32_t> {};

TEST_P(GGUFVersions, MetadataOfEveryType) {
  GGUFWriter w;
  w.version = GetParam();
  w.add_u8("u8", 200);
  w.add_i8("i8", -100);
  w.add_u16("u16", 60000);
  w.add_i16("i16", -30000);
  w.add_u32("u32", 4000000000u);
  w.add_i32("i32", -2000000000);
  w.add_f32("f32", 0.15625f);
  w.add_bool("bool", true);
  w.add_string("str", "gemma3");
  w.add_u64("u64", uint64_t{1} << 60);
  w.add_i64("i64", -(int64_t{1} << 60));
  w.add_f64("f64", -2.5e100);
  w.add_array<int32_t>("arr.i32", 5, {3, -4, 5});
  w.add_array<float>("arr.f32", 6, {0.5f, -1.5f});
  w.add_array<uint8_t>("arr.bool", 7, {1, 0, 1});
  w.add_string_array("arr.str", {"<pad>", "", "hello world"});
  w.add_array<uint64_t>("arr.empty", 10, {});
  w.add_string("ctl", "a\nb\"\x01");
  test::TempDir dir;
  const std::string path = dir.file("meta.gguf");
  test::write_bytes(path, w.build());

  const auto f = GGUFFile::open(path);
  EXPECT_EQ(f.version(), GetParam());
  EXPECT_EQ(f.metadata().size(), 18u);
  EXPECT_EQ(f.value("u8").type(), GGUFType::U8);
  EXPECT_EQ(f.value("u8").as_int(), 200);
  EXPECT_EQ(f.value("i8").as_int(), -100);
  EXPECT_EQ(f.value("u16").as_int(), 60000);
  EXPECT_EQ(f.value("i16").as_int(), -30000);
  EXPECT_EQ(f.value("u32").as_int(), 4000000000);
  EXPECT_EQ(f.value("i32").as_int(), -2000000000);
  EXPECT_EQ(f.value("f32").as_float(), 0.15625);
  EXPECT_TRUE(f.value("bool").as_bool());
  EXPECT_EQ(f.value("str").as_string(), "gemma3");
  EXPECT_EQ(f.value("u64").as_int(), int64_t{1} << 60);
  EXPECT_EQ(f.value("i64").as_int(), -(int64_t{1} << 60));
  EXPECT_EQ(f.value("f64").as_float(), -2.5e100);
  EXPECT_EQ(std::get<std::vector<int32_t>>(f.value("arr.i32").as_array().values), (std::vector<int32_t>{3, -4, 5}));
  EXPECT_EQ(std::get<std::vector<float>>(f.value("arr.f32").as_array().values), (std::vector<float>{0.5f, -1.5f}));
  EXPECT_EQ(std::get<std::vector<bool>>(f.value("arr.bool").as_array().values), (std::vector<bool>{true, false, true}));
  const auto& strs = f.value("arr.str").as_array();
  EXPECT_EQ(strs.elem_type(), GGUFType::String);
  EXPECT_EQ(std::get<std::vector<std::string_view>>(strs.values),
            (std::vector<std::string_view>{"<pad>", "", "hello world"}));
  EXPECT_EQ(f.value("arr.empty").as_array().size(), 0u);
  EXPECT_EQ(f.value("arr.str").str(2), R"([string x 3] "<pad>", "", ...)");
  EXPECT_EQ(f.value("ctl").str(), R"("a\nb\"\x01")");  // one line however odd the token
  EXPECT_EQ(f.find("absent"), nullptr);
  test::expect_error([&] { f.value("absent"); }, {path, "no metadata key 'absent'"});
  test::expect_error([&] { f.value("str").as_int(); }, {"string, not an integer"});
  EXPECT_TRUE(f.tensors().empty());
}

TEST_P(GGUFVersions, TensorsAreZeroCopyViewsWithReversedShapes) {
  GGUFWriter w;
  w.version = GetParam();
  const std::vector<float> f32 = {1, 2, 3, 4, 5, 6};
  const std::vector<uint16_t> f16 = {f32_to_f16(0.5f), f32_to_f16(-2.0f)};
  const std::vector<uint16_t> bf16 = {f32_to_bf16(3.0f), f32_to_bf16(-0.25f), f32_to_bf16(8.0f)};
  std::string q8_bytes(2 * 34, '\0');
  std::vector<float> q8_values(64);
  for (size_t i = 0; i < q8_values.size(); ++i) q8_values[i] = std::sin(static_cast<float>(i));
  quantize_row(DType::Q8_0, q8_values.data(), q8_bytes.data(), 64);
  w.add_tensor("w.f32", {3, 2}, kF32, bytes_of(f32));
  w.add_tensor("w.f16", {2}, kF16, bytes_of(f16));
  w.add_tensor("w.bf16", {1, 3, 1}, kBF16, bytes_of(bf16));
  w.add_tensor("w.q8_0", {32, 2}, kQ8_0, q8_bytes);
  w.add_tensor("w.q4_k", {256, 1, 1, 2}, kQ4_K, std::string(2 * 144, '\x11'));
  test::TempDir dir;
  const std::string path = dir.file("tensors.gguf");
  test::write_bytes(path, w.build());

  const auto f = GGUFFile::open(path);
  EXPECT_EQ(f.alignment(), 32u);
  EXPECT_EQ(f.data_offset() % 32, 0u);
  ASSERT_EQ(f.tensors().size(), 5u);
  EXPECT_EQ(f.tensors()[0].name, "w.f32");  // file order
  EXPECT_EQ(f.info("w.f32").shape, (Shape{2, 3}));
  EXPECT_EQ(f.info("w.bf16").shape, (Shape{1, 3, 1}));
  EXPECT_EQ(f.info("w.q4_k").shape, (Shape{2, 1, 1, 256}));
  EXPECT_EQ(f.info("w.q8_0").bytes, 68u);

  const Tensor t = f.get("w.f32");
  EXPECT_EQ(t.dtype(), DType::F32);
  EXPECT_EQ(t.to_floats(), f32);  // row-major [2, 3] over ggml's ne0-fastest layout is the same bytes
  EXPECT_FALSE(t.storage()->owned());
  EXPECT_EQ(t.offset(), f.data_offset() + f.info("w.f32").offset);
  EXPECT_EQ(f.get("w.f16").to_floats(), (std::vector<float>{0.5f, -2.0f}));
  EXPECT_EQ(f.get("w.bf16").to_floats(), (std::vector<float>{3.0f, -0.25f, 8.0f}));
  const Tensor q8 = f.get("w.q8_0");
  EXPECT_EQ(q8.dtype(), DType::Q8_0);
  EXPECT_EQ(q8.shape(), (Shape{2, 32}));
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(q8.raw()), 68), q8_bytes);
  const std::vector<float> dq = q8.to_floats();
  for (size_t i = 0; i < dq.size(); ++i) EXPECT_NEAR(dq[i], q8_values[i], 0.01f) << i;
  EXPECT_EQ(f.get("w.q4_k").dtype(), DType::Q4_K);
  EXPECT_EQ(static_cast<uint8_t>(f.get("w.q4_k").raw()[287]), 0x11);
  test::expect_error([&] { f.get("nope"); }, {path, "no tensor named 'nope'"});
}

INSTANTIATE_TEST_SUITE_P(V2AndV3, GGUFVersions, ::testing::Values(2u, 3u));

TEST(GGUF, GeneralAlignment) {
  GGUFWriter w;
  w.alignment = 64;
  w.add_u32("general.alignment", 64);
  w.add_string("pad", "x");  // pushes the header end off a 64-byte boundary
  w.add_tensor("a", {3}, kF32, bytes_of(std::vector<float>{1, 2, 3}));
  w.add_tensor("b", {2}, kF32, bytes_of(std::vector<float>{4, 5}));
  test::TempDir dir;
  const std::string path = dir.file("align.gguf");
  test::write_bytes(path, w.build());
  const auto f = GGUFFile::open(path);
  EXPECT_EQ(f.alignment(), 64u);
  EXPECT_EQ(f.data_offset() % 64, 0u);
  EXPECT_EQ(f.info("b").offset, 64u);
  EXPECT_EQ(f.get("b").to_floats(), (std::vector<float>{4, 5}));
}

TEST(GGUF, UnsupportedTypesAreListedButNotLoaded) {
  GGUFWriter w;
  w.add_tensor("q5", {32, 2}, kQ5_1, std::string(48, '\0'));
  w.add_tensor("mystery", {4}, 99, std::string(16, '\0'));
  test::TempDir dir;
  const std::string path = dir.file("types.gguf");
  test::write_bytes(path, w.build());
  const auto f = GGUFFile::open(path);
  ASSERT_EQ(f.tensors().size(), 2u);
  EXPECT_FALSE(f.info("q5").dtype.has_value());
  EXPECT_EQ(ggml_type_name(f.info("q5").ggml_type), "q5_1");
  EXPECT_EQ(ggml_type_name(f.info("mystery").ggml_type), "type 99");
  test::expect_error([&] { f.get("q5"); }, {path, "'q5'", "q5_1", "does not support"});
  test::expect_error([&] { f.get("mystery"); }, {path, "'mystery'", "type 99"});
}

TEST(GGUF, LargeStringArray) {
  GGUFWriter w;
  std::vector<std::string> tokens(262144);
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = "tok" + std::to_string(i);
  w.add_string_array("tokenizer.ggml.tokens", tokens);
  test::TempDir dir;
  const std::string path = dir.file("tokens.gguf");
  test::write_bytes(path, w.build());
  const auto f = GGUFFile::open(path);
  const auto& got = std::get<std::vector<std::string_view>>(f.value("tokenizer.ggml.tokens").as_array().values);
  ASSERT_EQ(got.size(), tokens.size());
  EXPECT_EQ(got[262143], "tok262143");
  EXPECT_EQ(f.value("tokenizer.ggml.tokens").str(2), R"([string x 262144] "tok0", "tok1", ...)");
}

}  // namespace
}  // namespace ltx
