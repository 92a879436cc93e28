// non_finite_count / check_finite (pipeline/finite_check.h): NaN and both infinities counted in any float dtype and
// layout; the error names what, where and how many.
#include "pipeline/finite_check.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "core/error.h"

namespace ltx {
namespace {

TEST(FiniteCheck, CountsNanAndBothInfinitiesInEveryLayout) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> v{0.0f, 1.0f, nan, -2.0f, inf, -inf, 3.0e38f, -0.0f};
  const Tensor f32 = Tensor::from_floats(DType::F32, {2, 4}, v);
  EXPECT_EQ(non_finite_count(f32), 3);
  EXPECT_EQ(non_finite_count(Tensor::from_floats(DType::BF16, {2, 4}, v)), 3);
  EXPECT_EQ(non_finite_count(f32.slice(1, 2, 4)), 1);  // strided: columns 2-3 of both rows hold only the NaN
  EXPECT_EQ(non_finite_count(f32.permute({1, 0}).slice(0, 0, 1)), 1);  // column 0: 0 and inf
  EXPECT_EQ(non_finite_count(Tensor::from_floats(DType::F32, {3}, {1, 2, 3})), 0);
}

TEST(FiniteCheck, ErrorNamesWhatWhereAndHowMany) {
  const Tensor t = Tensor::from_floats(DType::F32, {4}, {1, std::numeric_limits<float>::quiet_NaN(), 2, 3});
  try {
    check_finite(t, "denoise", "the video latents", "after step 3 of 8 of stage 1");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_EQ(e.component(), "denoise");
    EXPECT_NE(m.find("the video latents hold 1 non-finite values (NaN or Inf) of 4 after step 3 of 8 of stage 1"),
              std::string::npos)
        << m;
  }
  EXPECT_NO_THROW(check_finite(Tensor::from_floats(DType::F32, {2}, {1, 2}), "decode", "x", "here"));
}

}  // namespace
}  // namespace ltx
