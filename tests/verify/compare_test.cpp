// Tensor comparison: error measures, allclose semantics, and file-level bookkeeping.
#include "verify/compare.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <limits>

#include "io/safetensors.h"

namespace ltx {
namespace {

Tensor f32(std::initializer_list<float> v) {
  return Tensor::from_floats(DType::F32, {static_cast<int64_t>(v.size())}, v);
}

TEST(CompareTensors, ErrorMeasures) {
  // diffs: 0, 0.5, -1.5 ; |b|: 1, 2, 3
  const auto c = compare_tensors("x", f32({1, 2.5f, 1.5f}), f32({1, 2, 3}), {.atol = 0, .rtol = 0});
  EXPECT_DOUBLE_EQ(c.max_abs, 1.5);
  EXPECT_DOUBLE_EQ(c.mean_abs, 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(c.rel_l2, std::sqrt((0.25 + 2.25) / 14.0));
  EXPECT_EQ(c.n_mismatched, 2);
  EXPECT_FALSE(c.ok());
}

TEST(CompareTensors, AllcloseBoundary) {
  // |a - b| = 0.25 against atol + rtol * |b| = 0.05 + 0.1 * 2 = 0.25: inside, exactly at the edge.
  EXPECT_TRUE(compare_tensors("x", f32({2.25f}), f32({2}), {.atol = 0.05, .rtol = 0.1}).ok());
  // The tolerance scales with |b|, not |a|: b = 0 leaves only atol.
  EXPECT_FALSE(compare_tensors("x", f32({0.25f}), f32({0}), {.atol = 0.05, .rtol = 10}).ok());
  EXPECT_TRUE(compare_tensors("x", f32({0}), f32({0.25f}), {.atol = 0.05, .rtol = 1}).ok());
}

TEST(CompareTensors, NonFiniteValues) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(compare_tensors("x", f32({inf, -inf}), f32({inf, -inf})).ok());
  EXPECT_FALSE(compare_tensors("x", f32({inf}), f32({-inf})).ok());
  const auto c = compare_tensors("x", f32({nan, 1}), f32({nan, 1}));
  EXPECT_FALSE(c.ok());
  EXPECT_EQ(c.n_mismatched, 1);
  EXPECT_TRUE(std::isnan(c.max_abs));
}

TEST(CompareTensors, ShapesAndDTypes) {
  const Tensor a = Tensor::from_floats(DType::F32, {2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(compare_tensors("x", a, a.reshape({3, 2}), {}).status, TensorComparison::Status::ShapeMismatch);
  // A bf16 reference that holds the same values compares equal; the dtype difference is reported.
  const auto c = compare_tensors("x", a, a.to(DType::BF16), {});
  EXPECT_TRUE(c.ok());
  EXPECT_TRUE(c.dtype_differs());
  // Integers compare exactly in f64 beyond f32's 24-bit mantissa.
  const std::vector<int64_t> big = {(int64_t{1} << 40) + 1};
  const std::vector<int64_t> big2 = {int64_t{1} << 40};
  EXPECT_FALSE(compare_tensors("i", Tensor::from_ints(DType::I64, {1}, big), Tensor::from_ints(DType::I64, {1}, big2),
                               {.atol = 0.5, .rtol = 0})
                   .ok());
  // Non-contiguous inputs compare in logical order.
  EXPECT_TRUE(compare_tensors("t", a.transpose(0, 1), a.transpose(0, 1).contiguous(), {.atol = 0, .rtol = 0}).ok());
}

TEST(CompareFiles, MissingExtraAndFailed) {
  const auto dir = std::filesystem::temp_directory_path() / ("ltx-verify-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string pa = (dir / "a.safetensors").string(), pb = (dir / "b.safetensors").string();
  const std::vector<std::pair<std::string, Tensor>> ta = {
      {"same", f32({1, 2})}, {"off", f32({1, 2})}, {"only_a", f32({3})}, {"shape", f32({1, 2})}};
  const std::vector<std::pair<std::string, Tensor>> tb = {
      {"same", f32({1, 2})}, {"off", f32({1, 2.5f})}, {"only_b", f32({3})}, {"shape", f32({1, 2, 3})}};
  write_safetensors(pa, ta);
  write_safetensors(pb, tb);
  const auto r = compare_files(SafetensorsFile::open(pa), SafetensorsFile::open(pb));
  std::filesystem::remove_all(dir);
  EXPECT_EQ(r.n_ok, 1);
  EXPECT_EQ(r.n_failed, 2);
  EXPECT_EQ(r.n_missing, 1);
  EXPECT_EQ(r.n_extra, 1);
  EXPECT_FALSE(r.passed());
  ASSERT_EQ(r.tensors.size(), 5u);
  EXPECT_EQ(r.tensors[0].name, "off");
  EXPECT_EQ(r.tensors[0].status, TensorComparison::Status::Fail);
  EXPECT_EQ(r.tensors[1].status, TensorComparison::Status::MissingInB);
  EXPECT_EQ(r.tensors[3].status, TensorComparison::Status::ShapeMismatch);
  EXPECT_EQ(r.tensors[4].name, "only_b");
  EXPECT_EQ(r.tensors[4].status, TensorComparison::Status::ExtraInB);
}

}  // namespace
}  // namespace ltx
