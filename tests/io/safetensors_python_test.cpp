// Reads a file written by the official safetensors package (tests/io/data/make_python_written.py).
#include <gtest/gtest.h>

#include "io/safetensors.h"

namespace ltx {
namespace {

TEST(SafetensorsPython, ReadsOfficialWriterOutput) {
  const auto file = SafetensorsFile::open(LTX_SOURCE_DIR "/tests/io/data/python_written.safetensors");
  EXPECT_EQ(file.metadata().at("format"), "pt");
  EXPECT_EQ(file.metadata().at("note"), "ltx test");
  ASSERT_EQ(file.tensors().size(), 6u);
  EXPECT_EQ(file.get("a.f32").shape(), (Shape{2, 3}));
  EXPECT_EQ(file.get("a.f32").to_floats(), (std::vector<float>{-1, -0.5, 0, 0.5, 1, 1.5}));
  EXPECT_EQ(file.get("b.bf16").dtype(), DType::BF16);
  EXPECT_EQ(file.get("b.bf16").to_floats(), (std::vector<float>{1, -2, 0.375, 1024}));
  EXPECT_EQ(file.get("c.f16").to_floats(), (std::vector<float>{0.5, -0.25, 65504}));
  EXPECT_EQ(file.get("d.i64").to_ints(), (std::vector<int64_t>{-(int64_t{1} << 40), 3}));
  EXPECT_EQ(file.get("e.i32").shape(), (Shape{2, 1}));
  EXPECT_EQ(file.get("e.i32").to_ints(), (std::vector<int64_t>{7, -9}));
  EXPECT_EQ(file.get("f.u8").to_ints(), (std::vector<int64_t>{0, 255, 17}));
}

}  // namespace
}  // namespace ltx
