#include "pipeline/schedule.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace ltx {
namespace {

// Values are checked bit for bit by the golden cases (tests/golden/schedule, through ltx verify); these cover
// what the goldens do not: shape of the result and input validation.
TEST(Schedule, Ltx2SigmasDescendToZero) {
  Ltx2ScheduleParams p;
  p.steps = 12;
  const auto s = ltx2_sigmas(p);
  ASSERT_EQ(s.size(), 13u);
  EXPECT_EQ(s.back(), 0.0f);
  EXPECT_NEAR(s[s.size() - 2], 0.1f, 1e-6f);  // stretched to the terminal value
  for (size_t i = 1; i < s.size(); ++i) EXPECT_LT(s[i], s[i - 1]);
}

TEST(Schedule, RejectsBadParameters) {
  Ltx2ScheduleParams p;
  p.steps = 0;
  EXPECT_THROW(ltx2_sigmas(p), Error);
  p.steps = 4;
  p.tokens = 0;
  EXPECT_THROW(ltx2_sigmas(p), Error);
}

}  // namespace
}  // namespace ltx
